"""Both gates on a staged tree: validation, then verification, of what changed.

Shared by a run (``dream.runner``), a rebase onto a moved ``main`` and ``dream apply``.
"""

from __future__ import annotations

from collections.abc import Sequence

from dream.gates import (
    GENERATED,
    GateReport,
    Problem,
    prefetch_base,
    release_base,
)
from dream.gates.judge import Judge
from dream.gates.validation import validate_stage
from dream.gates.verification import verify_stage
from dream.landing.staging import Change, Stage
from memoryfs.pages.page import clear_parse_cache as clear_page_cache
from memoryfs.store.store import Store

__all__ = ["run_gates", "problems_of"]


def run_gates(
    store: Store,
    stage: Stage,
    changes: Sequence[Change],
    full: bool = False,
    judge: Judge | None = None,
) -> tuple[GateReport, GateReport]:
    """Validation, then verification, of the stage's changes against its base (with the
    model ``judge``, when the run has one: ``dream.gates.judge.judge_for``).

    The gates are a run's last readers of its pages: the base texts they fetched and the
    pages parsed since the run began (the page memo, ``memoryfs.pages.page``) are let go as
    they end, not held through the sync."""
    changes = [c for c in changes if not c.path.startswith(".dream/")]  # receipts are no memory
    # the base side of the changed pages (the generated indexes, as big as the store
    # is, are never compared)
    pages = [c.path for c in changes if c.status == "M" and c.path.endswith(".md")]
    prefetch_base(store, stage.base, [p for p in pages if p not in GENERATED])
    try:
        validation = validate_stage(store, stage.path, changes, full=full, base=stage.base)
        verification = verify_stage(store, stage.path, stage.base, changes, judge)
    finally:
        release_base()
        clear_page_cache()
    return validation, verification


def problems_of(*reports: GateReport) -> tuple[Problem, ...]:
    return tuple(p for r in reports for p in r.problems)
