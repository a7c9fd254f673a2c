"""Phases 2-4 over the pending sessions, for any engine that summarizes and extracts.

Job: build the run's ``Workset`` on the staged tree and run the phase modules in pipeline
order, each handing the next what it made: summarize returns the sessions and their facts
(``Summarized``), attach the subjects and filings (``Attached``), and wiki files them. The
result is a ``ConsolidationReport`` of what changed; staging, gates and sync (``dream.runner``)
decide what happens to it. The run hands this function to the engine as ``ctx.phases``, so
engines never import a phase. Deterministic: the same staged tree and pending list give the
same bytes (no clock, no randomness; dates come from the sessions).
"""

from __future__ import annotations

from dream.engines.base import Engine, EngineContext
from dream.phases import attach, summarize, wiki
from dream.phases.workset import Workset
from dream.records import ConsolidationReport
from memoryfs.forget.deletions import load_deletions
from memoryfs.store.store import Store

__all__ = ["consolidate_with"]


def consolidate_with(engine: Engine, ctx: EngineContext) -> ConsolidationReport:
    """Summarize, attach and file the pending sessions into ``ctx.stage_root``."""
    store = Store(root=ctx.stage_root, config=ctx.store.config)
    ws = Workset(
        engine=engine,
        store=store,
        report=ConsolidationReport(),
        deletions=load_deletions(store),
    )
    summarized = summarize.run(ctx, ws)
    if summarized.sessions:
        wiki.run(ctx, ws, summarized, attach.run(ctx, ws, summarized))
    else:
        ws.flush()  # nothing summarized (deadline, or nothing pending): nothing to file
    return ws.report
