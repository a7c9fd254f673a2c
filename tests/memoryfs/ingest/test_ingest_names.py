"""Session ids from file names never merge two files: "café.jsonl" and "cafe.jsonl" both
slug to ``cafe``, and each keeps its own session (``cafe``, ``cafe-2``); a grown file
still appends to its own."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from memoryfs.ingest import ingest
from memoryfs.pages.transcript import parse_transcript
from memoryfs.store.store import Store


def _chat(folder: Path, name: str, *texts: str) -> Path:
    path = folder / name
    rows = [
        {"role": "user", "content": t, "ts": f"2026-01-01T10:{i:02d}:00Z"}
        for i, t in enumerate(texts)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _sessions(store: Store) -> dict[str, list[str]]:
    out = {}
    for p in sorted((store.memory / "sessions" / "transcripts").glob("*.md")):
        t = parse_transcript(p.read_text(encoding="utf-8"))
        out[t.id] = [turn.text for turn in t.turns]
    return out


def test_two_names_with_one_slug_stay_two_sessions(tmp_store: Store, tmp_path: Path) -> None:
    # the second file starts as the first: before, its turns were appended to the first's
    accented = _chat(tmp_path, "café.jsonl", "Flat white, please.")
    plain = _chat(tmp_path, "cafe.jsonl", "Flat white, please.", "And a croissant.")
    ingest(tmp_store, [accented])
    result = ingest(tmp_store, [plain])
    assert [(s.id, s.status) for s in result.sessions] == [("cafe-2", "new")]
    assert _sessions(tmp_store) == {
        "cafe": ["Flat white, please."],
        "cafe-2": ["Flat white, please.", "And a croissant."],
    }
    # each grown file appends to its own session, whichever it is
    grown = ingest(tmp_store, [_chat(tmp_path, "café.jsonl", "Flat white, please.", "Oat milk.")])
    assert [(s.id, s.status) for s in grown.sessions] == [("cafe", "grown")]
    again = ingest(tmp_store, [plain])
    assert [(s.id, s.status) for s in again.sessions] == [("cafe-2", "unchanged")]


def test_two_names_with_one_slug_in_one_ingest(tmp_store: Store, tmp_path: Path) -> None:
    a = _chat(tmp_path, "Café.jsonl", "one")
    b = _chat(tmp_path, "cafe.jsonl", "two")
    result = ingest(tmp_store, [a, b])
    assert sorted(s.id for s in result.sessions) == ["cafe", "cafe-2"]
    assert sorted(_sessions(tmp_store).values()) == [["one"], ["two"]]


def test_a_transcript_stored_without_its_file_name_still_grows(
    tmp_store: Store, tmp_path: Path
) -> None:
    """A transcript ingested before file names were kept has no ``source_name``: its own
    file, grown, appends to it as it did then."""
    ingest(tmp_store, [_chat(tmp_path, "Chat Log.jsonl", "first")])
    path = tmp_store.memory / "sessions" / "transcripts" / "chat-log.md"
    text = path.read_text(encoding="utf-8")
    assert "source_name: Chat Log\n" in text
    path.write_text(text.replace("source_name: Chat Log\n", ""), encoding="utf-8")
    subprocess.run(["git", "-C", str(tmp_store.root), "commit", "-qam", "older"], check=True)
    result = ingest(tmp_store, [_chat(tmp_path, "Chat Log.jsonl", "first", "second")])
    assert [(s.id, s.status) for s in result.sessions] == [("chat-log", "grown")]
