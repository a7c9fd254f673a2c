"""What the generated index needs from each file, cached by the file's content.

Regenerating INDEX.md and sessions/index.md needs a few fields of every page
(id, title, summary, aliases, outgoing links) and of every transcript (date,
turn count). Parsing YAML and Markdown for thousands of files on every Dream
run is what made the index cost grow with the store; reading the bytes and
hashing them is cheap. So facts are cached in ``.memoryfs/index-facts.sqlite``
under the SHA-1 of the file's bytes: a changed file is parsed again, an
unchanged one never; a file whose size, mtime and inode did not change is not
even read. Facts are read from SQLite one file at a time, so a run holds the
file stamps and what the index itself needs, not the whole cache (a JSON file
loaded whole made a Dream run's peak memory grow with the store). The cache is
a cache: deleting it loses nothing, and one that cannot be read is started anew.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
import stat
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TypeVar

from memoryfs.errors import MemoryFSError
from memoryfs.links import extract_links
from memoryfs.page import parse_page
from memoryfs.store import Store
from memoryfs.transcript import parse_transcript

__all__ = ["PageFacts", "SessionFacts", "IndexCache"]

_VERSION = 2
_NAME = "index-facts.sqlite"
T = TypeVar("T")
_CHUNK = 500  # files keyed, and their facts fetched, together
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS facts (key TEXT PRIMARY KEY, data TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS stats (rel TEXT PRIMARY KEY, size INTEGER, mtime INTEGER, "
    "ino INTEGER, key TEXT)",
)


@dataclass(frozen=True)
class PageFacts:
    id: str
    title: str
    type: str
    summary: str
    updated: str
    aliases: tuple[str, ...]
    links: tuple[str, ...]  # link targets as written, in order


@dataclass(frozen=True)
class SessionFacts:
    id: str
    date: str
    title: str
    turns: int


class IndexCache:
    """Facts of a store's files by content hash; ``save`` keeps only what was used."""

    def __init__(self, store: Store, path: Path | None = None) -> None:
        """``path``: where the cache lives (default ``.memoryfs/index-facts.sqlite`` of
        ``store``); a staged worktree, whose own ``.memoryfs`` each run cleans away,
        keeps its cache in the live store's."""
        self.store = store
        self.path = path if path is not None else store.cache_dir / _NAME
        self._db: sqlite3.Connection | None = None
        self._old_stats: dict[str, tuple[int, int, int, str]] = {}
        self._stats: dict[str, tuple[int, int, int, str]] = {}
        self._new: dict[str, str] = {}  # key -> facts (JSON) not in the database yet
        self._used: set[str] = set()
        self._dirs: dict[str, str | None] = {}  # folder (rel) -> its resolved path
        self._open()

    def _open(self) -> None:
        if self.path.is_symlink() or self.path.parent.is_symlink():
            return  # never write through a link: work without a cache
        with contextlib.suppress(OSError):
            self.path.parent.mkdir(parents=True, exist_ok=True)
        for attempt in range(2):
            try:
                db = sqlite3.connect(self.path, timeout=2, isolation_level=None)
                version = db.execute("PRAGMA user_version").fetchone()[0]
                if version not in (0, _VERSION):
                    db.close()
                    raise sqlite3.DatabaseError("another cache version")
                for statement in _SCHEMA:
                    db.execute(statement)
                db.execute(f"PRAGMA user_version = {_VERSION}")
                rows = db.execute("SELECT rel, size, mtime, ino, key FROM stats").fetchall()
                self._old_stats = {r[0]: (r[1], r[2], r[3], r[4]) for r in rows}
                self._db = db
                return
            except (sqlite3.Error, OSError):
                self._db, self._old_stats = None, {}
                if attempt == 0:  # unreadable (corrupt, another version): start anew
                    with contextlib.suppress(OSError):
                        self.path.unlink()

    def _key(self, rel: str, kind: str) -> tuple[str, str | None] | None:
        """(cache key, text or None when the stamp matches) of a file; None when unreadable
        or outside.

        A file whose size, mtime (ns) and inode are those recorded with a cached key
        is not read again; any other file is read and keyed by its content.
        """
        try:
            path, st = self._stat(rel)
            sig = (st.st_size, st.st_mtime_ns, st.st_ino)
            old = self._old_stats.get(rel)
            if old is not None and old[:3] == sig:
                self._stats[rel] = old
                return old[3], None
            with open(path, "rb") as fh:
                data = fh.read()
            text = data.decode("utf-8")
        except (OSError, UnicodeDecodeError, MemoryFSError, ValueError):
            return None
        key = f"{kind}:{hashlib.sha1(data).hexdigest()}"
        self._stats[rel] = (*sig, key)
        return key, text

    def _stat(self, rel: str) -> tuple[str, os.stat_result]:
        """``store.resolve(rel)`` and its stat, resolving each folder once: a store of
        thousands of files has a few dozen folders, and resolving every file's path
        was most of what an unchanged store cost (paths are joined as strings)."""
        folder, _, name = rel.rpartition("/")
        if folder not in self._dirs:
            self._dirs[folder] = self._folder(folder)
        base = self._dirs[folder]
        if (
            base is not None
            and name not in ("", ".", "..")
            and not any(c in name for c in ("\x00", "\n", "\\", "://"))
        ):
            path = f"{base}/{name}"
            st = os.lstat(path)
            if not stat.S_ISLNK(st.st_mode):
                return path, st
        resolved = self.store.resolve(rel)
        return str(resolved), resolved.stat()

    def _folder(self, folder: str) -> str | None:
        """The resolved path of a plain folder (relative to memory/, "" for memory/ itself:
        its files take the slow way), None for any other."""
        if not folder or any(part in ("", ".", "..") for part in folder.split("/")):
            return None
        try:
            return str(self.store.resolve(folder))
        except MemoryFSError:
            return None

    def _lookup(self, rel: str, kind: str, parse: Any) -> Any:
        found = self._key(rel, kind)
        if found is None:
            return None
        key, text = found
        return self._settle(rel, kind, parse, key, text, self._fetch([key]))

    def _lookup_many(
        self, rels: list[str], kind: str, parse: Any, make: Callable[[Any], T]
    ) -> Iterator[tuple[str, T]]:
        """``make`` of the ``_lookup`` of each of ``rels`` (those with facts; each made as it
        comes, so the raw facts of the whole store are never held at once), fetched
        with one query per ``_CHUNK`` files rather than one each (a chunk at a time, so
        the texts of changed files are not all held at once)."""
        for i in range(0, len(rels), _CHUNK):
            keyed: dict[str, tuple[str, str | None]] = {}
            for rel in rels[i : i + _CHUNK]:
                found = self._key(rel, kind)
                if found is not None:
                    keyed[rel] = found
            stored = self._fetch([k for k, _ in keyed.values()])
            for rel, (key, text) in keyed.items():
                raw = self._settle(rel, kind, parse, key, text, stored)
                if raw:
                    yield rel, make(raw)

    def _settle(
        self, rel: str, kind: str, parse: Any, key: str, text: str | None, stored: dict[str, str]
    ) -> Any:
        """The facts of ``rel`` under ``key``: cached (new this pass, or ``stored``), else
        parsed from ``text`` and kept as new."""
        data = self._new.get(key) or stored.get(key)
        if data is None and text is None:
            # its stamp matched a key the cache lost: read the file after all
            self._old_stats.pop(rel, None)
            return self._lookup(rel, kind, parse)
        if data is not None:
            raw = json.loads(data)
        else:
            raw = parse(text, rel)
            self._new[key] = json.dumps(raw, separators=(",", ":"))
        self._used.add(key)
        return raw

    def _fetch(self, keys: list[str]) -> dict[str, str]:
        """Stored facts (JSON) of ``keys`` (at most ``_CHUNK``); the missing ones, and those
        new this pass, left out."""
        keys = [k for k in keys if k not in self._new]
        if self._db is None or not keys:
            return {}
        query = f"SELECT key, data FROM facts WHERE key IN ({','.join('?' * len(keys))})"
        try:
            return dict(self._db.execute(query, keys).fetchall())
        except sqlite3.Error:
            return {}

    def page(self, rel: str) -> PageFacts | None:
        raw = self._lookup(rel, "page", _page_facts)
        return _as_page(raw) if raw else None

    def pages(self, rels: list[str]) -> dict[str, PageFacts]:
        """``page`` of each of ``rels`` that has facts, in the order given."""
        return dict(self.iter_pages(rels))

    def iter_pages(self, rels: list[str]) -> Iterator[tuple[str, PageFacts]]:
        """``pages`` one at a time (a store's pages need not all be held at once)."""
        return self._lookup_many(rels, "page", _page_facts, _as_page)

    def transcript(self, rel: str) -> SessionFacts | None:
        raw = self._lookup(rel, "session", _session_facts)
        return SessionFacts(**raw) if raw else None

    def transcripts(self, rels: list[str]) -> dict[str, SessionFacts]:
        """``transcript`` of each of ``rels`` that has facts, in the order given."""
        return dict(self._lookup_many(rels, "session", _session_facts, _as_session))

    def save(self) -> None:
        """Record new facts and stamps; drop what no file of this pass uses."""
        db, self._db = self._db, None
        if db is None:
            return
        try:
            if not (self.store.cache_dir.is_symlink() or self.path.parent.is_symlink()):
                self._write(db)
        finally:
            db.close()

    def _write(self, db: sqlite3.Connection) -> None:
        with contextlib.suppress(sqlite3.Error):  # a cache that cannot be written only costs time
            db.execute("BEGIN IMMEDIATE")
            try:
                db.executemany("INSERT OR REPLACE INTO facts VALUES (?, ?)", self._new.items())
                changed = [
                    (rel, *st) for rel, st in self._stats.items() if self._old_stats.get(rel) != st
                ]
                db.executemany("INSERT OR REPLACE INTO stats VALUES (?, ?, ?, ?, ?)", changed)
                gone = [(rel,) for rel in self._old_stats if rel not in self._stats]
                db.executemany("DELETE FROM stats WHERE rel = ?", gone)
                db.execute("CREATE TEMP TABLE IF NOT EXISTS used (key TEXT PRIMARY KEY)")
                db.execute("DELETE FROM used")
                db.executemany("INSERT OR IGNORE INTO used VALUES (?)", ((k,) for k in self._used))
                db.execute("DELETE FROM facts WHERE key NOT IN (SELECT key FROM used)")
                db.execute("COMMIT")
            except sqlite3.Error:
                db.execute("ROLLBACK")
                raise
        self._new.clear()
        self._old_stats = dict(self._stats)


def _as_session(raw: dict[str, Any]) -> SessionFacts:
    return SessionFacts(**raw)


def _as_page(raw: dict[str, Any]) -> PageFacts:
    return PageFacts(**{**raw, "aliases": tuple(raw["aliases"]), "links": tuple(raw["links"])})


def _page_facts(text: str, rel: str) -> dict[str, Any] | None:
    try:
        page = parse_page(text, rel)
    except (MemoryFSError, ValueError):
        return None
    return asdict(
        PageFacts(
            id=page.id,
            title=page.title,
            type=page.type,
            summary=page.summary,
            updated=page.updated,
            aliases=tuple(page.aliases),
            links=tuple(link.target for link in extract_links(page.body)),
        )
    )


def _session_facts(text: str, rel: str) -> dict[str, Any] | None:
    try:
        t = parse_transcript(text, rel)
    except (MemoryFSError, ValueError):
        return None
    return asdict(
        SessionFacts(id=t.id, date=t.date, title=str(t.meta.get("title") or ""), turns=len(t.turns))
    )
