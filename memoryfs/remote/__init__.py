"""Remote stores: a store kept on a Git server, cloned where it is worked on.

``clone_store`` makes the clone; ``pull`` / ``publish`` keep it in step (fetch and
integrate before writing, push after, never forced but for a purged history:
``publish_purged``); ``remote_writes`` wraps a command that commits. The network
commands and what their failures mean are ``memoryfs.remote.transport``'s.
"""

from __future__ import annotations

from memoryfs.errors import RemoteError
from memoryfs.remote.clone import clone_store
from memoryfs.remote.sync import (
    Pulled,
    publish,
    publish_purged,
    pull,
    purge_pending,
    remote_tip,
    remote_url,
    remote_writes,
)

__all__ = [
    "Pulled",
    "RemoteError",
    "clone_store",
    "publish",
    "publish_purged",
    "pull",
    "purge_pending",
    "remote_tip",
    "remote_url",
    "remote_writes",
]
