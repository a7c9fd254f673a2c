"""Bounded input at ingest: ``[limits]`` in ``memory.toml`` checked before parsing, only
regular files read, alias bombs refused; each refusal one line, nothing written, in
bounded time (``bounded.cli_bounded``: a forked child with a deadline and a memory cap)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from bounded import cli_bounded

from memoryfs.store.store import Store

SCOPE = "scope: {user: dana, assistant: atlas}\n"


def _laughs(key: str) -> str:
    lines = ["l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]" for i in range(1, 9)]
    return "\n".join(lines) + f"\n{key}: *l8\n"


def _md(sid: str, meta: str = "", turns: int = 1, text: str = "hello") -> str:
    body = "".join(f"\n## t{i} · user · 2026-01-01T10:00\n\n{text}\n" for i in range(1, turns + 1))
    return f"---\nid: {sid}\ntype: session\nstarted: 2026-01-01T10:00\n{meta}{SCOPE}---\n{body}"


def _jsonl(turns: int, text: str = "hello") -> str:
    row = {"role": "user", "content": text, "ts": "2026-01-01T10:00:00Z"}
    return "".join(json.dumps(row) + "\n" for _ in range(turns))


def _set_limits(store: Store, **limits: int) -> None:
    lines = "".join(f"{k} = {v}\n" for k, v in limits.items())
    with (store.root / "memory.toml").open("a", encoding="utf-8") as fh:
        fh.write(f"\n[limits]\n{lines}")
    subprocess.run(["git", "-C", str(store.root), "commit", "-qam", "limits"], check=True)


def _tree(store: Store) -> dict[str, bytes]:
    return {
        str(p.relative_to(store.root)): p.read_bytes()
        for p in store.root.rglob("*")
        if p.is_file() and ".git" not in p.parts and ".memoryfs" not in p.parts
    }


def _refused(store: Store, path: Path, expected: str, *extra: str) -> None:
    """``memoryfs ingest path`` ends in one line naming ``path`` and ``expected``, exit 1,
    and the store is as it was."""
    before, head = _tree(store), store.head()
    code, _, err = cli_bounded(["ingest", "--store", str(store.root), *extra, str(path)])
    lines = err.strip().splitlines()
    assert code == 1 and len(lines) == 1, err[-2000:]
    assert lines[0].startswith(f"error: {path}") and expected in lines[0], lines[0]
    assert store.head() == head and _tree(store) == before
    status = subprocess.run(
        ["git", "-C", str(store.root), "status", "--porcelain"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert status == ""


@pytest.mark.parametrize("key", ["participants", "scope", "title"])
def test_alias_bomb_in_a_transcripts_frontmatter_is_refused(
    tmp_store: Store, tmp_path: Path, key: str
) -> None:
    meta = _laughs(key) if key != "scope" else _laughs("extra").replace(SCOPE, "")
    text = _md("bomb", meta)
    if key == "scope":
        text = text.replace(SCOPE, "scope: *l8\n")
    path = tmp_path / "bomb.md"
    path.write_text(text, encoding="utf-8")
    _refused(tmp_store, path, "frontmatter YAML expands to more than 100000 values")


def test_a_store_may_lower_the_yaml_limits(tmp_store: Store, tmp_path: Path) -> None:
    _set_limits(tmp_store, yaml_aliases=2)
    path = tmp_path / "anchors.md"
    path.write_text(_md("anchors", "a: &a x\nb: *a\nc: *a\nd: *a\n"), encoding="utf-8")
    _refused(tmp_store, path, "uses more than 2 aliases")


def test_a_transcript_over_the_size_limit_is_refused_before_it_is_parsed(
    tmp_store: Store, tmp_path: Path
) -> None:
    # stands for the 50 MB transcript: the limit is lowered instead of the file grown
    _set_limits(tmp_store, transcript_bytes=20_000)
    path = tmp_path / "big.md"
    path.write_text(_md("big", turns=400, text="a long turn " * 10), encoding="utf-8")
    _refused(tmp_store, path, "over the 20000-byte limit of one transcript")
    # the same session from JSON lines: refused once it is a transcript, before a write
    path = tmp_path / "big.jsonl"
    path.write_text(_jsonl(400, "a long turn " * 10), encoding="utf-8")
    _refused(tmp_store, path, "as a transcript, over the 20000-byte limit")


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("a.jsonl", _jsonl(2_000)),
        ("a.md", _md("a", turns=2_000)),
        ("o.json", json.dumps([{"role": "user", "content": "hi"}] * 2_000)),
        ("c.json", json.dumps([{"title": "t", "mapping": {}}] * 2_000)),
        ("l.json", json.dumps({"conversation": {"speaker_a": "A"}, "pad": "x" * 60_000})),
        ("cc.jsonl", json.dumps({"sessionId": "s", "type": "user", "pad": "x" * 60_000})),
    ],
    ids=["jsonl", "md", "openai", "chatgpt", "locomo", "claude-code"],
)
def test_an_input_over_input_bytes_is_refused_unread(
    tmp_store: Store, tmp_path: Path, name: str, data: str
) -> None:
    _set_limits(tmp_store, input_bytes=50_000)
    path = tmp_path / name
    path.write_text(data, encoding="utf-8")
    assert path.stat().st_size > 50_000
    _refused(tmp_store, path, "over the 50000-byte limit (limits.input_bytes")


def test_turn_and_turn_count_limits(tmp_store: Store, tmp_path: Path) -> None:
    _set_limits(tmp_store, turns=5, turn_bytes=1_000)
    path = tmp_path / "many.jsonl"
    path.write_text(_jsonl(6), encoding="utf-8")
    _refused(tmp_store, path, "has 6 turns, over the limit of 5")
    path = tmp_path / "long.jsonl"
    path.write_text(_jsonl(1, "é" * 600), encoding="utf-8")  # 1,200 bytes in 600 characters
    _refused(tmp_store, path, "turn t1 is 1200 bytes, over the 1000-byte limit")


def test_growth_past_the_transcript_limit_is_refused(tmp_store: Store, tmp_path: Path) -> None:
    _set_limits(tmp_store, transcript_bytes=3_000)
    path = tmp_path / "grow.jsonl"
    path.write_text(_jsonl(10), encoding="utf-8")
    code, _, err = cli_bounded(["ingest", "--store", str(tmp_store.root), str(path)])
    assert code == 0, err
    path.write_text(_jsonl(60), encoding="utf-8")
    _refused(tmp_store, path, "session grow is", "--format", "jsonl")


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_store: Store, tmp_path: Path) -> None:
    path = tmp_path / "chat.jsonl"
    os.mkfifo(path)
    _refused(tmp_store, path, "not a regular file (a FIFO)")


def test_a_link_to_dev_zero_is_refused(tmp_store: Store, tmp_path: Path) -> None:
    path = tmp_path / "chat.jsonl"
    path.symlink_to("/dev/zero")
    _refused(tmp_store, path, "not a regular file (a character device)")


def test_a_fifo_in_place_of_a_stored_transcript_is_not_read(
    tmp_store: Store, tmp_path: Path
) -> None:
    path = tmp_path / "chat.jsonl"
    path.write_text(_jsonl(1), encoding="utf-8")
    os.mkfifo(tmp_store.memory / "sessions" / "transcripts" / "chat.md")
    code, _, err = cli_bounded(["ingest", "--store", str(tmp_store.root), str(path)])
    assert code == 1 and "is not a regular file" in err and len(err.strip().splitlines()) == 1
