"""Atomic writes: the old bytes or the new ones, never a torn file, no temp file left."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memoryfs.store.atomic import (
    atomic_write_bytes,
    atomic_write_chunks,
    atomic_write_text,
    remove_temp_files,
)


def test_writes_create_folders_and_keep_line_endings(tmp_path: Path) -> None:
    atomic_write_text(tmp_path / "a/b/page.md", "one\ntwo\n")
    atomic_write_bytes(tmp_path / "raw.bin", b"\x00\xff\r\n")
    atomic_write_chunks(tmp_path / "c.md", iter(["é\r\n", "", "z"]))
    assert (tmp_path / "a/b/page.md").read_bytes() == b"one\ntwo\n"
    assert (tmp_path / "raw.bin").read_bytes() == b"\x00\xff\r\n"
    assert (tmp_path / "c.md").read_bytes() == "é\r\nz".encode()


def test_a_write_that_fails_midway_leaves_the_old_file_and_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "page.md"
    target.write_text("old\n", encoding="utf-8")

    def chunks() -> Iterator[str]:
        yield "new, half written"
        raise RuntimeError("disk gone")

    with pytest.raises(RuntimeError, match="disk gone"):
        atomic_write_chunks(target, chunks())
    assert target.read_text(encoding="utf-8") == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["page.md"]


def test_remove_temp_files_skips_git_and_symlinks(tmp_path: Path) -> None:
    (tmp_path / "memory/notes").mkdir(parents=True)
    (tmp_path / "memory/notes/.x.md.abc.tmp").write_text("torn", encoding="utf-8")
    (tmp_path / "memory/.git").mkdir()
    (tmp_path / "memory/.git/.keep.tmp").write_text("git's", encoding="utf-8")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / ".y.tmp").write_text("not ours", encoding="utf-8")
    (tmp_path / "memory/link").symlink_to(outside, target_is_directory=True)
    assert remove_temp_files(tmp_path / "memory") == 1
    assert not (tmp_path / "memory/notes/.x.md.abc.tmp").exists()
    assert (tmp_path / "memory/.git/.keep.tmp").exists()
    assert (outside / ".y.tmp").exists()
    assert remove_temp_files(tmp_path / "memory/link") == 0
