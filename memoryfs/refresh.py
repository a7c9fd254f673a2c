"""Keeping the search index in step with the files: every refresh sees every change.

A refresh stats every indexable file (one ``fstatat`` each, in ``memoryfs.scan``)
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

Concurrent refreshers are safe: each batch of writes is one ``BEGIN IMMEDIATE``
transaction that re-checks the row it replaces, and each row's stamp is the stamp
of the version it indexed (taken by ``fstat`` on the descriptor that was read), so
even a slow refresher that installs an older version leaves a row whose stamp no
longer matches the file: the next refresh reads it again.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass

from memoryfs.fts import delete_file, immediate, insert_file, touch_file
from memoryfs.hashing import content_hash
from memoryfs.scan import FileBytes, FolderScan, is_file, read_file, walk
from memoryfs.store import Store
from memoryfs.units import FileInfo, Unit, units_of

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


@dataclass(frozen=True)
class _Row:
    id: int
    stamp: int
    hash: str


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
    now_ns = _clock()
    full = bool(full)
    indexed = {
        str(r[0]): (int(r[1]), int(r[2])) for r in conn.execute("SELECT path, n, x FROM dirs")
    }
    scans = list(walk(store.memory, WALK_DIRS))
    changed = [s for s in scans if full or indexed.get(s.rel, (0, 0)) != (s.count, s.xor)]
    walked = {s.rel for s in scans}
    vanished = [rel for rel in indexed if rel not in walked]  # folders gone (or now symlinks)
    todo, removed, rows, compared = _differences(conn, changed, vanished, full)
    counts = {"added": 0, "changed": 0, "touched": 0, "units": 0, "removed": 0}
    for i in range(0, len(todo), _BATCH):
        _apply(store, conn, todo[i : i + _BATCH], rows, counts, now_ns)
        if progress is not None:
            progress(min(i + _BATCH, len(todo)), len(todo))
    if removed:
        _remove(store, conn, removed, rows, counts)
    return RefreshStats(
        scanned=sum(s.count for s in scans),
        compared=compared,
        added=counts["added"],
        changed=counts["changed"],
        removed=counts["removed"],
        touched=counts["touched"],
        units=counts["units"],
        seconds=time.perf_counter() - started,
        rebuilt=rebuilt,
        full=full,
    )


def _differences(
    conn: sqlite3.Connection, changed: list[FolderScan], vanished: list[str], full: bool
) -> tuple[list[str], list[str], dict[str, _Row], int]:
    """Files to read (new, or stamp moved) and indexed files gone, in the name buckets
    whose count or XOR moved (every bucket if ``full``) of the given folders, and in
    vanished folders; the index rows of both; how many files were compared."""
    rows: dict[str, _Row] = {}
    todo: list[str] = []
    seen: set[str] = set()
    for scan in changed:
        walked = scan.buckets()
        indexed = {
            int(b): (int(n), int(x))
            for b, n, x in conn.execute("SELECT b, n, x FROM buckets WHERE folder = ?", (scan.rel,))
        }
        moved = {
            b for b in walked.keys() | indexed.keys() if full or walked.get(b) != indexed.get(b)
        }
        _load(conn, scan.rel, sorted(moved), rows)
        for name, stamp, bucket in scan.files:
            if bucket not in moved:
                continue
            rel = f"{scan.rel}/{name}"
            seen.add(rel)
            row = rows.get(rel)
            if row is None or row.stamp != stamp:
                todo.append(rel)
    for folder in vanished:
        _load(conn, folder, None, rows)
    # Walk order, as a first build has always inserted: search reads high rowids as new.
    return todo, sorted(rel for rel in rows if rel not in seen), rows, len(seen)


def _load(
    conn: sqlite3.Connection, folder: str, buckets: list[int] | None, rows: dict[str, _Row]
) -> None:
    """Index rows of ``folder`` (only those in ``buckets`` unless None) into ``rows``."""
    sql = "SELECT path, id, stamp, hash FROM files WHERE folder = ?"
    if buckets is not None:
        if not buckets:
            return
        sql += f" AND bucket IN ({','.join(str(b) for b in buckets)})"
    for r in conn.execute(sql, (folder,)):
        rows[str(r[0])] = _Row(int(r[1]), int(r[2]), str(r[3]))


def _apply(
    store: Store,
    conn: sqlite3.Connection,
    batch: list[str],
    rows: dict[str, _Row],
    counts: dict[str, int],
    now_ns: int,
) -> None:
    limit = store.config.budgets.max_file_bytes
    prepared: list[tuple[str, FileBytes, int, str, FileInfo | None, list[Unit] | None]] = []
    for rel in batch:
        got = read_file(store.memory, rel, limit)
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
            if maybe_units is None:
                if row is not None and row[2] == digest:
                    touch_file(conn, row[0], got.mtime_ns, got.size, stamp)
                    counts["touched"] += 1
                    continue
                # The row changed under us: index this content after all.
                info, units = _units(rel, got.data)
            else:
                units = maybe_units
            if row is not None:
                delete_file(conn, row[0])
                counts["changed"] += 1
            else:
                counts["added"] += 1
            insert_file(conn, rel, got.mtime_ns, got.size, stamp, digest, info, units)
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
