"""The store the gate tests check hand-written pages against: one session of the user's
turns, ingested and committed, and Dana's person page citing each of its turns.

``one_session_store`` builds it for any session; ``JOB`` is the session the verification and
profile-cost tests share (a role that changes), written into ``PATH`` by ``write_job_page``.
"""

from __future__ import annotations

from pathlib import Path

from memoryfs.ingest import ingest
from memoryfs.pages.transcript import Transcript, Turn, render_transcript
from memoryfs.store.hashing import turn_hash
from memoryfs.store.store import Store, init_store

PATH = "memory/knowledge/people/dana.md"
JOB = "2026-02-10-job"
JOB_TURNS = [
    "I'm a postdoc at the Marlow Institute.",
    "Since Monday I work as staff scientist at Tidewater.",
]


def one_session_store(tmp_path: Path, sid: str, turns: list[str]) -> Store:
    """Dana's store at ``tmp_path / "store"`` holding the session ``sid``: ``turns``, each
    said by the user on 10 February 2026."""
    s = init_store(tmp_path / "store", "dana", "atlas")
    said = tuple(
        Turn(n=i + 1, speaker="user", ts="2026-02-10T09:00", text=x) for i, x in enumerate(turns)
    )
    t = Transcript(
        id=sid, started="2026-02-10T09:00", participants=("dana",),
        scope={"user": "dana", "assistant": "atlas"}, turns=said,
    )  # fmt: skip
    path = tmp_path / f"{sid}.md"
    path.write_text(render_transcript(t))
    ingest(s, [path])
    return s


def dana_page(sid: str, turns: list[str], body: str) -> str:
    """Dana's page: source ``n`` is turn ``n`` of ``sid`` (with its hash), then ``body``."""
    sources = "".join(
        f"  - id: {i + 1}\n    ref: sessions/transcripts/{sid}.md#t{i + 1}\n"
        f"    at: '2026-02-10'\n    hash: {turn_hash(text)}\n"
        for i, text in enumerate(turns)
    )
    head = "---\nid: dana\ntitle: Dana\ntype: person\nupdated: '2026-02-10'\n"
    return f"{head}sources:\n{sources}---\n{body}"


def write_job_page(store: Store, body: str) -> None:
    """Dana's page citing the ``JOB`` session, with ``body``, written (not committed)."""
    (store.root / PATH).write_text(dana_page(JOB, JOB_TURNS, body))
