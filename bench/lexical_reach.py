"""How much of LoCoMo's gold evidence a word search can reach at all, and how much each arm found.

    python bench/lexical_reach.py ../shared/data/locomo/conv-*.json
    python bench/lexical_reach.py ../shared/data/locomo/conv-*.json --results OUT/results.json

A gold turn is *reachable* when it shares a searchable word with its question
(``memoryfs.read.ranking.query_terms``, matched by SQLite FTS5 with Porter stemming as
the index does), not counting the speakers' names: every turn of a two-person
conversation is near one of them. Per category, it prints the share of gold turns
that are reachable. With ``--results`` (a ``dream eval locomo --out`` file for the
same conversations) it prints, per arm and budget, the share of reachable and of
unreachable gold turns each arm's output held (directly or cited): what is left to
find on each side, and what only a claim citing its turn can reach.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
from collections import defaultdict
from pathlib import Path

from dream.evaluation.harness import SCOPE
from dream.evaluation.questions import questions_of
from dream.evaluation.records import CATEGORIES
from memoryfs.ingest.locomo import load_locomo
from memoryfs.read.ranking import fts_query, query_terms


class Matcher:
    """One turn at a time in an in-memory FTS5 table, tokenized as the index is."""

    def __init__(self) -> None:
        self.db = sqlite3.connect(":memory:")
        self.db.execute("CREATE VIRTUAL TABLE t USING fts5(body, tokenize='porter unicode61')")

    def shares(self, text: str, terms: list[str]) -> bool:
        if not terms or not text:
            return False
        with self.db:
            self.db.execute("DELETE FROM t")
            self.db.execute("INSERT INTO t VALUES (?)", (text,))
        row = self.db.execute("SELECT count(*) FROM t WHERE t MATCH ?", (fts_query(terms),))
        return bool(row.fetchone()[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--results", type=Path, help="a `dream eval locomo` results.json")
    args = parser.parse_args()
    scores: dict[tuple[str, int], dict] = {}
    if args.results:
        data = json.loads(args.results.read_text(encoding="utf-8"))
        scores = {(q["conversation"], q["index"]): q for q in data["questions"]}
    match = Matcher()
    reach: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    found: dict[tuple[str, str, int, bool], list[int]] = defaultdict(lambda: [0, 0])
    for path in args.files:
        for conv in load_locomo(path, SCOPE):
            names = {w.lower() for s in conv.sessions for t in s.turns for w in t.speaker.split()}
            questions, _ = questions_of(conv)
            for q in questions:
                terms = [t for t in query_terms(q.question) if t not in names]
                result = scores.get((conv.id, q.index))
                if args.results and result is None:
                    sys.exit(f"error: {args.results} has no question {conv.id}#{q.index}")
                for ref, text in q.gold.items():
                    if not text:
                        continue
                    hit = match.shares(text, terms)
                    for key in (CATEGORIES.get(q.category, str(q.category)), "all"):
                        reach[key][0] += hit
                        reach[key][1] += 1
                        for s in result["scores"] if result else ():
                            tally = found[key, s["arm"], s["budget"], hit]
                            tally[0] += ref not in s["missed"]
                            tally[1] += 1
    print("| category | gold turns | share a non-name word with the question |")
    print("|---|---:|---:|")
    for key, (shared, n) in sorted(reach.items(), key=lambda kv: (kv[0] == "all", kv[0])):
        print(f"| {key} | {n} | {shared / n:.3f} |")
    if found:
        print("\n| category | arm | budget | reachable found | unreachable found |")
        print("|---|---|---:|---:|---:|")
        for key, arm, budget in sorted({k[:3] for k in found}, key=lambda k: (k[0] == "all", k)):
            cells = []
            for reachable in (True, False):
                got, n = found.get((key, arm, budget, reachable), [0, 0])
                cells.append(f"{got}/{n} = {got / n:.3f}" if n else "-")
            print(f"| {key} | {arm} | {budget} | {cells[0]} | {cells[1]} |")


if __name__ == "__main__":
    main()
