"""Both gates on a staged tree: validation, then verification, of what changed.

Shared by a run (``dream.run``), a rebase onto a moved ``main`` and ``dream apply``.
"""

from __future__ import annotations

from dream.gates import GateReport, Problem, prefetch_base, sharing_pages
from dream.gates.validation import validate_stage
from dream.gates.verification import verify_stage
from dream.staging import Change, Stage
from memoryfs.store import Store

__all__ = ["run_gates", "problems_of"]


def run_gates(
    store: Store, stage: Stage, changes: list[Change], full: bool = False
) -> tuple[GateReport, GateReport]:
    """Validation, then verification, of the stage's changes against its base."""
    changes = [c for c in changes if not c.path.startswith(".dream/")]  # receipts: no memory
    prefetch_base(store, stage.base, [c.path for c in changes if c.status == "M"])
    with sharing_pages():
        validation = validate_stage(store, stage.path, changes, full=full, base=stage.base)
        verification = verify_stage(store, stage.path, stage.base, changes)
    return validation, verification


def problems_of(*reports: GateReport) -> tuple[Problem, ...]:
    return tuple(p for r in reports for p in r.problems)
