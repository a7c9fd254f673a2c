"""The vectors of a store's search units: a derived cache beside the FTS index.

``.memoryfs/vectors.sqlite`` (Git ignores ``.memoryfs/``) holds one float32 vector per
distinct unit text, keyed by the text's digest, and a mirror of the FTS index's units
(id, layer, digest). ``refresh`` embeds only texts it has no vector for, so a Dream run
that changed ten pages costs their new units, not the store; units of the same text
(a claim repeated in an archive) share one vector. The cache is rebuilt from nothing
when the embedder's fingerprint changes (another model, another endpoint), never
mixes two models' vectors, and may be deleted at any time (``memoryfs forget`` does). A
store whose cache cannot be written keeps its vectors in memory for the process.

A query is a dot product against the matrix of every unit's vector (vectors are
normalized: the cosine), kept in memory per process for as long as the units and the
embedder stay the same. A matrix in SQLite plus exhaustive search is what a store of a
user's memory needs (docs/hybrid.md measures it): at 100,000 units it is 150 MB of
float32 and a query is one matrix-vector product, 6-8x faster than sqlite-vec's KNN once
loaded; an approximate index would add a dependency and a second structure to keep in
step for no gain at this size.

Boundary: knows SQLite and numpy; the units come from ``memoryfs.read.search`` as
(id, layer, text) rows, the vectors from an ``memoryfs.embed.embedder.Embedder``.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from memoryfs.errors import MemoryFSError
from memoryfs.index.fts import immediate

if TYPE_CHECKING:
    import numpy as np

    from memoryfs.embed.embedder import Embedder

__all__ = ["VECTORS_NAME", "Matrix", "VectorCache"]

VECTORS_NAME = "vectors.sqlite"
SCHEMA_VERSION = 2
CHUNK = 256  # texts embedded and committed at a time: an interrupted refresh keeps its work
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    # a rowid table: a 1.5 KB vector fits in its page, where a WITHOUT ROWID row of that
    # size would spill to an overflow page of its own (4.6 KB a unit on disk, measured)
    "CREATE TABLE IF NOT EXISTS vec (digest BLOB NOT NULL UNIQUE, v BLOB NOT NULL)",
    "CREATE TABLE IF NOT EXISTS unit (id INTEGER PRIMARY KEY, layer TEXT NOT NULL, "
    "digest BLOB NOT NULL)",
    "CREATE INDEX IF NOT EXISTS unit_digest ON unit (digest)",
)
_matrices: dict[tuple[str, str, str], Matrix] = {}


def digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


@dataclass(frozen=True)
class Matrix:
    """Every unit's vector, a row each, with the unit ids and layers of the rows."""

    ids: np.ndarray  # int64 unit ids
    layers: np.ndarray  # str layer of each row
    rows: np.ndarray  # float32, normalized

    def top(
        self, query: np.ndarray, k: int, layers: Sequence[str] | None
    ) -> list[tuple[int, float]]:
        """The ``k`` rows nearest ``query`` (a normalized vector), of ``layers``."""
        import numpy as np

        if not len(self.ids) or k <= 0:
            return []
        if query.shape[0] != self.rows.shape[1]:
            raise MemoryFSError("the query vector's width differs from the cache's; rebuild it")
        scores = self.rows @ query
        if layers is not None:
            scores = np.where(np.isin(self.layers, list(layers)), scores, -np.inf)
        k = min(k, len(scores))
        best = np.argpartition(-scores, k - 1)[:k]
        best = best[np.argsort(-scores[best], kind="stable")]
        return [(int(self.ids[i]), float(scores[i])) for i in best if np.isfinite(scores[i])]


@dataclass(frozen=True)
class RefreshCount:
    units: int  # -1: the index had not changed, nothing was read
    embedded: int  # texts embedded by this refresh


class VectorCache:
    """The vectors of one store, for one embedder."""

    def __init__(self, cache_dir: Path, embedder: Embedder) -> None:
        self.path = cache_dir / VECTORS_NAME
        self.embedder = embedder
        try:
            self._db = self._connect(cache_dir)
        except (sqlite3.Error, OSError):
            # a store that cannot be written (read-only, a full disk): vectors for this
            # process only, in memory
            self._db = sqlite3.connect(":memory:", isolation_level=None)
            for statement in _SCHEMA:
                self._db.execute(statement)

    def _connect(self, cache_dir: Path) -> sqlite3.Connection:
        cache_dir.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("BEGIN IMMEDIATE")  # refused at once when the file cannot be written
            if db.execute("PRAGMA user_version").fetchone()[0] != SCHEMA_VERSION:
                for table in ("meta", "vec", "unit"):  # another layout: a cache, made anew
                    db.execute(f"DROP TABLE IF EXISTS {table}")
                for statement in _SCHEMA:
                    db.execute(statement)
                db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            db.execute("COMMIT")
        except sqlite3.Error:
            db.close()
            raise
        return db

    def close(self) -> None:
        self._db.close()

    def _meta(self, key: str) -> str:
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return str(row[0]) if row else ""

    def refresh(
        self,
        units: Callable[[], Sequence[tuple[int, str, str]]],
        signature: str,
        progress: Callable[[int, int], None] | None = None,
    ) -> RefreshCount:
        """Bring the cache in step with ``units()`` (id, layer, text to embed); nothing is
        read or written when the index's ``signature`` is the one the cache was last
        brought in step with (for this embedder)."""
        import numpy as np

        db = self._db
        fingerprint = self._meta("fingerprint")
        if fingerprint == self.embedder.fingerprint and self._meta("files") == signature:
            return RefreshCount(units=-1, embedded=0)
        if fingerprint != self.embedder.fingerprint:
            with immediate(db):
                db.execute("DELETE FROM vec")
                db.execute("DELETE FROM unit")
                db.execute("DELETE FROM meta")
                db.execute(
                    "INSERT INTO meta VALUES ('fingerprint', ?)", (self.embedder.fingerprint,)
                )
        keyed = [(uid, layer, digest(text), text) for uid, layer, text in units()]
        have = {bytes(r[0]) for r in db.execute("SELECT digest FROM vec")}
        todo: dict[bytes, str] = {}
        for _, _, key, text in keyed:
            if key not in have:
                todo.setdefault(key, text)
        missing = list(todo.items())
        width = int(self._meta("width") or 0)
        for start in range(0, len(missing), CHUNK):
            chunk = missing[start : start + CHUNK]
            rows = self.embedder.embed([text for _, text in chunk])
            if rows.shape[0] != len(chunk):
                raise MemoryFSError("the embedder gave a different number of vectors than texts")
            if width and rows.shape[1] != width:
                raise MemoryFSError(
                    f"the embedder's vectors are {rows.shape[1]} wide, the cache's {width}"
                )
            width = int(rows.shape[1])
            with immediate(db):
                db.execute("INSERT OR REPLACE INTO meta VALUES ('width', ?)", (str(width),))
                db.executemany(
                    "INSERT OR IGNORE INTO vec VALUES (?, ?)",
                    [(key, np.ascontiguousarray(row, dtype=np.float32).tobytes())
                     for (key, _), row in zip(chunk, rows, strict=True)],
                )  # fmt: skip
            if progress is not None:
                progress(min(start + CHUNK, len(missing)), len(missing))
        units_key = hashlib.blake2b(digest_size=16)
        for uid, layer, key, _ in keyed:
            units_key.update(f"{uid}\0{layer}\0".encode() + key)
        if self._meta("units") != units_key.hexdigest():
            with immediate(db):
                db.execute("DELETE FROM unit")
                db.executemany(
                    "INSERT INTO unit VALUES (?, ?, ?)", [(u, lay, k) for u, lay, k, _ in keyed]
                )
                db.execute("DELETE FROM vec WHERE digest NOT IN (SELECT digest FROM unit)")
                db.execute(
                    "INSERT OR REPLACE INTO meta VALUES ('units', ?)", (units_key.hexdigest(),)
                )
        with immediate(db):
            db.execute("INSERT OR REPLACE INTO meta VALUES ('files', ?)", (signature,))
        return RefreshCount(units=len(keyed), embedded=len(missing))

    def matrix(self) -> Matrix:
        """Every unit's vector (kept for the process while units and embedder stay the same)."""
        import numpy as np

        key = (str(self.path), self._meta("units"), self.embedder.fingerprint)
        if key not in _matrices:
            rows = self._db.execute(
                "SELECT u.id, u.layer, v.v FROM unit u JOIN vec v ON v.digest = u.digest "
                "ORDER BY u.id"
            ).fetchall()
            width = int(self._meta("width") or 0)
            if rows and width:
                matrix = np.frombuffer(b"".join(r[2] for r in rows), dtype=np.float32)
                matrix = matrix.reshape(len(rows), width)
            else:
                matrix = np.zeros((0, width), dtype=np.float32)
            _matrices.clear()  # one store's matrix at a time: a server serves one store
            _matrices[key] = Matrix(
                ids=np.array([r[0] for r in rows], dtype=np.int64),
                layers=np.array([r[1] for r in rows], dtype=object),
                rows=matrix,
            )
        return _matrices[key]
