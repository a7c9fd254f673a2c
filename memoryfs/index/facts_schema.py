"""The tables of the index-facts cache (``memoryfs.index.facts_cache``) and the SQL that
resolves a link key to the page it names.

``memoryfs.index.facts_cache`` decides which files to look at and what to write; this module
only knows tables: per-file stamps, page facts, aliases, links as written, the resolved
link graph (``edge``), sessions, the anchor of the last by-Git pass, and the temporary
tables one pass works in.

Boundary: SQL text only, no connection.
"""

from __future__ import annotations

__all__ = ["RELINK", "SCHEMA", "TABLES", "link_target"]

# the tables whose row counts a pass records, to tell when rows were lost behind its back
TABLES = ("stats", "page", "alias", "link", "edge", "session")
SCHEMA = (
    "CREATE TABLE IF NOT EXISTS stats (rel TEXT PRIMARY KEY, size INTEGER, mtime INTEGER, "
    "ino INTEGER, key TEXT) WITHOUT ROWID",
    # pages (knowledge, notes, summaries) with facts; ``folder`` is a note's folder
    "CREATE TABLE IF NOT EXISTS page (rel TEXT PRIMARY KEY, kind INTEGER, id TEXT, "
    "title TEXT, type TEXT, summary TEXT, updated TEXT, pref INTEGER, folder TEXT) WITHOUT ROWID",
    "CREATE INDEX IF NOT EXISTS page_id ON page (id, kind)",
    "CREATE INDEX IF NOT EXISTS page_kind ON page (kind, folder)",
    # lower-cased aliases and link targets of knowledge pages and notes
    "CREATE TABLE IF NOT EXISTS alias (alias TEXT, rel TEXT, id TEXT, "
    "PRIMARY KEY (alias, rel)) WITHOUT ROWID",
    "CREATE INDEX IF NOT EXISTS alias_rel ON alias (rel)",
    "CREATE TABLE IF NOT EXISTS link (rel TEXT, target TEXT, low TEXT, "
    "PRIMARY KEY (rel, target)) WITHOUT ROWID",
    "CREATE INDEX IF NOT EXISTS link_target ON link (target)",
    "CREATE INDEX IF NOT EXISTS link_low ON link (low)",
    "CREATE TABLE IF NOT EXISTS edge (rel TEXT, tid TEXT, PRIMARY KEY (rel, tid)) WITHOUT ROWID",
    "CREATE INDEX IF NOT EXISTS edge_tid ON edge (tid)",
    "CREATE TABLE IF NOT EXISTS session (rel TEXT PRIMARY KEY, id TEXT, date TEXT, "
    "title TEXT, turns INTEGER) WITHOUT ROWID",
    # sessions/index.md lists them in this order: read along it, not sorted in memory
    "CREATE INDEX IF NOT EXISTS session_order ON session (date, id, rel)",
    "CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value INTEGER)",
    # the anchor of the last pass (``memoryfs.store.git_changes``): its commit (one row, none
    # when that pass looked at every file without one) and the files that differed then
    "CREATE TABLE IF NOT EXISTS anchor (head TEXT)",
    "CREATE TABLE IF NOT EXISTS dirty (rel TEXT PRIMARY KEY) WITHOUT ROWID",
    # the ids and aliases a pass touches, with what each named before it; those naming
    # something else after it
    "CREATE TEMP TABLE IF NOT EXISTS before (k TEXT PRIMARY KEY, t TEXT)",
    "CREATE TEMP TABLE IF NOT EXISTS ckeys (k TEXT PRIMARY KEY)",
    "CREATE TEMP TABLE IF NOT EXISTS todo (rel TEXT PRIMARY KEY)",  # pages to re-link
    # this pass's anchor: the files that differ from its commit (``dirty`` once it is done)
    "CREATE TEMP TABLE IF NOT EXISTS fresh (rel TEXT PRIMARY KEY) WITHOUT ROWID",
    # the files this pass looks at (by Git); those ``store.files`` does not list now
    "CREATE TEMP TABLE IF NOT EXISTS maybe (rel TEXT PRIMARY KEY, listed INTEGER) WITHOUT ROWID",
)


def link_target(k: str) -> str:
    """SQL for what link key ``k`` names: a page id, else the first page (by path) with
    that lower-cased alias (``memoryfs.pages.listing.page_index``'s rule)."""
    return (
        f"CASE WHEN EXISTS (SELECT 1 FROM page WHERE id = {k} AND kind < 2) THEN {k} "
        f"ELSE (SELECT a.id FROM alias a WHERE a.alias = {k} ORDER BY a.rel LIMIT 1) END"
    )


RELINK = (
    "INSERT OR IGNORE INTO edge SELECT rel, tid FROM ("
    f"SELECT l.rel AS rel, p.id AS pid, COALESCE(NULLIF({link_target('l.target')}, ''), "
    f"{link_target('l.low')}) "
    "AS tid FROM todo JOIN link l ON l.rel = todo.rel JOIN page p ON p.rel = l.rel"
    ") WHERE tid IS NOT NULL AND tid != pid"
)
