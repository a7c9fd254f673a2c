"""Full-text search over a store: an SQLite FTS5 cache kept in step with the files.

The index lives in ``.memoryfs/index.sqlite`` (Git ignores it). It is a cache:
deleting it loses nothing, and a missing, corrupt or older-schema file is rebuilt.
``refresh`` is incremental: files are compared by (mtime, size) and then by
content hash, and only added, changed and removed files are re-indexed. Two
processes may refresh at once: the database runs in WAL mode with a busy timeout,
and every write happens in a ``BEGIN IMMEDIATE`` transaction that re-checks the
row it replaces, so the last writer never installs an older version.

Rows are units (``memoryfs.units``): page heads, claim lines, summary key points
and transcript turns, so hits are precise. Ranking is in ``memoryfs.ranking``.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from memoryfs.errors import MemoryFSError
from memoryfs.fts import connect, delete_file, immediate, insert_file
from memoryfs.hashing import content_hash
from memoryfs.ranking import (
    FIELD_WEIGHTS,
    excerpt,
    fts_query,
    query_terms,
    recency_prior,
    title_boost,
)
from memoryfs.scan import FileBytes, Seen, read_file, walk_files
from memoryfs.store import LAYERS, Store
from memoryfs.units import FileInfo, Unit, units_of

__all__ = ["Hit", "RefreshStats", "FileRow", "SearchIndex", "INDEX_NAME"]

INDEX_NAME = "index.sqlite"
_BATCH = 400
_WALK_DIRS = ("knowledge", "notes", "sessions/summaries", "sessions/transcripts")
_SNIPPET_TOKENS = 48
_CANDIDATES = 60  # FTS rows fetched per search before re-scoring, at least


@dataclass(frozen=True)
class Hit:
    """One search result: a unit of a file, with where it is and what supports it."""

    path: str  # relative to memory/
    line: int  # 1-based line in the file
    layer: str  # knowledge | notes | sessions
    title: str  # the page's title (a transcript's title or id)
    snippet: str  # the matching text, cut to a short window
    score: float  # higher is better
    citations: tuple[str, ...]  # transcript refs "sessions/transcripts/<id>.md#tN"
    date: str  # ISO date of the unit when known
    kind: str = ""  # head | claim | passage | summary | turn
    text: str = ""  # the unit's full text (for heads: the summary, else the title)
    anchor: str = ""  # turns: "tN"
    speaker: str = ""  # turns: who spoke
    superseded: bool = False

    @property
    def ref(self) -> str:
        """``path#tN`` for a turn, ``path:line`` otherwise."""
        return f"{self.path}#{self.anchor}" if self.anchor else f"{self.path}:{self.line}"


@dataclass(frozen=True)
class RefreshStats:
    scanned: int = 0
    added: int = 0
    changed: int = 0
    removed: int = 0
    touched: int = 0  # mtime changed, content did not
    units: int = 0  # units written
    seconds: float = 0.0
    rebuilt: bool = False  # the cache was missing, corrupt or of an older schema


@dataclass(frozen=True)
class FileRow:
    """An indexed file's metadata, for the materializer and recall."""

    path: str
    layer: str
    kind: str  # page | summary | transcript | other
    id: str
    title: str
    type: str
    updated: str
    date: str
    preference: bool
    size: int
    inbound: int = 0  # distinct pages linking here


class SearchIndex:
    """The FTS5 cache of one store. Open with ``SearchIndex.open(store)``."""

    def __init__(self, store: Store, conn: sqlite3.Connection, rebuilt: bool) -> None:
        self.store = store
        self._conn = conn
        self._rebuilt = rebuilt

    # -- opening ---------------------------------------------------------------

    @classmethod
    def open(cls, store: Store) -> SearchIndex:
        path = store.cache_dir / INDEX_NAME
        store.cache_dir.mkdir(parents=True, exist_ok=True)
        try:
            conn, rebuilt = connect(path)
        except sqlite3.DatabaseError:
            # A cache that cannot be read is thrown away and rebuilt.
            for suffix in ("", "-wal", "-shm"):
                Path(f"{path}{suffix}").unlink(missing_ok=True)
            try:
                conn, _ = connect(path)
            except sqlite3.Error as exc:
                raise MemoryFSError(f"cannot open the search index at {path}: {exc}") from None
            rebuilt = True
        except sqlite3.Error as exc:
            raise MemoryFSError(f"cannot open the search index at {path}: {exc}") from None
        return cls(store, conn, rebuilt)

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> SearchIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- refresh ---------------------------------------------------------------

    def refresh(self, progress: Callable[[int, int], None] | None = None) -> RefreshStats:
        """Bring the index in line with the files; returns what it did.

        ``progress(done, total)`` is called after each batch of re-read files.
        """
        start = time.perf_counter()
        known = {
            row[0]: (row[1], row[2], row[3])
            for row in self._conn.execute("SELECT path, mtime_ns, size, hash FROM files")
        }
        todo: list[Seen] = []
        seen: set[str] = set()
        for item in walk_files(self.store.memory, _WALK_DIRS):
            seen.add(item.rel)
            old = known.get(item.rel)
            if old is None or old[0] != item.mtime_ns or old[1] != item.size:
                todo.append(item)
        removed = [p for p in known if p not in seen]
        counts = {"added": 0, "changed": 0, "touched": 0, "units": 0, "removed": 0}
        old_hash = {p: v[2] for p, v in known.items()}
        for i in range(0, len(todo), _BATCH):
            self._apply(todo[i : i + _BATCH], old_hash, counts)
            if progress is not None:
                progress(min(i + _BATCH, len(todo)), len(todo))
        if removed:
            self._remove(removed, counts)
        if todo or removed or self._rebuilt:
            self._write(
                "INSERT OR REPLACE INTO meta(key, value) "
                "SELECT 'newest', coalesce(max(date), '') FROM files"
            )
        stats = RefreshStats(
            scanned=len(seen),
            added=counts["added"],
            changed=counts["changed"],
            removed=counts["removed"],
            touched=counts["touched"],
            units=counts["units"],
            seconds=time.perf_counter() - start,
            rebuilt=self._rebuilt,
        )
        self._rebuilt = False
        return stats

    def _read(self, rel: str) -> FileBytes | None:
        return read_file(self.store.memory, rel, self.store.config.budgets.max_file_bytes)

    def _apply(self, batch: list[Seen], old_hash: dict[str, str], counts: dict[str, int]) -> None:
        prepared: list[tuple[str, int, int, str, FileInfo | None, list[Unit] | None]] = []
        for item in batch:
            got = self._read(item.rel)
            if got is None:
                continue
            data, mtime_ns, size = got.data, got.mtime_ns, got.size
            digest = content_hash(data)
            if old_hash.get(item.rel) == digest:
                prepared.append((item.rel, mtime_ns, size, digest, None, None))
                continue
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                text = ""
            info, units = units_of(item.rel, text) if text else (None, [])
            prepared.append((item.rel, mtime_ns, size, digest, info, units))
        conn = self._conn
        with immediate(conn):
            for rel, mtime_ns, size, digest, info, maybe_units in prepared:
                row = conn.execute(
                    "SELECT id, mtime_ns, size, hash FROM files WHERE path = ?", (rel,)
                ).fetchone()
                if row is not None and (row[1], row[2], row[3]) == (mtime_ns, size, digest):
                    continue  # another process indexed this very version meanwhile
                if maybe_units is None:
                    if row is not None and row[3] == digest:
                        conn.execute(
                            "UPDATE files SET mtime_ns = ?, size = ? WHERE id = ?",
                            (mtime_ns, size, row[0]),
                        )
                        counts["touched"] += 1
                        continue
                    # The row changed under us: index this content after all.
                    info, units = units_of(rel, self._text_of(rel))
                else:
                    units = maybe_units
                if row is not None:
                    delete_file(conn, row[0])
                    counts["changed"] += 1
                else:
                    counts["added"] += 1
                insert_file(conn, rel, mtime_ns, size, digest, info, units)
                counts["units"] += len(units)

    def _text_of(self, rel: str) -> str:
        got = self._read(rel)
        try:
            return got.data.decode("utf-8") if got else ""
        except UnicodeDecodeError:
            return ""

    def _remove(self, removed: list[str], counts: dict[str, int]) -> None:
        conn = self._conn
        with immediate(conn):
            for rel in removed:
                if os.path.lexists(self.store.memory / rel):
                    continue  # it came back meanwhile; the next refresh will see it
                row = conn.execute("SELECT id FROM files WHERE path = ?", (rel,)).fetchone()
                if row is not None:
                    delete_file(conn, row[0])
                    counts["removed"] += 1

    def _write(self, sql: str, params: Sequence[object] = ()) -> None:
        with immediate(self._conn):
            self._conn.execute(sql, params)

    # -- search ----------------------------------------------------------------

    def search(self, query: str, k: int = 10, layers: Sequence[str] | None = None) -> list[Hit]:
        """The ``k`` best units for ``query`` (a question or keywords), best first."""
        return self._search(query_terms(query), k, layers=layers)

    def search_in(self, query: str, paths: Sequence[str], k: int = 10) -> list[Hit]:
        """Like ``search``, restricted to the given files (relative to memory/)."""
        if not paths:
            return []
        return self._search(query_terms(query), k, paths=paths)

    def _search(
        self,
        terms: list[str],
        k: int,
        layers: Sequence[str] | None = None,
        paths: Sequence[str] | None = None,
    ) -> list[Hit]:
        match = fts_query(terms)
        if not match or k <= 0:
            return []
        where = ["fts MATCH ?"]
        params: list[object] = [match]
        if layers is not None:
            wanted = [layer for layer in layers if layer in LAYERS]
            if not wanted:
                return []
            where.append(f"u.layer IN ({','.join('?' * len(wanted))})")
            params.extend(wanted)
        if paths is not None:
            where.append(f"f.path IN ({','.join('?' * len(paths))})")
            params.extend(paths)
        weights = ", ".join(str(w) for w in FIELD_WEIGHTS)
        sql = (
            f"SELECT bm25(fts, {weights}) AS r, u.line, u.kind, u.layer, u.date, u.citations, "
            "u.anchor, u.speaker, u.superseded, u.title, u.summary, u.body, "
            "f.path, f.title, f.names "
            "FROM fts JOIN units u ON u.id = fts.rowid JOIN files f ON f.id = u.file_id "
            f"WHERE {' AND '.join(where)} ORDER BY r LIMIT ?"
        )
        params.append(max(_CANDIDATES, 3 * k))
        try:
            rows = self._conn.execute(sql, params).fetchall()
        except sqlite3.OperationalError as exc:
            raise MemoryFSError(f"search failed: {exc}") from None
        newest = self._meta("newest")
        hits = [self._hit(row, terms, newest) for row in rows]
        hits.sort(key=lambda h: (-h.score, h.path, h.line))
        return hits[:k]

    def _hit(self, row: tuple[object, ...], terms: list[str], newest: str) -> Hit:
        (rank, line, kind, layer, date, cites, anchor, speaker, superseded, title, summary, body,
         path, ftitle, names) = row  # fmt: skip
        score = -float(rank)  # type: ignore[arg-type]
        if layer in ("knowledge", "notes"):
            score *= title_boost(terms, str(names).split("\n"))
        score *= recency_prior(str(date), newest)
        if superseded:
            score *= 0.5
        text = str(body) if kind != "head" else (str(summary) or str(title))
        snippet = excerpt(text, terms, _SNIPPET_TOKENS)
        if speaker:
            snippet = f"{speaker}: {snippet}"
        return Hit(
            path=str(path),
            line=int(line),  # type: ignore[call-overload]
            layer=str(layer),
            title=str(ftitle),
            snippet=snippet,
            score=round(score, 6),
            citations=tuple(json.loads(str(cites))),
            date=str(date),
            kind=str(kind),
            text=text,
            anchor=str(anchor),
            speaker=str(speaker),
            superseded=bool(superseded),
        )

    def _meta(self, key: str) -> str:
        row = self._conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return str(row[0]) if row else ""

    # -- lookups for recall and the materializer -----------------------------

    def turn(self, ref: str) -> Hit | None:
        """The transcript turn a citation ref (``path#tN``) names, if indexed."""
        path, _, anchor = ref.partition("#")
        return self._unit("f.path = ? AND u.anchor = ? AND u.kind = 'turn'", (path, anchor))

    def head(self, path: str) -> Hit | None:
        """The head (title, aliases, summary) of the page at ``path``, if indexed."""
        return self._unit("f.path = ? AND u.kind = 'head'", (path,))

    def _unit(self, where: str, params: tuple[str, ...]) -> Hit | None:
        row = self._conn.execute(
            "SELECT 0, u.line, u.kind, u.layer, u.date, u.citations, u.anchor, u.speaker, "
            "u.superseded, u.title, u.summary, u.body, f.path, f.title, f.names "
            f"FROM units u JOIN files f ON f.id = u.file_id WHERE {where} LIMIT 1",
            params,
        ).fetchone()
        return None if row is None else self._hit(row, [], "")

    def linked(self, paths: Sequence[str]) -> list[str]:
        """Pages that the given pages link to with ``[[...]]`` (one hop), in link order."""
        out: list[str] = []
        for path in paths:
            rows = self._conn.execute(
                "SELECT DISTINCT t.path FROM files s JOIN links l ON l.file_id = s.id "
                "JOIN keys k ON k.key = l.target JOIN files t ON t.id = k.file_id "
                "WHERE s.path = ? AND t.path != s.path ORDER BY l.rowid",
                (path,),
            ).fetchall()
            out.extend(str(r[0]) for r in rows if str(r[0]) not in out)
        return out

    def files(self, layers: Sequence[str] | None = None) -> list[FileRow]:
        """Metadata of every indexed file, with inbound link counts for pages."""
        inbound = dict(
            self._conn.execute(
                "SELECT k.file_id, COUNT(DISTINCT l.file_id) FROM links l "
                "JOIN keys k ON k.key = l.target WHERE l.file_id != k.file_id GROUP BY k.file_id"
            ).fetchall()
        )
        rows = self._conn.execute(
            "SELECT id, path, layer, kind, page_id, title, type, updated, date, preference, size "
            "FROM files ORDER BY path"
        ).fetchall()
        out = [
            FileRow(
                path=r[1],
                layer=r[2],
                kind=r[3],
                id=r[4],
                title=r[5],
                type=r[6],
                updated=r[7],
                date=r[8],
                preference=bool(r[9]),
                size=r[10],
                inbound=int(inbound.get(r[0], 0)),
            )
            for r in rows
        ]
        if layers is not None:
            out = [f for f in out if f.layer in layers]
        return out

    def count(self) -> tuple[int, int]:
        """(files, units) in the index."""
        files = self._conn.execute("SELECT COUNT(*) FROM files").fetchone()[0]
        units = self._conn.execute("SELECT COUNT(*) FROM units").fetchone()[0]
        return int(files), int(units)
