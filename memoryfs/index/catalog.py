"""The catalog: what the search index knows about files, beyond their text.

Per file: layer, kind, title, dates, preference flag and size; per page its keys
(id and aliases) and ``[[link]]`` targets, and a running count of how many pages
link to each key (``linkcount``, kept by ``memoryfs.index.fts`` on every write), so the
most linked pages come from an index lookup instead of a join over every link.
Recall uses it for the one-hop link walk; the materializer to choose its set.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["FileRow", "file_rows", "candidates", "linked"]

_COLS = "id, path, layer, kind, page_id, title, type, updated, date, preference, size"


@dataclass(frozen=True)
class FileRow:
    """An indexed file's metadata."""

    path: str  # relative to memory/
    layer: str
    kind: str  # page | summary | transcript | other
    id: str
    title: str
    type: str
    updated: str
    date: str
    preference: bool
    size: int
    inbound: int = 0  # links from other pages to its id or aliases


def _inbound(conn: sqlite3.Connection, file_ids: Sequence[int]) -> Counter[int]:
    out: Counter[int] = Counter()
    ids = list(dict.fromkeys(file_ids))
    for i in range(0, len(ids), 500):  # SQLite's bound-parameter limit, with room to spare
        chunk = ids[i : i + 500]
        out.update(
            dict(
                conn.execute(
                    "SELECT k.file_id, sum(c.n) FROM keys k JOIN linkcount c ON c.key = k.key "
                    f"WHERE k.file_id IN ({','.join('?' * len(chunk))}) GROUP BY k.file_id",
                    chunk,
                ).fetchall()
            )
        )
    return out


def _rows(conn: sqlite3.Connection, raw: list[tuple[object, ...]]) -> list[FileRow]:
    inbound = _inbound(conn, [int(r[0]) for r in raw])  # type: ignore[call-overload]
    return [
        FileRow(
            path=str(r[1]),
            layer=str(r[2]),
            kind=str(r[3]),
            id=str(r[4]),
            title=str(r[5]),
            type=str(r[6]),
            updated=str(r[7]),
            date=str(r[8]),
            preference=bool(r[9]),
            size=int(r[10]),  # type: ignore[call-overload]
            inbound=inbound[int(r[0])],  # type: ignore[call-overload]
        )
        for r in raw
    ]


def file_rows(conn: sqlite3.Connection, layers: Sequence[str] | None = None) -> list[FileRow]:
    """Every indexed file (of ``layers``), by path."""
    raw = conn.execute(f"SELECT {_COLS} FROM files ORDER BY path").fetchall()
    if layers is not None:
        raw = [r for r in raw if r[2] in layers]
    return _rows(conn, raw)


def candidates(conn: sqlite3.Connection, limit: int) -> list[FileRow]:
    """What a working set draws from, each kind cut to ``limit`` by index lookups.

    Preference pages, the most linked and the most recently updated knowledge
    pages, the most recent session summaries and notes.
    """
    picked: dict[int, tuple[object, ...]] = {}

    def add(where: str, params: tuple[object, ...]) -> None:
        for r in conn.execute(f"SELECT {_COLS} FROM files {where}", params):
            picked.setdefault(int(r[0]), r)

    add("WHERE preference = 1 AND kind = 'page' ORDER BY updated DESC LIMIT ?", (limit,))
    add("WHERE layer = 'knowledge' AND kind = 'page' ORDER BY updated DESC LIMIT ?", (limit,))
    add("WHERE kind = 'summary' ORDER BY date DESC LIMIT ?", (limit,))
    add("WHERE layer = 'notes' AND kind = 'page' ORDER BY updated DESC LIMIT ?", (limit,))
    most_linked = ", ".join(f"f.{c.strip()}" for c in _COLS.split(","))
    # CROSS JOIN fixes the join order: walk linkcount by its n index, most first
    # (left to the planner, it scans every page and sorts).
    for r in conn.execute(
        f"SELECT {most_linked} FROM linkcount c CROSS JOIN keys k ON k.key = c.key "
        "CROSS JOIN files f ON f.id = k.file_id WHERE f.kind = 'page' "
        "ORDER BY c.n DESC LIMIT ?",
        (limit,),
    ):
        picked.setdefault(int(r[0]), r)
    return sorted(_rows(conn, list(picked.values())), key=lambda r: r.path)


def linked(conn: sqlite3.Connection, paths: Sequence[str]) -> list[str]:
    """Pages the given pages link to with ``[[...]]`` (one hop), in link order."""
    out: list[str] = []
    for path in paths:
        rows = conn.execute(
            "SELECT DISTINCT t.path FROM files s JOIN links l ON l.file_id = s.id "
            "JOIN keys k ON k.key = l.target JOIN files t ON t.id = k.file_id "
            "WHERE s.path = ? AND t.path != s.path ORDER BY l.rowid",
            (path,),
        ).fetchall()
        out.extend(str(r[0]) for r in rows if str(r[0]) not in out)
    return out
