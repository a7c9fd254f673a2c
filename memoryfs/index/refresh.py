"""Keeping the search index in step with the files: every refresh sees every change.

A refresh stats every indexable file (one ``fstatat`` each, in ``memoryfs.store.scan``)
and folds each file's stamp (name, inode, mtime, ctime, size) into its folder's
count and XOR. The index keeps the same count and XOR over the stamps of the files
it indexed, per folder (``dirs``) and per folder and name bucket (``buckets``, 256
per folder), maintained by triggers in the same transaction as the rows. A folder
whose count and XOR match holds exactly the indexed versions, so it costs no
database work; in a folder whose stamp moved, only the buckets whose stamp moved
are compared file by file, and only files whose stamp moved are read, hashed and
(if their content changed) re-indexed. So an added, removed, renamed, atomically
replaced or in-place edited file is seen by the next refresh, with or without a
commit: an in-place edit with the size kept and the mtime put back still moves the
ctime, which no user call can set back.

``refresh(full=True)`` compares every file with its row (a check of the XORs
themselves). A file whose ctime is within ``_RACY_NS`` of the refresh is recorded
with stamp 0 (git's "racy timestamp" rule: it may change again within the same
clock tick), so the next refresh reads it again.

The stat walk is the floor of that guarantee: one system call per file (about
0.2 s of CPU per 100,000 files on a small VM, with as much again in Python). So
``refresh(max_stale=S)`` opts into a *quick* refresh while the last full walk is
at most S seconds old: it stats only folders, and reads a folder whose (mtime,
ctime) moved since recorded by name and inode (``readdir``, no stat per file),
comparing per bucket the XOR of (name, inode) keys. Additions, removals, renames
and replacements (atomic writes, ``git checkout``) change their folder and are
seen at once; an in-place edit changes only its file, so it is seen by the first
refresh after the S seconds (which walks in full) or by any default refresh.

Concurrent refreshers are safe: each batch of writes is one ``BEGIN IMMEDIATE``
transaction that re-checks the row it replaces, and each row's stamp is the stamp
of the version it indexed (taken by ``fstat`` on the descriptor that was read), so
even a slow refresher that installs an older version leaves a row whose stamp no
longer matches the file: the next refresh reads it again.
"""

from __future__ import annotations

import os
import sqlite3
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from memoryfs.index.fts import delete_file, immediate, insert_file, touch_file
from memoryfs.index.units import FileInfo, Unit, units_of
from memoryfs.store.hashing import content_hash
from memoryfs.store.scan import FileBytes, is_file, list_folder, read_file, walk
from memoryfs.store.store import Store

__all__ = ["RefreshStats", "refresh_index", "WALK_DIRS"]

WALK_DIRS = ("knowledge", "notes", "sessions/summaries", "sessions/transcripts")
_RACY_NS = 2 * 10**9  # file-system clocks are coarse: changes this recent are re-checked
_BATCH = 400
_clock = time.time_ns  # the wall clock file stamps are compared with (tests move it)

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class RefreshStats:
    scanned: int = 0  # files stat-ed
    compared: int = 0  # files compared one by one with their index row
    added: int = 0
    changed: int = 0
    removed: int = 0
    touched: int = 0  # stamp moved, content did not
    units: int = 0  # units written
    seconds: float = 0.0
    rebuilt: bool = False  # the cache was missing, corrupt or of an older schema
    full: bool = False  # every folder compared file by file
    quick: bool = False  # only folders whose times moved were read (``max_stale``)


@dataclass(frozen=True)
class _Row:
    id: int
    stamp: int
    hash: str
    ikey: int


@dataclass
class _Plan:
    """What a refresh found: files to read, rows to drop, folder states to remember."""

    todo: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    rows: dict[str, _Row] = field(default_factory=dict)
    compared: int = 0
    scanned: int = 0
    states: dict[str, tuple[int, int]] = field(default_factory=dict)  # folder -> times
    gone: list[str] = field(default_factory=list)  # folders no longer there


def refresh_index(
    store: Store,
    conn: sqlite3.Connection,
    *,
    full: bool | None = None,
    max_stale: float | None = None,
    rebuilt: bool = False,
    progress: Progress | None = None,
) -> RefreshStats:
    """Bring ``conn``'s index in line with ``store``'s files (see the module docstring).

    ``max_stale`` (seconds) allows a quick refresh while the last full walk is at
    most that old: only folders whose times moved are read, by name and inode.
    """
    started = time.perf_counter()
    now_ns = _clock()
    full = bool(full)
    walked_at = int(_meta(conn, "walked_at") or 0)
    quick = (
        max_stale is not None
        and not full
        and not rebuilt
        and 0 < walked_at <= now_ns
        and now_ns - walked_at <= max_stale * 1e9
    )
    plan = _quick_plan(store, conn) if quick else _walk_plan(store, conn, full)
    counts = {"added": 0, "changed": 0, "touched": 0, "units": 0, "removed": 0}
    for i in range(0, len(plan.todo), _BATCH):
        _apply(store, conn, plan.todo[i : i + _BATCH], plan.rows, counts, now_ns)
        if progress is not None:
            progress(min(i + _BATCH, len(plan.todo)), len(plan.todo))
    if plan.removed:
        _remove(store, conn, plan.removed, plan.rows, counts)
    _record(conn, plan, now_ns, full_walk=not quick)
    return RefreshStats(
        scanned=plan.scanned,
        compared=plan.compared,
        added=counts["added"],
        changed=counts["changed"],
        removed=counts["removed"],
        touched=counts["touched"],
        units=counts["units"],
        seconds=time.perf_counter() - started,
        rebuilt=rebuilt,
        full=full,
        quick=quick,
    )


def _meta(conn: sqlite3.Connection, key: str) -> str:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return str(row[0]) if row else ""


def _walk_plan(store: Store, conn: sqlite3.Connection, full: bool) -> _Plan:
    """Stat every file; compare the folders and name buckets whose stamps moved."""
    indexed = {
        str(r[0]): (int(r[1]), int(r[2])) for r in conn.execute("SELECT path, n, x FROM dirs")
    }
    scans = walk(store.memory, WALK_DIRS)
    changed = [s for s in scans if full or indexed.get(s.rel, (0, 0)) != (s.count, s.xor)]
    walked = {s.rel for s in scans}
    plan = _Plan(scanned=sum(s.count for s in scans), states={s.rel: s.state for s in scans})
    seen: set[str] = set()
    for scan in changed:
        moved = _moved(conn, scan.rel, scan.buckets(), "x", full)
        _compare(conn, scan.rel, scan.files, moved, "stamp", plan, seen)
    for folder in indexed:
        if folder not in walked:  # gone, or now a symlink
            _load(conn, folder, None, plan.rows)
    plan.removed = sorted(rel for rel in plan.rows if rel not in seen)
    plan.compared = len(seen)
    return plan


def _quick_plan(store: Store, conn: sqlite3.Connection) -> _Plan:
    """Read only folders whose times moved since recorded, by name and inode (``readdir``
    alone): what was added, removed, renamed or replaced there. In-place edits wait
    for the next full walk."""
    known = {
        str(r[0]): (int(r[1]), int(r[2]))
        for r in conn.execute("SELECT path, mtime_ns, ctime_ns FROM folders")
    }
    plan = _Plan()
    stack = [rel for rel in WALK_DIRS if rel not in known] + list(known)
    visited: set[str] = set()
    seen: set[str] = set()
    while stack:
        rel = stack.pop()
        if rel in visited:
            continue
        visited.add(rel)
        try:
            st = os.lstat(store.memory / rel)
            times = (st.st_mtime_ns, st.st_ctime_ns) if stat.S_ISDIR(st.st_mode) else None
        except OSError:
            times = None
        if times is not None and known.get(rel) == times:
            continue
        listed = list_folder(store.memory, rel) if times is not None else None
        if listed is None:
            if rel in known:
                plan.gone.append(rel)
            _load(conn, rel, None, plan.rows)
            continue
        plan.states[rel] = listed.state
        stack.extend(d for d in listed.dirs if d not in known)
        moved = _moved(conn, rel, listed.buckets, "xi", False)
        _compare(conn, rel, listed.files, moved, "ikey", plan, seen)
    plan.removed = sorted(rel for rel in plan.rows if rel not in seen)
    plan.compared = len(seen)
    return plan


def _moved(
    conn: sqlite3.Connection, folder: str, now: dict[int, tuple[int, int]], col: str, full: bool
) -> set[int]:
    """Name buckets of ``folder`` whose count or XOR (``col``: x or xi) differ from ``now``."""
    indexed = {
        int(b): (int(n), int(x))
        for b, n, x in conn.execute(f"SELECT b, n, {col} FROM buckets WHERE folder = ?", (folder,))
    }
    return {b for b in now.keys() | indexed.keys() if full or now.get(b) != indexed.get(b)}


def _compare(
    conn: sqlite3.Connection,
    folder: str,
    files: list[tuple[str, int, int]],
    moved: set[int],
    field: str,
    plan: _Plan,
    seen: set[str],
) -> None:
    """Queue the files of ``folder``'s ``moved`` buckets whose ``field`` (the walk's
    ``stamp`` or the quick listing's ``ikey``) differs from their row, in listing order
    (as a first build has always inserted); every file compared goes into ``seen``."""
    _load(conn, folder, sorted(moved), plan.rows)
    for name, value, bucket in files:
        if bucket in moved:
            path = f"{folder}/{name}"
            seen.add(path)
            row = plan.rows.get(path)
            if row is None or getattr(row, field) != value:
                plan.todo.append(path)


def _load(
    conn: sqlite3.Connection, folder: str, buckets: list[int] | None, rows: dict[str, _Row]
) -> None:
    """Index rows of ``folder`` (only those in ``buckets`` unless None) into ``rows``."""
    sql = "SELECT path, id, stamp, hash, ikey FROM files WHERE folder = ?"
    if buckets is not None:
        if not buckets:
            return
        sql += f" AND bucket IN ({','.join(str(b) for b in buckets)})"
    for r in conn.execute(sql, (folder,)):
        rows[str(r[0])] = _Row(int(r[1]), int(r[2]), str(r[3]), int(r[4]))


def _apply(
    store: Store,
    conn: sqlite3.Connection,
    batch: list[str],
    rows: dict[str, _Row],
    counts: dict[str, int],
    now_ns: int,
) -> None:
    limit = store.config.budgets.max_file_bytes
    # a transcript over its own limit is a validation finding (MF305): not indexed either
    transcripts = min(limit, store.config.limits.transcript_bytes)
    prepared: list[tuple[str, FileBytes, int, str, FileInfo | None, list[Unit] | None]] = []
    for rel in batch:
        got = read_file(
            store.memory, rel, transcripts if rel.startswith("sessions/transcripts/") else limit
        )
        if got is None:
            continue  # gone or no longer a regular file: the next refresh removes its row
        digest = content_hash(got.data)
        # A file changed within the clock's resolution may change again unseen
        # with the same stamp: record stamp 0 so the next refresh reads it again.
        stamp = got.stamp if now_ns - max(got.ctime_ns, got.mtime_ns) > _RACY_NS else 0
        old = rows.get(rel)
        if old is not None and old.hash == digest:
            prepared.append((rel, got, stamp, digest, None, None))
            continue
        prepared.append((rel, got, stamp, digest, *_units(rel, got.data)))
    with immediate(conn):
        for rel, got, stamp, digest, info, maybe_units in prepared:
            row = conn.execute(
                "SELECT id, stamp, hash FROM files WHERE path = ?", (rel,)
            ).fetchone()
            if row is not None and (row[1], row[2]) == (stamp, digest):
                continue  # another process indexed this very version meanwhile
            if row is not None and row[2] == digest:
                # Indexed with this content already (here, or meanwhile by another
                # process with another stamp): only the stamp moves.
                touch_file(conn, row[0], rel, got.mtime_ns, got.size, stamp, got.inode)
                counts["touched"] += 1
                continue
            if maybe_units is None:
                # The row changed under us: index this content after all.
                info, units = _units(rel, got.data)
            else:
                units = maybe_units
            if row is not None:
                delete_file(conn, row[0])
                counts["changed"] += 1
            else:
                counts["added"] += 1
            insert_file(conn, rel, got.mtime_ns, got.size, stamp, got.inode, digest, info, units)
            counts["units"] += len(units)


def _units(rel: str, data: bytes) -> tuple[FileInfo | None, list[Unit]]:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None, []
    return units_of(rel, text) if text else (None, [])


def _remove(
    store: Store,
    conn: sqlite3.Connection,
    removed: list[str],
    rows: dict[str, _Row],
    counts: dict[str, int],
) -> None:
    with immediate(conn):
        for rel in removed:
            if is_file(store.memory, rel):
                continue  # it came back meanwhile; the next refresh will see it
            row = conn.execute("SELECT id, stamp FROM files WHERE path = ?", (rel,)).fetchone()
            if row is not None and int(row[1]) == rows[rel].stamp:
                delete_file(conn, row[0])
                counts["removed"] += 1


def _record(conn: sqlite3.Connection, plan: _Plan, now_ns: int, full_walk: bool) -> None:
    """Remember the folders' times (a folder changed within the clock's resolution as
    unknown, so the next quick refresh reads it again) and when a full walk ended."""
    rows = [
        (rel, *(times if now_ns - max(times) > _RACY_NS else (0, 0)))
        for rel, times in plan.states.items()
    ]
    with immediate(conn):
        if full_walk:
            conn.execute("DELETE FROM folders")
            conn.execute(
                "INSERT OR REPLACE INTO meta(key, value) VALUES ('walked_at', ?)", (str(now_ns),)
            )
        conn.executemany("DELETE FROM folders WHERE path = ?", [(g,) for g in plan.gone])
        conn.executemany(
            "INSERT OR REPLACE INTO folders(path, mtime_ns, ctime_ns) VALUES (?, ?, ?)", rows
        )
