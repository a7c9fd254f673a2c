"""What crashed runs left: their worktrees, branches, git lock files and half-moved files.

Job: before a run starts (with the run lock held), ``cleanup_stale`` removes the stages
of runs that died, the branches that hold nothing worth keeping, the lock files a git
killed with its run left, and puts back live files a sync killed midway half wrote.
A branch kept on purpose (review, gate failure) always has its run record and stays.

Boundary: recovery only; what a stage is and how one is made is ``dream.landing.staging``'s.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from dream.landing.runlog import read_record
from dream.landing.staging import (
    SPARE,
    branch_name,
    branch_tip,
    drop_worktree,
    git_proc,
    is_ancestor,
    kept_runs,
    owned,
    run_git,
    worktrees_dir,
)
from memoryfs.store.moving import recover_moves, undo_move
from memoryfs.store.store import Store, remove_stale_lock

__all__ = ["cleanup_stale"]


def _forget_copied_entries(store: Store) -> None:
    """A store copied with its ``.git`` (``cp -a``, a restored backup) lists the
    original's Dream worktrees as its own: git would let a command on the copy change
    or remove the original's folders. Forget those entries (only the copy's records;
    the folders are the original's). A worktree a user added elsewhere is left alone."""
    mine = worktrees_dir(store).resolve()
    for admin in _entry_dirs(store):
        gitdir = _read(admin / "gitdir")
        if not gitdir:
            continue
        where = Path(gitdir).parent
        dreams = where.parent.name == "worktrees" and where.parent.parent.name == ".dream"
        if dreams and where.parent.resolve() != mine and not owned(store, where):
            shutil.rmtree(admin, ignore_errors=True)


def _forget_half_added_entries(store: Store, names: set[str]) -> None:
    """Forget the entries a ``git worktree add`` killed midway left half written.

    Git writes an entry's ``locked``, then ``gitdir``, then ``commondir``. Killed while
    writing ``commondir``, it leaves that file empty, and every later ``git worktree``
    command fails ("failed to read .git/worktrees/<id>/commondir"); killed before its
    ``gitdir`` is whole, it leaves a locked entry naming no folder, which prune keeps
    forever. Such a Dream stage was never set up: its entry goes, its folder and branch
    go as any crashed run's do. An entry is Dream's when its ``gitdir`` names a folder
    in ``.dream/worktrees/``, or, naming none, when it has the name of one of ``names``
    (the folders found there). Anything else is the user's and is left alone.
    """
    mine = worktrees_dir(store).resolve()
    for admin in _entry_dirs(store):
        gitdir, commondir = _read(admin / "gitdir"), _read(admin / "commondir")
        if gitdir:
            half = commondir == "" and Path(gitdir).parent.parent.resolve() == mine
        else:
            half = admin.name in names
        if half:
            shutil.rmtree(admin, ignore_errors=True)


def _entry_dirs(store: Store) -> list[Path]:
    """The entries of ``.git/worktrees``, one folder per linked worktree."""
    entries = store.root / ".git" / "worktrees"
    return sorted(entries.iterdir()) if entries.is_dir() else []


def _read(path: Path) -> str | None:
    """The text of ``path`` without surrounding space; None when it cannot be read."""
    try:
        return path.read_text().strip()
    except OSError:
        return None


def cleanup_stale(store: Store, target: str) -> list[str]:
    """Remove what crashed runs left (call with the run lock held): their worktrees,
    and their branches when those hold no commit of their own or the run died
    before it could keep one. Returns the run ids whose worktrees were removed."""
    folder = worktrees_dir(store)
    stale = {p.name: p for p in folder.iterdir()} if folder.is_dir() else {}
    _forget_half_added_entries(store, set(stale))
    listing = run_git(store.root, "worktree", "list", "--porcelain")
    for line in listing.splitlines():  # also those killed before their folder was made
        path = Path(line.removeprefix("worktree "))
        if line.startswith("worktree ") and path.parent == folder:
            stale.setdefault(path.name, path)
    stale.pop(SPARE, None)
    _forget_copied_entries(store)
    removed = sorted(stale)
    for run_id in removed:
        # 'git worktree add' keeps a worktree locked until it is set up: unlock, or
        # prune would keep it (and its branch checked out) forever.
        if owned(store, stale[run_id]) or not stale[run_id].exists():
            git_proc(store.root, "worktree", "unlock", str(stale[run_id]))
        drop_worktree(store, stale[run_id])
    git_proc(store.root, "worktree", "prune")
    spare = folder / SPARE
    if spare.exists() and not owned(store, spare):  # killed while being parked, or copied
        drop_worktree(store, spare)
    tips = {run_id: branch_tip(store, run_id) for run_id in removed}
    interrupted = [t for t in tips.values() if t and not is_ancestor(store.root, t, target)]
    locks = _git_locks(store)
    with store.lock("write"):
        for lock in locks:  # a git killed with the run leaves its lock files
            remove_stale_lock(lock)
        # ``git merge --ff-only`` writes the live tree and the index before it moves
        # the branch, one file at a time: a sync killed (or refused by the disk)
        # midway leaves files of the run's commit there, which every later
        # fast-forward would refuse as local edits.
        recover_moves(store.root)
        undo_move(store.root, interrupted)
    for run_id in kept_runs(store):
        tip = branch_tip(store, run_id)
        # A branch kept on purpose (review, gate failure, an error after the commit)
        # always has its run record; a run killed before writing one is redone by
        # the next run, so its commit is not worth keeping. A branch the target
        # already contains holds nothing of its own (killed before deleting it).
        crashed = run_id in removed and read_record(store, run_id) is None
        if tip and (crashed or is_ancestor(store.root, tip, target)):
            run_git(store.root, "branch", "-D", "--quiet", branch_name(run_id), check=False)
    return removed


def _git_locks(store: Store) -> list[Path]:
    """Lock files of the store's index and refs (``index.lock``, ``refs/heads/main.lock``),
    and ``packed-refs.new``: the packed refs a git killed while rewriting them (deleting a
    branch) left half written, which makes every later ref deletion fail."""
    git_dir = store.root / ".git"
    locks = sorted(git_dir.glob("*.lock"))
    if (git_dir / "packed-refs.new").exists():
        locks.append(git_dir / "packed-refs.new")
    for dirpath, _, names in os.walk(git_dir / "refs"):
        locks += [Path(dirpath, n) for n in sorted(names) if n.endswith(".lock")]
    return locks
