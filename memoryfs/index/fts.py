"""The search index's SQLite database: schema, connection, transactions, row writes.

``memoryfs.read.search`` decides what to index and how to rank; this module only
knows tables. Units live in ``units``; ``fts`` is an FTS5 index over their text
columns (external content, kept in step by triggers), so text is stored once,
plus a ``compounds`` column: the unit's hyphenated words written as one
(``memoryfs.read.ranking.compounds``: "de-stress" is also found as "destress").
``dirs`` holds, per folder, the count and the XOR of the stamps of its indexed
files (``memoryfs.store.scan``), and ``buckets`` the same per folder and name bucket,
with the XOR of their (name, inode) keys; triggers keep both in step with
``files`` inside the very transaction that changes a row, so they always describe
what the index holds. ``folders`` remembers each folder's times as the last full
walk saw them (for a quick refresh, ``memoryfs.index.refresh``).
A file of another schema version is dropped and rebuilt: the database is a cache.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from pathlib import Path

from memoryfs.index.units import FileInfo, Unit
from memoryfs.read.ranking import compounds
from memoryfs.store.scan import inode_key, name_bucket

__all__ = [
    "SCHEMA_VERSION",
    "BUSY_MS",
    "connect",
    "immediate",
    "delete_file",
    "insert_file",
    "touch_file",
]

# 13: the compounds column; 14: profile citations thing by thing; 15: no unit for a line
# marked (unsupported)
SCHEMA_VERSION = 15
BUSY_MS = 60_000

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files(
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    layer TEXT NOT NULL,
    kind TEXT NOT NULL,
    folder TEXT NOT NULL,
    bucket INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    size INTEGER NOT NULL,
    stamp INTEGER NOT NULL,
    ikey INTEGER NOT NULL,
    hash TEXT NOT NULL,
    page_id TEXT NOT NULL DEFAULT '',
    title TEXT NOT NULL DEFAULT '',
    names TEXT NOT NULL DEFAULT '',
    type TEXT NOT NULL DEFAULT '',
    updated TEXT NOT NULL DEFAULT '',
    date TEXT NOT NULL DEFAULT '',
    preference INTEGER NOT NULL DEFAULT 0,
    rstem TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS files_folder ON files(folder, bucket);
CREATE INDEX IF NOT EXISTS files_rstem ON files(rstem);
CREATE TABLE IF NOT EXISTS dirs(path TEXT PRIMARY KEY, n INTEGER NOT NULL, x INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS buckets(
    folder TEXT NOT NULL,
    b INTEGER NOT NULL,
    n INTEGER NOT NULL,
    x INTEGER NOT NULL,
    xi INTEGER NOT NULL,
    PRIMARY KEY(folder, b)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS folders(
    path TEXT PRIMARY KEY,
    mtime_ns INTEGER NOT NULL,
    ctime_ns INTEGER NOT NULL
);
CREATE TRIGGER IF NOT EXISTS files_ai AFTER INSERT ON files BEGIN
    INSERT INTO dirs(path, n, x) VALUES (new.folder, 1, new.stamp)
    ON CONFLICT(path) DO UPDATE SET n = n + 1, x = (x | excluded.x) - (x & excluded.x);
    INSERT INTO buckets(folder, b, n, x, xi) VALUES (new.folder, new.bucket, 1, new.stamp, new.ikey)
    ON CONFLICT(folder, b) DO UPDATE SET n = n + 1, x = (x | excluded.x) - (x & excluded.x),
        xi = (xi | excluded.xi) - (xi & excluded.xi);
END;
CREATE TRIGGER IF NOT EXISTS files_ad AFTER DELETE ON files BEGIN
    UPDATE dirs SET n = n - 1, x = (x | old.stamp) - (x & old.stamp) WHERE path = old.folder;
    DELETE FROM dirs WHERE path = old.folder AND n = 0;
    UPDATE buckets SET n = n - 1, x = (x | old.stamp) - (x & old.stamp),
        xi = (xi | old.ikey) - (xi & old.ikey)
    WHERE folder = old.folder AND b = old.bucket;
    DELETE FROM buckets WHERE folder = old.folder AND b = old.bucket AND n = 0;
END;
CREATE TRIGGER IF NOT EXISTS files_au AFTER UPDATE OF stamp, ikey ON files BEGIN
    UPDATE dirs SET x = (x | old.stamp) - (x & old.stamp) WHERE path = old.folder;
    UPDATE dirs SET x = (x | new.stamp) - (x & new.stamp) WHERE path = new.folder;
    UPDATE buckets SET x = (x | old.stamp) - (x & old.stamp), xi = (xi | old.ikey) - (xi & old.ikey)
    WHERE folder = old.folder AND b = old.bucket;
    UPDATE buckets SET x = (x | new.stamp) - (x & new.stamp), xi = (xi | new.ikey) - (xi & new.ikey)
    WHERE folder = new.folder AND b = new.bucket;
END;
CREATE TABLE IF NOT EXISTS keys(key TEXT NOT NULL, file_id INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS keys_key ON keys(key);
CREATE INDEX IF NOT EXISTS keys_file ON keys(file_id);
CREATE TABLE IF NOT EXISTS links(file_id INTEGER NOT NULL, target TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS links_file ON links(file_id);
CREATE INDEX IF NOT EXISTS links_target ON links(target);
CREATE TABLE IF NOT EXISTS linkcount(key TEXT PRIMARY KEY, n INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS linkcount_n ON linkcount(n);
CREATE INDEX IF NOT EXISTS files_recent ON files(layer, kind, updated);
CREATE INDEX IF NOT EXISTS files_sessions ON files(kind, date);
CREATE INDEX IF NOT EXISTS files_pref ON files(preference, kind, updated);
CREATE TABLE IF NOT EXISTS units(
    id INTEGER PRIMARY KEY,
    file_id INTEGER NOT NULL,
    line INTEGER NOT NULL,
    kind TEXT NOT NULL,
    layer TEXT NOT NULL,
    date TEXT NOT NULL,
    citations TEXT NOT NULL,
    anchor TEXT NOT NULL,
    speaker TEXT NOT NULL,
    superseded INTEGER NOT NULL,
    title TEXT NOT NULL,
    aliases TEXT NOT NULL,
    summary TEXT NOT NULL,
    body TEXT NOT NULL,
    context TEXT NOT NULL,
    compounds TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS units_file ON units(file_id, anchor);
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(
    title, aliases, summary, body, context, compounds,
    content='units', content_rowid='id', tokenize='porter unicode61'
);
CREATE TRIGGER IF NOT EXISTS units_ai AFTER INSERT ON units BEGIN
    INSERT INTO fts(rowid, title, aliases, summary, body, context, compounds)
    VALUES (new.id, new.title, new.aliases, new.summary, new.body, new.context, new.compounds);
END;
CREATE TRIGGER IF NOT EXISTS units_ad AFTER DELETE ON units BEGIN
    INSERT INTO fts(fts, rowid, title, aliases, summary, body, context, compounds)
    VALUES ('delete', old.id, old.title, old.aliases, old.summary, old.body, old.context,
        old.compounds);
END;
"""


def connect(path: Path) -> tuple[sqlite3.Connection, bool]:
    conn = sqlite3.connect(path, timeout=BUSY_MS / 1000, isolation_level=None)
    try:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_MS}")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        rebuilt = False
        # Readers never take the write lock: only a missing or old schema does.
        if conn.execute("PRAGMA user_version").fetchone()[0] != SCHEMA_VERSION:
            rebuilt = _create(conn)
        conn.execute("SELECT COUNT(*) FROM fts WHERE fts MATCH 'x' LIMIT 1").fetchone()
    except BaseException:
        conn.close()
        raise
    return conn, rebuilt


def _create(conn: sqlite3.Connection) -> bool:
    """Drop an older schema and create this one; False if another process just did."""
    with immediate(conn):
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version == SCHEMA_VERSION:
            return False
        for (name,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'fts_%' "
            "AND name NOT LIKE 'sqlite_%'"
        ).fetchall():
            conn.execute(f'DROP TABLE IF EXISTS "{name}"')
        for statement in _statements(_SCHEMA):
            conn.execute(statement)
        conn.execute("INSERT INTO meta(key, value) VALUES ('units', 0), ('newest', '')")
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    return True


def _statements(script: str) -> list[str]:
    """Split the schema into statements (triggers keep their inner semicolons)."""
    out: list[str] = []
    buf: list[str] = []
    for line in script.strip().splitlines():
        buf.append(line)
        text = "\n".join(buf).strip()
        if text.endswith(";") and (
            not text.upper().startswith("CREATE TRIGGER") or text.endswith("END;")
        ):
            out.append(text)
            buf = []
    return out


class immediate:
    """``BEGIN IMMEDIATE`` ... ``COMMIT`` (rolled back on any exception)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def __enter__(self) -> sqlite3.Connection:
        self.conn.execute("BEGIN IMMEDIATE")
        return self.conn

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if exc_type is None:
            self.conn.execute("COMMIT")
        else:
            self.conn.execute("ROLLBACK")


def delete_file(conn: sqlite3.Connection, file_id: int) -> None:
    targets = [r[0] for r in conn.execute("SELECT target FROM links WHERE file_id = ?", (file_id,))]
    _count_links(conn, targets, -1)
    gone = conn.execute("DELETE FROM units WHERE file_id = ?", (file_id,)).rowcount
    _count_units(conn, -max(gone, 0))
    conn.execute("DELETE FROM keys WHERE file_id = ?", (file_id,))
    conn.execute("DELETE FROM links WHERE file_id = ?", (file_id,))
    conn.execute("DELETE FROM files WHERE id = ?", (file_id,))


def insert_file(
    conn: sqlite3.Connection,
    rel: str,
    mtime_ns: int,
    size: int,
    stamp: int,
    inode: int,
    digest: str,
    info: FileInfo | None,
    units: list[Unit],
) -> None:
    layer = info.layer if info else rel.split("/", 1)[0]
    folder, _, name = rel.rpartition("/")
    cur = conn.execute(
        "INSERT INTO files(path, layer, kind, folder, bucket, mtime_ns, size, stamp, ikey, "
        "hash, page_id, title, names, type, updated, date, preference, rstem) "
        "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        (
            rel,
            layer,
            info.kind if info else "other",
            folder,
            name_bucket(name),
            mtime_ns,
            size,
            stamp,
            inode_key(name, inode),
            digest,
            info.id if info else "",
            info.title if info else "",
            "\n".join([info.title, *info.keys]) if info else "",
            info.type if info else "",
            info.updated if info else "",
            info.date if info else "",
            int(info.preference) if info else 0,
            name.removesuffix(".md")[::-1],  # reversed stem: names ending in "-x" are a range
        ),
    )
    file_id = cur.lastrowid
    if info is not None:
        conn.executemany(
            "INSERT INTO keys(key, file_id) VALUES (?, ?)", [(k, file_id) for k in info.keys]
        )
        conn.executemany(
            "INSERT INTO links(file_id, target) VALUES (?, ?)", [(file_id, t) for t in info.links]
        )
        _count_links(conn, info.links, +1)
    _count_units(conn, len(units))
    if info is not None and info.date:
        conn.execute("UPDATE meta SET value = max(value, ?) WHERE key = 'newest'", (info.date,))
    conn.executemany(
        "INSERT INTO units(file_id, line, kind, layer, date, citations, anchor, speaker, "
        "superseded, title, aliases, summary, body, context, compounds) "
        "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        [
            (
                file_id,
                u.line,
                u.kind,
                layer,
                u.date,
                json.dumps(list(u.citations)),
                u.anchor,
                u.speaker,
                int(u.superseded),
                u.title,
                u.aliases,
                u.summary,
                u.body,
                u.context,
                " ".join(compounds(f"{u.title} {u.aliases} {u.summary} {u.body}")),
            )
            for u in units
        ],
    )


def touch_file(
    conn: sqlite3.Connection,
    file_id: int,
    rel: str,
    mtime_ns: int,
    size: int,
    stamp: int,
    inode: int,
) -> None:
    """A file whose stamp moved but whose content did not."""
    conn.execute(
        "UPDATE files SET mtime_ns = ?, size = ?, stamp = ?, ikey = ? WHERE id = ?",
        (mtime_ns, size, stamp, inode_key(rel.rpartition("/")[2], inode), file_id),
    )


def _count_units(conn: sqlite3.Connection, delta: int) -> None:
    # Kept in step inside the writer's transaction, so search never needs COUNT(*).
    if delta:
        conn.execute(
            "UPDATE meta SET value = CAST(value AS INTEGER) + ? WHERE key = 'units'", (delta,)
        )


def _count_links(conn: sqlite3.Connection, targets: Sequence[str], delta: int) -> None:
    # How many pages link to each key; a page's own links to itself are stored
    # like any other (rare, and harmless for ranking the working set).
    for target in dict.fromkeys(targets):
        conn.execute(
            "INSERT INTO linkcount(key, n) VALUES (?, ?) "
            "ON CONFLICT(key) DO UPDATE SET n = n + excluded.n",
            (target, delta),
        )
    if delta < 0:
        conn.execute("DELETE FROM linkcount WHERE n <= 0")
