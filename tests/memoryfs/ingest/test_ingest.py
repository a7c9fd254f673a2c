"""Ingestion: Markdown and JSONL transcripts, growth by appending, refusals."""

from __future__ import annotations

import json
from pathlib import Path

import git
import pytest

from memoryfs.errors import IngestError
from memoryfs.ingest import ingest
from memoryfs.pages.transcript import Transcript, Turn, parse_transcript, render_transcript
from memoryfs.store.store import Store, init_store


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return init_store(tmp_path / "store", "dana", "atlas")


def _md(
    tmp_path: Path,
    turns: list[tuple[str, str]],
    sid: str = "2026-01-05-figures",
    scope: dict[str, str] | None = None,
) -> Path:
    t = Transcript(
        id=sid,
        started="2026-01-05T09:30",
        participants=("dana", "atlas"),
        scope=scope or {"user": "dana", "assistant": "atlas"},
        turns=tuple(
            Turn(i + 1, who, f"2026-01-05T09:{30 + i:02d}", text)
            for i, (who, text) in enumerate(turns)
        ),
    )
    path = tmp_path / f"in-{sid}-{len(turns)}.md"
    path.write_text(render_transcript(t), encoding="utf-8")
    return path


def _jsonl(tmp_path: Path, name: str, rows: list[dict[str, object]]) -> Path:
    path = tmp_path / name
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def test_markdown_ingest_writes_transcript_and_commits(store: Store, tmp_path: Path) -> None:
    src = _md(tmp_path, [("user", "Figures as PDF, not PNG."), ("assistant", "Noted.")])
    result = ingest(store, [src])
    assert result.turns_added == 2 and result.changed == 1
    assert git.Repo(store.root).head.commit.message.strip() == "ingest: 1 sessions, 2 turns"
    written = store.transcript_path("2026-01-05-figures")
    t = parse_transcript(written.read_text(encoding="utf-8"))
    assert [turn.text for turn in t.turns] == ["Figures as PDF, not PNG.", "Noted."]


def test_growth_appends_new_turns_and_keeps_old_bytes(store: Store, tmp_path: Path) -> None:
    ingest(store, [_md(tmp_path, [("user", "one"), ("assistant", "two")])])
    path = store.transcript_path("2026-01-05-figures")
    before = path.read_bytes()
    result = ingest(
        store, [_md(tmp_path, [("user", "one"), ("assistant", "two"), ("user", "three")])]
    )
    after = path.read_bytes()
    assert after.startswith(before)
    assert result.sessions[0].status == "grown" and result.turns_added == 1
    assert [t.text for t in parse_transcript(after.decode()).turns] == ["one", "two", "three"]
    again = ingest(
        store, [_md(tmp_path, [("user", "one"), ("assistant", "two"), ("user", "three")])]
    )
    assert again.commit == "" and again.turns_added == 0


def test_changed_turn_is_refused_and_nothing_written(store: Store, tmp_path: Path) -> None:
    ingest(store, [_md(tmp_path, [("user", "one"), ("assistant", "two")])])
    head = store.head()
    path = store.transcript_path("2026-01-05-figures")
    before = path.read_bytes()
    other = _md(tmp_path, [("user", "new session")], sid="2026-01-06-other")
    edited = _md(tmp_path, [("user", "one EDITED"), ("assistant", "two"), ("user", "three")])
    with pytest.raises(IngestError, match="turn t1 differs"):
        ingest(store, [other, edited])
    assert path.read_bytes() == before
    assert not store.transcript_path("2026-01-06-other").exists()
    assert store.head() == head


def test_jsonl_ingest(store: Store, tmp_path: Path) -> None:
    src = _jsonl(
        tmp_path,
        "Chat Log 7.jsonl",
        [
            {
                "role": "user",
                "content": "I moved to Berlin last week.",
                "ts": "2026-02-02T10:00:00",
            },
            {"role": "assistant", "content": "Welcome to Berlin!", "ts": "2026-02-02T10:01:00"},
        ],
    )
    result = ingest(store, [src])
    assert result.sessions[0].id == "chat-log-7"
    t = parse_transcript(store.transcript_path("chat-log-7").read_text(encoding="utf-8"))
    assert t.started == "2026-02-02T10:00" and t.participants == ("user", "assistant")
    assert t.scope == {"user": "dana", "assistant": "atlas"}


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("not json\n", "not a JSON object"),
        ('{"role": "user", "content": "hi"}\n', "needs a 'ts'"),
        (
            '{"role": "user", "content": 5, "ts": "2026-01-01T10:00"}\n',
            "'content' must be a string",
        ),
        ('{"content": "x", "ts": "2026-01-01T10:00"}\n', "missing 'role'"),
        ('{"role": "user", "content": "x", "ts": "yesterday"}\n', "not an ISO datetime"),
        ("\n\n", "no messages"),
    ],
)
def test_bad_jsonl_is_refused(store: Store, tmp_path: Path, content: str, message: str) -> None:
    src = tmp_path / "bad.jsonl"
    src.write_text(content, encoding="utf-8")
    with pytest.raises(IngestError, match=message):
        ingest(store, [src])
    assert store.files("sessions/transcripts") == []


def test_scope_mismatch_is_refused(store: Store, tmp_path: Path) -> None:
    src = _md(tmp_path, [("user", "hello")], scope={"user": "someone-else", "assistant": "atlas"})
    with pytest.raises(IngestError, match="does not match this store's scope"):
        ingest(store, [src])


def test_binary_and_non_utf8_inputs_are_refused(store: Store, tmp_path: Path) -> None:
    nul = tmp_path / "nul.md"
    nul.write_bytes(b"---\nid: x\n---\n\x00\x01")
    latin = tmp_path / "latin.md"
    latin.write_bytes("---\nid: caf\xe9\n---\n".encode("latin-1"))
    with pytest.raises(IngestError, match="NUL"):
        ingest(store, [nul])
    with pytest.raises(IngestError, match="not UTF-8"):
        ingest(store, [latin])


def test_crlf_and_bom_markdown_is_accepted(store: Store, tmp_path: Path) -> None:
    src = _md(tmp_path, [("user", "line one\nline two")])
    src.write_bytes(b"\xef\xbb\xbf" + src.read_bytes().replace(b"\n", b"\r\n"))
    ingest(store, [src])
    t = parse_transcript(store.transcript_path("2026-01-05-figures").read_text(encoding="utf-8"))
    assert t.turns[0].text == "line one\nline two"


def test_unknown_format_is_refused(store: Store, tmp_path: Path) -> None:
    src = tmp_path / "chat.txt"
    src.write_text("hello")
    with pytest.raises(IngestError, match="--format"):
        ingest(store, [src])
    with pytest.raises(IngestError, match="unknown format"):
        ingest(store, [src], "csv")
