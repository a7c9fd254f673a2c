"""How the SQLite cache files under ``.memoryfs/`` are opened (index facts, Dream's page
keys, orient facts and turn keys): with a page cache of ``CACHE_KIB``, not SQLite's 2 MiB.

Their queries are by key, so a small cache costs little time; a cache as big as the file
it serves would grow a run's peak memory with the store. The search index
(``memoryfs.index.fts``) is not a cache and keeps SQLite's default.
"""

from __future__ import annotations

import sqlite3
from typing import Any

__all__ = ["CACHE_KIB", "connect"]

CACHE_KIB = 256


def connect(where: str, **options: Any) -> sqlite3.Connection:
    """``sqlite3.connect(where, timeout=2, **options)`` with the bounded page cache."""
    db = sqlite3.connect(where, **{"timeout": 2, **options})
    db.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
    db.execute(f"PRAGMA temp.cache_size = -{CACHE_KIB}")
    return db
