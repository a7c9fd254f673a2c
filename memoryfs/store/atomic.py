"""Atomic file writes: a temp file in the same folder, fsync, then ``os.replace``.

A reader (or a crash) sees the old bytes or the new bytes, never a torn file.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

__all__ = ["atomic_write_bytes", "atomic_write_chunks", "atomic_write_text", "remove_temp_files"]


@contextlib.contextmanager
def _replacing(path: Path, mode: str, encoding: str | None = None) -> Iterator[IO[Any]]:
    """A temp file beside ``path``, open in ``mode``; synced and moved onto ``path`` when
    the block ends, deleted if it raises."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, mode, encoding=encoding, newline="" if encoding else None) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically, creating parent folders."""
    with _replacing(path, "wb") as fh:
        fh.write(data)


def atomic_write_chunks(path: Path, chunks: Iterable[str]) -> None:
    """Write the text of ``chunks`` as UTF-8, atomically, without joining it first."""
    with _replacing(path, "w", encoding="utf-8") as fh:
        for chunk in chunks:
            fh.write(chunk)


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` as UTF-8 with LF line endings, atomically."""
    atomic_write_bytes(path, text.encode("utf-8"))


def remove_temp_files(folder: Path) -> int:
    """Delete the temp files writes killed midway left under ``folder`` (no symlinks
    followed); call it holding the lock of every writer there. Returns how many."""
    removed = 0
    if os.path.islink(folder):
        return 0  # never walk out of the store through a symlink
    for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for name in filenames:
            if name.startswith(".") and name.endswith(".tmp"):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(os.path.join(dirpath, name))
                    removed += 1
    return removed
