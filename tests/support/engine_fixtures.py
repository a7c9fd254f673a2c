"""Helpers for the engine and wiki tests: stores with sessions, one consolidation step.

``consolidate`` runs the embedded engine on the pending sessions of a committed store,
using the store's own tree as the staged tree (no worktree, no gates: those are
``dream.runner``'s and have their own tests), then commits the result so the next call
sees it as the base.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from paths import SAMPLE_MEMORY

from dream.engines.base import EngineContext
from dream.engines.embedded.engine import EmbeddedEngine
from dream.phases.consolidate import consolidate_with
from dream.phases.orient import find_pending
from dream.records import ConsolidationReport
from memoryfs.ingest import ingest
from memoryfs.pages.claims import extract_claims, resolve_claim_sources
from memoryfs.pages.page import parse_page
from memoryfs.pages.transcript import Transcript, Turn, render_transcript
from memoryfs.store.store import Store, init_store

SAMPLE = SAMPLE_MEMORY


def sample_store(tmp_path: Path) -> Store:
    store = init_store(tmp_path / "sample", "dana", "atlas")
    ingest(store, sorted((SAMPLE / "transcripts").glob("*.md")))
    return store


CHATLOGS = SAMPLE / "chatlogs"


def chatlog_store(tmp_path: Path) -> Store:
    """The second sample: a user who never says their name, in JSONL chat logs and one
    ChatGPT export."""
    store = init_store(tmp_path / "chatlogs", "noor-haddad", "wren")
    ingest(store, sorted((CHATLOGS / "logs").glob("*.jsonl")))
    ingest(store, [CHATLOGS / "chatgpt" / "conversations.json"], fmt="chatgpt")
    return store


def write_session(store: Store, sid: str, started: str, turns: list[tuple[str, str]]) -> Path:
    """A transcript from (speaker, text) pairs, committed."""
    t = Transcript(
        id=sid,
        started=started,
        participants=(store.config.user, store.config.assistant),
        scope={"user": store.config.user, "assistant": store.config.assistant},
        turns=tuple(
            Turn(n=i, speaker=who, ts=started, text=text) for i, (who, text) in enumerate(turns, 1)
        ),
    )
    path = store.transcript_path(sid)
    path.write_text(render_transcript(t), encoding="utf-8")
    store.commit(f"ingest {sid}")
    return path


def consolidate(store: Store) -> ConsolidationReport:
    pending, _ = find_pending(store, store.head())
    ctx = EngineContext(
        store=store,
        stage_root=store.root,
        pending=pending,
        run_id="test",
        base_commit=store.head(),
        phases=consolidate_with,
    )
    report = EmbeddedEngine().consolidate(ctx)
    store.commit("dream: test run")
    return report


def tree_bytes(store: Store) -> dict[str, bytes]:
    return {
        p.relative_to(store.memory).as_posix(): p.read_bytes()
        for p in sorted(store.memory.rglob("*.md"))
    }


def copy_store(store: Store, dest: Path) -> Store:
    shutil.copytree(store.root, dest)
    return Store.open(dest)


def claim_lines(store: Store) -> dict[str, list[str]]:
    """Turn ref -> lower-cased texts of the knowledge/notes claims citing it."""
    out: dict[str, list[str]] = {}
    for layer in ("knowledge", "notes"):
        for path in sorted((store.memory / layer).rglob("*.md")):
            page = parse_page(path.read_text(encoding="utf-8"), path.name)
            for claim in extract_claims(page):
                for source in resolve_claim_sources(page, claim):
                    out.setdefault(source.ref, []).append(claim.text.lower())
    return out


def answer_parts(answer: str) -> list[str]:
    """ "Lisbon and Berlin" -> ["lisbon", "berlin"]: each part must be found."""
    return [p.strip().lower() for p in re.split(r",\s*|\s+and\s+", answer) if p.strip()]


def _holds(claim: str, part: str) -> bool:
    """``claim`` says ``part``: as written, or every word of it ("illustrated Stanage Edge
    walk map" in "the illustrated map of the Stanage Edge walk"); words of one or two
    letters ("a", "on") do not count."""
    if part in claim:
        return True
    words = [w for w in re.findall(r"\w+", part) if len(w) > 2 or w.isdigit()]
    return bool(words) and all(re.search(rf"\b{re.escape(w)}\b", claim) for w in words)


def quality(store: Store, questions: Path) -> tuple[float, list[str]]:
    """Share of questions whose answer is in a claim citing one of their evidence turns."""
    index = claim_lines(store)
    misses: list[str] = []
    rows = [json.loads(line) for line in questions.read_text().splitlines() if line.strip()]
    for q in rows:
        refs = [
            f"sessions/transcripts/{e.split('#')[0]}.md#{e.split('#')[1]}" for e in q["evidence"]
        ]
        texts = [t for r in refs for t in index.get(r, [])]
        if not all(any(_holds(t, part) for t in texts) for part in answer_parts(q["answer"])):
            misses.append(f"{q['id']} {q['category']}: {q['answer']!r}")
    return 1 - len(misses) / len(rows), misses
