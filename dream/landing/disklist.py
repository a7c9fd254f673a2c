"""A list kept in a private temporary SQLite database, not in memory.

Job: hold what a run collects one entry per session, page, note or changed file (the
pending sessions, the files it created and updated, the changes the gates check) in
order, so that a run's peak memory does not grow with the store (issue 3): a full run of
2,000 sessions lists 12,000 files, and those lists of strings and records, held from the
phase that made them to the end of the run, were megabytes of its peak. Items are
pickled; reading them back gives equal, not identical, objects.

``DiskSet`` is the same for a set of strings asked ``in``.

Boundary: the process's own temporary database (``cache_db.connect("")``: on disk, gone
when the process ends); nothing under the store. The lists share one database (per
process and thread), a table each, dropped with its list: a connection apiece cost ~150
KB even for an empty list, and a page cache apiece once full. ``FactSpill``,
``subjects.TakenIds`` and ``workset.FileDigests`` keep their tables there too.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import pickle
import sqlite3
import threading
import weakref
from collections.abc import Container, Iterable, Iterator, Sequence
from typing import Generic, TypeVar, overload

from memoryfs.store.cache_db import connect

__all__ = ["DiskList", "DiskSet", "scratch_table"]

T = TypeVar("T")

_CHUNK = 256  # items read back together
_local = threading.local()
_tables = itertools.count()


def _scratch() -> sqlite3.Connection:
    """This process's and thread's scratch database (a forked child opens its own)."""
    if getattr(_local, "pid", None) != os.getpid():
        _local.db = connect("", check_same_thread=False)  # "": temporary, on disk
        _local.pid = os.getpid()
    db: sqlite3.Connection = _local.db
    return db


def _drop(db: sqlite3.Connection, table: str) -> None:
    with contextlib.suppress(sqlite3.Error):
        db.execute(f"DROP TABLE IF EXISTS {table}")


def scratch_table(
    owner: object, columns: str, without_rowid: bool = False
) -> tuple[sqlite3.Connection, str]:
    """A new table ``(columns)`` in the scratch database, dropped when ``owner`` is let go:
    the connection and the table's name. Every scratch structure of a run shares it
    (``DiskList``, ``FactSpill``, ``subjects.TakenIds``, ``workset.FileDigests``)."""
    db = _scratch()
    table = f"scratch{next(_tables)}"
    db.execute(f"CREATE TABLE {table}({columns}){' WITHOUT ROWID' if without_rowid else ''}")
    weakref.finalize(owner, _drop, db, table)
    return db, table


class DiskList(Sequence[T], Generic[T]):
    """Append, extend, len, iterate (in order), index and slice; on disk."""

    def __init__(self, items: Iterable[T] = ()) -> None:
        self._db, self._table = scratch_table(self, "n INTEGER PRIMARY KEY, item BLOB NOT NULL")
        self._len = 0
        self.extend(items)

    def append(self, item: T) -> None:
        self._db.execute(f"INSERT INTO {self._table} VALUES (?, ?)", (self._len, _dump(item)))
        self._len += 1

    def extend(self, items: Iterable[T]) -> None:
        def rows() -> Iterator[tuple[int, bytes]]:
            for item in items:
                yield self._len, _dump(item)
                self._len += 1

        self._db.executemany(f"INSERT INTO {self._table} VALUES (?, ?)", rows())

    def __len__(self) -> int:
        return self._len

    def __iter__(self) -> Iterator[T]:
        # a chunk at a time, by position: what is appended while iterating comes too
        start = 0
        while start < self._len:
            chunk = self._range(start, start + _CHUNK)
            start += len(chunk)
            yield from chunk

    def _range(self, start: int, stop: int) -> list[T]:
        rows = self._db.execute(
            f"SELECT item FROM {self._table} WHERE n >= ? AND n < ? ORDER BY n", (start, stop)
        )
        return [pickle.loads(blob) for (blob,) in rows]

    @overload
    def __getitem__(self, index: int) -> T: ...

    @overload
    def __getitem__(self, index: slice) -> list[T]: ...

    def __getitem__(self, index: int | slice) -> T | list[T]:
        if isinstance(index, slice):
            start, stop, step = index.indices(self._len)
            if step != 1:
                return self._range(start, stop)[::step] if step > 0 else list(self)[index]
            return self._range(start, stop) if start < stop else []
        i = index + self._len if index < 0 else index
        if not 0 <= i < self._len:
            raise IndexError("DiskList index out of range")
        return self._range(i, i + 1)[0]

    def __eq__(self, other: object) -> bool:
        """Equal to a list, tuple or ``DiskList`` of equal items in the same order."""
        if not isinstance(other, (list, tuple, DiskList)):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]  # mutable, like a list

    def __repr__(self) -> str:
        return f"DiskList({self._len} items)"

    def clear(self) -> None:
        self._db.execute(f"DELETE FROM {self._table}")
        self._len = 0


class DiskSet(Container[str]):
    """A set of strings on disk: add, ``in`` and len (what a gate asks of a full run's
    changed paths, every file of the store: as a set of strings, 2 MB at 2,000 sessions
    and twice that at 4,000)."""

    def __init__(self, items: Iterable[str] = ()) -> None:
        self._db, self._table = scratch_table(self, "item TEXT PRIMARY KEY", without_rowid=True)
        self.update(items)

    def update(self, items: Iterable[str]) -> None:
        self._db.executemany(
            f"INSERT OR IGNORE INTO {self._table} VALUES (?)", ((item,) for item in items)
        )

    def __contains__(self, item: object) -> bool:
        if not isinstance(item, str):
            return False
        found = self._db.execute(f"SELECT 1 FROM {self._table} WHERE item = ?", (item,))
        return found.fetchone() is not None

    def __len__(self) -> int:
        return int(self._db.execute(f"SELECT count(*) FROM {self._table}").fetchone()[0])

    def __repr__(self) -> str:
        return f"DiskSet({len(self)} items)"


def _dump(item: object) -> bytes:
    return pickle.dumps(item, protocol=pickle.HIGHEST_PROTOCOL)
