"""A small store with cited pages, shared by the forget and hostile-input tests."""

from __future__ import annotations

from pathlib import Path

from memoryfs.index.index_md import write_indexes
from memoryfs.ingest import ingest
from memoryfs.pages.transcript import Transcript, Turn, parse_transcript, render_transcript
from memoryfs.store.store import Store
from memoryfs.validate.rules import Finding, validate_store

S1 = "2026-01-05-figures"
S2 = "2026-01-09-trip"
PHRASE = "Blue Heron Lane"

SESSIONS: dict[str, list[tuple[str, str]]] = {
    S1: [
        ("user", "I am Dana, a postdoc at the Marlow Institute in Hamburg."),
        ("user", "My sister Lena lives at 12 Blue Heron Lane in Kiel."),
        ("assistant", "Noted: figures as PDF from now on."),
        ("user", "Please always give me figures as PDF, not PNG."),
    ],
    S2: [
        ("user", "I'm flying to Lisbon on 12 February for the conference."),
        ("user", "Lena will pick me up; her address is 12 blue-heron LANE."),
        ("assistant", "Have a good trip."),
    ],
}


def session_file(folder: Path, sid: str, turns: list[tuple[str, str]] | None = None) -> Path:
    """The session as an input file in the store's Markdown form."""
    turns = turns if turns is not None else SESSIONS[sid]
    day = sid[:10]
    t = Transcript(
        id=sid,
        started=f"{day}T09:00",
        participants=("dana", "atlas"),
        scope={"user": "dana", "assistant": "atlas"},
        turns=tuple(
            Turn(i + 1, who, f"{day}T09:{i:02d}", text) for i, (who, text) in enumerate(turns)
        ),
    )
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{sid}-{len(turns)}.md"
    path.write_text(render_transcript(t), encoding="utf-8")
    return path


def turn_hash_of(store: Store, sid: str, n: int) -> str:
    t = parse_transcript(store.transcript_path(sid).read_text(encoding="utf-8"))
    return t.turns[n - 1].hash


def _sources(store: Store, refs: list[tuple[str, int]]) -> str:
    lines = ["sources:"]
    for i, (sid, n) in enumerate(refs, start=1):
        lines += [
            f"  - id: {i}",
            f"    ref: sessions/transcripts/{sid}.md#t{n}",
            f"    at: {sid[:10]}",
            f"    hash: '{turn_hash_of(store, sid, n)}'",
        ]
    return "\n".join(lines)


WRAPPED = ("memory/notes/travel/lisbon-trip.md", "MF110")  # the wrapped claim's first line


def findings(store: Store) -> list[Finding]:
    """``validate_store``'s findings but the one on the wrapped claim ``build_store``
    writes on purpose (a line no citation backs, MF110, while the note stays)."""
    return [f for f in validate_store(store) if (f.path, f.code) != WRAPPED]


def build_store(store: Store, tmp_path: Path) -> Store:
    """Two sessions, three pages and a summary, all cited, committed."""
    ingest(store, [session_file(tmp_path / "in", sid) for sid in SESSIONS])
    pages = {
        "knowledge/people/lena.md": (
            "id: lena\ntitle: Lena\ntype: person\naliases:\n  - Lena K\n"
            "summary: Dana's sister in Kiel.\nupdated: 2026-01-09\n"
            + _sources(store, [(S1, 2), (S2, 2)])
            + "\n",
            "# Lena\n\n"
            "- Dana's sister, lives at 12 Blue Heron Lane in Kiel. [cite:1]\n"
            "- Picks Dana up from trips. [cite:2]\n"
            "\n## Related\n\n- [[dana]]\n",
        ),
        "knowledge/people/dana.md": (
            "id: dana\ntitle: Dana\ntype: person\nsummary: The user.\nupdated: 2026-01-09\n"
            + _sources(store, [(S1, 1), (S1, 4), (S2, 1)])
            + "\n",
            "# Dana\n\n"
            "- Postdoc at the Marlow Institute in Hamburg. [cite:1]\n"
            "- Wants figures as PDF, not PNG. [cite:2]\n"
            "- Flies to Lisbon on 12 February 2026. [cite:3]\n"
            "\n## Related\n\n- [[lena|Lena]]\n",
        ),
        "notes/travel/lisbon-trip.md": (
            "id: lisbon-trip\ntitle: Lisbon trip\ntype: note\nupdated: 2026-01-09\n"
            + _sources(store, [(S2, 1), (S2, 2)])
            + "\n",
            "- Conference in Lisbon, flight on 12 February. [cite:1]\n"
            # a claim wrapped over two lines, as a store written before MF110 may hold: a
            # phrase across its lines takes the whole item (``WRAPPED``)
            "- Pickup by [[lena]] from 12 Blue Heron\n"
            "  Lane. [cite:2]\n",
        ),
        f"sessions/summaries/{S2}.md": (
            f"id: {S2}\ntitle: Trip planning\ntype: summary\nupdated: 2026-01-09\n"
            + _sources(store, [(S2, 1), (S2, 2)])
            + "\n",
            "- Dana flies to Lisbon. [cite:1]\n"
            "- Lena picks her up at 12 Blue Heron Lane. [cite:2]\n"
            "- Open thread: the conference talk. [cite:1]\n",
        ),
    }
    for rel, (meta, body) in pages.items():
        path = store.memory / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"---\n{meta}---\n{body}", encoding="utf-8")
    write_indexes(store)
    store.commit("dream: pages")
    return store
