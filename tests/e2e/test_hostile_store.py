"""A store that already holds hostile files (committed by hand, or dropped into the working
tree): an alias bomb in a page's and a transcript's frontmatter, a transcript over the
size limit, links to ``/dev/zero``, a FIFO. ``validate`` reports each as a finding, ``search``
and ``recall`` skip them, ``dream run`` skips them with a reason; every command finishes in
bounded time and memory (``bounded.cli_bounded``). A query made of one huge word is refused
with one line, and below the limit is answered in bounded time."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from bounded import cli_bounded

from cli.dream_app import app as dream_app
from memoryfs.ingest import ingest
from memoryfs.store.store import Store


def _laughs(key: str) -> str:
    lines = ["l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]" for i in range(1, 9)]
    return "\n".join(lines) + f"\n{key}: *l8\n"


def _turns(n: int, text: str) -> str:
    return "".join(f"\n## t{i} · user · 2026-01-01T10:00\n\n{text} {i}\n" for i in range(1, n + 1))


TRANSCRIPT = (
    "---\nid: {sid}\ntype: session\nstarted: 2026-01-01T10:00\n"
    "{meta}scope: {{user: dana, assistant: atlas}}\n---\n"
)


@pytest.fixture
def hostile_store(tmp_store: Store, tmp_path: Path) -> Store:
    good = tmp_path / "coffee.jsonl"
    good.write_text(
        '{"role": "user", "content": "I drink my coffee black.", "ts": "2026-01-02T09:00:00Z"}\n',
        encoding="utf-8",
    )
    ingest(tmp_store, [good])
    mem = tmp_store.memory
    transcripts = mem / "sessions" / "transcripts"
    (transcripts / "bomb.md").write_text(
        TRANSCRIPT.format(sid="bomb", meta=_laughs("participants")) + _turns(1, "coffee"),
        encoding="utf-8",
    )
    (transcripts / "big.md").write_text(
        TRANSCRIPT.format(sid="big", meta="") + _turns(400, "coffee " * 10), encoding="utf-8"
    )
    (transcripts / "zero.md").symlink_to("/dev/zero")
    (mem / "knowledge" / "topics" / "zero.md").symlink_to("/dev/zero")
    (mem / "knowledge" / "topics" / "bomb.md").write_text(
        "---\nid: bomb\ntitle: Coffee bomb\ntype: topic\nupdated: 2026-01-01\n"
        + _laughs("aliases")
        + "---\nCoffee.\n",
        encoding="utf-8",
    )
    with (tmp_store.root / "memory.toml").open("a", encoding="utf-8") as fh:
        fh.write("\n[limits]\ntranscript_bytes = 20000\n")
    subprocess.run(["git", "-C", str(tmp_store.root), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(tmp_store.root), "commit", "-qm", "by hand"], check=True)
    os.mkfifo(mem / "notes" / "fifo.md")  # not in Git: a working tree can still hold one
    return tmp_store


def test_validate_reports_each_hostile_file(hostile_store: Store) -> None:
    code, out, err = cli_bounded(["validate", "--store", str(hostile_store.root)])
    assert code == 1, err
    found = {line.split(":", 1)[0]: line for line in out.splitlines() if ": MF" in line}
    assert "MF002 frontmatter YAML expands" in found["memory/sessions/transcripts/bomb.md"]
    assert "MF002 frontmatter YAML expands" in found["memory/knowledge/topics/bomb.md"]
    assert "MF305 file is" in found["memory/sessions/transcripts/big.md"]
    assert "MF302" in found["memory/sessions/transcripts/zero.md"]
    assert "MF302" in found["memory/knowledge/topics/zero.md"]


@pytest.mark.parametrize("command", ["search", "recall"])
def test_search_and_recall_skip_hostile_files(hostile_store: Store, command: str) -> None:
    code, out, err = cli_bounded([command, "--store", str(hostile_store.root), "coffee"])
    assert code == 0, err
    assert "coffee" in out.lower() and "bomb" not in out and "big" not in out


def test_dream_run_skips_hostile_transcripts_with_a_reason(hostile_store: Store) -> None:
    code, out, err = cli_bounded(
        ["run", "--store", str(hostile_store.root)], app=dream_app, prog_name="dream", timeout=60
    )
    assert code == 0, (out + err)[-3000:]
    said = out + err
    assert "bomb.md:1: transcript unreadable (frontmatter YAML expands" in said
    assert "big.md:1: transcript unreadable (" in said and "over the 20000-byte limit" in said
    assert "zero.md:1: transcript unreadable (not a regular file)" in said


@pytest.mark.parametrize("command", ["search", "recall"])
def test_a_huge_query_word_is_refused_in_one_line(hostile_store: Store, command: str) -> None:
    word = "a" * 40_000
    code, out, err = cli_bounded([command, "--store", str(hostile_store.root), word])
    assert code == 1 and out == ""
    assert err.strip().splitlines() == [
        f"error: the {'query' if command == 'search' else 'question'} is 40000 characters, "
        "over the limit of 10000 (limits.query_chars in memory.toml); ask with fewer words"
    ]


@pytest.mark.parametrize("command", ["search", "recall"])
def test_a_long_word_within_the_limit_is_answered(hostile_store: Store, command: str) -> None:
    # one word of 9,999 letters, a hyphen at its end: the worst case of the compound pattern
    code, _, err = cli_bounded([command, "--store", str(hostile_store.root), "c" * 9_999 + "-"])
    assert code == 0, err


def test_index_ingest_and_materialize_pass_hostile_files_by(
    hostile_store: Store, tmp_path: Path
) -> None:
    root = str(hostile_store.root)
    code, _, err = cli_bounded(["index", "--store", root])
    assert code == 0, err
    chat = tmp_path / "tea.jsonl"
    chat.write_text(
        '{"role": "user", "content": "Green tea now.", "ts": "2026-01-03T09:00:00Z"}\n',
        encoding="utf-8",
    )
    code, _, err = cli_bounded(["ingest", "--store", root, str(chat)])
    assert code == 0, err
    sandbox = tmp_path / "sandbox"
    code, _, err = cli_bounded(["materialize", "--store", root, "--to", str(sandbox)])
    assert code == 0, err
    assert not (sandbox / "memory" / "knowledge" / "topics" / "zero.md").exists()


def test_dream_health_passes_hostile_files_by(hostile_store: Store) -> None:
    code, out, err = cli_bounded(
        ["health", "--store", str(hostile_store.root)], app=dream_app, prog_name="dream"
    )
    # a verdict, whichever: the exit code says which (0 only when healthy), not a crash
    assert code in range(10) and "overall:" in out and err == "", (out + err)[-3000:]
