"""A worker's scratch clones: one folder a store URL, cloned once and reused.

``opened(config, url)`` yields the store's clone with this machine's claim on it (an
``flock`` beside the folder: two worker processes of one machine never share a clone).
A first use clones into a temporary folder and renames it into place, so a worker killed
mid-clone leaves no half clone under the real name. A clone left by a killed worker is
reused: nobody holds the flock, so the Git lock files its killed commands left
(``index.lock``, ``*.lock`` refs) are stale and go, the run's own clean-up takes its
stale worktrees and branches, and ``run_remote`` brings ``main`` to the remote's. A
folder that is not a clone of that URL (or not a store at all) is cloned afresh.

Each use touches the clone's lock file, so its time says when a task last used the clone;
``prune`` deletes the clones no task used for ``keep_clones_days`` (skipping any a
process holds), so a machine keeps the stores it runs and not every store it ever ran.
The lock files stay (empty): deleting one could let two processes claim one folder.

Boundary: where the clones live and their upkeep; the fetch, run and push are
``dream.remote``'s.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import shutil
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

from dream.fleet.config import FleetConfig
from dream.fleet.lock import LockHeld
from memoryfs.errors import MemoryFSError
from memoryfs.remote import clone_store, remote_url
from memoryfs.store.store import Store, find_store

__all__ = ["opened", "prune", "scratch_path"]

_LOCK_FILES = ("index.lock", "HEAD.lock", "config.lock", "packed-refs.lock", "shallow.lock")


def scratch_path(config: FleetConfig, url: str) -> Path:
    """The clone's folder: a readable tail of the URL and a hash of all of it."""
    tail = re.sub(r"[^A-Za-z0-9._-]+", "-", url.rstrip("/").rsplit("/", 1)[-1])
    tail = tail.removesuffix(".git").strip("-.")[:40] or "store"
    digest = hashlib.sha256(url.encode("utf-8")).hexdigest()[:12]
    return config.scratch / f"{tail}-{digest}"


def _clear_git_locks(root: Path) -> None:
    """Lock files of Git commands killed with the worker (the flock proves nobody runs)."""
    git_dir = root / ".git"
    for name in _LOCK_FILES:
        with contextlib.suppress(FileNotFoundError):
            (git_dir / name).unlink()
    refs = git_dir / "refs"
    if refs.is_dir():
        for stale in refs.rglob("*.lock"):
            with contextlib.suppress(FileNotFoundError):
                stale.unlink()


def _reusable(path: Path) -> Store | None:
    if not (path / ".git").is_dir():
        return None
    _clear_git_locks(path)
    try:
        store = find_store(path)
        # the folder's name is the URL's hash: a store there with a remote is its clone
        if store.root.resolve() != path.resolve() or not remote_url(store):
            return None
        # the object store is whole (a clone killed at the wrong time is not)
        subprocess.run(
            ["git", "rev-parse", "--verify", "--quiet", "HEAD^{tree}"],
            cwd=path,
            check=True,
            capture_output=True,
        )
    except (MemoryFSError, subprocess.CalledProcessError, OSError):
        return None
    return store


def _clone(path: Path, url: str) -> Store:
    path.parent.mkdir(parents=True, exist_ok=True)
    for leftover in path.parent.glob(f"{path.name}.tmp-*"):  # a killed clone's
        shutil.rmtree(leftover, ignore_errors=True)
    tmp = path.parent / f"{path.name}.tmp-{uuid.uuid4().hex[:8]}"
    try:
        clone_store(url, tmp)
        if path.exists():
            shutil.rmtree(path)
        os.replace(tmp, path)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return find_store(path)


@contextlib.contextmanager
def opened(config: FleetConfig, url: str) -> Iterator[Store]:
    """The store's scratch clone, claimed by this process for the ``with`` body."""
    path = scratch_path(config, url)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path.parent / f"{path.name}.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise LockHeld(f"another worker process of this machine is using {path}") from None
        os.utime(fd)  # the clone's last use, for ``prune``
        yield _reusable(path) or _clone(path, url)
    finally:
        os.close(fd)  # closing the descriptor releases the flock


def prune(config: FleetConfig, now: float | None = None) -> list[Path]:
    """Delete the clones no task used for ``config.keep_clones_days``; the ones deleted."""
    if config.keep_clones_days <= 0 or not config.scratch.is_dir():
        return []
    cutoff = (time.time() if now is None else now) - config.keep_clones_days * 86400
    gone: list[Path] = []
    for lock in sorted(config.scratch.glob("*.lock")):
        clone = lock.with_suffix("")
        try:
            if lock.stat().st_mtime >= cutoff or not clone.is_dir():
                continue
            fd = os.open(lock, os.O_RDWR)
        except OSError:
            continue
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue  # in use now
            if os.fstat(fd).st_mtime < cutoff:  # not used while we looked
                shutil.rmtree(clone, ignore_errors=True)
                gone.append(clone)
        finally:
            os.close(fd)
    return gone
