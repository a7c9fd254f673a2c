"""SQLite caches keyed by Git blob id, and a commit's files listed as Git writes them.

A blob id names exact content, so what Dream derives from a file of a commit (a
page's keys for the validation gate, ``dream.gates.pagekeys``; a transcript's
content hash and turn count for orient, ``dream.phases.orient``) can be kept under the
blob's id in ``.memoryfs/`` and is never stale. Such a cache is only a cache and is
never a reason to fail: ``with_blob_cache`` rebuilds one SQLite cannot read (not a
database, damaged, another version), works in an in-memory database when the file
cannot be used now (another process holds it, or the folder cannot be written) or
must not be (a symlinked cache or cache folder is never written through), and
deletes the cache files older versions wrote in its place (``earlier``).

``ls_tree`` yields a commit's files under some folders as ``git ls-tree`` writes
them, so a store of thousands of sessions is never listed into memory whole.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import subprocess
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TypeVar

from dream.errors import DreamError
from memoryfs.store import cache_db
from memoryfs.store.store import Store

__all__ = ["with_blob_cache", "ls_tree"]

T = TypeVar("T")


def with_blob_cache(
    store: Store,
    name: str,
    version: int,
    schema: Iterable[str],
    temp: Iterable[str],
    work: Callable[[sqlite3.Connection], T],
    earlier: Iterable[str] = (),
) -> T:
    """``work`` with the cache ``.memoryfs/<name>`` open (``schema`` created, ``temp``
    tables fresh). ``work`` may run again from the start, on a rebuilt cache or in
    memory, when SQLite fails under it; it commits what it wants kept.
    ``earlier``: names of the caches this one replaces (deleted when seen)."""
    for old in earlier:
        with contextlib.suppress(OSError):
            (store.cache_dir / old).unlink()
    path = store.cache_dir / name
    usable = not (path.is_symlink() or store.cache_dir.is_symlink())
    places = [str(path), str(path), ":memory:"] if usable else [":memory:"]
    for attempt, place in enumerate(places):
        try:
            with contextlib.closing(_connect(place, version, (*schema,), (*temp,))) as db:
                return work(db)
        except sqlite3.OperationalError:
            if attempt + 1 == len(places):
                raise
            if place != ":memory:" and _corrupt(place):
                _remove(path)
            else:
                places[attempt + 1] = ":memory:"  # locked or unwritable: not ours to delete
        except sqlite3.DatabaseError:
            if attempt + 1 == len(places):
                raise
            _remove(path)  # unreadable: start anew
    raise AssertionError("unreachable")


def _connect(
    place: str, version: int, schema: tuple[str, ...], temp: tuple[str, ...]
) -> sqlite3.Connection:
    if place != ":memory:":
        with contextlib.suppress(OSError):
            Path(place).parent.mkdir(parents=True, exist_ok=True)
    db = cache_db.connect(place)
    try:
        found = db.execute("PRAGMA user_version").fetchone()[0]
        if found not in (0, version):
            raise sqlite3.DatabaseError("another cache version")
        for statement in schema:
            db.execute(statement)
        if found == 0:  # a new file (setting it again would write it, and wait for the disk)
            db.execute(f"PRAGMA user_version = {version}")
        db.commit()
        for statement in temp:
            db.execute(statement)
    except BaseException:
        db.close()
        raise
    return db


def _corrupt(place: str) -> bool:
    """Whether the file at ``place`` is a database SQLite cannot read (rather than one
    it cannot lock or write now)."""
    try:
        with contextlib.closing(sqlite3.connect(place, timeout=0.1)) as db:
            return db.execute("PRAGMA quick_check").fetchone()[0] != "ok"
    except sqlite3.OperationalError:
        return False
    except sqlite3.DatabaseError:
        return True


def _remove(path: Path) -> None:
    for suffix in ("", "-journal", "-wal", "-shm"):
        with contextlib.suppress(OSError):
            Path(str(path) + suffix).unlink()


def ls_tree(root: Path, commit: str, folders: Iterable[str]) -> Iterator[tuple[str, str]]:
    """(path, blob id) of each file under ``folders`` (relative to the root, ending in
    ``/``) at ``commit``, read as git lists them rather than all at once. A listing git
    cannot make (an unknown commit) is a ``DreamError`` once the output is read."""
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
    with subprocess.Popen(
        ["git", "ls-tree", "-r", "-z", "--full-tree", commit, "--", *folders],
        cwd=root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        rest = b""
        while chunk := proc.stdout.read(1 << 16):
            entries = (rest + chunk).split(b"\0")
            rest = entries.pop()
            for entry in entries:
                meta, _, rel = entry.decode("utf-8", "surrogateescape").partition("\t")
                parts = meta.split()
                if len(parts) == 3 and parts[1] == "blob":
                    yield rel, parts[2]
        error = proc.stderr.read().decode("utf-8", "replace").strip()
        if proc.wait() != 0:
            detail = error.splitlines()[0] if error else f"exit {proc.returncode}"
            raise DreamError(f"git ls-tree failed in {root}: {detail}")
