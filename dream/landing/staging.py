"""The staged tree: a ``git worktree`` on branch ``dream/<run-id>`` from the base commit.

Every write of a run lands here, under ``.dream/worktrees/<run-id>`` (git-ignored by
the store), never in the live tree. A run that ends well deletes its branch; a run
kept for review or stopped by a gate keeps its branch (one commit on top of its
base). Either way the worktree itself is parked (detached) as
``.dream/worktrees/.spare`` and recycled by the next run, whose checkout then writes
only the files that differ: one checked-out copy of the store stays on disk. The facts
the generated indexes are made of (``memoryfs.index.facts_cache``) are kept for the stage in
the live store's ``.memoryfs/`` (the worktree's own is cleaned away), anchored at the
stage's commit when it is parked, so the next run's pass looks only at what Git says
changed since (``Stage.write_indexes``).

Boundary: Git plumbing for stages only. What goes into the tree is the engine's
business; whether it may land is the gates'; moving ``main`` is ``sync``'s.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import subprocess
from dataclasses import dataclass
from pathlib import Path

from dream.errors import DreamError, RunNotFound
from memoryfs.errors import MemoryFSError
from memoryfs.index.index_md import refresh_facts, write_indexes
from memoryfs.store.hashing import content_hash
from memoryfs.store.store import DEFAULT_AUTHOR, Store

__all__ = [
    "BRANCH_PREFIX",
    "STAGE_INDEX_CACHE",
    "Change",
    "Stage",
    "create_stage",
    "reopen_stage",
    "remove_stage",
    "stage_changes",
    "commit_stage",
    "stage_tree",
    "reset_to_tree",
    "kept_runs",
    "worktrees_dir",
    "owned",
    "drop_worktree",
    "branch_tip",
    "run_git",
    "git_proc",
    "is_ancestor",
    "author_env",
    "file_hashes",
    "branch_name",
]

BRANCH_PREFIX = "dream/"
SPARE = ".spare"  # the parked worktree of the last run, recycled by the next one
STAGE_INDEX_CACHE = "index-facts-stage.sqlite"  # in the live store's .memoryfs/
# No hooks, no signing prompts, no pager: a worker runs unattended.
_GIT_CONFIG = ("-c", "core.hooksPath=/dev/null", "-c", "commit.gpgsign=false", "-c", "gc.auto=0")


@dataclass(frozen=True)
class Stage:
    run_id: str
    path: Path  # the worktree root (it holds memory.toml and memory/)
    base: str  # the commit the branch started from

    @property
    def branch(self) -> str:
        return branch_name(self.run_id)

    def store(self, live: Store) -> Store:
        """The staged tree as a Store with the live store's config."""
        return Store(root=self.path, config=live.config)

    def write_indexes(self, live: Store) -> list[str]:
        """Regenerate the stage's INDEX.md and sessions/index.md (``write_indexes``) from
        the stage's facts cache, looking at the files Git says changed since its last pass."""
        return write_indexes(self.store(live), live.cache_dir / STAGE_INDEX_CACHE, by_git=True)


@dataclass(frozen=True, slots=True)
class Change:
    """One file that differs between the base and the staged tree (a full run lists every
    file of the store: slots keep each small)."""

    status: str  # "A" added, "M" modified, "D" deleted
    path: str  # relative to the store root (memory/...)

    @property
    def rel(self) -> str:
        """Path relative to ``memory/`` ("" for files outside it)."""
        return self.path[len("memory/") :] if self.path.startswith("memory/") else ""


def branch_name(run_id: str) -> str:
    return BRANCH_PREFIX + run_id


def run_git(
    cwd: Path,
    *args: str,
    env: dict[str, str] | None = None,
    check: bool = True,
    stdin: str | None = None,
) -> str:
    """Run git in ``cwd``; a failure is a ``DreamError`` quoting git's first error line."""
    proc = git_proc(cwd, *args, env=env, stdin=stdin)
    if check and proc.returncode != 0:
        detail = (proc.stderr.strip() or proc.stdout.strip()).splitlines()
        raise DreamError(
            f"git {args[0]} failed in {cwd}: {detail[0] if detail else proc.returncode}"
        )
    return proc.stdout


def git_proc(
    cwd: Path, *args: str, env: dict[str, str] | None = None, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    """Run git in ``cwd`` and return the finished process, whatever its exit code."""
    full_env = dict(os.environ)
    full_env.update({"GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"})
    if env:
        full_env.update(env)
    return subprocess.run(
        ["git", *_GIT_CONFIG, *args],
        cwd=cwd,
        env=full_env,
        input=stdin,
        capture_output=True,
        text=True,
        check=False,
    )


def author_env(store: Store) -> dict[str, str]:
    actor = store.author()
    name = actor.name or DEFAULT_AUTHOR[0]
    email = actor.email or DEFAULT_AUTHOR[1]
    return {
        "GIT_AUTHOR_NAME": name,
        "GIT_AUTHOR_EMAIL": email,
        "GIT_COMMITTER_NAME": name,
        "GIT_COMMITTER_EMAIL": email,
    }


def worktrees_dir(store: Store) -> Path:
    return store.dream_dir / "worktrees"


def create_stage(store: Store, run_id: str, base: str) -> Stage:
    """Check out ``base`` on a new branch ``dream/<run-id>`` under ``.dream/worktrees/``."""
    path = worktrees_dir(store) / run_id
    if not _checkout_spare(store, path, "-B", branch_name(run_id), base):
        path.parent.mkdir(parents=True, exist_ok=True)
        run_git(
            store.root, "worktree", "add", "--quiet", "-b", branch_name(run_id), str(path), base
        )
    return Stage(run_id=run_id, path=path, base=base)


def _checkout_spare(store: Store, path: Path, *checkout: str) -> bool:
    """Move the parked worktree of an earlier run to ``path`` and check out there.

    ``git worktree add`` writes every file of the store (seconds for thousands of
    sessions); a checkout in a parked worktree only writes what differs, so an
    incremental run costs what it changes. ``checkout -f`` plus ``clean -ffdx``
    leave exactly the commit's tree, as a fresh worktree would.
    """
    spare = worktrees_dir(store) / SPARE
    if not owned(store, spare):
        drop_worktree(store, spare)
        return False
    if git_proc(store.root, "worktree", "move", str(spare), str(path)).returncode != 0:
        drop_worktree(store, spare)
        return False
    if (
        git_proc(path, "checkout", "--quiet", "--force", *checkout).returncode == 0
        and git_proc(path, "clean", "--quiet", "-ffdx").returncode == 0
    ):
        return True
    drop_worktree(store, path)
    return False


def drop_worktree(store: Store, path: Path) -> None:
    if path.exists():
        if owned(store, path):  # else only the folder goes: git would act on its owner
            git_proc(store.root, "worktree", "remove", "--force", str(path))
        if path.exists():
            shutil.rmtree(path, ignore_errors=True)
    git_proc(store.root, "worktree", "prune")


def owned(store: Store, path: Path) -> bool:
    """Whether the worktree at ``path`` is this store's: its ``.git`` file names an entry
    of this repository's ``.git/worktrees`` that names it back. Not so while ``git
    worktree move`` is half done (it renames the folder first, then the entry), nor in a
    store copied with its ``.dream/`` folder (``cp -a``, a restored backup): the copy's
    worktrees still name the original's entries, and a git command run on one of them
    would change the original (its branch, index or entry)."""
    try:
        admin = Path((path / ".git").read_text().removeprefix("gitdir:").strip())
        mine = (store.root / ".git" / "worktrees").resolve()
        return (
            admin.parent.resolve() == mine
            and Path((admin / "gitdir").read_text().strip()) == path / ".git"
        )
    except OSError:
        return False


def branch_tip(store: Store, run_id: str) -> str:
    ref = f"refs/heads/{branch_name(run_id)}"
    return run_git(store.root, "rev-parse", "--verify", "--quiet", ref, check=False).strip()


def reopen_stage(store: Store, run_id: str, target: str) -> Stage:
    """The stage of a kept run: its worktree (re-created if gone) and its base.

    The base is where the branch left ``target`` (their merge base), so a branch a
    human added fix-up commits to is still applied whole.
    """
    tip = branch_tip(store, run_id)
    if not tip:
        raise RunNotFound(
            f"no kept run {run_id!r} (no branch {branch_name(run_id)}); "
            "'dream status' lists the kept runs"
        )
    base = run_git(store.root, "merge-base", target, tip).strip()
    path = worktrees_dir(store) / run_id
    if not owned(store, path) and not _checkout_spare(store, path, branch_name(run_id)):
        drop_worktree(store, path)
        path.parent.mkdir(parents=True, exist_ok=True)
        run_git(store.root, "worktree", "add", "--quiet", str(path), branch_name(run_id))
    return Stage(run_id=run_id, path=path, base=base)


def remove_stage(store: Store, stage: Stage, keep_branch: bool) -> None:
    """Park the worktree for the next run; delete the branch unless it is kept.

    The parked worktree has a detached HEAD, so a kept branch is free to be checked
    out elsewhere (``reopen_stage``) and can be deleted. It is detached by pointing its
    HEAD at the commit it has checked out (what ``checkout --detach`` does, without
    reading and rewriting the index of every file in the store).
    """
    spare = worktrees_dir(store) / SPARE
    if (stage.path / ".git").is_file():
        # the facts cache anchored at what the stage holds now (the run's commit): the next
        # run looks at what changed since, not at everything this run wrote
        with contextlib.suppress(MemoryFSError, sqlite3.Error, OSError):
            refresh_facts(stage.store(store), store.cache_dir / STAGE_INDEX_CACHE, by_git=True)
        tip = git_proc(stage.path, "rev-parse", "--verify", "--quiet", "HEAD").stdout.strip()
        parked = (
            not spare.exists()
            and bool(tip)
            and git_proc(stage.path, "update-ref", "--no-deref", "HEAD", tip).returncode == 0
            and git_proc(store.root, "worktree", "move", str(stage.path), str(spare)).returncode
            == 0
        )
        if not parked:
            drop_worktree(store, stage.path)
    else:
        drop_worktree(store, stage.path)
    if not keep_branch and branch_tip(store, stage.run_id):
        run_git(store.root, "branch", "-D", "--quiet", stage.branch)


def stage_changes(stage: Stage, against: str | None = None) -> list[Change]:
    """Stage every change in the worktree's index; list the files that differ from the base."""
    run_git(stage.path, "add", "-A", "--", ".")
    out = run_git(
        stage.path, "diff", "--cached", "--name-status", "--no-renames", "-z", against or stage.base
    )
    parts = out.split("\0")
    changes = [Change(parts[i][:1], parts[i + 1]) for i in range(0, len(parts) - 1, 2) if parts[i]]
    return sorted(changes, key=lambda c: c.path)


def stage_tree(stage: Stage) -> str:
    """Git's tree of the worktree as it is (every change staged first): a snapshot to
    go back to with ``reset_to_tree`` or to take files from."""
    run_git(stage.path, "add", "-A", "--", ".")
    return run_git(stage.path, "write-tree").strip()


def reset_to_tree(stage: Stage, tree: str) -> None:
    """Make the worktree and its index hold exactly ``tree`` (``stage_tree``'s)."""
    run_git(stage.path, "add", "-A", "--", ".")
    run_git(stage.path, "read-tree", "--reset", "-u", tree)


def commit_stage(store: Store, stage: Stage, message: str) -> str:
    """Commit the worktree's index on the run's branch; returns the commit sha."""
    run_git(
        stage.path,
        "commit",
        "--quiet",
        "--no-verify",
        "-F",
        "-",
        env=author_env(store),
        stdin=message,
    )
    return run_git(stage.path, "rev-parse", "HEAD").strip()


def is_ancestor(cwd: Path, older: str, newer: str) -> bool:
    return git_proc(cwd, "merge-base", "--is-ancestor", older, newer).returncode == 0


def file_hashes(store: Store, commit: str, paths: list[str]) -> dict[str, str]:
    """``content_hash`` of each of ``paths`` (relative to the root) at ``commit``."""
    out: dict[str, str] = {}
    odb = store.repo.odb
    for i in range(0, len(paths), 500):  # keep each command line short
        listing = run_git(
            store.root, "ls-tree", "-z", "--full-tree", commit, "--", *paths[i : i + 500]
        )
        for entry in listing.split("\0"):
            meta, _, path = entry.partition("\t")
            parts = meta.split()
            if len(parts) == 3 and parts[1] == "blob":
                out[path] = content_hash(odb.stream(bytes.fromhex(parts[2])).read())
    return out


def kept_runs(store: Store) -> list[str]:
    """Run ids of the kept ``dream/*`` branches, oldest first."""
    out = run_git(
        store.root, "for-each-ref", "--format=%(refname:short)", f"refs/heads/{BRANCH_PREFIX}"
    )
    return sorted(
        line[len(BRANCH_PREFIX) :] for line in out.splitlines() if line.startswith(BRANCH_PREFIX)
    )
