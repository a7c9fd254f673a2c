"""Finding and reading store files safely: no symlink is ever followed.

Used by the search index (which files exist, and their bytes) and by the
materializer (the bytes to copy). A path that is absolute, holds ``..``, or
passes through a symlinked folder or names a symlink is refused (None), so
nothing outside ``memory/`` is ever read, whatever the tree holds.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Seen", "FileBytes", "walk_files", "read_file"]


@dataclass(frozen=True)
class Seen:
    rel: str  # relative to the walked root, posix
    mtime_ns: int
    size: int


@dataclass(frozen=True)
class FileBytes:
    data: bytes  # empty when the file is larger than the limit
    mtime_ns: int
    size: int
    oversize: bool = False


def walk_files(root: Path, subdirs: Sequence[str], suffix: str = ".md") -> Iterator[Seen]:
    """Regular ``suffix`` files under ``root/subdir``; hidden entries and symlinks skipped."""
    stack = [root / d for d in subdirs]
    while stack:
        folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            if entry.name.startswith("."):
                continue
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode):
                stack.append(Path(entry.path))
            elif stat.S_ISREG(st.st_mode) and entry.name.endswith(suffix):
                rel = Path(entry.path).relative_to(root).as_posix()
                yield Seen(rel, st.st_mtime_ns, st.st_size)


def read_file(root: Path, rel: str, max_bytes: int) -> FileBytes | None:
    """The bytes of the regular file ``root/rel``, or None if missing or unsafe to read."""
    parts = rel.split("/")
    if not rel or rel.startswith("/") or "\x00" in rel or any(p in ("", ".", "..") for p in parts):
        return None
    cur = root
    for part in parts[:-1]:
        cur = cur / part
        try:
            if not stat.S_ISDIR(os.lstat(cur).st_mode):
                return None  # a symlinked (or missing) folder
        except OSError:
            return None
    try:
        fd = os.open(cur / parts[-1], os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode):
            return None
        if st.st_size > max_bytes:
            return FileBytes(b"", st.st_mtime_ns, st.st_size, oversize=True)
        return FileBytes(fh.read(), st.st_mtime_ns, st.st_size)
