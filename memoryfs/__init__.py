"""memoryfs: long-term memory for AI agents as Markdown files in a Git repository.

The library: store, pages, links, transcripts, ingestion, validation, index,
search, materializer, receipts. It knows nothing of ``dream`` or ``cli``.

The names below are the documented API (``memoryfs.api``): ``open_store`` or
``Store.open`` gives a store to call ``search``, ``recall``, ``read``, ``ingest``,
``materialize`` and ``record_use`` on. They load on first use, so that ``import
memoryfs`` (every command does) stays as light as the command needs.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memoryfs.api import open_store
    from memoryfs.errors import MemoryFSError
    from memoryfs.store.store import Store, init_store

__version__ = "0.1.0"

__all__ = ["MemoryFSError", "Store", "__version__", "init_store", "open_store"]

_HOMES = {
    "MemoryFSError": "memoryfs.errors",
    "Store": "memoryfs.store.store",
    "init_store": "memoryfs.store.store",
    "open_store": "memoryfs.api",
}


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_HOMES[name]), name)
