"""The keys of the pages a run left alone, for the validation gate's cross-page rules.

Validation reads the changed files of a run; every other page of ``knowledge/`` and
``notes/`` takes part in the cross-page rules through its keys: id, aliases and link
targets (``memoryfs.validate.keys``). An unchanged page is the base commit's blob, so
its keys are kept by Git blob id in ``.memoryfs/dream-page-keys.sqlite`` (a blob id
names exact content: the cache is never stale). A run lists the base tree's pages into
a temporary table and asks its questions (which pages share an id, which links resolve
to nothing) in SQL: the keys of a store of thousands of pages are never all in memory.
A page not in the cache yet is read from the staged tree; an unreadable one takes no
part. A cache that cannot be read (corrupt, another version) is rebuilt; one
that cannot be written (locked, a symlinked folder) is kept in memory for the run.
"""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
from collections.abc import Callable, Collection, Container, Iterable
from pathlib import Path
from typing import TypeVar

from dream.gates import staged_page
from dream.landing.blobcache import ls_tree, with_blob_cache
from memoryfs.store.scan import READ_MAX_BYTES, read_file
from memoryfs.store.store import Store
from memoryfs.validate.keys import PageKeys, link_name, stem
from memoryfs.validate.rules import page_keys

__all__ = ["PageKeyCache", "with_page_keys", "read_keys", "CACHE_NAME"]

CACHE_NAME = "dream-page-keys.sqlite"
_EARLIER = ("dream-page-keys.json",)  # the cache file older versions wrote, deleted when seen
_VERSION = 1
_PAGE_DIRS = ("memory/knowledge/", "memory/notes/")
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS pages(blob TEXT PRIMARY KEY, id TEXT NOT NULL,"
    " id_lower TEXT NOT NULL) WITHOUT ROWID",
    "CREATE INDEX IF NOT EXISTS pages_id ON pages(id)",
    "CREATE INDEX IF NOT EXISTS pages_id_lower ON pages(id_lower)",
    "CREATE TABLE IF NOT EXISTS aliases(blob TEXT NOT NULL, n INTEGER NOT NULL,"
    " alias TEXT NOT NULL, lower TEXT NOT NULL, PRIMARY KEY (blob, n)) WITHOUT ROWID",
    "CREATE INDEX IF NOT EXISTS aliases_lower ON aliases(lower)",
    # link names to resolve (``link_name``: unsafe and empty ones are another rule's)
    "CREATE TABLE IF NOT EXISTS links(blob TEXT NOT NULL, n INTEGER NOT NULL,"
    " name TEXT NOT NULL, lower TEXT NOT NULL, PRIMARY KEY (blob, n)) WITHOUT ROWID",
)
_TEMP = (
    # the base's pages this run left alone, in ls-tree order; live = not read in full
    "CREATE TEMP TABLE tree(seq INTEGER PRIMARY KEY, rel TEXT NOT NULL, blob TEXT NOT NULL,"
    " stem TEXT NOT NULL, live INTEGER NOT NULL DEFAULT 1)",
    "CREATE INDEX temp.tree_blob ON tree(blob)",
    "CREATE INDEX temp.tree_rel ON tree(rel)",
    "CREATE TEMP TABLE learned(blob TEXT PRIMARY KEY) WITHOUT ROWID",
    "CREATE TEMP TABLE keys(k TEXT PRIMARY KEY) WITHOUT ROWID",  # of the live pages
    "CREATE TEMP TABLE ask(k TEXT PRIMARY KEY) WITHOUT ROWID",  # a question's values
)
_LIVE = "tree t JOIN pages p ON p.blob = t.blob WHERE t.live"
# a live page with a condition on it: asked per row through the indexes, where an IN over
# every live page or a GROUP BY would build a transient table of the whole store in memory
# (a store's notes are most of its pages: ~40,000 at 8,000 sessions)
_OTHER = "SELECT 1 FROM pages p2 JOIN tree t2 ON t2.blob = p2.blob WHERE t2.live AND {}"

T = TypeVar("T")


def _kept(table: str) -> str:
    """SQL: the row of ``table`` is of a page in this tree or the staged one (per row, as
    ``_OTHER``: an IN over both would gather every blob of the store)."""
    return (
        f"(EXISTS (SELECT 1 FROM tree WHERE tree.blob = {table}.blob)"
        f" OR EXISTS (SELECT 1 FROM learned WHERE learned.blob = {table}.blob))"
    )


def with_page_keys(store: Store, work: Callable[[PageKeyCache], T]) -> T:
    """``work`` with the store's cache open; a cache that fails is rebuilt, then kept
    in memory: never a reason to fail the gate (``dream.landing.blobcache``)."""
    shutil.rmtree(store.cache_dir / "dream-stubs", ignore_errors=True)
    return with_blob_cache(
        store, CACHE_NAME, _VERSION, _SCHEMA, _TEMP, lambda db: work(PageKeyCache(db)), _EARLIER
    )


def read_keys(stage_root: Path, rel: str) -> PageKeys | None:
    """The keys of the page at ``rel`` (relative to the root); None when unreadable."""
    page = staged_page(stage_root, rel)
    return page_keys(page) if page is not None and isinstance(page.meta.get("id"), str) else None


class PageKeyCache:
    """One run's view: ``list_tree`` the base, then ask as ``OtherPages`` (paths relative
    to ``memory/``); ``learn`` the changed pages' keys and ``save``."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db
        self._keys_stale = True

    # -- this run's tree -------------------------------------------------------------

    def list_tree(self, store: Store, base: str, stage_root: Path, changed: Container[str]) -> None:
        """The base's pages but ``changed`` (paths relative to the root); the keys of
        those the cache does not know are read from ``stage_root``."""
        rows = (
            (rel.removeprefix("memory/"), blob, stem(rel).lower())
            for rel, blob in ls_tree(store.root, base, _PAGE_DIRS)
            if rel.endswith(".md") and rel not in changed
        )
        self.db.executemany("INSERT INTO tree(rel, blob, stem) VALUES (?, ?, ?)", rows)
        missing = self.db.execute(
            "SELECT rel, blob FROM tree t WHERE NOT EXISTS"
            " (SELECT 1 FROM pages p WHERE p.blob = t.blob) ORDER BY seq"
        ).fetchall()
        for rel, blob in missing:
            # A page whose keys cannot be read (a person removed its frontmatter) still
            # lends its file name to links, as it does to a full validation.
            keys = read_keys(stage_root, "memory/" + rel)
            if keys is not None:
                self._insert(blob, keys)
        self._keys_stale = True

    def learn(self, stage_root: Path, rel: str) -> str | None:
        """Keep a changed page's keys: the next run's unchanged pages are this run's
        changed ones. Its blob id; None when it cannot be read."""
        got = read_file(stage_root, rel, READ_MAX_BYTES)  # never a link, FIFO or device
        if got is None or got.oversize:
            return None
        data = got.data
        blob = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()  # git's blob id
        self.db.execute("INSERT OR IGNORE INTO learned VALUES (?)", (blob,))
        if self.db.execute("SELECT 1 FROM pages WHERE blob = ?", (blob,)).fetchone() is None:
            keys = read_keys(stage_root, rel)
            if keys is not None:
                self._insert(blob, keys)
        return blob

    def add_changed(self, stage_root: Path, rels: Iterable[str]) -> None:
        """``learn`` the changed pages at ``rels`` (relative to the root) and list them
        with the pages left alone: validated a slice at a time, each slice's pages are
        ``discard``-ed while the others take part in the cross-page rules through their
        keys (``restore`` before the next slice). A page whose keys cannot be read still
        lends its file name to links, as a page read does."""
        for rel in rels:
            blob = self.learn(stage_root, rel)
            if blob is not None:
                self.db.execute(
                    "INSERT INTO tree(rel, blob, stem) VALUES (?, ?, ?)",
                    (rel.removeprefix("memory/"), blob, stem(rel).lower()),
                )
        self._keys_stale = True

    def restore(self) -> None:
        """Every page listed takes part again (undoes ``discard``)."""
        before = self.db.total_changes
        self.db.execute("UPDATE tree SET live = 1 WHERE NOT live")
        if self.db.total_changes != before:
            self._keys_stale = True

    def save(self) -> None:
        """Commit; drop the keys of pages in neither this tree nor the staged one once they
        are more than a quarter of the cache."""
        (total,) = self.db.execute("SELECT count(*) FROM pages").fetchone()
        (current,) = self.db.execute(
            f"SELECT count(*) FROM pages WHERE {_kept('pages')}"
        ).fetchone()
        if total > current + current // 4 + 16:
            for table in ("pages", "aliases", "links"):
                self.db.execute(f"DELETE FROM {table} WHERE NOT {_kept(table)}")
        self.db.commit()

    def _insert(self, blob: str, keys: PageKeys) -> None:
        self.db.execute(
            "INSERT OR REPLACE INTO pages VALUES (?, ?, ?)", (blob, keys.id, keys.id.lower())
        )
        self.db.execute("DELETE FROM aliases WHERE blob = ?", (blob,))
        self.db.execute("DELETE FROM links WHERE blob = ?", (blob,))
        self.db.executemany(
            "INSERT INTO aliases VALUES (?, ?, ?, ?)",
            [(blob, n, a, a.lower()) for n, a in enumerate(keys.aliases)],
        )
        names = [name for name in map(link_name, keys.links) if name]
        self.db.executemany(
            "INSERT INTO links VALUES (?, ?, ?, ?)",
            [(blob, n, name, name.lower()) for n, name in enumerate(names)],
        )

    def size(self) -> int:
        """How many pages of the base the run left alone."""
        return int(self.db.execute("SELECT count(*) FROM tree").fetchone()[0])

    # -- OtherPages ------------------------------------------------------------------

    def __contains__(self, rel: object) -> bool:
        row = self.db.execute("SELECT 1 FROM tree WHERE rel = ? AND live", (rel,)).fetchone()
        return row is not None

    def discard(self, rels: Iterable[str]) -> None:
        before = self.db.total_changes
        self.db.executemany("UPDATE tree SET live = 0 WHERE rel = ?", ((r,) for r in rels))
        if self.db.total_changes != before:
            self._keys_stale = True

    def with_ids(self, ids: Collection[str], lower: bool = False) -> list[tuple[str, str]]:
        self._ask(ids)
        column = "p.id_lower" if lower else "p.id"
        return self.db.execute(
            f"SELECT p.id, t.rel FROM {_LIVE} AND {column} IN (SELECT k FROM ask) ORDER BY t.seq"
        ).fetchall()

    def known(self, name: str) -> bool:
        self._ensure_keys()
        return self.db.execute("SELECT 1 FROM keys WHERE k = ?", (name,)).fetchone() is not None

    def duplicated(self, ids: Collection[str]) -> set[str]:
        self._ask(ids)
        rows = self.db.execute(
            f"SELECT t.rel FROM {_LIVE} AND p.id != '' AND (p.id IN (SELECT k FROM ask)"
            f" OR EXISTS ({_OTHER.format('p2.id = p.id AND t2.seq != t.seq')}))"
        )
        return {rel for (rel,) in rows}

    def aliased(self, lowered: Collection[str]) -> list[tuple[str, str]]:
        self._ask(lowered)
        named = _OTHER.format("p2.id_lower = a.lower")  # another page's id
        return self.db.execute(
            "SELECT t.rel, a.alias FROM tree t JOIN aliases a ON a.blob = t.blob WHERE t.live"
            f" AND (a.lower IN (SELECT k FROM ask) OR EXISTS ({named}))"
            " ORDER BY t.seq, a.n"
        ).fetchall()

    def dangling(self, keys: Collection[str]) -> set[str]:
        self._ensure_keys()
        self._ask(keys)
        rows = self.db.execute(
            "SELECT DISTINCT t.rel FROM tree t JOIN links l ON l.blob = t.blob WHERE t.live"
            " AND l.name NOT IN (SELECT k FROM keys) AND l.name NOT IN (SELECT k FROM ask)"
            " AND l.lower NOT IN (SELECT k FROM keys) AND l.lower NOT IN (SELECT k FROM ask)"
        )
        return {rel for (rel,) in rows}

    def _ask(self, values: Collection[str]) -> None:
        self.db.execute("DELETE FROM ask")
        self.db.executemany("INSERT OR IGNORE INTO ask VALUES (?)", ((v,) for v in values))

    def _ensure_keys(self) -> None:
        """The keys of the live pages: ids, and ids, stems and aliases lower-cased."""
        if not self._keys_stale:
            return
        self.db.execute("DELETE FROM keys")
        for select in (
            f"SELECT p.id FROM {_LIVE}",
            f"SELECT p.id_lower FROM {_LIVE}",
            "SELECT stem FROM tree WHERE live",
            "SELECT a.lower FROM tree t JOIN aliases a ON a.blob = t.blob WHERE t.live",
        ):
            self.db.execute(f"INSERT OR IGNORE INTO keys {select}")
        self._keys_stale = False
