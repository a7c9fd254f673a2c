"""Phases 2-4 over the pending sessions, for any engine that summarizes and extracts.

Job: build the run's ``Workset`` on the staged tree and run the phase modules in pipeline
order. Every phase module has the same signature, ``run(ctx, workset) -> None``. The
result is a ``ConsolidationReport`` of what changed; staging, gates and sync (``dream.run``)
decide what happens to it. Deterministic: the same staged tree and pending list give the
same bytes (no clock, no randomness; dates come from the sessions).
"""

from __future__ import annotations

from collections.abc import Callable

from dream.engines.base import Engine, EngineContext
from dream.phases import attach, summarize, wiki
from dream.phases.workset import Workset
from dream.records import ConsolidationReport
from memoryfs.forget.deletions import load_deletions
from memoryfs.store.store import Store

__all__ = ["PHASES", "consolidate_with"]

Phase = Callable[[EngineContext, Workset], None]
PHASES: tuple[tuple[str, Phase], ...] = (
    ("summarize", summarize.run),
    ("attach", attach.run),
    ("wiki", wiki.run),
)


def consolidate_with(engine: Engine, ctx: EngineContext) -> ConsolidationReport:
    """Summarize, attach and file the pending sessions into ``ctx.stage_root``."""
    store = Store(root=ctx.stage_root, config=ctx.store.config)
    ws = Workset(
        engine=engine,
        store=store,
        report=ConsolidationReport(),
        deletions=load_deletions(store),
    )
    for _, phase in PHASES:
        phase(ctx, ws)
        if not ws.sessions:
            break  # nothing summarized (deadline, or nothing pending): nothing to file
    if not ws.sessions:
        ws.flush()
    return ws.report
