"""The state one consolidation run carries from phase to phase.

Job: hold the sessions being processed, their facts, the subject registry and every file the
run means to write, so that each page is read at most once and written at most once, at the
end, only when its bytes changed. Boundary: reads and writes only under the staged tree's
``memory/``; the live store is never touched.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from dream.engine import Engine
from dream.records import ConsolidationReport, Fact
from dream.subjects import Registry, Subject
from memoryfs.deletions import Deletions
from memoryfs.store import Store
from memoryfs.transcript import Transcript

__all__ = ["Filing", "Workset"]


@dataclass(frozen=True)
class Filing:
    """One fact filed on one subject page. ``primary``: the first page its claim went to."""

    subject: Subject
    fact: Fact
    primary: bool
    links: tuple[str, ...] = ()  # ids of the other subjects the claim names


@dataclass
class Workset:
    engine: Engine
    store: Store  # the staged tree (root = stage_root)
    report: ConsolidationReport
    deletions: Deletions
    sessions: list[Transcript] = field(default_factory=list)
    facts: dict[str, list[Fact]] = field(default_factory=dict)
    filings: list[Filing] = field(default_factory=list)
    speakers: set[str] = field(default_factory=set)  # display names of people who spoke
    registry: Registry | None = None
    _originals: dict[str, str | None] = field(default_factory=dict)
    _writes: dict[str, str] = field(default_factory=dict)

    @property
    def memory(self) -> Path:
        return self.store.memory

    def read(self, rel: str) -> str | None:
        """A file's text as the run found it (None if missing); read once."""
        if rel not in self._originals:
            try:
                self._originals[rel] = (self.memory / rel).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                self._originals[rel] = None
        return self._writes.get(rel, self._originals[rel])

    def exists(self, rel: str) -> bool:
        return rel in self._writes or (self.memory / rel).is_file()

    def write(self, rel: str, text: str) -> None:
        """Stage ``text`` for ``rel``; nothing touches the disk before ``flush``."""
        self.read(rel)
        self._writes[rel] = text

    def flush(self) -> tuple[list[str], list[str]]:
        """Write every changed file atomically; (created, updated) paths, sorted."""
        created: list[str] = []
        updated: list[str] = []
        for rel in sorted(self._writes):
            text, old = self._writes[rel], self._originals.get(rel)
            if text == old:
                continue
            _replace(self.store.resolve(rel), text)
            (created if old is None else updated).append(rel)
        self._originals.update(self._writes)
        self._writes.clear()
        return created, updated


def _replace(path: Path, text: str) -> None:
    """Write by temp file and rename, so no reader sees a torn file. No fsync: this is the
    staged worktree, which a crash throws away and the commit makes durable; thousands of
    fsyncs were a third of a full run's cost."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
