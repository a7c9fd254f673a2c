"""One Dream run: orient -> consolidate (the engine) -> gates -> sync.

``run_dream`` is what ``dream run`` calls (``dream.landing.kept_runs`` serves review, apply and
discard of kept runs); ``run`` (also ``dream.run(store)``) is the
same call for a program, with the embedded engine by default. Everything that changes a
store holds its ``dream`` lock (an ``flock``: a crashed run never leaves it stuck), so a
second run exits at once with a clear message.

A run never writes the live tree or ``main`` before both gates pass: the engine
writes into a worktree on ``dream/<run-id>`` (``dream.landing.staging``), the gates check
what changed there (``dream.gates``), and ``dream.landing.sync`` commits and moves ``main``
by compare-and-swap. What the gates reject is left out (``dream.landing.leaveout``) and the
rest lands: ``main`` gets one commit holding what passed, whose message lists what was
left out and why; the branch keeps a second commit on top of it that puts back what
was left out (everything the engine wrote), for ``dream review`` and, once fixed,
``dream apply``. Only when nothing valid is left (or a problem cannot be pinned to a
part of the run) does the run fail: the branch keeps the engine's tree in one commit
for review and ``main`` stays where it was. Stop conditions (max sessions, deadline)
end a run cleanly: what was done lands, the rest stays pending (pending is derived
from the files).
The run id goes into the commit message, the branch name, the run record and the
content-free receipts under ``.dream/receipts/`` only, never into ``memory/``, so the
same input and base give byte-identical memory trees.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from dream.engines.base import Engine, EngineContext
from dream.errors import DreamError
from dream.gates import Problem
from dream.gates.both import problems_of, run_gates
from dream.gates.judge import Judge, judge_for
from dream.landing.crashed import cleanup_stale
from dream.landing.leaveout import LeftOut, put_back, reduce_stage
from dream.landing.runlog import (
    new_run_id,
    run_config,
    run_source,
    write_receipts,
    write_record,
)
from dream.landing.staging import (
    Stage,
    commit_stage,
    create_stage,
    git_proc,
    remove_stage,
    reset_to_tree,
    run_git,
    stage_changes,
)
from dream.landing.sync import (
    MAX_ATTEMPTS,
    LandingRefused,
    SyncConflict,
    changed_files,
    commit_message,
    describe,
    sync,
)
from dream.phases.consolidate import consolidate_with
from dream.phases.hand_edits import HAND_CODE, respect_hand_edits
from dream.phases.orient import find_pending, orient, stop_conditions, target_branch
from dream.phases.recheck import recite_stage
from dream.records import PendingSession
from dream.skills import NO_SKILL, check_skill
from memoryfs.errors import LockedError
from memoryfs.index.index_md import write_indexes
from memoryfs.pages.page import clear_parse_cache as clear_page_cache
from memoryfs.receipts.log import ensure_union_merge
from memoryfs.receipts.records import scope_ids
from memoryfs.store.hashing import content_hash
from memoryfs.store.store import Store, find_store
from memoryfs.store.transcript_edits import edited_turns

__all__ = [
    "run",
    "Progress",
    "RunOptions",
    "RunResult",
    "run_dream",
    "run_gates",
    "run_lock",
    "land",
    "stage_receipts",
    "problems_of",
    "now_utc",
    "record",
    "with_judge",
]

Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class RunOptions:
    dry_run: bool = False  # stage, consolidate and gate, then throw the stage away
    review: bool = False  # keep the gated commit on its branch for 'dream apply' (what
    # it would land: parts the gates rejected are left out of it and listed, not kept)
    max_sessions: int | None = None  # None: memory.toml [dream] max_sessions
    deadline: str | None = None  # "20m"; None: memory.toml [dream] deadline
    allow_unapproved: bool = False  # run an engine that acts on a skill the store has not approved
    full_validation: bool = False  # validate the whole staged tree, not just what changed


@dataclass(frozen=True)
class RunResult:
    """What a run (or an apply / discard) did; also its run record."""

    run_id: str
    # committed | nothing-pending | no-change | gate-failed | review | dry-run | discarded | error
    # (committed with ``left_out``: what passed landed, the rest waits on the kept branch)
    status: str
    message: str  # the one-line summary
    base: str = ""
    commit: str = ""  # on the target branch when committed, on the kept branch otherwise
    branch: str = ""  # the kept branch, "" when none is kept
    target: str = ""
    engine: str = ""
    skill: str = ""  # the dream skill the engine acted on (content hash), "none" if none
    source_version: str = ""  # what its receipts pin: build, skill, engine, config hash
    sessions: tuple[str, ...] = ()
    pages_created: tuple[str, ...] = ()
    pages_updated: tuple[str, ...] = ()
    claims_superseded: int = 0
    pending_before: int = 0
    pending_after: int = 0
    stopped: str = ""  # "max-sessions" or "deadline" when the run stopped before the end
    problems: tuple[str, ...] = ()  # formatted gate problems (file:line: code why)
    left_out: tuple[str, ...] = ()  # what the gates rejected and the run left out (LeftOut)
    rejected: tuple[str, ...] = ()  # what the engine dropped before the gates (file:line: why)
    # pages a person edited: kept as they were (also in ``left_out``) or merged into
    hand_edits: tuple[str, ...] = ()
    tokens: int = 0  # model tokens the engine spent
    cost: float = 0.0
    judge: dict[str, int] = field(default_factory=dict)  # the model judge's counts (if any)
    rebased: int = 0
    restarted: int = 0
    started: str = ""
    finished: str = ""
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def exit_code(self) -> int:
        return 1 if self.status == "gate-failed" else 0

    def to_json(self) -> dict[str, Any]:
        return record_json(record(self))


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.capitalize() for part in rest)


def record_json(rec: Mapping[str, Any]) -> dict[str, Any]:
    """A run record (``run_id``, as ``.dream/runs/`` stores it) with the camelCase keys
    of every ``--json`` output (``runId``; docs/formats.md); the judge's counts too
    (``claimsJudged``)."""
    out = {_camel(k): v for k, v in rec.items()}
    if isinstance(out.get("judge"), dict):
        out["judge"] = {_camel(k): v for k, v in out["judge"].items()}
    return out


def record(result: RunResult) -> dict[str, Any]:
    """The run record of ``result`` (JSON-ready)."""
    return {k: list(v) if isinstance(v, tuple) else v for k, v in vars(result).items()}


def now_utc() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@contextlib.contextmanager
def run_lock(store: Store) -> Iterator[None]:
    """The store's ``dream`` lock; a clear message when another run holds it."""
    with contextlib.ExitStack() as stack:
        try:
            stack.enter_context(store.lock("dream", timeout=0))
        except LockedError:
            pid = ""
            with contextlib.suppress(OSError):
                pid = (store.cache_dir / "locks" / "dream.lock").read_text().strip()
            who = f" (pid {pid})" if pid else ""
            raise DreamError(
                f"another dream run is in progress on {store.root}{who}; wait for it to finish "
                "(its lock goes away when it ends, even if it crashes)"
            ) from None
        yield


# -- landing ---------------------------------------------------------------------------


def land(
    store: Store,
    stage: Stage,
    commit: str,
    result: RunResult,
    full_validation: bool,
    judge: Judge | None = None,
) -> tuple[RunResult, bool]:
    """Sync the stage's commit onto the target: the result, and whether to keep the branch.

    ``result.message`` is the headline of what lands.
    """

    def regate(moved: Stage) -> tuple[Problem, ...]:
        return problems_of(*run_gates(store, moved, stage_changes(moved), full_validation, judge))

    outcome = sync(store, stage, result.target, commit, regate)
    if not outcome.landed:
        failed = replace(
            result,
            status="gate-failed",
            base=outcome.base,
            commit=outcome.commit,
            branch=stage.branch,
            rebased=outcome.rebased,
            problems=tuple(p.format() for p in outcome.problems),
            left_out=(),
            message=f"dream: {len(outcome.problems)} gate problems after rebasing onto "
            f"{outcome.base[:10]}; {result.target} untouched, branch {stage.branch} kept",
        )
        return failed, True
    landed = replace(
        result,
        status="committed",
        base=outcome.base,
        commit=outcome.commit,
        branch="",
        rebased=outcome.rebased,
        pending_after=len(find_pending(store, outcome.commit)[0]),
        message=f"dream: {result.message} ({outcome.commit[:10]})",
    )
    return landed, False


def stage_receipts(
    store: Store,
    stage: Stage,
    result: RunResult,
    sessions: dict[str, str],
    passed: bool,
    left_out: Sequence[LeftOut] = (),
) -> None:
    """Write the run's lineage receipts into the staged tree and stage them, so they land
    with its commit (``sessions``: id -> transcript hash of what the run read).

    Passed runs: the summarized sessions and every page written (hashed as staged),
    and a failed ``validated`` for each part ``left_out``; a gate failure: ``validated``
    failed for every session of the batch.
    """
    done = {s: sessions[s] for s in result.sessions if s in sessions} if passed else sessions
    memory = stage.path / "memory"

    def pages() -> Iterator[tuple[str, str]]:  # hashed as written, in order, one at a time
        for rel in changed_files(result.sessions, result.pages_created, result.pages_updated):
            with contextlib.suppress(OSError):
                yield rel, content_hash((memory / rel).read_bytes())

    scope = scope_ids(store.config.user, store.config.assistant)
    source = result.source_version or run_source(result.skill, result.engine)
    left = [(i.item, i.version, i.code) for i in left_out]
    write_receipts(stage.path, result.run_id, scope, source, done, pages(), passed, left)
    ensure_union_merge(stage.path)
    run_git(stage.path, "add", "--", ".dream/receipts", ".gitattributes")


# -- the run ---------------------------------------------------------------------------


def run_dream(
    store: Store,
    engine: Engine,
    options: RunOptions | None = None,
    progress: Progress | None = None,
    before_sync: Callable[[Stage], None] | None = None,
) -> RunResult:
    """One run. ``before_sync`` is called between the gates and the sync (tests use it
    to move ``main`` under a run)."""
    options = options or RunOptions()
    started, t0 = now_utc(), time.monotonic()
    tick = progress or (lambda phase, done, total: None)
    with run_lock(store):
        # Approval guards the procedure an engine follows; an engine that reads no skill
        # follows none, and its runs name none.
        skill = NO_SKILL
        if engine.acts_on_skill:
            skill = check_skill(store, allow_unapproved=options.allow_unapproved).active
        stops = stop_conditions(store, options.max_sessions, options.deadline)
        judge = judge_for(store, engine)
        config = run_config(engine, store.config.budgets, judge, options.full_validation)
        deadline = t0 + stops.deadline_seconds if stops.deadline_seconds is not None else None
        target = target_branch(store)
        cleanup_stale(store, target)
        draft = RunResult(
            run_id=new_run_id(),
            status="",
            message="",
            target=target,
            engine=engine.label,
            skill=skill,
            source_version=run_source(skill, engine.label, config),
            started=started,
        )
        attempt = _Attempt(
            store, engine, options, stops.max_sessions, deadline, tick, before_sync, judge=judge
        )
        for restarted in range(MAX_ATTEMPTS):
            try:
                result = attempt.run(draft)
            except SyncConflict:
                continue  # main took a change that conflicts: start over from its new tip
            except DreamError as exc:
                _record_error(store, draft, exc)
                raise
            finally:
                if judge is not None:
                    judge.close()
            total = round(time.monotonic() - t0, 3)
            result = replace(
                result,
                restarted=restarted,
                finished=now_utc(),
                timings={**result.timings, "total": total},
            )
            result = with_judge(result, judge)
            write_record(store, record(result))
            return result
        error = DreamError(f"the run kept conflicting with new commits on {target}; try again")
        _record_error(store, draft, error)
        raise error


def with_judge(result: RunResult, judge: Judge | None) -> RunResult:
    """``result`` with what the model judge did, its message saying when claims went
    without a verdict (a timeout, a malformed reply: the deterministic checks decided)."""
    if judge is None:
        return result
    note = judge.fallback_note()
    message = f"{result.message}; {note}" if note else result.message
    return replace(result, judge=judge.summary(), message=message)


def _record_error(store: Store, result: RunResult, exc: Exception) -> None:
    failed = replace(result, status="error", message=f"dream: {exc}", finished=now_utc())
    write_record(store, record(failed))


@dataclass
class _Attempt:
    """One pass from orient to sync (a run starts over when its rebase conflicts)."""

    store: Store
    engine: Engine
    options: RunOptions
    max_sessions: int
    deadline: float | None
    tick: Progress
    before_sync: Callable[[Stage], None] | None
    timings: dict[str, float] = field(default_factory=dict)
    _clock: float = 0.0
    judge: Judge | None = None  # the model judge of the verification gate

    def lap(self, name: str) -> None:
        now = time.monotonic()
        self.timings[name] = round(self.timings.get(name, 0.0) + now - self._clock, 3)
        self._clock = now

    def run(self, result: RunResult) -> RunResult:
        self.timings, self._clock = {}, time.monotonic()
        clear_page_cache()  # this run's pages first in the page memo
        self.tick("orient", 0, 1)
        o = orient(self.store)
        self.lap("orient")
        result = replace(result, base=o.base, pending_before=len(o.pending), timings=self.timings)
        if not o.pending:
            return replace(
                result, status="nothing-pending", message="dream: nothing pending; no commit"
            )
        batch = o.pending[: self.max_sessions] if self.max_sessions else o.pending
        result = replace(
            result,
            pending_after=len(o.pending),
            stopped="max-sessions" if len(batch) < len(o.pending) else "",
        )
        self.tick("stage", 0, 1)
        stage = create_stage(self.store, result.run_id, o.base)
        self.lap("stage")
        keep = False
        try:
            result, keep = self._staged(result, stage, batch)
            return result
        except DreamError as exc:
            # After the commit (local edits blocking the fast-forward, say), keep the
            # branch so nothing is lost; before it there is nothing worth keeping.
            tip = git_proc(stage.path, "rev-parse", "HEAD").stdout.strip()
            redone = isinstance(exc, (SyncConflict, LandingRefused))  # by the next run
            keep = not redone and tip not in ("", o.base)
            raise
        finally:
            remove_stage(self.store, stage, keep_branch=keep)

    def _staged(
        self, result: RunResult, stage: Stage, batch: Sequence[PendingSession]
    ) -> tuple[RunResult, bool]:
        ctx = EngineContext(
            store=self.store,
            stage_root=stage.path,
            pending=batch,
            run_id=result.run_id,
            base_commit=stage.base,
            deadline=self.deadline,
            progress=self.tick,
            phases=consolidate_with,
        )
        report = self.engine.consolidate(ctx)
        self.lap("consolidate")
        # Claims citing a turn that changed are re-checked, never carried forward; a turn
        # a person edited after ingest is no evidence at all.
        edited = edited_turns(self.store.root, stage.base)
        grown = [p.path for p in batch if p.reason == "grown"]
        recited = recite_stage(stage.path, grown, edited)
        # A page a person edited keeps the person's text (or stays as it was, said why).
        hand = respect_hand_edits(
            self.store.root,
            stage.path,
            stage.base,
            [(c.status, c.path) for c in stage_changes(stage)],
        )
        if hand:
            write_indexes(Store(root=stage.path, config=self.store.config))
        hand_kept = tuple(
            LeftOut(h.path, 0, HAND_CODE, h.why, "file", h.version) for h in hand if h.kept
        )
        result = replace(result, hand_edits=tuple(h.format() for h in hand))
        rejected = (*report.rejected, *recited.unsupported)
        result = replace(result, rejected=rejected, tokens=report.tokens, cost=report.cost)
        stopped = report.stopped_early or result.stopped
        engine_superseded = report.claims_superseded
        # the report's lists name every file a full run wrote; what the run lands is read
        # from Git (``describe``), so they are let go before the gates
        del report
        changes = stage_changes(stage)
        if not changes:
            return replace(
                result,
                status="no-change",
                left_out=tuple(i.format() for i in hand_kept),
                stopped=stopped,
                message=f"dream: {len(batch)} sessions looked at, nothing to change; no commit",
            ), False
        self.tick("gates", 0, 1)
        validation, verification = run_gates(
            self.store, stage, changes, self.options.full_validation, self.judge
        )
        self.lap("gates")
        superseded = verification.stats.get("claims_superseded", engine_superseded)
        summary = describe(changes, superseded)
        problems = problems_of(validation, verification)
        reduction = None
        if problems:
            self.tick("leave out", 0, 1)
            reduction = reduce_stage(
                self.store, stage, changes, problems, self.options.full_validation, self.judge
            )
            self.lap("leave out")
            problems = reduction.problems
            if reduction.landable:
                summary = describe(reduction.changes, reduction.superseded)
        del changes  # every file of a full run; ``summary`` says what lands from here
        left = (
            *hand_kept,
            *(reduction.left_out if reduction is not None and reduction.landable else ()),
        )
        headline = summary.headline() + (f"; {len(left)} left out" if left else "")
        result = replace(
            result,
            sessions=summary.sessions,
            pages_created=summary.created,
            pages_updated=summary.updated,
            claims_superseded=summary.superseded,
            problems=tuple(p.format() for p in problems),
            left_out=tuple(i.format() for i in left),
            stopped=stopped,
            message=headline,
        )
        why = reduction.why if reduction is not None else ""  # "": what is left can land
        failed = bool(why)
        if self.options.dry_run:
            verdict = "gates pass"
            if failed:
                verdict = f"{len(problems)} gate problems, {why}"
            elif left:
                verdict = f"gates pass with {len(left)} left out"
            return replace(
                result,
                status="dry-run",
                message=f"dream (dry run): would commit {summary.headline()}; {verdict}",
            ), False
        if reduction is not None and failed:
            reset_to_tree(stage, reduction.full_tree)  # the branch keeps what the engine wrote
        sessions = {p.id: p.content_hash for p in batch}
        stage_receipts(self.store, stage, result, sessions, passed=not failed, left_out=left)
        message = commit_message(
            summary,
            result.run_id,
            result.engine,
            result.skill,
            result.tokens,
            result.cost,
            left_out=result.left_out,
        )
        commit = commit_stage(self.store, stage, message)
        self.lap("commit")
        if reduction is not None and failed:
            return replace(
                result,
                status="gate-failed",
                commit=commit,
                branch=stage.branch,
                message=f"dream: {len(problems)} gate problems, {why}; {result.target} "
                f"untouched, branch {stage.branch} kept ('dream review {result.run_id}')",
            ), True
        if self.options.review:
            return replace(
                result,
                status="review",
                commit=commit,
                branch=stage.branch,
                message=f"dream: {headline}; kept on {stage.branch} for review "
                f"('dream apply {result.run_id}')",
            ), True
        if self.before_sync is not None:
            self.before_sync(stage)
        self.tick("sync", 0, 1)
        result, keep = land(
            self.store, stage, commit, result, self.options.full_validation, self.judge
        )
        self.lap("sync")
        if result.status == "committed" and reduction is not None:
            try:
                kept = put_back(
                    self.store, stage, reduction, commit, result.commit, result.left_out
                )
            except DreamError as exc:  # what landed stands; only the copy for review is lost
                message = f"{result.message}; what was left out was not kept for review ({exc})"
                result = replace(result, message=message)
            else:
                keep = bool(kept)
                if kept:
                    result = replace(
                        result,
                        branch=stage.branch,
                        message=f"{result.message}; what was left out is kept on "
                        f"{stage.branch} ('dream review {result.run_id}')",
                    )
        if result.status == "committed" and stopped:
            result = replace(
                result,
                message=f"{result.message}; stopped at {stopped}, "
                f"{result.pending_after} sessions still pending",
            )
        return result, keep


def run(
    store: Store | Path | str,
    engine: Engine | str = "embedded",
    *,
    progress: Progress | None = None,
    **options: Any,
) -> RunResult:
    """One Dream run on ``store`` (a ``Store`` or its folder): what ``dream run`` does.

    ``engine`` is an ``Engine`` or its name (``embedded``, the default: no network, no
    model); ``options`` are ``RunOptions``' (``dry_run``, ``review``, ``max_sessions``,
    ``deadline``, ``allow_unapproved``, ``full_validation``); ``progress`` is called
    with (phase, done, total). Raises ``DreamError`` when the run cannot be made.

    >>> import tempfile, memoryfs, dream
    >>> store = memoryfs.init_store(tempfile.mkdtemp() + "/store", "dana", "atlas", "Dana Reyes")
    >>> _ = store.ingest(
    ...     [{"role": "user", "content": "I moved to Porto last month.", "ts": "2026-03-02T09:00"}],
    ...     session_id="2026-03-02-moving",
    ... )
    >>> result = dream.run(store, allow_unapproved=True)
    >>> result.status, result.sessions
    ('committed', ('2026-03-02-moving',))
    >>> dream.run(store, allow_unapproved=True).status
    'nothing-pending'
    """
    from dream.engines import load_engine

    opened = store if isinstance(store, Store) else find_store(store)
    chosen = load_engine(engine) if isinstance(engine, str) else engine
    known = set(RunOptions.__dataclass_fields__)
    unknown = sorted(set(options) - known)
    if unknown:
        raise DreamError(
            f"unknown run option(s) {', '.join(unknown)} (use {', '.join(sorted(known))})"
        )
    return run_dream(opened, chosen, RunOptions(**options), progress)
