"""The run's facts between the summarize and wiki phases, kept on disk.

Job: the attach phase votes each subject's type across every session of the run, so a
session's facts must outlive the session; held as objects until the wiki phase filed them,
they would grow a full run's memory with the store (about 15 KB a session). Each session's facts
are pickled into a private temporary SQLite database as they come and read back a session
at a time, in the order they were put; nothing stays in memory per session.

Boundary: a private temporary SQLite database (on disk, gone when it is closed); nothing
under the store.
"""

from __future__ import annotations

import pickle
from collections.abc import Iterator

from dream.records import Fact
from memoryfs.store.cache_db import connect

__all__ = ["SpilledFacts"]

_TABLE = "CREATE TABLE facts(n INTEGER PRIMARY KEY, sid TEXT NOT NULL UNIQUE, data BLOB NOT NULL)"


class SpilledFacts:
    """Session id -> its facts, in the order they were put; the facts live on disk."""

    def __init__(self) -> None:
        self._db = connect("")  # "": a temporary database, on disk
        self._db.execute(_TABLE)
        self._puts = 0
        self._len = 0
        self.count = 0  # facts put (a session put again counts again)

    def put(self, session_id: str, facts: list[Fact]) -> None:
        """Keep ``facts`` for ``session_id`` (a session put again replaces its facts)."""
        data = pickle.dumps(facts, protocol=pickle.HIGHEST_PROTOCOL)
        self._len += session_id not in self
        # a replaced one keeps its place
        self._db.execute(
            "INSERT INTO facts VALUES (?, ?, ?)"
            " ON CONFLICT(sid) DO UPDATE SET data = excluded.data",
            (self._puts, session_id, data),
        )
        self._puts += 1
        self.count += len(facts)

    def get(self, session_id: str) -> list[Fact]:
        """The facts put for ``session_id`` ([] for a session never put)."""
        row = self._db.execute("SELECT data FROM facts WHERE sid = ?", (session_id,)).fetchone()
        if row is None:
            return []
        facts: list[Fact] = pickle.loads(row[0])
        return facts

    def items(self) -> Iterator[tuple[str, list[Fact]]]:
        for session_id in self:
            yield session_id, self.get(session_id)

    def __contains__(self, session_id: object) -> bool:
        row = self._db.execute("SELECT 1 FROM facts WHERE sid = ?", (session_id,)).fetchone()
        return row is not None

    def __iter__(self) -> Iterator[str]:
        """The session ids in put order, read a chunk at a time."""
        after = -1
        while True:
            rows = self._db.execute(
                "SELECT n, sid FROM facts WHERE n > ? ORDER BY n LIMIT 256", (after,)
            ).fetchall()
            if not rows:
                return
            after = rows[-1][0]
            yield from (sid for _, sid in rows)

    def __len__(self) -> int:
        return self._len

    def clear(self) -> None:
        """Forget every session's facts."""
        self._db.execute("DELETE FROM facts")
        self._len = self.count = 0
