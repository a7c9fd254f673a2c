"""Full-text search over a store: an SQLite FTS5 cache kept in step with the files.

The index lives in ``.memoryfs/index.sqlite`` (Git ignores it). It is a cache:
deleting it loses nothing, and a missing, corrupt or older-schema file is rebuilt. A
store that cannot be written (a read-only mount, another user's store) is searched
with an index built in memory for the one command: nothing is written anywhere, so
no copy of the store's text outlives the command (a cache kept elsewhere would also
keep what a later ``forget`` removes).
``refresh`` is incremental and sees every change: files are compared by their
stat stamp (folder by folder, see ``memoryfs.index.refresh``) and then by content hash,
and only added, changed and removed files are re-indexed. Two
processes may refresh at once: the database runs in WAL mode with a busy timeout,
and every write happens in a ``BEGIN IMMEDIATE`` transaction that re-checks the
row it replaces, so the last writer never installs an older version.

Rows are units (``memoryfs.index.units``): page heads, claim lines, summary key points
and transcript turns, so hits are precise. Ranking is in ``memoryfs.read.ranking``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from memoryfs.errors import MemoryFSError
from memoryfs.index.catalog import FileRow, candidates, file_rows, linked
from memoryfs.index.fts import connect
from memoryfs.index.refresh import Progress, RefreshStats, refresh_index
from memoryfs.pages.archives import main_stem
from memoryfs.read.ranking import (
    FIELD_WEIGHTS,
    excerpt,
    fts_query,
    query_terms,
    recency_prior,
    title_boost,
    with_common_terms,
)
from memoryfs.store.store import LAYERS, Store

__all__ = [
    "Hit",
    "RefreshStats",
    "FileRow",
    "SearchIndex",
    "INDEX_NAME",
    "READ_STALE",
    "SUPERSEDED_WEIGHT",
    "check_query",
]

INDEX_NAME = "index.sqlite"
SUPERSEDED_WEIGHT = 0.5  # a superseded claim's score against a current one's
# Reads on a large store stat folders, not every file, while the last full walk is
# this recent (seconds): an in-place edit of a file (the one change that leaves its
# folder alone) may go unseen that long. Below QUICK_MIN_FILES a walk is cheap.
READ_STALE = 60.0
QUICK_MIN_FILES = 5000
_SNIPPET_TOKENS = 48
_CANDIDATES = 60  # FTS rows fetched per search before re-scoring, at least
_ROW_BUDGET = 4000  # rows BM25 may rank per query before rare terms are preferred
_COMMON_CAP = 2000  # a term in more rows than this only boosts, in a large index
_PROBE = 10_000  # newest rows sampled to size the window when every query word is common


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

    def to_text(self) -> str:
        """The hit on one line as ``memoryfs search`` prints it."""
        return f"{self.ref}  [{self.layer}] {self.date + '  ' if self.date else ''}{self.snippet}"

    def to_json(self) -> dict[str, object]:
        """The hit as ``memoryfs search --json`` prints it."""
        return {
            "path": self.path,
            "line": self.line,
            "layer": self.layer,
            "kind": self.kind,
            "title": self.title,
            "snippet": self.snippet,
            "score": self.score,
            "citations": list(self.citations),
            "date": self.date,
        }


def check_query(store: Store, query: str, what: str = "query") -> None:
    """Refuse a ``query`` over the store's ``limits.query_chars``: a question, not a
    document (every later step then works on a bounded text)."""
    limit = store.config.limits.query_chars
    if len(query) > limit:
        raise MemoryFSError(
            f"the {what} is {len(query)} characters, over the limit of {limit} "
            "(limits.query_chars in memory.toml); ask with fewer words"
        )


def _writable(folder: Path, path: Path) -> bool:
    """Whether the index ``path`` in ``folder`` can be created or written (the folder made
    if need be): False on a read-only store."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return False
    if not os.access(folder, os.W_OK | os.X_OK):
        return False  # SQLite must create its -wal and -shm files beside the index
    return not path.exists() or os.access(path, os.W_OK)


def _read_only(exc: sqlite3.DatabaseError) -> bool:
    text = str(exc).lower()
    return "readonly" in text or "read-only" in text or "unable to open" in text


class SearchIndex:
    """The FTS5 cache of one store. Open with ``SearchIndex.open(store)``."""

    def __init__(self, store: Store, conn: sqlite3.Connection, rebuilt: bool) -> None:
        self.store = store
        self._conn = conn
        self._rebuilt = rebuilt

    # -- opening ---------------------------------------------------------------

    @classmethod
    def open(cls, store: Store) -> SearchIndex:
        """The store's index in ``.memoryfs/``, or one in memory when that folder cannot
        be written."""
        path = store.cache_dir / INDEX_NAME
        if not _writable(store.cache_dir, path):
            return cls._in_memory(store)
        try:
            conn, rebuilt = connect(path)
        except sqlite3.OperationalError as exc:
            # locked, busy, out of space: the file is sound and may be another process's
            # index in use, so it is never deleted for this
            if _read_only(exc):
                return cls._in_memory(store)
            raise MemoryFSError(f"cannot open the search index at {path}: {exc}") from None
        except sqlite3.DatabaseError as exc:
            if _read_only(exc):
                return cls._in_memory(store)
            # A cache that cannot be read (not a database, malformed) is thrown away and rebuilt.
            for suffix in ("", "-wal", "-shm"):
                with contextlib.suppress(OSError):
                    Path(f"{path}{suffix}").unlink(missing_ok=True)
            try:
                conn, _ = connect(path)
            except sqlite3.Error as exc:
                raise MemoryFSError(f"cannot open the search index at {path}: {exc}") from None
            rebuilt = True
        except sqlite3.Error as exc:
            raise MemoryFSError(f"cannot open the search index at {path}: {exc}") from None
        return cls(store, conn, rebuilt)

    @classmethod
    def _in_memory(cls, store: Store) -> SearchIndex:
        conn, _ = connect(Path(":memory:"))
        return cls(store, conn, True)

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> SearchIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- refresh ---------------------------------------------------------------

    def refresh(
        self,
        progress: Progress | None = None,
        *,
        full: bool | None = None,
        max_stale: float | None = None,
    ) -> RefreshStats:
        """Bring the index in line with the files; returns what it did.

        Incremental (see ``memoryfs.index.refresh``): every file is stat-ed, only name
        buckets whose stamp moved are compared file by file (``full=True``: all),
        and only files whose stamp moved are read, so every change is seen.
        ``max_stale`` (seconds) opts into a quick refresh while the last full walk
        is at most that old: added, removed, renamed and replaced files are still
        seen at once, in-place edits only by the next full walk.
        ``progress(done, total)`` is called per batch of re-read files.
        """
        stats = refresh_index(
            self.store,
            self._conn,
            full=full,
            max_stale=max_stale,
            rebuilt=self._rebuilt,
            progress=progress,
        )
        self._rebuilt = False
        return stats

    def refresh_for_read(self, progress: Progress | None = None) -> RefreshStats:
        """The refresh every read (search, recall, materialize) starts with.

        A full stat walk, so every change is seen; on a store of at least
        ``QUICK_MIN_FILES`` files a quick refresh while the last walk is under
        ``READ_STALE`` seconds old (added, removed, renamed and replaced files are
        seen at once, an in-place edit by the first read after ``READ_STALE`` s).
        """
        files = self._conn.execute("SELECT COUNT(*) FROM files").fetchone()[0]
        large = int(files) >= QUICK_MIN_FILES
        return self.refresh(progress, max_stale=READ_STALE if large else None)

    # -- search ----------------------------------------------------------------

    def search(self, query: str, k: int = 10, layers: Sequence[str] | None = None) -> list[Hit]:
        """The ``k`` best units for ``query`` (a question or keywords), best first."""
        check_query(self.store, query)
        return self._search(query_terms(query), k, layers=layers)

    def search_in(self, query: str, paths: Sequence[str], k: int = 10) -> list[Hit]:
        """Like ``search``, restricted to the given files (relative to memory/)."""
        check_query(self.store, query)
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
        if not terms or k <= 0:
            return []
        wanted: list[str] | None = None
        if layers is not None:
            wanted = [layer for layer in LAYERS if layer in layers]
            if not wanted:
                return []
            if len(wanted) == len(LAYERS):
                wanted = None
        limit = max(_CANDIDATES, 3 * k)
        extra: dict[str, int] = {}
        floor = 0
        if paths is None:
            match, extra, floor = self._selective(terms)
        else:
            match = fts_query(terms)
        rows = self._rows(match, limit, wanted, paths, floor)
        if not rows and extra:  # the rare words found nothing: any word, newest rows first
            extra = {}
            match = fts_query(terms)
            rows = self._rows(match, limit, wanted, paths, self._window(match))
        newest = self._meta("newest")
        total = int(self._meta("units") or 0)
        names = self._family_names(rows)
        # Score every candidate (cheap), build hits with snippets for the k best only.
        scored = sorted(
            ((self._score(row, terms, newest, extra, total, names), row) for row in rows),
            key=lambda pair: (-pair[0], str(pair[1][12]), int(pair[1][1])),  # type: ignore[call-overload]
        )
        return [self._hit(row, terms, score) for score, row in scored[:k]]

    def _selective(self, terms: list[str]) -> tuple[str, dict[str, int], int]:
        """The MATCH expression, the common terms left out of it (with their counts),
        and the rowid above which rows are ranked (0: all).

        BM25 costs time per matching row, so in a large index the query matches on
        its rarest terms only (as many as fit ``_ROW_BUDGET`` rows); terms found in
        more than ``_COMMON_CAP`` rows then only add to the score of what the rare
        terms found. When every term is that common, the newest units are ranked,
        as many as hold about ``_ROW_BUDGET`` matches. A small index is queried as
        it is.
        """
        match = fts_query(terms)
        total = int(self._meta("units") or 0)
        if total <= _ROW_BUDGET:
            return match, {}, 0
        counts = {t: self._bounded_count(t, _COMMON_CAP + 1) for t in terms}
        chosen: list[str] = []
        used = 0
        for term in sorted(terms, key=lambda t: counts[t]):
            c = counts[term]
            if c > _COMMON_CAP or (chosen and used + c > _ROW_BUDGET):
                break
            chosen.append(term)
            used += c
        if not chosen:
            return match, {}, self._window(match)
        return fts_query(chosen), {t: counts[t] for t in terms if t not in chosen}, 0

    def _window(self, match: str) -> int:
        """The rowid above which the newest rows hold about ``_ROW_BUDGET`` matches.

        The density of matches among the newest ``_PROBE`` rows sets the window.
        """
        top = int(self._conn.execute("SELECT max(id) FROM units").fetchone()[0] or 0)
        probe = min(_PROBE, top)
        if probe <= 0:
            return 0
        found = self._conn.execute(
            "SELECT count(*) FROM (SELECT 1 FROM fts WHERE fts MATCH ? AND rowid > ? LIMIT ?)",
            (match, top - probe, probe),
        ).fetchone()[0]
        window = int(_ROW_BUDGET * probe / max(int(found), 1))
        return max(0, top - window)

    def _bounded_count(self, term: str, cap: int) -> int:
        """Rows holding ``term``, counted up to ``cap`` (so a common term costs little)."""
        row = self._conn.execute(
            "SELECT count(*) FROM (SELECT 1 FROM fts WHERE fts MATCH ? LIMIT ?)",
            (fts_query([term]), cap),
        ).fetchone()
        return int(row[0])

    def _rows(
        self,
        match: str,
        limit: int,
        layers: list[str] | None,
        paths: Sequence[str] | None,
        floor: int = 0,
    ) -> list[tuple[object, ...]]:
        weights = ", ".join(str(w) for w in FIELD_WEIGHTS)
        cols = (
            "u.line, u.kind, u.layer, u.date, u.citations, u.anchor, u.speaker, u.superseded, "
            "u.title, u.summary, u.body, f.path, f.title, f.names, u.context"
        )
        params: list[object] = [match, floor]
        if layers is None and paths is None:
            # Rank inside FTS first, then join only the best rows.
            sql = (
                f"SELECT x.r, {cols} FROM (SELECT rowid AS id, bm25(fts, {weights}) AS r "
                "FROM fts WHERE fts MATCH ? AND rowid > ? ORDER BY r LIMIT ?) x "
                "JOIN units u ON u.id = x.id JOIN files f ON f.id = u.file_id ORDER BY x.r"
            )
        else:
            where = ["fts MATCH ?", "fts.rowid > ?"]
            if layers is not None:
                where.append(f"u.layer IN ({','.join('?' * len(layers))})")
                params.extend(layers)
            if paths is not None:
                where.append(
                    "fts.rowid IN (SELECT u2.id FROM units u2 JOIN files f2 ON f2.id = u2.file_id "
                    f"WHERE f2.path IN ({','.join('?' * len(paths))}))"
                )
                params.extend(paths)
            sql = (
                f"SELECT bm25(fts, {weights}) AS r, {cols} "
                "FROM fts JOIN units u ON u.id = fts.rowid JOIN files f ON f.id = u.file_id "
                f"WHERE {' AND '.join(where)} ORDER BY r LIMIT ?"
            )
        params.append(limit)
        try:
            return self._conn.execute(sql, params).fetchall()
        except sqlite3.OperationalError as exc:
            raise MemoryFSError(f"search failed: {exc}") from None

    def _family_names(self, rows: list[tuple[object, ...]]) -> dict[str, str]:
        """Titles and aliases an archive page is named by: its main page's (pages.archives).

        An archive is part of its page, so a question naming the page by an alias
        weighs the archived claims as it weighs the page's own.
        """
        mains = {str(r[12]): main_stem(str(r[12])) for r in rows if r[3] in ("knowledge", "notes")}
        wanted = sorted({m for m in mains.values() if m is not None})
        if not wanted:
            return {}
        found = dict(
            self._conn.execute(
                f"SELECT path, names FROM files WHERE path IN ({','.join('?' * len(wanted))})",
                wanted,
            ).fetchall()
        )
        return {p: str(found[m]) for p, m in mains.items() if m is not None and m in found}

    @staticmethod
    def _score(
        row: tuple[object, ...],
        terms: list[str],
        newest: str,
        extra: dict[str, int],
        total: int,
        family: dict[str, str],
    ) -> float:
        rank, layer, date, superseded, names = row[0], row[3], row[4], row[8], row[14]
        if row[12] in family:
            names = f"{names}\n{family[str(row[12])]}"
        score = -float(rank)  # type: ignore[arg-type]
        if extra:
            main = f"{row[9]} {row[10]} {row[11]}"
            score = with_common_terms(score, main, str(row[15]), extra, total)
        if layer in ("knowledge", "notes"):
            score *= title_boost(terms, str(names).split("\n"))
        score *= recency_prior(str(date), newest)
        return score * SUPERSEDED_WEIGHT if superseded else score

    @staticmethod
    def _hit(row: tuple[object, ...], terms: list[str], score: float) -> Hit:
        (_, line, kind, layer, date, cites, anchor, speaker, superseded, title, summary, body,
         path, ftitle, _names, _context) = row  # fmt: skip
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

    def current_claims(self, path: str, day: str, limit: int) -> list[Hit]:
        """The current (not superseded) claims of the page at ``path`` dated ``day``, in
        page order: what a claim superseded on that day was superseded by."""
        return self._units(
            "f.path = ? AND u.date = ? AND u.kind = 'claim' AND u.superseded = 0",
            (path, day),
            limit,
        )

    def _unit(self, where: str, params: tuple[str, ...]) -> Hit | None:
        found = self._units(where, params, 1)
        return found[0] if found else None

    def _units(self, where: str, params: tuple[str, ...], limit: int) -> list[Hit]:
        rows = self._conn.execute(
            "SELECT 0, u.line, u.kind, u.layer, u.date, u.citations, u.anchor, u.speaker, "
            "u.superseded, u.title, u.summary, u.body, f.path, f.title, f.names, u.context "
            f"FROM units u JOIN files f ON f.id = u.file_id WHERE {where} "
            "ORDER BY u.line LIMIT ?",
            (*params, limit),
        ).fetchall()
        return [self._hit(row, [], 0.0) for row in rows]

    def signature(self) -> str:
        """A digest of every indexed file's path and content hash: equal while the units
        are (a unit is a part of a file, re-indexed when its file changes)."""
        h = hashlib.blake2b(digest_size=16)
        for path, digest in self._conn.execute("SELECT path, hash FROM files ORDER BY path"):
            h.update(f"{path}\0{digest}\n".encode("utf-8", "surrogatepass"))
        return h.hexdigest()

    def unit_texts(self) -> list[tuple[int, str, str]]:
        """Every unit as (id, layer, the text an embedder reads): a turn with its speaker,
        a head as its title and summary, other units under their page's title."""
        rows = self._conn.execute(
            "SELECT u.id, u.layer, u.kind, u.speaker, u.title, u.summary, u.body, f.title "
            "FROM units u JOIN files f ON f.id = u.file_id ORDER BY u.id"
        )
        out: list[tuple[int, str, str]] = []
        for uid, layer, kind, speaker, title, summary, body, ftitle in rows:
            if kind == "head":
                text = f"{title}. {summary}" if summary else str(title)
            elif speaker:
                text = f"{speaker}: {body}"
            else:
                text = f"{ftitle}: {body}" if ftitle else str(body)
            out.append((int(uid), str(layer), text))
        return out

    def units_by_id(self, ids: Sequence[int], query: str = "") -> list[tuple[int, Hit]]:
        """The units of ``ids`` with their ids, in that order (ids no longer indexed are
        left out), with snippets around the words of ``query``."""
        terms = query_terms(query) if query else []
        found: dict[int, Hit] = {}
        for start in range(0, len(ids), 500):
            chunk = list(ids[start : start + 500])
            rows = self._conn.execute(
                "SELECT u.id, 0, u.line, u.kind, u.layer, u.date, u.citations, u.anchor, "
                "u.speaker, u.superseded, u.title, u.summary, u.body, f.path, f.title, f.names, "
                "u.context FROM units u JOIN files f ON f.id = u.file_id "
                f"WHERE u.id IN ({','.join('?' * len(chunk))})",
                chunk,
            ).fetchall()
            for row in rows:
                found[int(row[0])] = self._hit(row[1:], terms, 0.0)
        return [(i, found[i]) for i in ids if i in found]

    def linked(self, paths: Sequence[str]) -> list[str]:
        """Pages the given pages link to with ``[[...]]`` (one hop), in link order."""
        return linked(self._conn, paths)

    def files(self, layers: Sequence[str] | None = None) -> list[FileRow]:
        """Metadata of every indexed file (of ``layers``), with inbound link counts."""
        return file_rows(self._conn, layers)

    def candidates(self, limit: int) -> list[FileRow]:
        """Files a working set draws from (see ``memoryfs.index.catalog.candidates``)."""
        return candidates(self._conn, limit)

    def versions(self, paths: Sequence[str]) -> dict[str, str]:
        """The content hash each of ``paths`` was indexed at: the version a hit came from."""
        out: dict[str, str] = {}
        unique = sorted(set(paths))
        for i in range(0, len(unique), 500):  # SQLite's bound-parameter limit
            chunk = unique[i : i + 500]
            marks = ",".join("?" * len(chunk))
            rows = self._conn.execute(
                f"SELECT path, hash FROM files WHERE path IN ({marks})", chunk
            ).fetchall()
            out.update((str(p), str(h)) for p, h in rows)
        return out

    def paths_named_like(self, part: str) -> list[str]:
        """Indexed paths whose file name (without ``.md``) holds ``part``, case and all."""
        rows = self._conn.execute("SELECT path FROM files WHERE instr(rstem, ?) > 0", (part[::-1],))
        return [str(r[0]) for r in rows]

    def named(self, stem: str) -> list[str]:
        """Indexed paths whose file name, without ``.md``, is ``stem`` (an indexed lookup)."""
        rows = self._conn.execute("SELECT path FROM files WHERE rstem = ?", (stem[::-1],))
        return [str(r[0]) for r in rows]

    def name_taken(self, tail: str, stem: str) -> bool:
        """Whether a file name other than ``stem`` is ``tail`` or ends in ``-tail``.

        File names are indexed reversed, so "ends in -tail" is a range of that index."""
        rev, own = tail[::-1], stem[::-1]
        exact = "SELECT 1 FROM files WHERE rstem = ? AND rstem != ? LIMIT 1"
        ending = "SELECT 1 FROM files WHERE rstem >= ? AND rstem < ? AND rstem != ? LIMIT 1"
        return (
            self._conn.execute(exact, (rev, own)).fetchone() is not None
            or self._conn.execute(ending, (rev + "-", rev + ".", own)).fetchone() is not None
        )

    def count(self) -> tuple[int, int]:
        """(files, units) in the index."""
        files = self._conn.execute("SELECT COUNT(*) FROM files").fetchone()[0]
        units = self._conn.execute("SELECT COUNT(*) FROM units").fetchone()[0]
        return int(files), int(units)
