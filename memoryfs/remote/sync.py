"""Keeping a store in step with its Git remote: pull before writing, publish after.

A store has a remote when its clone's Git setting ``memoryfs.remote`` (written by
``memoryfs clone``) or ``remote`` in ``memory.toml`` names one. ``REMOTE_TIP``
(``refs/memoryfs/remote/main``) is the remote's ``main`` as this clone last saw it:
every commit it reaches is on the remote; every commit ``main`` has beyond it was made
here and not yet pushed.

``pull`` (under the store's write lock) fetches the remote's ``main`` and brings the
local ``main`` to it:
- behind: fast-forward (the live tree moves like a Dream landing, refusing to clobber
  a file a person changed);
- ahead: nothing (``publish`` pushes);
- both moved: the commits made here are replayed onto the remote's tip in a scratch
  worktree, one ``cherry-pick`` each (receipt logs merge line by line). A Dream commit
  is not replayed but dropped: it is derived from the files, and the next run
  consolidates again from the new base; replaying it would skip the gates. A commit
  that does not apply stops the pull with nothing changed;
- the remote's history was rewritten (a forget with ``--purge-history`` on another
  clone): this clone takes the new history and drops everything that held the old
  one (reflogs, unreachable objects, Dream worktrees, caches), unless it has commits
  of its own the remote never had, which it refuses to guess about.

``pull_if_stale`` is the readers' pull (the MCP server): at most once per interval, never
waiting for a writer, never failing the read.

``publish`` pushes ``main``, never forced: a push the remote refuses because another
writer pushed first is followed by a pull and another push, ``attempts`` times.
``publish_purged`` is the one forced push: the rewritten history of a purge, recorded
by a commit that says so, taken by the remote only while its ``main`` is still what
this clone purged (``--force-with-lease``). Until that push lands, ``memoryfs.purgeLease``
holds the lease and every pull tries the push again first.
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from memoryfs.errors import MemoryFSError, RemoteError
from memoryfs.remote.transport import FETCHED, fetch_main, push_main
from memoryfs.store.store import Store

__all__ = [
    "ATTEMPTS",
    "REMOTE_TIP",
    "Pulled",
    "is_ancestor",
    "local_git",
    "publish",
    "publish_purged",
    "pull",
    "pull_if_stale",
    "purge_pending",
    "remote_tip",
    "remote_url",
    "remote_writes",
]

ATTEMPTS = 5  # pushes lost to other writers before publish gives up
REMOTE_TIP = "refs/memoryfs/remote/main"
REMOTE_SETTING = "memoryfs.remote"
LEASE_SETTING = "memoryfs.purgeLease"
DREAM_TRAILER = "Dream-Run:"
_AUTHOR = ("memoryfs", "memoryfs@localhost")


@dataclass(frozen=True)
class Pulled:
    url: str
    tip: str  # the remote's main ("" when it has none yet)
    local: str  # the local main after the pull
    how: str  # "same" | "fast-forward" | "ahead" | "replayed" | "rewritten" | "empty"
    replayed: tuple[str, ...] = ()  # local commits put back on top of the remote's tip
    dropped: tuple[str, ...] = ()  # local Dream commits left for the next run to redo


def local_git(store: Store, *args: str, check: bool = True) -> str:
    """A local git command in the store root; a failure is a ``MemoryFSError``."""
    proc = subprocess.run(
        ["git", *args], cwd=store.root, capture_output=True, text=True, check=False
    )
    if check and proc.returncode != 0:
        detail = (proc.stderr.strip() or proc.stdout.strip()).splitlines()
        raise MemoryFSError(f"git {args[0]} failed in {store.root}: {detail[0] if detail else ''}")
    return proc.stdout.strip()


def _rev(store: Store, ref: str) -> str:
    return local_git(store, "rev-parse", "--verify", "--quiet", ref, check=False)


def is_ancestor(store: Store, old: str, new: str) -> bool:
    proc = subprocess.run(
        ["git", "merge-base", "--is-ancestor", old, new], cwd=store.root, capture_output=True
    )
    return proc.returncode == 0


def remote_url(store: Store) -> str | None:
    """The URL the store pushes to: this clone's ``memoryfs.remote``, else ``memory.toml``'s."""
    own = local_git(store, "config", "--get", REMOTE_SETTING, check=False)
    return own or store.config.remote or None


def remote_tip(store: Store) -> str:
    return _rev(store, REMOTE_TIP)


def purge_pending(store: Store) -> str:
    """The lease of a purged history not yet pushed, or ""."""
    return local_git(store, "config", "--get", LEASE_SETTING, check=False)


def _require(store: Store) -> str:
    url = remote_url(store)
    if url is None:
        raise MemoryFSError(
            f"store {store.root} has no remote (clone one with 'memoryfs clone URL DIR', "
            'or set remote = "URL" in memory.toml)'
        )
    return url


def pull(store: Store, wait: float = 30.0) -> Pulled:
    """Fetch the remote's main and bring the local main to it (see the module docstring);
    ``wait``: seconds to wait for the store's write lock (``LockedError`` after)."""
    url = _require(store)
    with store.lock("write", timeout=wait):
        if purge_pending(store):
            _push_purged(store, url)
        return _pull_locked(store, url)


def _pull_locked(store: Store, url: str) -> Pulled:
    branch = local_git(store, "symbolic-ref", "--quiet", "HEAD", check=False)
    if branch != "refs/heads/main":
        raise MemoryFSError(
            f"{store.root} has {branch.removeprefix('refs/heads/') or 'a detached HEAD'} "
            "checked out; a remote store keeps main in step (git switch main)"
        )
    seen = remote_tip(store)
    tip = fetch_main(store.root, url)
    # the fetched ref only carries the tip here: ``REMOTE_TIP`` keeps it from now on
    local_git(store, "update-ref", "-d", FETCHED, check=False)
    local = store.head()
    if not tip:
        return Pulled(url, "", local, "empty")
    if tip == local:
        how = "same"
    elif seen and not is_ancestor(store, seen, tip):
        _take_rewritten(store, url, seen, tip)
        how = "rewritten"
    elif is_ancestor(store, local, tip):
        _move_main(store, local, tip)
        how = "fast-forward"
    elif is_ancestor(store, tip, local):
        how = "ahead"
    else:
        replayed, dropped = _replay(store, local, seen, tip)
        local_git(store, "update-ref", REMOTE_TIP, tip)
        return Pulled(url, tip, store.head(), "replayed", replayed, dropped)
    local_git(store, "update-ref", REMOTE_TIP, tip)
    return Pulled(url, tip, store.head(), how)


_PULLED_AT: dict[Path, float] = {}  # this process's last pull of each store (monotonic)


def pull_if_stale(store: Store, max_age: float) -> str:
    """For a reader that lives long (the MCP server): pull when this process last pulled
    the store more than ``max_age`` seconds ago. Never waits for a writer and never
    fails the read: "" when fresh enough or pulled, else the one-line reason the pull
    could not be made (the reader serves what the store has)."""
    if max_age <= 0 or remote_url(store) is None:
        return ""
    now = time.monotonic()
    last = _PULLED_AT.get(store.root)
    if last is not None and now - last < max_age:
        return ""
    _PULLED_AT[store.root] = now  # an unreachable remote is tried again after max_age too
    try:
        pull(store, wait=0)
    except MemoryFSError as exc:
        return str(exc)
    return ""


def publish(store: Store, attempts: int = ATTEMPTS) -> str:
    """Push the local main (after a pull); the commit pushed, "" when there was nothing new."""
    url = _require(store)
    for _ in range(attempts):
        with store.lock("write"):
            if purge_pending(store):
                _push_purged(store, url)
            pulled = _pull_locked(store, url)
            local = store.head()
            if local == pulled.tip or not local:
                return ""
            if push_main(store.root, url, local):
                local_git(store, "update-ref", REMOTE_TIP, local)
                return local
        # another writer pushed between our fetch and our push: fetch again and retry
    raise RemoteError(
        f"{url}: every one of {attempts} pushes lost its race with another writer; "
        "the commits stay local ('memoryfs sync' pushes them)"
    )


@contextlib.contextmanager
def remote_writes(store: Store) -> Iterator[None]:
    """Around a command that commits: pull first (an unreachable remote stops it before
    anything is written), publish after. A store without a remote is left alone."""
    if remote_url(store) is None:
        yield
        return
    pull(store)
    yield
    try:
        publish(store)
    except RemoteError as exc:
        raise RemoteError(
            f"committed here but not pushed ('memoryfs sync' pushes it): {exc}"
        ) from None


def publish_purged(store: Store, lease: str) -> str:
    """After a purge: record it in a commit and force the rewritten history onto the
    remote, only while its main is still ``lease``; the commit pushed."""
    url = _require(store)
    with store.lock("write"):
        local_git(store, "config", LEASE_SETTING, lease)
        return _push_purged(store, url)


def _push_purged(store: Store, url: str) -> str:
    lease = purge_pending(store)
    head = store.head()
    message = local_git(store, "log", "-1", "--format=%s", head)
    if not message.startswith("purge: "):
        _commit_empty(
            store,
            f"purge: history rewritten by a forget with --purge-history; force-pushed to {url}\n\n"
            f"The remote's main was {lease}; every commit id after the store's first changed.\n"
            "Clones fetch the new history and drop the old one on their next pull.",
        )
        head = store.head()
    if not push_main(store.root, url, head, lease=lease):
        raise RemoteError(
            f"{url}: the remote's main moved since the purge began (it is no longer {lease[:10]}); "
            "the purged history stays here: stop the other writers, fetch their commits into "
            "this store, and run 'memoryfs forget --purge-history' again"
        )
    local_git(store, "update-ref", REMOTE_TIP, head)
    local_git(store, "update-ref", "-d", FETCHED, check=False)
    local_git(store, "config", "--unset", LEASE_SETTING, check=False)
    return head


def _commit_empty(store: Store, message: str) -> None:
    actor = store.author()
    name, email = actor.name or _AUTHOR[0], actor.email or _AUTHOR[1]
    local_git(
        store,
        "-c", f"user.name={name}", "-c", f"user.email={email}",
        "commit", "--quiet", "--allow-empty", "--no-verify", "-m", message,
    )  # fmt: skip


def _move_main(store: Store, old: str, new: str) -> None:
    """Move the checked-out main from ``old`` to ``new``, as a Dream landing moves it."""
    from memoryfs.store.moving import begin_move, dirty_paths, disk_reason, end_move, undo_move

    mine = dirty_paths(store.root)
    try:
        begin_move(store.root, old, new)
    except OSError as exc:
        raise MemoryFSError(
            f"cannot move {store.root} to the remote's main: {disk_reason(exc) or exc}"
        ) from None
    # ``reset --keep`` moves the branch and the files that differ, and refuses (touching
    # nothing) when a file it would change was edited here and not committed
    proc = subprocess.run(
        ["git", "reset", "--quiet", "--keep", new], cwd=store.root, capture_output=True, text=True
    )
    if proc.returncode == 0:
        end_move(store.root)
        return
    undo_move(store.root, [new], spare=mine)  # a disk that stopped git midway
    end_move(store.root)
    reason = (proc.stderr.strip().splitlines() or ["git reset failed"])[0]
    raise MemoryFSError(
        f"cannot bring {store.root} to the remote's main: {reason} "
        "(commit or undo the local edits, then run the command again)"
    )


def _local_commits(store: Store, local: str, seen: str, tip: str) -> list[str]:
    """Commits on the local main that the remote has never had, oldest first."""
    excludes = [f"^{tip}"] + ([f"^{seen}"] if seen else [])
    out = local_git(store, "rev-list", "--reverse", "--topo-order", local, *excludes)
    return out.split()


def _is_dream(store: Store, commit: str) -> bool:
    body = local_git(store, "log", "-1", "--format=%B", commit)
    return any(line.startswith(DREAM_TRAILER) for line in body.splitlines())


def _replay(
    store: Store, local: str, seen: str, tip: str
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Put the commits made here back on top of ``tip``; Dream's are dropped."""
    if not local_git(store, "merge-base", local, tip, check=False):
        raise RemoteError(
            "the store and its remote share no history; clone the remote into a new folder "
            "and ingest this store's transcripts there"
        )
    mine = _local_commits(store, local, seen, tip)
    keep = [c for c in mine if not _is_dream(store, c)]
    dropped = tuple(c for c in mine if c not in keep)
    scratch = Path(tempfile.mkdtemp(prefix="replay-", dir=_scratch_root(store)))
    try:
        local_git(store, "worktree", "add", "--quiet", "--detach", str(scratch), tip)
        actor = store.author()
        ident = ["-c", f"user.name={actor.name or _AUTHOR[0]}"]
        ident += ["-c", f"user.email={actor.email or _AUTHOR[1]}"]
        for commit in keep:
            proc = subprocess.run(
                ["git", *ident, "cherry-pick", "--allow-empty", "--keep-redundant-commits", commit],
                cwd=scratch,
                capture_output=True,
                text=True,
            )
            if proc.returncode != 0:
                subject = local_git(store, "log", "-1", "--format=%s", commit)
                raise RemoteError(
                    f"the local commit {commit[:10]} ({subject[:80]}) does not apply on the "
                    f"remote's main {tip[:10]}; nothing changed here"
                )
        new = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=scratch, capture_output=True, text=True, check=True
        ).stdout.strip()
    finally:
        local_git(store, "worktree", "remove", "--force", str(scratch), check=False)
        shutil.rmtree(scratch, ignore_errors=True)
        local_git(store, "worktree", "prune", check=False)
    _move_main(store, local, new)
    return tuple(keep), dropped


def _scratch_root(store: Store) -> Path:
    """Where replays happen; one a killed process left is removed first (the caller holds
    the write lock, so no replay is running)."""
    folder = store.cache_dir / "replay"
    folder.mkdir(parents=True, exist_ok=True)
    for stale in folder.iterdir():
        local_git(store, "worktree", "remove", "--force", str(stale), check=False)
        shutil.rmtree(stale, ignore_errors=True)
    local_git(store, "worktree", "prune", check=False)
    return folder


def _take_rewritten(store: Store, url: str, seen: str, tip: str) -> None:
    """The remote's history was rewritten: take it, and drop every trace of the old one."""
    local = store.head()
    mine = _local_commits(store, local, seen, tip)
    # commits the old remote history already had are not ours to keep
    if mine:
        raise RemoteError(
            f"{url}: the remote's history was rewritten (a forget with --purge-history) and "
            f"this clone has {len(mine)} commit(s) it never pushed; clone the store again"
        )
    from memoryfs.forget.deletions import load_deletions
    from memoryfs.forget.derived import clean_derived, remove_dream_worktrees

    remove_dream_worktrees(store)
    local_git(store, "update-ref", REMOTE_TIP, tip)
    _move_main(store, local, tip)
    for name in ("ORIG_HEAD", "FETCH_HEAD"):
        (Path(store.repo.git_dir) / name).unlink(missing_ok=True)
    # every other ref that still reaches the old history goes (kept Dream branches)
    for ref in local_git(store, "for-each-ref", "--format=%(refname)", "refs/heads/dream/").split():
        local_git(store, "update-ref", "-d", ref, check=False)
    local_git(store, "reflog", "expire", "--expire=now", "--expire-unreachable=now", "--all")
    local_git(store, "gc", "--prune=now", "--quiet")
    clean_derived(Store.open(store.root), load_deletions(store), set(), branches=False)
