"""Keeping the search index in step with the files: full scans and folder scans.

A *full scan* stats every indexable file and compares (mtime, size) with the
index, then the content hash of those that differ, so only changed, added and
removed files are re-read and re-indexed. A *folder scan* stats only folders: a
folder whose (mtime, ctime) did not change since it was last listed gained, lost
and replaced no entry (atomic writes, ``git checkout`` and deletions all change
the folder), so only changed folders are listed and their files compared. On a
large store that is the difference between stat-ing every file and stat-ing a few
hundred folders.

What a folder scan cannot see is a file rewritten in place (same name, same
folder, e.g. by an editor that truncates and writes). So a store of up to
``FULL_SCAN_MAX`` files always gets a full scan, a larger one gets one at least
every ``FULL_SCAN_EVERY`` seconds, and ``refresh(full=True)`` forces one.

Concurrent refreshers are safe: each batch of writes is one ``BEGIN IMMEDIATE``
transaction that re-checks the row it replaces, and a file or folder changed
within the clock's resolution of the scan is recorded as unknown, so the next
scan looks again (git's "racy timestamp" rule).
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass

from memoryfs.fts import delete_file, immediate, insert_file
from memoryfs.hashing import content_hash
from memoryfs.scan import (
    DirState,
    Listing,
    Seen,
    dir_state,
    list_names,
    read_file,
    stat_file,
    walk,
)
from memoryfs.store import Store
from memoryfs.units import FileInfo, Unit, units_of

__all__ = ["RefreshStats", "refresh_index", "WALK_DIRS", "FULL_SCAN_MAX", "FULL_SCAN_EVERY"]

WALK_DIRS = ("knowledge", "notes", "sessions/summaries", "sessions/transcripts")
FULL_SCAN_MAX = 5000  # files; up to this a full scan costs a few tens of ms
FULL_SCAN_EVERY = 300.0  # seconds between full scans of a larger store
_RACY_NS = 2 * 10**9  # file-system clocks are coarse: changes this recent are re-checked
_BATCH = 400

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class RefreshStats:
    scanned: int = 0  # files compared with the index
    added: int = 0
    changed: int = 0
    removed: int = 0
    touched: int = 0  # mtime changed, content did not
    units: int = 0  # units written
    seconds: float = 0.0
    rebuilt: bool = False  # the cache was missing, corrupt or of an older schema
    full: bool = True  # a full scan (else a folder scan)


def refresh_index(
    store: Store,
    conn: sqlite3.Connection,
    *,
    full: bool | None = None,
    rebuilt: bool = False,
    progress: Progress | None = None,
) -> RefreshStats:
    """Bring ``conn``'s index in line with ``store``'s files (see the module docstring)."""
    started = time.perf_counter()
    now_ns = time.time_ns()
    stored = {
        str(r[0]): (DirState(int(r[1]), int(r[2])), str(r[3]))
        for r in conn.execute("SELECT path, mtime_ns, ctime_ns, listing FROM dirs")
    }
    head = store.head()
    if full is None:
        n_files = int(conn.execute("SELECT count(*) FROM files").fetchone()[0])
        last_full = float(_meta(conn, "full_scan_at") or 0)
        full = (
            rebuilt
            or not stored
            or n_files <= FULL_SCAN_MAX
            or time.time() - last_full > FULL_SCAN_EVERY
        )
    committed: list[str] | None = []
    if not full:
        committed = _committed_changes(store, _meta(conn, "head"), head)
        full = committed is None
    if full:
        listings = list(walk(store.memory, WALK_DIRS))
        folders = [
            _Folder(x.rel, x.state, {f.rel.rsplit("/", 1)[1]: f.inode for f in x.files})
            for x in listings
        ]
        known = {
            str(r[0]): (int(r[1]), int(r[2]), str(r[3]))
            for r in conn.execute("SELECT path, mtime_ns, size, hash FROM files")
        }
        gone: list[str] = []
        todo, removed = _compare(listings, known)
        scanned = sum(len(listing.files) for listing in listings)
    else:
        folders, gone = _changed_folders(store, {k: v[0] for k, v in stored.items()})
        todo, removed, known = _folder_changes(store, conn, folders, gone, stored, committed or [])
        scanned = len(todo)
    counts = {"added": 0, "changed": 0, "touched": 0, "units": 0, "removed": 0}
    old_hash = {p: v[2] for p, v in known.items()}
    for i in range(0, len(todo), _BATCH):
        _apply(store, conn, todo[i : i + _BATCH], old_hash, counts, now_ns)
        if progress is not None:
            progress(min(i + _BATCH, len(todo)), len(todo))
    if removed:
        _remove(store, conn, removed, counts)
    _record(conn, folders, gone, full, stored, now_ns, head)
    return RefreshStats(
        scanned=scanned,
        added=counts["added"],
        changed=counts["changed"],
        removed=counts["removed"],
        touched=counts["touched"],
        units=counts["units"],
        seconds=time.perf_counter() - started,
        rebuilt=rebuilt,
        full=full,
    )


def _meta(conn: sqlite3.Connection, key: str) -> str:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return str(row[0]) if row else ""


def _compare(
    listings: list[Listing], known: dict[str, tuple[int, int, str]]
) -> tuple[list[Seen], list[str]]:
    """Files whose (mtime, size) differ from the index, and indexed files not listed."""
    todo: list[Seen] = []
    seen: set[str] = set()
    for listing in listings:
        for item in listing.files:
            seen.add(item.rel)
            old = known.get(item.rel)
            if old is None or old[0] != item.mtime_ns or old[1] != item.size:
                todo.append(item)
    return todo, [p for p in known if p not in seen]


def _committed_changes(store: Store, old: str, new: str) -> list[str] | None:
    """Files under memory/ that commits since ``old`` changed (None: cannot tell).

    Git may rewrite a file by unlinking and re-creating it, and the new file can
    get the old inode number back; the commit diff names it anyway.
    """
    if old == new:
        return []
    if not old or not new:
        return None
    try:
        out = store.repo.git.diff("--name-only", "-z", "--no-renames", old, new, "--", "memory")
    except Exception:  # noqa: BLE001 - an unknown commit (gc, rewritten history): scan it all
        return None
    return [p[len("memory/") :] for p in out.split("\0") if p.startswith("memory/")]


@dataclass(frozen=True)
class _Folder:
    """A listed folder: its state and its files' inode numbers by name."""

    rel: str
    state: DirState
    inodes: dict[str, int]


def _changed_folders(store: Store, stored: dict[str, DirState]) -> tuple[list[_Folder], list[str]]:
    """Folders changed since last listed (read without stat-ing their files); gone ones."""
    children: dict[str, list[str]] = defaultdict(list)
    for path in stored:
        parent = path.rsplit("/", 1)[0] if "/" in path else ""
        children[parent].append(path)
    folders: list[_Folder] = []
    gone: list[str] = []
    stack = list(WALK_DIRS)
    visited: set[str] = set()
    while stack:
        rel = stack.pop()
        if rel in visited:
            continue
        visited.add(rel)
        state = dir_state(store.memory, rel)
        if state is not None and stored.get(rel) == state:
            stack.extend(children.get(rel, ()))
            continue
        listed = list_names(store.memory, rel) if state is not None else None
        if listed is None:
            if rel in stored:
                gone.append(rel)
            stack.extend(children.get(rel, ()))  # they are gone too, or moved
            continue
        folders.append(_Folder(rel, listed[0], listed[1]))
        stack.extend(listed[2])
        stack.extend(children.get(rel, ()))
    return folders, gone


def _folder_changes(
    store: Store,
    conn: sqlite3.Connection,
    folders: list[_Folder],
    gone: list[str],
    stored: dict[str, tuple[DirState, str]],
    committed: list[str],
) -> tuple[list[Seen], list[str], dict[str, tuple[int, int, str]]]:
    """What a folder scan must re-check: new names and new inodes in changed folders and
    files named by new commits; removed: names gone from their folder."""
    candidates = {rel for rel in committed if _indexable(rel)}
    removed: set[str] = set()
    for folder in folders:
        before = _listing_of(stored.get(folder.rel, (None, ""))[1])
        if before is None:  # never listed with inodes: compare every file
            candidates.update(f"{folder.rel}/{name}" for name in folder.inodes)
            removed.update(_known_in(conn, [folder.rel]))
            continue
        now = folder.inodes
        candidates.update(f"{folder.rel}/{n}" for n, ino in now.items() if before.get(n) != ino)
        removed.update(f"{folder.rel}/{n}" for n in before.keys() - now.keys())
    removed.update(_known_in(conn, gone))
    todo: list[Seen] = []
    for rel in sorted(candidates):
        found = stat_file(store.memory, rel)
        if found is not None:
            todo.append(found)
            removed.discard(rel)
        else:
            removed.add(rel)
    known: dict[str, tuple[int, int, str]] = {}
    for rel in [t.rel for t in todo] + sorted(removed):
        row = conn.execute(
            "SELECT mtime_ns, size, hash FROM files WHERE path = ?", (rel,)
        ).fetchone()
        if row is not None:
            known[rel] = (int(row[0]), int(row[1]), str(row[2]))
    todo = [t for t in todo if known.get(t.rel, (None, None))[:2] != (t.mtime_ns, t.size)]
    return todo, sorted(p for p in removed if p in known), known


def _indexable(rel: str) -> bool:
    parts = rel.split("/")
    return (
        rel.endswith(".md")
        and rel.startswith(tuple(f"{d}/" for d in WALK_DIRS))
        and not any(p.startswith(".") or not p for p in parts)
    )


def _listing_of(raw: str) -> dict[str, int] | None:
    if not raw:
        return None
    try:
        data = json.loads(raw)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _known_in(conn: sqlite3.Connection, folders: list[str]) -> dict[str, tuple[int, int, str]]:
    """Indexed files directly inside the given folders (a range scan on the path index)."""
    out: dict[str, tuple[int, int, str]] = {}
    for folder in folders:
        prefix = folder + "/"
        for r in conn.execute(
            "SELECT path, mtime_ns, size, hash FROM files WHERE path > ? AND path < ?",
            (prefix, folder + "0"),  # "0" sorts right after "/"
        ):
            path = str(r[0])
            if "/" not in path[len(prefix) :]:
                out[path] = (int(r[1]), int(r[2]), str(r[3]))
    return out


def _apply(
    store: Store,
    conn: sqlite3.Connection,
    batch: list[Seen],
    old_hash: dict[str, str],
    counts: dict[str, int],
    now_ns: int,
) -> None:
    limit = store.config.budgets.max_file_bytes
    prepared: list[tuple[str, int, int, str, FileInfo | None, list[Unit] | None]] = []
    for item in batch:
        got = read_file(store.memory, item.rel, limit)
        if got is None:
            continue
        digest = content_hash(got.data)
        # A file changed within the clock's resolution may change again unseen
        # with the same mtime: record mtime 0 so the next scan hashes it again.
        mtime = got.mtime_ns if now_ns - got.mtime_ns > _RACY_NS else 0
        if old_hash.get(item.rel) == digest:
            prepared.append((item.rel, mtime, got.size, digest, None, None))
            continue
        prepared.append((item.rel, mtime, got.size, digest, *_units(item.rel, got.data)))
    with immediate(conn):
        for rel, mtime, size, digest, info, maybe_units in prepared:
            row = conn.execute(
                "SELECT id, mtime_ns, size, hash FROM files WHERE path = ?", (rel,)
            ).fetchone()
            if row is not None and (row[1], row[2], row[3]) == (mtime, size, digest):
                continue  # another process indexed this very version meanwhile
            if maybe_units is None:
                if row is not None and row[3] == digest:
                    conn.execute(
                        "UPDATE files SET mtime_ns = ?, size = ? WHERE id = ?",
                        (mtime, size, row[0]),
                    )
                    counts["touched"] += 1
                    continue
                # The row changed under us: index this content after all.
                got = read_file(store.memory, rel, limit)
                info, units = _units(rel, got.data if got else b"")
            else:
                units = maybe_units
            if row is not None:
                delete_file(conn, row[0])
                counts["changed"] += 1
            else:
                counts["added"] += 1
            insert_file(conn, rel, mtime, size, digest, info, units)
            counts["units"] += len(units)


def _units(rel: str, data: bytes) -> tuple[FileInfo | None, list[Unit]]:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None, []
    return units_of(rel, text) if text else (None, [])


def _remove(
    store: Store, conn: sqlite3.Connection, removed: list[str], counts: dict[str, int]
) -> None:
    with immediate(conn):
        for rel in removed:
            if os.path.lexists(store.memory / rel):
                continue  # it came back meanwhile; the next refresh will see it
            row = conn.execute("SELECT id FROM files WHERE path = ?", (rel,)).fetchone()
            if row is not None:
                delete_file(conn, row[0])
                counts["removed"] += 1


def _record(
    conn: sqlite3.Connection,
    folders: list[_Folder],
    gone: list[str],
    full: bool,
    stored: dict[str, tuple[DirState, str]],
    now_ns: int,
    head: str,
) -> None:
    """Remember each listed folder (state and name -> inode) and the commit, for next time.

    A folder changed within the clock's resolution is stored with an unknown state,
    so the next folder scan lists it again.
    """
    rows = [
        (
            f.rel,
            *(
                (f.state.mtime_ns, f.state.ctime_ns)
                if now_ns - max(f.state.mtime_ns, f.state.ctime_ns) > _RACY_NS
                else (0, 0)
            ),
            json.dumps(f.inodes),
        )
        for f in folders
    ]
    with immediate(conn):
        if full:
            listed = {f.rel for f in folders}
            gone = [path for path in stored if path not in listed]
            conn.execute(
                "INSERT OR REPLACE INTO meta(key, value) VALUES ('full_scan_at', ?)",
                (str(now_ns / 1e9),),
            )
        conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('head', ?)", (head,))
        conn.executemany("DELETE FROM dirs WHERE path = ?", [(p,) for p in gone])
        conn.executemany(
            "INSERT OR REPLACE INTO dirs(path, mtime_ns, ctime_ns, listing) VALUES (?, ?, ?, ?)",
            rows,
        )
