"""The run's facts between the summarize and wiki phases, kept on disk.

Job: the attach phase votes each subject's type across every session of the run, so a
session's facts must outlive the session; held as objects until the wiki phase filed them,
they grew a full run's memory with the store (about 15 KB a session). Each session's facts
are pickled into one anonymous temporary file as they come and read back a session at a
time, in the order they were put; what stays in memory is an offset per session.

Boundary: the process's own temporary file (gone when closed, or when the process ends);
nothing under the store.
"""

from __future__ import annotations

import pickle
import tempfile
from collections.abc import Iterator
from typing import IO

from dream.records import Fact

__all__ = ["FactSpill"]


class FactSpill:
    """Session id -> its facts, in the order they were put; the facts live on disk."""

    def __init__(self) -> None:
        self._file: IO[bytes] | None = None
        self._where: dict[str, tuple[int, int]] = {}  # session id -> (offset, length)
        self._end = 0
        self.count = 0  # facts put (a session put again counts again)

    def put(self, session_id: str, facts: list[Fact]) -> None:
        """Keep ``facts`` for ``session_id`` (a session put again replaces its facts)."""
        data = pickle.dumps(facts, protocol=pickle.HIGHEST_PROTOCOL)
        if self._file is None:
            self._file = tempfile.TemporaryFile(prefix="dream-facts-")  # noqa: SIM115 (closed by clear)
        self._file.seek(self._end)
        self._file.write(data)
        self._where[session_id] = (self._end, len(data))  # a replaced one keeps its place
        self._end += len(data)
        self.count += len(facts)

    def get(self, session_id: str) -> list[Fact]:
        """The facts put for ``session_id`` ([] for a session never put)."""
        where = self._where.get(session_id)
        if where is None or self._file is None:
            return []
        offset, length = where
        self._file.seek(offset)
        facts: list[Fact] = pickle.loads(self._file.read(length))
        return facts

    def items(self) -> Iterator[tuple[str, list[Fact]]]:
        for session_id in list(self._where):
            yield session_id, self.get(session_id)

    def __contains__(self, session_id: object) -> bool:
        return session_id in self._where

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._where))

    def __len__(self) -> int:
        return len(self._where)

    def clear(self) -> None:
        """Forget every session's facts and drop the file."""
        if self._file is not None:
            self._file.close()
        self._file = None
        self._where.clear()
        self._end = self.count = 0
