"""The staged files one consolidation run reads and writes, and what it reports.

Job: hold every file the run means to write, so that each page is parsed once and written at
most once, at the end (or once ``SPILL_CHARS`` of text wait), only when its bytes changed;
carry the run's engine, its deletion log and its report. What one phase hands the next
(the sessions summarized, their facts, the filings) is that phase's return value, not a
field here. Boundary: reads and writes only under the staged tree's ``memory/``; the live
store is never touched.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from dream.engines.base import Engine
from dream.records import ConsolidationReport
from memoryfs.forget.deletions import Deletions
from memoryfs.store.cache_db import connect
from memoryfs.store.scan import read_text
from memoryfs.store.store import Store

__all__ = ["FileDigests", "Workset"]


SPILL_CHARS = 250_000  # staged text held before it is written out (a full run writes tens of MB)


def _digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).digest()


@dataclass
class Workset:
    engine: Engine
    store: Store  # the staged tree (root = stage_root)
    report: ConsolidationReport
    deletions: Deletions
    # A file's text is held only while it waits to be written; what each file held, and
    # what the run wrote, are digests in ``_digests``
    _digests: FileDigests = field(default_factory=lambda: FileDigests())
    _writes: dict[str, str] = field(default_factory=dict)
    _pending: int = 0  # characters in _writes

    @property
    def memory(self) -> Path:
        return self.store.memory

    def _load(self, rel: str) -> str | None:
        # a regular file within the store's file limit only (never a link, FIFO or device)
        return read_text(self.memory, rel, self.store.config.budgets.max_file_bytes)

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
        if rel not in self._digests:
            held = self._load(rel)
            self._digests.find(rel, None if held is None else _digest(held))
        self._pending += len(text) - len(self._writes.get(rel, ""))
        self._writes[rel] = text
        if self._pending > SPILL_CHARS:
            self._spill()

    def _spill(self) -> None:
        """Write every waiting file whose bytes differ from the disk's."""
        for rel in sorted(self._writes):
            text = self._writes[rel]
            digest = _digest(text)
            if digest != self._digests.on_disk(rel):
                _replace(self.store.resolve(rel), text)
                self._digests.wrote(rel, digest)
        self._writes.clear()
        self._pending = 0

    def flush(self) -> tuple[list[str], list[str]]:
        """Write every changed file atomically; (created, updated) paths, sorted."""
        self._spill()
        return self._digests.settle()


class FileDigests:
    """Per file the run wrote: the digest of what it held before (None: no file) and of what
    the run wrote since the last ``settle``. Only the run's spills change the staged tree's
    files, so the first is what the file held when the run began. In a private temporary
    SQLite database (on disk, gone when it is closed): a full run writes every summary,
    page and note, 50,000 files at 8,000 synthetic sessions, whose paths and digests in
    dictionaries would hold ~10 MB."""

    def __init__(self) -> None:
        self._db = connect("")  # "": a temporary database, on disk
        self._db.execute(
            "CREATE TABLE files(rel TEXT PRIMARY KEY, found BLOB, disk BLOB) WITHOUT ROWID"
        )

    def __contains__(self, rel: object) -> bool:
        return self._db.execute("SELECT 1 FROM files WHERE rel = ?", (rel,)).fetchone() is not None

    def find(self, rel: str, digest: bytes | None) -> None:
        self._db.execute("INSERT OR IGNORE INTO files(rel, found) VALUES (?, ?)", (rel, digest))

    def on_disk(self, rel: str) -> bytes | None:
        """The digest of what ``rel`` holds now (None: no file)."""
        row = self._db.execute(
            "SELECT coalesce(disk, found) FROM files WHERE rel = ?", (rel,)
        ).fetchone()
        return None if row is None else row[0]

    def wrote(self, rel: str, digest: bytes) -> None:
        self._db.execute("UPDATE files SET disk = ? WHERE rel = ?", (digest, rel))

    def settle(self) -> tuple[list[str], list[str]]:
        """(created, updated) paths, sorted: those written since the last ``settle`` whose
        bytes differ from what they held; what was written is what they hold from now."""
        created: list[str] = []
        updated: list[str] = []
        rows = self._db.execute(
            "SELECT rel, found FROM files WHERE disk IS NOT NULL AND disk IS NOT found ORDER BY rel"
        )
        for rel, found in rows:
            (created if found is None else updated).append(rel)
        self._db.execute("UPDATE files SET found = disk, disk = NULL WHERE disk IS NOT NULL")
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
