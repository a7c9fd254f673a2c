"""``memoryfs clone URL DIR``: a store that lives on a Git server, cloned to work on here.

The clone is an ordinary store whose Git setting ``memoryfs.remote`` names the URL, so
``ingest`` and ``forget`` push what they commit and ``dream run`` fetches, consolidates
and pushes (``memoryfs.remote.sync``). A URL that cannot be reached, or whose ``main``
is not a memory store, leaves nothing behind.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from memoryfs.errors import MemoryFSError, RemoteError, StoreExistsError
from memoryfs.remote.sync import REMOTE_SETTING, REMOTE_TIP, local_git
from memoryfs.remote.transport import clone_bare_url, git_net, remote_problem
from memoryfs.store.store import CONFIG_NAME, Store

__all__ = ["clone_store"]


def clone_store(url: str, dest: Path | str) -> Store:
    """Clone the store at ``url`` into ``dest`` (new or empty) and open it."""
    url = clone_bare_url(url.strip())
    if not url:
        raise MemoryFSError("give the URL of a store's Git repository")
    root = Path(dest).expanduser().resolve()
    if root.exists() and (not root.is_dir() or any(root.iterdir())):
        raise StoreExistsError(f"{root} exists and is not an empty folder")
    made = not root.exists()
    try:
        proc = git_net(
            root.parent if made else root,
            "clone", "--quiet", "--no-tags", "--branch", "main", url, str(root),
        )  # fmt: skip
        if proc.returncode != 0:
            if "not found in upstream" in proc.stderr or "Remote branch main" in proc.stderr:
                raise RemoteError(f"{url} has no main branch: it is not a memory store")
            raise remote_problem(url, proc)
        if not (root / CONFIG_NAME).is_file():
            raise RemoteError(f"{url} is not a memory store: its main has no {CONFIG_NAME}")
        store = Store.open(root)
        local_git(store, "config", REMOTE_SETTING, url)
        local_git(store, "update-ref", REMOTE_TIP, store.head())
        return store
    except BaseException:
        if made:
            shutil.rmtree(root, ignore_errors=True)
        else:
            for child in list(root.iterdir()) if root.is_dir() else []:
                shutil.rmtree(child, ignore_errors=True) if child.is_dir() else child.unlink()
        raise
