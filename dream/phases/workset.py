"""The state one consolidation run carries from phase to phase.

Job: hold the sessions being processed, their facts, the subject registry and every file the
run means to write, so that each page is parsed once and written at most once, at the end
(or once ``SPILL_CHARS`` of text wait), only when its bytes changed. Boundary: reads and
writes only under the staged tree's ``memory/``; the live store is never touched.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from dream.engines.base import Engine
from dream.phases.spilled_facts import FactSpill
from dream.records import ConsolidationReport, Fact
from dream.wiki.subjects import Registry, Subject
from memoryfs.forget.deletions import Deletions
from memoryfs.store.cache_db import connect
from memoryfs.store.store import Store

__all__ = ["FoundFiles", "Filing", "Workset"]


@dataclass(frozen=True, slots=True)
class Filing:
    """One fact filed on one subject page. ``primary``: the first page its claim went to."""

    subject: Subject
    fact: Fact
    primary: bool
    links: tuple[str, ...] = ()  # ids of the other subjects the claim names


SPILL_CHARS = 250_000  # staged text held before it is written out (a full run writes tens of MB)


def _digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).digest()


@dataclass
class Workset:
    engine: Engine
    store: Store  # the staged tree (root = stage_root)
    report: ConsolidationReport
    deletions: Deletions
    sessions: list[str] = field(default_factory=list)  # ids of the sessions summarized
    facts: FactSpill = field(default_factory=FactSpill)  # session id -> its facts, on disk
    # what the wiki phase files, in order: the attach phase makes it an iterable that reads
    # the facts back a session at a time, so the run's facts are never all held at once
    filings: Iterable[Filing] = field(default_factory=list)
    speakers: set[str] = field(default_factory=set)  # display names of people who spoke
    registry: Registry | None = None
    # A file's text is held only while it waits to be written; what each file held before
    # the run wrote it is in ``_found``
    _found: FoundFiles = field(default_factory=lambda: FoundFiles())
    _writes: dict[str, str] = field(default_factory=dict)
    _pending: int = 0  # characters in _writes

    @property
    def memory(self) -> Path:
        return self.store.memory

    def _load(self, rel: str) -> str | None:
        try:
            return (self.memory / rel).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None

    def read(self, rel: str) -> str | None:
        """A file's text as the run has it: what it wrote, else the file (None if missing)."""
        if rel in self._writes:
            return self._writes[rel]
        return self._load(rel)

    def exists(self, rel: str) -> bool:
        return rel in self._writes or (self.memory / rel).is_file()

    def names_in(self, folder: str, prefix: str = "") -> list[str]:
        """The names of the files in ``folder`` (relative to ``memory/``) that start with
        ``prefix``, as the run has them (written or on disk), sorted."""
        names = {r.rsplit("/", 1)[1] for r in self._writes if r.startswith(f"{folder}/{prefix}")}
        try:
            with os.scandir(self.memory / folder) as found:
                names.update(e.name for e in found if e.name.startswith(prefix))
        except OSError:
            pass
        return sorted(n for n in names if "/" not in n)

    def write(self, rel: str, text: str) -> None:
        """Stage ``text`` for ``rel``; it reaches the disk at ``flush``, or earlier once
        ``SPILL_CHARS`` of text wait (the files are the same either way)."""
        if rel not in self._found:
            held = self._load(rel)
            self._found.add(rel, None if held is None else _digest(held))
        self._pending += len(text) - len(self._writes.get(rel, ""))
        self._writes[rel] = text
        if self._pending > SPILL_CHARS:
            self._spill()

    def _spill(self) -> None:
        """Write every waiting file whose text differs from the disk's."""
        for rel in sorted(self._writes):
            text = self._writes[rel]
            if text != self._load(rel):
                _replace(self.store.resolve(rel), text)
        self._writes.clear()
        self._pending = 0

    def flush(self) -> tuple[list[str], list[str]]:
        """Write every changed file atomically; (created, updated) paths, sorted: the files
        written that were not there, and those whose text now differs from what they held.
        What the files hold now is what a later ``flush`` compares with."""
        self._spill()
        return self._found.settle(lambda rel: _digest(self._load(rel) or ""))


class FoundFiles:
    """Of each file a run writes, what it held when the run first wrote it: a digest of its
    text, or None (no file). Only the run's spills change the staged tree's files, so that
    is what the file held when the run began. In a private temporary SQLite database (on
    disk, gone when it is closed): a full run writes every summary, page and note, 50,000
    files at 8,000 synthetic sessions, and a set and a dict of them would hold ~9 MB."""

    def __init__(self) -> None:
        self._db = connect("")  # "": a temporary database, on disk
        self._db.execute("CREATE TABLE found(rel TEXT PRIMARY KEY, digest BLOB) WITHOUT ROWID")

    def __contains__(self, rel: object) -> bool:
        return self._db.execute("SELECT 1 FROM found WHERE rel = ?", (rel,)).fetchone() is not None

    def add(self, rel: str, digest: bytes | None) -> None:
        self._db.execute("INSERT OR IGNORE INTO found VALUES (?, ?)", (rel, digest))

    def settle(self, digest_now: Callable[[str], bytes]) -> tuple[list[str], list[str]]:
        """(created, updated) paths, sorted: the files that were not there, and those whose
        digest now differs from what they held; then forget them all (what they hold now
        is what they held, for what the run writes next)."""
        created: list[str] = []
        updated: list[str] = []
        for rel, digest in self._db.execute("SELECT rel, digest FROM found ORDER BY rel"):
            if digest is None:
                created.append(rel)
            elif digest_now(rel) != digest:
                updated.append(rel)
        self._db.execute("DELETE FROM found")
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
