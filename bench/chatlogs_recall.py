"""Recall on plain chat logs, lexical against hybrid: the sample user who never says their name.

    python bench/chatlogs_recall.py [--model DIR] [--budget 1000] [--json]

Ingests ``dream/data/sample_memory/chatlogs`` (23 JSONL chat logs and a ChatGPT export, 26
sessions) into a fresh store, runs Dream once, and asks its 44 questions with
``Store.recall`` at ``--budget`` tokens. Per question: whether a gold turn is shown or cited
(``Ev``: any of the question's evidence turns among the items' refs and citations, and the
share of them) and the share of the answer's words in the text (``Ans``), by category.
Without ``--model`` only the lexical arm runs; with it (a sentence-transformers model
folder, the ``[embed]`` extra) the store is configured with it and both arms run on the
same store. Not a test: a small, single-user sample.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CHATLOGS = ROOT / "dream" / "data" / "sample_memory" / "chatlogs"
_WORD = re.compile(r"\w+")
_STOP = {"a", "an", "the", "of", "to", "in", "on", "and", "or", "at", "for", "with", "is", "her"}


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP}


def _score(result: Any, q: dict[str, Any], turns: dict[str, str]) -> dict[str, float]:
    """Ev as ``dream eval locomo`` counts "Ev cited": a gold turn whose text is in the
    output, or which an item cites; Ans: the share of the answer's words in the text."""
    from dream.evaluation.scoring import evidence_recall, normalize_text

    gold = {ref: turns[ref] for ref in q["evidence"]}
    cited = {c.removeprefix("sessions/transcripts/").replace(".md#", "#") for i in result.items
             for c in i.citations}  # fmt: skip
    _, ev, _ = evidence_recall(gold, normalize_text(result.text), cited)
    answer = _words(q["answer"])
    return {
        "ev_any": 1.0 if ev else 0.0,
        "ev_share": ev or 0.0,
        "ans": len(answer & _words(result.text)) / len(answer) if answer else 0.0,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", type=Path)
    ap.add_argument("--budget", type=int, default=1000)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    import dream
    from memoryfs.store.config import EmbedSettings
    from memoryfs.store.store import Store, init_store

    questions = [json.loads(line) for line in (CHATLOGS / "questions.jsonl").open()]
    with tempfile.TemporaryDirectory() as tmp:
        store = init_store(Path(tmp) / "store", "noor-haddad", "wren")  # the README's persona
        store.ingest(sorted((CHATLOGS / "logs").glob("*.jsonl")))
        store.ingest(CHATLOGS / "chatgpt" / "conversations.json", fmt="chatgpt")
        result = dream.run(store, allow_unapproved=True)
        print(f"dream: {result.status}", file=sys.stderr)
        modes = ["lexical"]
        if args.model:
            embed = EmbedSettings(backend="local", model=str(args.model.resolve()))
            store.configure(dataclasses.replace(store.config, embed=embed), "bench: [embed]")
            modes.append("hybrid")
        store = Store.open(store.root)
        turns = {}
        for q in questions:
            for ref in q["evidence"]:
                sid, anchor = ref.split("#")
                got = store.read(f"sessions/transcripts/{sid}.md#{anchor}").text
                turns[ref] = got.split("\n", 2)[-1].strip()  # the turn's words, not its heading
        sums: dict[str, dict[str, dict[str, float]]] = defaultdict(lambda: defaultdict(dict))
        for mode in modes:
            by_cat: dict[str, list[dict[str, float]]] = defaultdict(list)
            for q in questions:
                got = store.recall(q["question"], args.budget, mode=mode)
                s = _score(got, q, turns)
                by_cat[q["category"]].append(s)
                by_cat["all"].append(s)
            for cat, rows in by_cat.items():
                for key in ("ev_any", "ev_share", "ans"):
                    sums[cat][mode][key] = round(sum(r[key] for r in rows) / len(rows), 3)
                sums[cat][mode]["n"] = len(rows)
    if args.json:
        print(json.dumps(sums, indent=2))
        return
    print("| category | n | mode | Ev any | Ev share | Ans tok |\n|---|---:|---|---:|---:|---:|")
    for cat in sorted(sums, key=lambda c: (c != "all", c)):
        for mode, row in sums[cat].items():
            print(
                f"| {cat} | {row['n']:.0f} | {mode} | {row['ev_any']:.3f} | "
                f"{row['ev_share']:.3f} | {row['ans']:.3f} |"
            )


if __name__ == "__main__":
    main()
