"""Dream: nightly consolidation of a memoryfs store.

``dream.run(store)`` runs it once (``dream.runner.run``; the embedded engine by default).
The run's modules load on the first call, so that ``import dream`` stays light.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dream.engines.base import Engine
    from dream.runner import Progress, RunResult
    from memoryfs.store.store import Store

__all__ = ["run"]


def run(
    store: Store | Path | str,
    engine: Engine | str = "embedded",
    *,
    progress: Progress | None = None,
    **options: Any,
) -> RunResult:
    """One Dream run on ``store``: ``dream.runner.run`` (its docstring has the options)."""
    from dream.runner import run as run_once

    return run_once(store, engine, progress=progress, **options)
