"""The one exception root of the memoryfs library.

Every error a user can cause (bad input, a missing store, a refused write) is a
``MemoryFSError`` whose message says what happened and how to fix it. The CLI
catches this root, prints the message on one line and exits non-zero.
"""

from __future__ import annotations

__all__ = [
    "MemoryFSError",
    "StoreNotFoundError",
    "StoreExistsError",
    "IngestError",
    "PageError",
    "LockedError",
    "DiskError",
    "RemoteError",
]


class MemoryFSError(Exception):
    """Base class of every user-facing memoryfs error."""


class StoreNotFoundError(MemoryFSError):
    """No store at the given path, in MEMORYFS_STORE, or above the current folder."""


class StoreExistsError(MemoryFSError):
    """A store cannot be created where something else already lives."""


class IngestError(MemoryFSError):
    """A transcript could not be ingested; nothing was written."""


class PageError(MemoryFSError):
    """A page could not be parsed or written."""


class LockedError(MemoryFSError):
    """Another process holds the store lock."""


class DiskError(MemoryFSError):
    """The disk refused a write (full, read-only, over quota); nothing was committed."""


class RemoteError(MemoryFSError):
    """A store's Git remote could not be reached, refused a push, or moved in a way this
    clone cannot follow; what was local stays local."""
