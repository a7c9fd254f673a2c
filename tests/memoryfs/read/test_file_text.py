"""Reading one file of memory by path: whole, by lines, one turn, and nothing outside memory/."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from read_fixtures import S1, S1_TURNS, build_store

from memoryfs.errors import MemoryFSError
from memoryfs.read.file_text import read_file
from memoryfs.receipts.log import ReceiptLog, local_receipt_dir
from memoryfs.receipts.records import page_item
from memoryfs.store.hashing import content_hash
from memoryfs.store.store import Store

PAGE = "knowledge/people/melanie.md"
TRANSCRIPT = f"sessions/transcripts/{S1}.md"


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Store:
    return build_store(tmp_path_factory.mktemp("file-text") / "store")


def test_a_page_whole_and_its_version(shared: Store) -> None:
    data = (shared.memory / PAGE).read_bytes()
    got = read_file(shared, PAGE)
    assert got.text == data.decode() and got.version == content_hash(data)
    assert (got.start, got.end, got.total_lines) == (1, data.count(b"\n"), data.count(b"\n"))
    assert read_file(shared, f"memory/{PAGE}").text == got.text  # the memory/ prefix is allowed


def test_lines_by_one_based_numbers(shared: Store) -> None:
    lines = (shared.memory / PAGE).read_text().splitlines()
    assert read_file(shared, PAGE, "2").text == lines[1] + "\n"
    two = read_file(shared, PAGE, "2-3")
    assert two.text == "\n".join(lines[1:3]) + "\n" and (two.start, two.end) == (2, 3)
    tail = read_file(shared, PAGE, f"{len(lines) - 1}-")
    assert tail.text == "\n".join(lines[-2:]) + "\n" and tail.end == len(lines)
    assert read_file(shared, PAGE, "3-9999").end == len(lines)  # a range past the end is cut
    for bad in ("0", "3-2", "x", "1,2", f"{len(lines) + 1}"):
        with pytest.raises(MemoryFSError, match="lines"):
            read_file(shared, PAGE, bad)


def test_one_turn_of_a_transcript(shared: Store) -> None:
    got = read_file(shared, f"{TRANSCRIPT}#t3")
    assert got.turn == "t3" and got.path == TRANSCRIPT
    speaker, text = S1_TURNS[2]
    assert got.text.startswith(f"## t3 · {speaker} · ") and got.text.rstrip().endswith(text)
    file_lines = (shared.memory / TRANSCRIPT).read_text().splitlines()
    assert file_lines[got.start - 1].startswith("## t3 ")  # where the turn is in the file
    assert "\n".join(file_lines[got.start - 1 : got.end]) == got.text.rstrip("\n")
    with pytest.raises(MemoryFSError, match="no turn t9"):
        read_file(shared, f"{TRANSCRIPT}#t9")
    with pytest.raises(MemoryFSError, match="anchor selects a turn of a transcript"):
        read_file(shared, f"{PAGE}#t1")
    with pytest.raises(MemoryFSError, match="not both"):
        read_file(shared, f"{TRANSCRIPT}#t1", "1-2")


@pytest.mark.parametrize(
    "path",
    [
        "../memory.toml",
        "knowledge/../../memory.toml",
        "/etc/passwd",
        "~/x.md",
        "..",
        "",
        ".git/config",
        "knowledge/.hidden.md",
        "file:///etc/passwd",
        "a\x00.md",
    ],
)
def test_paths_that_leave_memory_or_hide_are_refused(shared: Store, path: str) -> None:
    with pytest.raises(MemoryFSError, match="not a path inside memory/"):
        read_file(shared, path)


def test_only_markdown_files_that_exist(shared: Store) -> None:
    with pytest.raises(MemoryFSError, match=r"only Markdown files"):
        read_file(shared, "deletions.jsonl")
    with pytest.raises(MemoryFSError, match="no such file"):
        read_file(shared, "knowledge/people/nobody.md")
    with pytest.raises(MemoryFSError, match="no such file"):
        read_file(shared, "knowledge.md")


def test_symlinks_out_of_memory_are_refused(tmp_path: Path) -> None:
    store = build_store(tmp_path / "store")
    secret = tmp_path / "secret.md"
    secret.write_text("the password\n", encoding="utf-8")
    (store.memory / "notes" / "leak.md").symlink_to(secret)
    (store.memory / "notes" / "config.md").symlink_to(store.root / "memory.toml")
    (store.memory / "knowledge" / "outside").symlink_to(tmp_path, target_is_directory=True)
    for path in ("notes/leak.md", "notes/config.md", "knowledge/outside/secret.md"):
        with pytest.raises(MemoryFSError, match="symlink leads out of memory/"):
            read_file(store, path)
    # a link that stays inside memory/ reads as the file it names
    os.symlink(store.memory / PAGE, store.memory / "notes" / "mel.md")
    assert read_file(store, "notes/mel.md").text == (store.memory / PAGE).read_text()


def test_a_page_read_gets_a_recalled_receipt_and_a_transcript_none(tmp_path: Path) -> None:
    store = build_store(tmp_path / "store")
    got = read_file(store, PAGE, "1-2")
    read_file(store, f"{TRANSCRIPT}#t1")
    receipts = ReceiptLog(local_receipt_dir(store.root)).read()
    assert [(r.tier, r.item, r.version) for r in receipts] == [
        ("recalled", page_item(PAGE), got.version)
    ]
