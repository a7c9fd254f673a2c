"""Finding and reading store files safely: no symlink is ever followed.

Used by the search index (which files exist, their stat stamps, their bytes) and
by the materializer (the bytes to copy). A path that is absolute, holds ``..``,
or passes through a symlinked folder or names a symlink is refused (None), so
nothing outside ``memory/`` is ever read, whatever the tree holds.

A file's *stamp* folds its name, inode number, mtime, ctime and size into one
62-bit number. Every way of changing a file through the file system changes one
of them: an in-place write changes mtime and ctime (and ctime cannot be set back:
``touch -d``/``utime`` restore only mtime and themselves set ctime to now), an
atomic replace or a re-creation brings a new inode, a rename a new name. A
folder's stamp is the XOR of its files' stamps and its file count, so a folder is
compared with the index in O(1) and only a folder whose stamp moved is compared
file by file.
"""

from __future__ import annotations

import os
import stat
import zlib
from collections.abc import Sequence
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "WORKERS",
    "FolderScan",
    "FileBytes",
    "file_stamp",
    "inode_key",
    "name_bucket",
    "FolderList",
    "list_folder",
    "BUCKETS",
    "scan_folder",
    "walk",
    "read_file",
    "read_text",
    "READ_MAX_BYTES",
    "is_file",
]

_MASK = (1 << 62) - 1
# what a reader without a store's limits at hand reads of one file: more than any page or
# transcript ingest or Dream writes (validation holds the store's own limit)
READ_MAX_BYTES = 20_000_000
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
WORKERS = 2  # threads stat-ing folders at once, when a core is free
BUCKETS = 256  # a changed folder is compared bucket by bucket, by file name


def name_bucket(name: str) -> int:
    """Which of a folder's ``BUCKETS`` buckets the file ``name`` belongs to."""
    return zlib.crc32(name.encode()) % BUCKETS


def inode_key(name: str, inode: int) -> int:
    """The key of the pair (file name, inode number): what ``readdir`` alone tells."""
    return hash((zlib.crc32(name.encode()), inode)) & _MASK


def file_stamp(name: str, st: os.stat_result) -> int:
    """The stamp of the file ``name`` (its base name) with stat result ``st``.

    Integer tuples hash the same in every process (only str and bytes hashes are
    salted), so the stamp of an unchanged file is the same in every refresher.
    """
    key = (zlib.crc32(name.encode()), st.st_ino, st.st_mtime_ns, st.st_ctime_ns, st.st_size)
    return hash(key) & _MASK


@dataclass(frozen=True)
class FolderScan:
    """One folder as a refresh sees it."""

    rel: str  # the folder, relative to the root
    state: tuple[int, int]  # the folder's (mtime_ns, ctime_ns) before it was read
    count: int  # regular ``suffix`` files directly inside
    xor: int  # XOR of their stamps
    files: list[tuple[str, int, int]]  # (name, stamp, name_bucket(name))
    dirs: list[str]  # real (not symlinked) subfolders, relative to the root

    def buckets(self) -> dict[int, tuple[int, int]]:
        """Count and XOR of stamps per name bucket (``name_bucket``), non-empty ones."""
        out: dict[int, tuple[int, int]] = {}
        for _name, stamp, b in self.files:
            n, x = out.get(b, (0, 0))
            out[b] = (n + 1, x ^ stamp)
        return out


@dataclass(frozen=True)
class FileBytes:
    data: bytes  # empty when the file is larger than the limit
    mtime_ns: int
    size: int
    oversize: bool = False
    ctime_ns: int = 0
    stamp: int = 0  # ``file_stamp`` of the version read
    inode: int = 0


def scan_folder(root: Path, rel: str, suffix: str = ".md") -> FolderScan | None:
    """Stat every ``suffix`` file directly in ``root/rel`` (hidden entries and symlinks
    skipped); None if the folder is missing or not a real folder.

    The loop runs once per file of the store on every refresh, so it does no more
    than one ``fstatat`` (relative to the open folder: no path walk from the root)
    and one hash per file; entry types come from ``readdir``.
    """
    try:
        # O_NOFOLLOW: a folder that is a symlink is refused, not entered.
        fd = os.open(os.path.join(root, rel), _DIR_FLAGS)
    except OSError:
        return None
    files: list[tuple[str, int, int]] = []
    dirs: list[str] = []
    xor = 0
    crc = zlib.crc32
    try:
        st = os.fstat(fd)
        state = (st.st_mtime_ns, st.st_ctime_ns)
        with os.scandir(fd) as it:
            for entry in it:
                name = entry.name
                if name[0] == ".":
                    continue
                try:
                    if entry.is_dir(follow_symlinks=False):
                        dirs.append(f"{rel}/{name}")
                        continue
                    if not name.endswith(suffix) or not entry.is_file(follow_symlinks=False):
                        continue
                    st = entry.stat(follow_symlinks=False)
                except OSError:  # gone meanwhile
                    continue
                # file_stamp, inlined: this is the hot loop of every refresh.
                c = crc(name.encode())
                s = hash((c, st.st_ino, st.st_mtime_ns, st.st_ctime_ns, st.st_size)) & _MASK
                xor ^= s
                files.append((name, s, c % BUCKETS))
    except OSError:
        return None
    finally:
        os.close(fd)
    return FolderScan(rel, state, len(files), xor, files, dirs)


@dataclass(frozen=True)
class FolderList:
    """One folder as ``readdir`` alone tells it (no file stat-ed)."""

    rel: str
    state: tuple[int, int]  # the folder's (mtime_ns, ctime_ns) before it was read
    files: list[tuple[str, int, int]]  # (name, inode_key(name, inode), name_bucket(name))
    dirs: list[str]
    buckets: dict[int, tuple[int, int]]  # bucket -> count and XOR of inode keys


def list_folder(root: Path, rel: str, suffix: str = ".md") -> FolderList | None:
    """Names, inode numbers (from ``readdir``) and subfolders of ``root/rel``, like
    ``scan_folder`` but without a system call per file."""
    try:
        fd = os.open(os.path.join(root, rel), _DIR_FLAGS)
    except OSError:
        return None
    files: list[tuple[str, int, int]] = []
    dirs: list[str] = []
    counts = [0] * BUCKETS
    xors = [0] * BUCKETS
    crc = zlib.crc32
    try:
        st = os.fstat(fd)
        with os.scandir(fd) as it:
            for entry in it:
                name = entry.name
                if name[0] == ".":
                    continue
                try:
                    if name.endswith(suffix) and entry.is_file(follow_symlinks=False):
                        # inode_key and name_bucket, inlined (a quick refresh's hot loop)
                        c = crc(name.encode())
                        key = hash((c, entry.inode())) & _MASK
                        b = c % BUCKETS
                        counts[b] += 1
                        xors[b] ^= key
                        files.append((name, key, b))
                    elif entry.is_dir(follow_symlinks=False):
                        dirs.append(f"{rel}/{name}")
                except OSError:
                    continue
    except OSError:
        return None
    finally:
        os.close(fd)
    buckets = {b: (n, xors[b]) for b, n in enumerate(counts) if n}
    return FolderList(rel, (st.st_mtime_ns, st.st_ctime_ns), files, dirs, buckets)


def walk(
    root: Path, subdirs: Sequence[str], suffix: str = ".md", workers: int | None = None
) -> list[FolderScan]:
    """Every folder under ``root/subdir`` (symlinked folders are not entered), in the
    order of a depth-first walk whatever the number of ``workers``.

    Folders are scanned by a small thread pool when a core is free (``fstatat``
    releases the GIL, so the system calls of two folders overlap); on a busy
    machine threads only add overhead, so by default the walk then runs in one.
    """
    if workers is None:
        workers = WORKERS if _free_cores() >= 1 else 1
    scans: dict[str, FolderScan] = {}
    if workers <= 1:
        stack = list(subdirs)
        while stack:
            found = scan_folder(root, stack.pop(), suffix)
            if found is not None:
                scans[found.rel] = found
                stack.extend(found.dirs)
    else:
        with ThreadPoolExecutor(workers) as pool:
            pending = {pool.submit(scan_folder, root, rel, suffix) for rel in subdirs}
            while pending:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    found = future.result()
                    if found is not None:
                        scans[found.rel] = found
                        pending |= {pool.submit(scan_folder, root, d, suffix) for d in found.dirs}
    out: list[FolderScan] = []
    stack = list(subdirs)
    while stack:
        found = scans.get(stack.pop())
        if found is not None:
            out.append(found)
            stack.extend(found.dirs)
    return out


def _free_cores() -> float:
    try:
        return (os.cpu_count() or 1) - os.getloadavg()[0]
    except OSError:  # no load average on this platform
        return 0.0


def _safe_parts(root: Path, rel: str) -> tuple[Path, str] | None:
    """The real folder holding ``rel`` and its base name, if no component is a symlink."""
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
    return cur, parts[-1]


def is_file(root: Path, rel: str) -> bool:
    """Whether ``root/rel`` is a regular file reached through real folders only."""
    found = _safe_parts(root, rel)
    if found is None:
        return False
    try:
        return stat.S_ISREG(os.lstat(found[0] / found[1]).st_mode)
    except OSError:
        return False


def read_file(root: Path, rel: str, max_bytes: int) -> FileBytes | None:
    """The bytes of the regular file ``root/rel``, or None if missing or unsafe to read."""
    found = _safe_parts(root, rel)
    if found is None:
        return None
    path = found[0] / found[1]
    try:
        # lstat first: a symlink is never even opened (O_NOFOLLOW still guards a race).
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return None
        # O_NONBLOCK: a FIFO swapped in after the check is not waited on (fstat refuses it)
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode):
            return None
        stamp = file_stamp(found[1], st)
        if st.st_size > max_bytes:
            return FileBytes(
                b"", st.st_mtime_ns, st.st_size, True, st.st_ctime_ns, stamp, st.st_ino
            )
        # The stamp is taken before reading: a write during the read moves the
        # file's stamp away from the recorded one, so the next refresh reads again.
        data = fh.read(max_bytes + 1)
        if len(data) > max_bytes:  # it grew after the stat: read again later
            return FileBytes(b"", st.st_mtime_ns, len(data), True, st.st_ctime_ns, stamp, st.st_ino)
        return FileBytes(data, st.st_mtime_ns, st.st_size, False, st.st_ctime_ns, stamp, st.st_ino)


def read_text(root: Path, rel: str, max_bytes: int) -> str | None:
    """The UTF-8 text of the regular file ``root/rel`` (``read_file``); None when it is
    missing, unsafe to read (a link, a FIFO, a device), over ``max_bytes`` or not UTF-8."""
    got = read_file(root, rel, max_bytes)
    if got is None or got.oversize:
        return None
    try:
        return got.data.decode("utf-8")
    except UnicodeDecodeError:
        return None
