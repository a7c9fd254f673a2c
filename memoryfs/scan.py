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

__all__ = [
    "Seen",
    "DirState",
    "Listing",
    "FileBytes",
    "dir_state",
    "list_dir",
    "list_names",
    "stat_file",
    "walk",
    "read_file",
]


@dataclass(frozen=True)
class Seen:
    rel: str  # relative to the walked root, posix
    mtime_ns: int
    size: int
    inode: int = 0


@dataclass(frozen=True)
class DirState:
    """What changes when a folder gains, loses or renames an entry."""

    mtime_ns: int
    ctime_ns: int


@dataclass(frozen=True)
class Listing:
    rel: str  # the folder, relative to the root
    state: DirState
    files: list[Seen]  # regular ``suffix`` files directly inside
    dirs: list[str]  # real (not symlinked) subfolders, relative to the root


@dataclass(frozen=True)
class FileBytes:
    data: bytes  # empty when the file is larger than the limit
    mtime_ns: int
    size: int
    oversize: bool = False


def dir_state(root: Path, rel: str) -> DirState | None:
    """The folder's state, or None if it is missing or not a real folder."""
    try:
        st = os.lstat(os.path.join(root, rel))
    except OSError:
        return None
    if not stat.S_ISDIR(st.st_mode):
        return None
    return DirState(st.st_mtime_ns, st.st_ctime_ns)


def list_dir(root: Path, rel: str, suffix: str = ".md") -> Listing | None:
    """Files (stat-ed) and subfolders of ``root/rel``; hidden entries and symlinks skipped."""
    # Plain strings, not pathlib: a full scan runs this over every file of the store.
    state = dir_state(root, rel)
    if state is None:
        return None
    folder = os.path.join(root, rel)
    files: list[Seen] = []
    dirs: list[str] = []
    try:
        with os.scandir(folder) as it:
            entries = list(it)
    except OSError:
        return None
    for entry in entries:
        name = entry.name
        if name.startswith("."):
            continue
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if stat.S_ISDIR(st.st_mode):
            dirs.append(f"{rel}/{name}")
        elif stat.S_ISREG(st.st_mode) and name.endswith(suffix):
            files.append(Seen(f"{rel}/{name}", st.st_mtime_ns, st.st_size, st.st_ino))
    return Listing(rel, state, files, dirs)


def list_names(
    root: Path, rel: str, suffix: str = ".md"
) -> tuple[DirState, dict[str, int], list[str]] | None:
    """A folder read without stat-ing its entries: state, ``suffix`` file name -> inode,
    and real subfolders (relative to the root). Symlinks and hidden entries skipped."""
    state = dir_state(root, rel)
    if state is None:
        return None
    inodes: dict[str, int] = {}
    dirs: list[str] = []
    try:
        with os.scandir(os.path.join(root, rel)) as it:
            for entry in it:
                name = entry.name
                if name[0] == ".":
                    continue
                if entry.is_dir(follow_symlinks=False):
                    dirs.append(f"{rel}/{name}")
                elif name.endswith(suffix) and entry.is_file(follow_symlinks=False):
                    inodes[name] = entry.inode()
    except OSError:
        return None
    return state, inodes, dirs


def stat_file(root: Path, rel: str) -> Seen | None:
    """The regular file ``root/rel`` (not a symlink), or None."""
    try:
        st = os.lstat(os.path.join(root, rel))
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return Seen(rel, st.st_mtime_ns, st.st_size, st.st_ino)


def walk(root: Path, subdirs: Sequence[str], suffix: str = ".md") -> Iterator[Listing]:
    """Every folder under ``root/subdir`` (symlinked folders are not entered)."""
    stack = list(subdirs)
    while stack:
        listing = list_dir(root, stack.pop(), suffix)
        if listing is not None:
            stack.extend(listing.dirs)
            yield listing


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
        # lstat first: a symlink is never even opened (O_NOFOLLOW still guards a race).
        if not stat.S_ISREG(os.lstat(cur / parts[-1]).st_mode):
            return None
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
