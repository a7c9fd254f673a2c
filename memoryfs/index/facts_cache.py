"""What the generated index needs from each file, kept in SQLite and refreshed by change.

Regenerating INDEX.md and sessions/index.md needs a few fields of every page (id,
title, summary, aliases, outgoing links), of every session summary (id, title) and of
every transcript (date, turn count), and the inbound link count of every knowledge
page. ``.memoryfs/index-facts.sqlite`` holds all of it as of the last pass, by file:
each file's stamp (size, mtime, inode) and content hash, its facts, its aliases and
link targets as written, and the resolved link graph (``edge``: one row per page and
distinct page it links to). A pass (``IndexCache.refresh``) lists the store, compares
stamps a chunk at a time against the stored ones, and parses only files whose stamp
and content changed; the graph is re-resolved only for the links those files hold or
whose targets (ids, aliases) they add or remove. So a run that changes a few files
does the work of a few files (plus a stat per file), and holds a chunk, not the store.
In a Git work tree (a Dream stage) a pass can skip the stat per file: it records the
commit it measured from and what differed from it (``memoryfs.store.git_changes``), and the
next pass looks only at what Git says may differ since.

The cache is a cache: deleting it loses nothing. One that cannot be read, of another
version, or whose row counts are not those it recorded (rows lost or added behind its
back: counted when another writer moved the file's commit counter since this code's
last pass sealed it) is started anew; one that cannot be used at all (a symlink, locked too long) is
replaced by an in-memory database, so the output never depends on the cache. Its tables
and the SQL that resolves a link are ``memoryfs.index.facts_schema``.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
import stat
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from memoryfs.errors import MemoryFSError
from memoryfs.index.facts import KNOWLEDGE, NOTE, SUMMARY, TRANSCRIPT, Facts, facts_of
from memoryfs.index.facts_schema import RELINK, SCHEMA, TABLES, link_target
from memoryfs.store import cache_db
from memoryfs.store.git_changes import Untold, anchor_of, changed_between
from memoryfs.store.store import Store

__all__ = ["IndexCache"]

_VERSION = 4  # 3 + the anchor tables: a version 3 cache is taken over as it is
_NAME = "index-facts.sqlite"
T = TypeVar("T")
_CHUNK = 500  # files whose stamps are compared, and changes written, together
# what the files of each folder are
_GROUPS = (
    ("knowledge", KNOWLEDGE),
    ("notes", NOTE),
    ("sessions/summaries", SUMMARY),
    ("sessions/transcripts", TRANSCRIPT),
)


class IndexCache:
    """The index facts of a store, by file, in SQLite; ``refresh`` brings them up to date
    and queries run in the same transaction (``close`` commits)."""

    def __init__(self, store: Store, path: Path | None = None, memory: bool = False) -> None:
        """``path``: where the cache lives (default ``.memoryfs/index-facts.sqlite`` of
        ``store``); a staged worktree, whose own ``.memoryfs`` each run cleans away,
        keeps its cache in the live store's. ``memory``: work in an in-memory database."""
        self.store = store
        self.path = path if path is not None else store.cache_dir / _NAME
        self._dirs: dict[str, str | None] = {}  # folder (rel) -> its resolved path
        self._rows: dict[str, int] = {}  # rows by table, as counted at open, kept up to date
        self.db = self._connect(":memory:") if memory else self._open()
        self.on_disk = bool(self.db.execute("PRAGMA database_list").fetchone()[2])

    @classmethod
    def use(
        cls,
        store: Store,
        path: Path | None,
        read: Callable[[IndexCache], T],
        by_git: bool = False,
    ) -> T:
        """``read`` of the cache refreshed (``by_git``: see ``refresh``); one whose rows
        SQLite cannot read, or that contradict each other, is started anew (then kept in
        memory)."""
        for attempt in range(3):
            cache = cls(store, path, memory=attempt == 2)
            try:
                cache.refresh(by_git)
                result = read(cache)
            except sqlite3.Error:
                on_disk = cache.on_disk
                cache.db.close()
                if attempt == 2:
                    raise
                if on_disk:
                    with contextlib.suppress(OSError):
                        cache.path.unlink()
                continue
            cache.close()
            return result
        raise AssertionError("unreachable")

    # -- opening -------------------------------------------------------------------

    def _open(self) -> sqlite3.Connection:
        if not (self.path.is_symlink() or self.path.parent.is_symlink()):
            with contextlib.suppress(OSError):
                self.path.parent.mkdir(parents=True, exist_ok=True)
            for attempt in range(2):
                try:
                    return self._connect(str(self.path))
                except sqlite3.OperationalError as exc:
                    if "locked" in str(exc):
                        break  # another pass holds it: this one works without it
                    if attempt == 0:
                        with contextlib.suppress(OSError):
                            self.path.unlink()
                except (sqlite3.Error, OSError):
                    if attempt == 0:  # unreadable, another version, stale: start anew
                        with contextlib.suppress(OSError):
                            self.path.unlink()
        return self._connect(":memory:")  # never write through a link; work without a file

    def _connect(self, where: str) -> sqlite3.Connection:
        db = cache_db.connect(where, isolation_level=None)
        try:
            version = db.execute("PRAGMA user_version").fetchone()[0]
            if version not in (0, 3, _VERSION):
                raise sqlite3.DatabaseError("another cache version")
            db.execute("BEGIN IMMEDIATE")  # held until close: refresh and queries see one state
            for statement in SCHEMA:
                db.execute(statement)
            if version != _VERSION:  # new, or version 3: its tables are this version's
                db.execute(f"PRAGMA user_version = {_VERSION}")
            recorded = dict(db.execute("SELECT name, value FROM meta").fetchall())
            seal = self._seal() if recorded and where != ":memory:" else None
            if seal is not None and seal == _commits(self.path):
                self._rows = recorded  # nothing wrote to it since this code's last pass did
                return db
            self._rows = {t: db.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in TABLES}
            if recorded and recorded != self._rows:
                raise sqlite3.DatabaseError("row counts differ from those recorded")
        except BaseException:
            db.close()
            raise
        return db

    def _seal(self) -> str | None:
        """The commit counter the database had after this code's last pass wrote it."""
        try:
            return self.path.with_name(self.path.name + ".seal").read_text(encoding="ascii")
        except (OSError, UnicodeDecodeError):
            return None

    def _change(self, table: str, sql: str, rows: Iterable[Any] | None = None) -> None:
        """Run ``sql`` (for each of ``rows``, if given), an INSERT OR IGNORE or a DELETE of
        ``table``, counting the rows it adds or removes."""
        cursor = self.db.execute(sql) if rows is None else self.db.executemany(sql, rows)
        self._rows[table] += -cursor.rowcount if sql.startswith("DELETE") else cursor.rowcount

    def close(self) -> None:
        """Record the row counts and commit (a cache that cannot be written only costs time)."""
        db = self.db
        try:
            if db.in_transaction:
                db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", self._rows.items())
                db.execute("COMMIT")
                if self.on_disk:
                    seal = self.path.with_name(self.path.name + ".seal")
                    with contextlib.suppress(OSError):
                        seal.write_text(_commits(self.path) or "", encoding="ascii")
        except sqlite3.Error:
            with contextlib.suppress(sqlite3.Error):
                db.execute("ROLLBACK")
        finally:
            db.close()

    # -- refreshing -----------------------------------------------------------------

    def refresh(self, by_git: bool = False) -> None:
        """Bring the tables up to the store's files: a stat per file, a read and parse per
        changed file, the link graph re-resolved where ids, aliases or links moved.

        ``by_git``: the store's root is a Git work tree (a Dream stage) and the files to
        look at are those Git says may differ from what the last pass saw
        (``memoryfs.store.git_changes``), when that pass left an anchor; else every file."""
        db = self.db
        for temp in ("before", "ckeys", "todo", "fresh", "maybe"):
            db.execute(f"DELETE FROM {temp}")
        commit = self._anchor() if by_git and self.on_disk else None
        if commit is None or not self._candidates(commit):
            self._scan_all()
        else:
            self._scan()
        db.execute("DELETE FROM anchor")
        db.execute("DELETE FROM dirty")
        if commit is not None:
            db.execute("INSERT INTO anchor VALUES (?)", (commit,))
            db.execute("INSERT INTO dirty SELECT rel FROM fresh ORDER BY rel")
        # links are resolved again where they are new, or name a key that moved
        moved = link_target("before.k")
        db.execute(f"INSERT INTO ckeys SELECT k FROM before WHERE t IS NOT ({moved})")
        db.execute("INSERT OR IGNORE INTO todo SELECT rel FROM link WHERE target IN ckeys")
        db.execute("INSERT OR IGNORE INTO todo SELECT rel FROM link WHERE low IN ckeys")
        self._change("edge", "DELETE FROM edge WHERE rel IN todo")
        self._change("edge", RELINK)

    def _scan_all(self) -> None:
        """Compare every file listed with its stored stamp, a chunk at a time."""
        query = "SELECT rel, size, mtime, ino, key FROM stats WHERE rel > ? AND rel {} ?"
        for sub, kind in _GROUPS:
            rels = self.store.files(sub)  # sorted: compared with the stored stamps in order
            lo = f"{sub}/"  # the stamps stored between lo and the chunk's last file
            for i in range(0, max(len(rels), 1), _CHUNK):
                chunk = rels[i : i + _CHUNK]
                # the last chunk takes every stored file of the folder after lo
                last = i + _CHUNK >= len(rels)
                hi = f"{sub}0" if last else chunk[-1]  # '0' follows '/'
                rows = self.db.execute(query.format("<" if last else "<="), (lo, hi)).fetchall()
                stored = {r[0]: r[1:] for r in rows}
                self._compare(chunk, kind, stored)
                lo = chunk[-1] if chunk else lo

    def _anchor(self) -> str | None:
        """The commit of the work tree, with the files that differ from it now in ``fresh``
        (read before this pass looks at any file); None when Git cannot tell."""
        found = anchor_of(self.store.root)
        if found is None:
            return None
        commit, dirty = found
        try:
            self.db.executemany("INSERT OR IGNORE INTO fresh VALUES (?)", ((r,) for r in dirty))
        except Untold:
            self.db.execute("DELETE FROM fresh")
            return None
        return commit

    def _candidates(self, commit: str) -> bool:
        """Gather in ``maybe`` the files that may differ from what the last pass saw (those
        the last pass's anchor and this one's name, and what changed between their commits),
        marking those ``store.files`` does not list now; False when only looking at every
        file will do (no anchor stored, Git cannot tell, a folder of the store is a link, or
        a candidate is a folder). In SQLite, not in memory: after a full Dream run they are
        every file of the store."""
        db = self.db
        row = db.execute("SELECT head FROM anchor").fetchone()
        if row is None or not all(c in "0123456789abcdef" for c in row[0]):
            return False
        memory = str(self.store.memory)
        tops = [memory, *(f"{memory}/{sub}" for sub in ("sessions", *(g for g, _ in _GROUPS)))]
        if any(os.path.islink(top) for top in tops):
            return False
        insert = "INSERT OR IGNORE INTO maybe VALUES (?, 1)"
        try:
            db.executemany(insert, ((r,) for r in changed_between(self.store.root, row[0], commit)))
        except Untold:
            return False
        db.execute("INSERT OR IGNORE INTO maybe SELECT rel, 1 FROM dirty")
        db.execute("INSERT OR IGNORE INTO maybe SELECT rel, 1 FROM fresh")
        unlisted: list[str] = []
        for (rel,) in self.rows("SELECT rel FROM maybe"):
            found = self.store.lists(rel)
            if found is None:
                return False
            if not found:
                unlisted.append(rel)
        db.executemany("UPDATE maybe SET listed = 0 WHERE rel = ?", ((r,) for r in unlisted))
        return True

    def _scan(self) -> None:
        """Compare the files of ``maybe`` with their stored stamps, a chunk at a time; a
        stored file not listed now is gone."""
        query = "SELECT rel, listed FROM maybe WHERE rel > ? AND rel < ? ORDER BY rel LIMIT ?"
        for sub, kind in _GROUPS:
            lo, hi = f"{sub}/", f"{sub}0"  # '0' follows '/'
            while chunk := self.db.execute(query, (lo, hi, _CHUNK)).fetchall():
                rels = [rel for rel, _ in chunk]
                marks = ", ".join("?" * len(rels))
                query_stats = f"SELECT rel, size, mtime, ino, key FROM stats WHERE rel IN ({marks})"
                stored = {r[0]: r[1:] for r in self.db.execute(query_stats, rels)}
                self._compare([rel for rel, listed in chunk if listed], kind, stored)
                lo = rels[-1]

    def _compare(self, chunk: list[str], kind: int, stored: dict[str, tuple[Any, ...]]) -> None:
        """Compare a chunk of the listing with its stored stamps (and stored files between
        it and the previous chunk, gone now); write what changed."""
        stamps: list[tuple[Any, ...]] = []
        dropped: list[str] = []
        gone: list[str] = []  # no longer listed, or unreadable now
        added: list[tuple[str, int, Facts]] = []
        for rel in chunk:
            old = stored.pop(rel, None)
            try:
                path, st = self._stat(rel)
                sig = (st.st_size, st.st_mtime_ns, st.st_ino)
                if old is not None and tuple(old[:3]) == sig:
                    continue
                limit = self.store.config.budgets.max_file_bytes
                if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
                    raise ValueError(rel)  # a FIFO or a device is never opened; nor a huge file
                fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
                with os.fdopen(fd, "rb") as fh:
                    data = fh.read(limit + 1)
                if len(data) > limit:
                    raise ValueError(rel)
                text = data.decode("utf-8")
            except (OSError, UnicodeDecodeError, MemoryFSError, ValueError):
                if old is not None:
                    gone.append(rel)
                continue
            key = hashlib.sha1(data).hexdigest()
            stamps.append((rel, *sig, key))
            if old is not None and old[3] == key:
                continue  # same bytes, new stamp (a checkout rewrote it): facts hold
            if old is not None:
                dropped.append(rel)
            facts = facts_of(text, rel, kind)
            if facts is not None:
                added.append((rel, kind, facts))
        gone += stored  # listed no more (between the previous chunk and this one)
        self._write(stamps, dropped + gone, added, gone)

    def _write(
        self,
        stamps: list[tuple[Any, ...]],
        dropped: list[str],
        added: list[tuple[str, int, Facts]],
        gone: list[str],
    ) -> None:
        db = self.db
        rels = [(r,) for r in dropped]
        linked = [(rel, f) for rel, kind, f in added if kind in (KNOWLEDGE, NOTE)]
        # what the ids and aliases of dropped and new pages name, before they change
        db.executemany(
            f"INSERT OR IGNORE INTO before SELECT o.id, {link_target('o.id')} FROM page o "
            "WHERE o.rel = ? AND o.kind < 2",
            rels,
        )
        db.executemany(
            f"INSERT OR IGNORE INTO before SELECT o.alias, {link_target('o.alias')} FROM alias o "
            "WHERE o.rel = ?",
            rels,
        )
        keys = {k: None for _, f in linked for k in (f.row[0], *f.aliases)}
        db.executemany(
            f"INSERT OR IGNORE INTO before SELECT ?1, {link_target('?1')}", [(k,) for k in keys]
        )
        db.executemany("INSERT OR IGNORE INTO todo VALUES (?)", rels)
        for table in ("page", "alias", "link", "session"):
            self._change(table, f"DELETE FROM {table} WHERE rel = ?", rels)
        self._change("stats", "DELETE FROM stats WHERE rel = ?", [(r,) for r in gone])
        self._change("stats", "INSERT OR IGNORE INTO stats VALUES (?, ?, ?, ?, ?)", stamps)
        db.executemany(
            "UPDATE stats SET size = ?, mtime = ?, ino = ?, key = ? WHERE rel = ?",
            [(*st[1:], st[0]) for st in stamps],
        )
        pages = [(rel, kind, *f.row) for rel, kind, f in added if kind != TRANSCRIPT]
        self._change("page", "INSERT INTO page VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", pages)
        self._change(
            "session",
            "INSERT INTO session VALUES (?, ?, ?, ?, ?)",
            [(rel, *f.row) for rel, kind, f in added if kind == TRANSCRIPT],
        )
        db.executemany("INSERT OR IGNORE INTO todo VALUES (?)", [(rel,) for rel, _ in linked])
        aliases = [(a, rel, f.row[0]) for rel, f in linked for a in f.aliases]
        self._change("alias", "INSERT OR IGNORE INTO alias VALUES (?, ?, ?)", aliases)
        self._change(
            "link",
            "INSERT OR IGNORE INTO link VALUES (?, ?, ?)",
            [(rel, t, t.lower()) for rel, f in linked for t in f.links],
        )

    def _stat(self, rel: str) -> tuple[str, os.stat_result]:
        """``store.resolve(rel)`` and its stat, resolving each folder once: a store of
        thousands of files has a few dozen folders, and resolving every file's path
        would be most of what an unchanged store costs (paths are joined as strings)."""
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

    # -- reading ----------------------------------------------------------------------

    def rows(self, query: str, args: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
        """The rows of ``query``, a chunk at a time."""
        cursor = self.db.execute(query, args)
        while batch := cursor.fetchmany(_CHUNK):
            yield from batch

    def value(self, query: str, args: tuple[Any, ...] = ()) -> Any:
        return self.db.execute(query, args).fetchone()[0]


def _commits(path: Path) -> str | None:
    """The change counter in an SQLite file's header (every commit moves it), with the
    file's size: what a seal compares, so counting rows is needed only after another
    writer (``PRAGMA data_version`` sees only other connections of one process)."""
    try:
        with open(path, "rb") as fh:
            header = fh.read(100)
        return f"{int.from_bytes(header[24:28], 'big')}:{os.path.getsize(path)}"
    except OSError:
        return None
