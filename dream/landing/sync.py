"""Controlled sync: one commit on the run's branch, then ``main`` moves by compare-and-swap.

The commit message says what the run did (sessions summarized, pages created and
updated, claims superseded, what it left out and why: ``dream.landing.leaveout``) and ends
with the ``Dream-Run``, ``Dream-Engine`` and ``Dream-Skill`` trailers. Moving the
target branch (the one the store root has checked out, normally ``main``):

1. Under ``store.lock("write")`` -- the lock ingestion and indexing also take --
   read the target's tip. If it is still the run's base, fast-forward it to the
   run's commit (``git merge --ff-only`` in the store root, which also updates the
   live working tree and refuses to clobber local edits; ``git update-ref`` with
   the old value when the root has another branch checked out). A fast-forward
   can never drop a commit, so nothing is ever overwritten. One that stops midway
   (a full disk, a read-only file system) leaves no file of the run in the live
   tree: what git wrote is put back (``memoryfs.store.moving``), now or by the next
   command that writes the store, and the error says how to go on.
2. If the tip moved (a session was ingested meanwhile), release the lock, rebase
   the run's commit onto the new tip in the worktree, regenerate the two index
   files there, run the gates again on the rebased tree, and go back to 1. A
   rebase conflict raises ``SyncConflict`` (the run starts over from the new tip);
   after ``MAX_ATTEMPTS`` moves the run gives up and keeps its branch.

The gates after a rebase leave nothing out: the commit passed them on its base (after
any leaving out), so a problem now comes from what the moved tip brought; the rebased
commit's branch is kept and ``main`` untouched, as for any gate failure.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from heapq import merge
from itertools import groupby

from dream.errors import DreamError
from dream.gates import Problem
from dream.landing.staging import Change, Stage, author_env, git_proc, run_git, stage_changes
from memoryfs.errors import MemoryFSError
from memoryfs.store.moving import (
    begin_move,
    dirty_paths,
    disk_reason,
    end_move,
    undo_move,
    write_refused,
)
from memoryfs.store.store import Store

__all__ = [
    "MAX_ATTEMPTS",
    "ChangeSummary",
    "LandingRefused",
    "SyncConflict",
    "SyncOutcome",
    "describe",
    "changed_files",
    "commit_message",
    "left_out_section",
    "advance",
    "rebase_stage",
    "sync",
]

MAX_ATTEMPTS = 5
_LIST_LIMIT = 40  # entries per list in a commit message; the rest are counted
_ITEM_CHARS = 200  # a left-out item's line in a commit message, at most


class SyncConflict(DreamError):
    """The run's commit does not rebase cleanly onto the new tip."""


class LandingRefused(DreamError):
    """The disk refused the landing and the live tree is as it was: the next run redoes
    the work, so the run's branch is not kept (nor the space its objects take)."""


@dataclass(frozen=True)
class ChangeSummary:
    """What a run changed; each list sorted."""

    sessions: tuple[str, ...]  # session ids whose summary was written or rewritten
    created: tuple[str, ...]  # pages added under knowledge/ or notes/ (relative to memory/)
    updated: tuple[str, ...]  # pages changed there
    removed: tuple[str, ...]
    superseded: int  # claims newly marked superseded

    def headline(self) -> str:
        parts = [f"{len(self.sessions)} session{'s' * (len(self.sessions) != 1)} summarized"]
        parts.append(f"{len(self.created)} page{'s' * (len(self.created) != 1)} created")
        parts.append(f"{len(self.updated)} updated")
        if self.removed:
            parts.append(f"{len(self.removed)} removed")
        parts.append(f"{self.superseded} claim{'s' * (self.superseded != 1)} superseded")
        return ", ".join(parts)


@dataclass(frozen=True)
class SyncOutcome:
    commit: str  # the commit the target now points to (or the rebased one, on failure)
    base: str  # the tip it landed on
    rebased: int  # times the commit was rebased onto a moved tip
    problems: tuple[Problem, ...] = ()  # gate problems after a rebase: nothing landed

    @property
    def landed(self) -> bool:
        return not self.problems


def describe(changes: Sequence[Change], superseded: int) -> ChangeSummary:
    sessions: list[str] = []
    created: list[str] = []
    updated: list[str] = []
    removed: list[str] = []
    for change in changes:
        rel = change.rel
        if rel.startswith("sessions/summaries/") and rel.endswith(".md") and change.status != "D":
            sessions.append(rel.rsplit("/", 1)[1][:-3])
        elif rel.startswith(("knowledge/", "notes/")) and rel.endswith(".md"):
            {"A": created, "M": updated, "D": removed}.get(change.status, updated).append(rel)
    return ChangeSummary(
        tuple(sessions), tuple(created), tuple(updated), tuple(removed), superseded
    )


def changed_files(
    sessions: Iterable[str], created: Iterable[str], updated: Iterable[str]
) -> Iterator[str]:
    """The files a run wrote (relative to ``memory/``), each once, in order: the summaries
    of ``sessions``, and the pages ``created`` and ``updated``, each sorted (``describe``),
    merged as they are read (a full run wrote every file of the store)."""
    summaries = (f"sessions/summaries/{sid}.md" for sid in sessions)
    for rel, _ in groupby(merge(summaries, created, updated)):
        yield rel


def _listing(title: str, items: Sequence[str]) -> list[str]:
    if not items:
        return []
    lines = [f"{title}:"]
    lines += [f"- {item}" for item in items[:_LIST_LIMIT]]
    if len(items) > _LIST_LIMIT:
        lines.append(f"- ... and {len(items) - _LIST_LIMIT} more")
    return [*lines, ""]


def left_out_section(items: Sequence[str]) -> list[str]:
    """The ``Left out:`` section: an item a line, each cut at ``_ITEM_CHARS``."""
    cut = [i if len(i) <= _ITEM_CHARS else i[: _ITEM_CHARS - 3] + "..." for i in items]
    lines = _listing("Left out", cut)
    if len(items) > _LIST_LIMIT:
        lines[-2] += f" ({len(items)} in all)"
    return lines


def commit_message(
    summary: ChangeSummary,
    run_id: str,
    engine: str,
    skill: str,
    tokens: int = 0,
    cost: float = 0.0,
    left_out: Sequence[str] = (),
) -> str:
    """``left_out``: ``LeftOut.format()`` of each part the run left out."""
    headline = summary.headline() + (f"; {len(left_out)} left out" if left_out else "")
    lines = [f"dream: {headline}", ""]
    lines += _listing("Sessions summarized", summary.sessions)
    lines += _listing("Pages created", summary.created)
    lines += _listing("Pages updated", summary.updated)
    lines += _listing("Pages removed", summary.removed)
    lines += [f"Claims superseded: {summary.superseded}", ""]
    lines += left_out_section(left_out)
    lines += [f"Dream-Run: {run_id}", f"Dream-Engine: {engine}", f"Dream-Skill: {skill}"]
    if tokens:  # engines that use a model: what the run spent
        lines.append(f"Dream-Tokens: {tokens}" + (f" (cost {cost:.4f})" if cost else ""))
    return "\n".join(lines) + "\n"


def _tip(store: Store, target: str) -> str:
    out = run_git(
        store.root, "rev-parse", "--verify", "--quiet", f"refs/heads/{target}", check=False
    )
    return out.strip()


def advance(store: Store, target: str, expected: str, new: str) -> str | None:
    """Move ``target`` from ``expected`` to ``new``; None when done, else the tip it moved to."""
    with store.lock("write"):
        current = _tip(store, target)
        if current != expected:
            return current
        checked_out = git_proc(
            store.root, "symbolic-ref", "--quiet", "--short", "HEAD"
        ).stdout.strip()
        if checked_out == target:
            _fast_forward(store, target, expected, new)
        else:
            run_git(
                store.root, "update-ref", "-m", "dream: sync", f"refs/heads/{target}", new, expected
            )
    return None


def _fast_forward(store: Store, target: str, expected: str, new: str) -> None:
    """``git merge --ff-only`` in the store root, never leaving the live tree half moved.

    Git writes the files of ``new`` one at a time before it moves the branch; when it
    stops midway (a full disk) the files it wrote are put back at once
    (``memoryfs.store.moving``), and if even that fails, by the next command that
    writes the store. Files a user had changed before are never touched."""
    mine = dirty_paths(store.root)
    try:
        begin_move(store.root, expected, new)
    except OSError as exc:
        why = disk_reason(exc) or str(exc)
        raise LandingRefused(_not_moved(target, why, restored=True)) from None
    proc = git_proc(store.root, "merge", "--ff-only", "--quiet", "--no-edit", new)
    if proc.returncode == 0:
        end_move(store.root)
        return
    detail = (proc.stderr.strip() or proc.stdout.strip()).splitlines()
    first = next((line for line in detail if line.startswith(("error", "fatal"))), "")
    first = first or (detail[0] if detail else "git merge failed")
    reason = write_refused(store.root, proc.stderr + proc.stdout)
    try:
        undo_move(store.root, [new], spare=mine)
    except (OSError, MemoryFSError):  # the branch stays: the next command's undo reads it
        raise DreamError(_not_moved(target, reason or first, restored=False)) from None
    end_move(store.root)
    if "would be overwritten" in proc.stderr:  # git refused before writing anything
        raise DreamError(
            f"{target} was not moved: {first} "
            "(commit or discard the local edits in the store, then 'dream apply RUN')"
        )
    raise LandingRefused(_not_moved(target, reason or first, restored=True))


_FIXES = {
    "no space left on device": "free some space",
    "disk quota exceeded": "free some space",
    "read-only file system": "make the store writable",
}


def _not_moved(target: str, reason: str, restored: bool) -> str:
    where = (
        "the live tree is as it was"
        if restored
        else "files it wrote are put back by the next 'dream run' or 'memoryfs ingest'"
    )
    fix = _FIXES.get(reason, "see why ('git fsck' checks the repository)")
    return f"{target} was not moved: {reason}; {where}. {fix.capitalize()}, then run it again"


def rebase_stage(store: Store, stage: Stage, onto: str) -> tuple[Stage, str]:
    """Replay the stage's commits onto ``onto``; regenerate the indexes; the new stage and tip."""
    env = author_env(store)
    proc = git_proc(stage.path, "rebase", "--quiet", "--onto", onto, stage.base, env=env)
    if proc.returncode != 0:
        git_proc(stage.path, "rebase", "--abort", env=env)
        raise SyncConflict(f"the run's commit conflicts with {onto[:10]}; starting over from there")
    moved = Stage(run_id=stage.run_id, path=stage.path, base=onto)
    # The indexes list every transcript; the new tip may have brought some.
    if moved.write_indexes(store):
        stage_changes(moved)
        run_git(moved.path, "commit", "--quiet", "--no-verify", "--amend", "--no-edit", env=env)
    return moved, run_git(moved.path, "rev-parse", "HEAD").strip()


def sync(
    store: Store,
    stage: Stage,
    target: str,
    commit: str,
    regate: Callable[[Stage], tuple[Problem, ...]],
    max_attempts: int = MAX_ATTEMPTS,
) -> SyncOutcome:
    """Land ``commit`` (the stage's branch tip) on ``target`` by compare-and-swap."""
    for rebased in range(max_attempts):
        moved_to = advance(store, target, stage.base, commit)
        if moved_to is None:
            return SyncOutcome(commit=commit, base=stage.base, rebased=rebased)
        stage, commit = rebase_stage(store, stage, moved_to)
        problems = regate(stage)
        if problems:
            return SyncOutcome(commit, stage.base, rebased + 1, problems)
    raise DreamError(
        f"{target} kept moving during the run ({max_attempts} attempts); the result is kept on "
        f"branch {stage.branch}: 'dream apply {stage.run_id}' when the store is quiet"
    )
