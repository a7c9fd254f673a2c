"""Kept runs: the ``dream/<run-id>`` branches a ``--review`` run, a gate failure or a
run that left parts out leaves behind, and the store's Dream status.

``review_run`` shows a kept run's diff page by page: against where it left the target,
so for a run that left parts out (its branch holds, on top of what landed, a commit
putting them back) just what was left out; ``left_out_of`` lists those parts and why.
``apply_run`` lands a kept run through the same gates and compare-and-swap sync as
``dream run`` (edits a human made in its worktree are committed first), all or
nothing: what a human applies is landed whole or not at all, nothing is left out of
it. ``discard_run`` deletes it. ``dream_status`` lists pending sessions, the last run
records and the kept branches.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import time
from dataclasses import dataclass, replace
from typing import Any

from dream.errors import RunNotFound
from dream.gates.judge import Judge, judge_for
from dream.landing.runlog import read_record, recent_records, valid_run_id, write_record
from dream.landing.staging import (
    Stage,
    branch_name,
    commit_stage,
    git_proc,
    kept_runs,
    remove_stage,
    reopen_stage,
    run_git,
    stage_changes,
)
from dream.landing.sync import describe
from dream.phases.orient import orient, target_branch
from dream.runner import (
    RunResult,
    land,
    now_utc,
    problems_of,
    record,
    record_json,
    run_gates,
    run_lock,
    stage_receipts,
    with_judge,
)
from memoryfs.receipts.log import ReceiptLog, store_receipt_dir
from memoryfs.receipts.records import page_item, session_item
from memoryfs.store.hashing import content_hash
from memoryfs.store.moving import recover_moves
from memoryfs.store.store import Store

__all__ = [
    "PageDiff",
    "StatusReport",
    "apply_run",
    "discard_run",
    "review_run",
    "left_out_of",
    "dream_status",
]

_ORDER = ("memory/sessions/summaries/", "memory/knowledge/", "memory/notes/")


def _run_id(raw: str) -> str:
    run_id = raw.removeprefix("dream/")
    if not valid_run_id(run_id):
        raise RunNotFound(
            f"{raw!r} is not a run id (like 20261129T0102-3fa9c1); 'dream status' lists kept runs"
        )
    return run_id


def _require_kept(store: Store, run_id: str) -> None:
    if run_id not in kept_runs(store):
        raise RunNotFound(f"no kept run {run_id!r}; 'dream status' lists the kept runs")


def apply_run(store: Store, run_id: str, full_validation: bool = False) -> RunResult:
    """Land a kept run (``--review``, or a gate failure someone fixed) with the same gates."""
    run_id = _run_id(run_id)
    started, t0 = now_utc(), time.monotonic()
    with run_lock(store):
        _require_kept(store, run_id)
        with store.lock("write"):
            recover_moves(store.root)  # a landing the disk stopped half way: its files go
        target = target_branch(store)
        judge = judge_for(store)  # [verify] only: the run's engine is not at hand
        stage = reopen_stage(store, run_id, target)
        keep = True
        try:
            result, keep = _apply(store, stage, target, full_validation, started, judge)
        finally:
            remove_stage(store, stage, keep_branch=keep)
            if judge is not None:
                judge.close()
        result = replace(
            with_judge(result, judge),
            finished=now_utc(),
            timings={"total": round(time.monotonic() - t0, 3)},
        )
        new = record(result)
        if not new["left_out"]:  # what the run itself left out stays on its record
            del new["left_out"]
        write_record(store, {**(read_record(store, run_id) or {}), **new})
        return result


def _apply(
    store: Store,
    stage: Stage,
    target: str,
    full_validation: bool,
    started: str,
    judge: Judge | None = None,
) -> tuple[RunResult, bool]:
    run_id = stage.run_id
    if git_proc(stage.path, "status", "--porcelain").stdout.strip():
        stage_changes(stage)
        commit_stage(store, stage, f"dream: review edits to run {run_id}\n\nDream-Run: {run_id}\n")
    changes = stage_changes(stage)
    old = read_record(store, run_id) or {}
    result = RunResult(
        run_id=run_id,
        status="",
        message="",
        base=stage.base,
        target=target,
        engine=str(old.get("engine", "")),
        skill=str(old.get("skill", "")),
        source_version=str(old.get("source_version", "")),
        started=started,
    )
    if not changes:
        return replace(
            result, status="no-change", message=f"dream: run {run_id} changes nothing; dropped"
        ), False
    validation, verification = run_gates(store, stage, changes, full_validation, judge)
    summary = describe(changes, verification.stats.get("claims_superseded", 0))
    problems = problems_of(validation, verification)
    commit = run_git(stage.path, "rev-parse", "HEAD").strip()
    result = replace(
        result,
        sessions=summary.sessions,
        pages_created=summary.created,
        pages_updated=summary.updated,
        claims_superseded=summary.superseded,
        commit=commit,
        message=f"applied run {run_id}: {summary.headline()}",
    )
    if problems:
        return replace(
            result,
            status="gate-failed",
            branch=stage.branch,
            problems=tuple(p.format() for p in problems),
            message=f"dream: {len(problems)} gate problems; {target} untouched, "
            f"branch {stage.branch} kept",
        ), True
    commit = _seal_receipts(store, stage, result) or commit
    return land(store, stage, commit, replace(result, commit=commit), full_validation, judge)


def _seal_receipts(store: Store, stage: Stage, result: RunResult) -> str:
    """Commit the run's passing receipts on its branch for what it lands that holds none
    yet (a ``--review`` run wrote them; a gate failure someone fixed recorded only its
    failure; a run that left parts out, only theirs: what landed has its own).

    Returns the new tip, or "" when nothing was added.
    """
    run_id = result.run_id
    since = dt.datetime.strptime(run_id[:8], "%Y%m%d").replace(tzinfo=dt.UTC)
    sealed = {
        r.item
        for r in ReceiptLog(store_receipt_dir(stage.path)).read(since)
        if r.run_id == run_id and r.tier == "committed"
    }
    result = replace(
        result,
        sessions=tuple(s for s in result.sessions if session_item(s) not in sealed),
        pages_created=tuple(p for p in result.pages_created if page_item(p) not in sealed),
        pages_updated=tuple(p for p in result.pages_updated if page_item(p) not in sealed),
    )
    if not (result.sessions or result.pages_created or result.pages_updated):
        return ""
    sessions: dict[str, str] = {}
    for sid in result.sessions:
        path = stage.path / "memory" / "sessions" / "transcripts" / f"{sid}.md"
        with contextlib.suppress(OSError):
            sessions[sid] = content_hash(path.read_bytes())
    stage_receipts(store, stage, result, sessions, passed=True)
    return commit_stage(store, stage, f"dream: receipts of run {run_id}\n\nDream-Run: {run_id}\n")


def left_out_of(store: Store, run_id: str) -> tuple[str, ...]:
    """What run ``run_id`` left out and why (``LeftOut.format()``), from its record."""
    old = read_record(store, _run_id(run_id)) or {}
    items = old.get("left_out", [])
    return tuple(str(i) for i in items) if isinstance(items, list) else ()


def discard_run(store: Store, run_id: str) -> RunResult:
    """Delete a kept run's branch (and worktree); ``main`` is not touched."""
    run_id = _run_id(run_id)
    with run_lock(store):
        _require_kept(store, run_id)
        tip = run_git(store.root, "rev-parse", branch_name(run_id)).strip()
        path = store.dream_dir / "worktrees" / run_id
        remove_stage(store, Stage(run_id=run_id, path=path, base=""), keep_branch=False)
        finished = now_utc()
        old = read_record(store, run_id) or {"run_id": run_id}
        write_record(store, {**old, "status": "discarded", "branch": "", "finished": finished})
        return RunResult(
            run_id=run_id,
            status="discarded",
            commit=tip,
            finished=finished,
            message=f"dream: discarded run {run_id} (its commit was {tip[:10]})",
        )


@dataclass(frozen=True)
class PageDiff:
    path: str  # relative to the store root
    status: str  # A, M or D
    diff: str  # unified diff of this file

    def to_json(self) -> dict[str, str]:
        return {"path": self.path, "status": self.status, "diff": self.diff}


def review_run(store: Store, run_id: str) -> list[PageDiff]:
    """A kept run's diff against where it left the target, one entry per page
    (summaries, then knowledge, then notes, then the rest)."""
    run_id = _run_id(run_id)
    _require_kept(store, run_id)
    branch = branch_name(run_id)
    base = run_git(store.root, "merge-base", target_branch(store), branch).strip()
    names = run_git(store.root, "diff", "--name-status", "--no-renames", "-z", base, branch)
    parts = names.split("\0")
    statuses = {parts[i + 1]: parts[i][:1] for i in range(0, len(parts) - 1, 2) if parts[i]}
    text = run_git(store.root, "diff", "--no-renames", "--no-color", base, branch)
    chunks: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines(keepends=True):
        if line.startswith("diff --git "):
            current = chunks.setdefault(line.rstrip("\n").split(" b/", 1)[-1], [])
        if current is not None:
            current.append(line)

    def rank(path: str) -> tuple[int, str]:
        for i, prefix in enumerate(_ORDER):
            if path.startswith(prefix):
                return i, path
        return len(_ORDER), path

    return [
        PageDiff(p, statuses[p], "".join(chunks.get(p, []))) for p in sorted(statuses, key=rank)
    ]


@dataclass(frozen=True)
class StatusReport:
    store: str
    target: str
    head: str
    sessions: int
    pending: tuple[str, ...]  # pending session ids, oldest first
    runs: tuple[dict[str, Any], ...]  # the last run records, newest first
    kept: tuple[dict[str, str], ...]  # kept runs: runId, branch, status, subject

    def to_json(self) -> dict[str, Any]:
        return {
            "store": self.store,
            "target": self.target,
            "head": self.head,
            "sessions": self.sessions,
            "pending": list(self.pending),
            "runs": [record_json(r) for r in self.runs],
            "kept": list(self.kept),
        }


def dream_status(store: Store, runs: int = 5) -> StatusReport:
    o = orient(store)
    kept = []
    for run_id in kept_runs(store):
        old = read_record(store, run_id) or {}
        subject = run_git(store.root, "log", "-1", "--format=%s", branch_name(run_id)).strip()
        kept.append(
            {
                "runId": run_id,
                "branch": branch_name(run_id),
                "status": str(old.get("status", "")),
                "subject": subject,
            }
        )
    return StatusReport(
        store=str(store.root),
        target=o.target,
        head=o.base,
        sessions=o.sessions_total,
        pending=tuple(p.id for p in o.pending),
        runs=tuple(recent_records(store, runs)),
        kept=tuple(kept),
    )
