"""``dream run --stores PATH... -j N``: consolidate many user stores on one machine.

Job: one ordinary ``run_store`` per store (``run_remote``'s for a clone of a remote), up
to ``jobs`` at a time, each in its own process (a store's run holds that store's lock; a
crash or a slow model in one store never stalls or breaks the others). Every store gets
one ``StoreRun``; a failure in one (a gate, a missing store, an engine error) is that
store's result, never an exception for the batch. Results come back in the order the
stores were given; the ``on_done`` callback sees each as it finishes.

Boundary: scheduling and collecting; the runs themselves are ``dream.runner``'s.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dream.engines.base import Engine
from dream.errors import DreamError
from dream.remote import run_store
from dream.runner import RunOptions
from memoryfs.errors import MemoryFSError
from memoryfs.store.store import find_store

__all__ = ["FAILED", "StoreRun", "run_stores", "run_one"]

FAILED = ("gate-failed", "error")


@dataclass(frozen=True)
class StoreRun:
    store: str  # the path as given
    status: str  # a RunResult status, or "error" when the run raised
    message: str
    result: dict[str, Any] = field(default_factory=dict)  # RunResult.to_json(), {} on error

    @property
    def failed(self) -> bool:
        return self.status in FAILED

    def line(self) -> str:
        return f"{self.store}: {self.status}: {self.message}"

    def to_json(self) -> dict[str, Any]:
        return {
            "store": self.store,
            "status": self.status,
            "message": self.message,
            "failed": self.failed,
            "result": self.result,
        }


def run_one(path: str, engine: Engine, options: RunOptions) -> StoreRun:
    """One store's run; every failure becomes its result."""
    try:
        store = find_store(Path(path))
        result = run_store(store, engine, options)
    except (DreamError, MemoryFSError) as exc:
        return StoreRun(path, "error", str(exc))
    except Exception as exc:  # a bug in one store's run must not sink the batch
        return StoreRun(path, "error", f"internal error: {type(exc).__name__}: {exc}")
    return StoreRun(path, result.status, result.message, result.to_json())


def run_stores(
    paths: Sequence[str],
    engine: Engine,
    options: RunOptions | None = None,
    jobs: int = 1,
    on_done: Callable[[StoreRun], None] = lambda run: None,
) -> list[StoreRun]:
    """Run Dream on every store of ``paths``, ``jobs`` processes at a time."""
    options = options or RunOptions()
    if jobs < 1:
        raise DreamError(f"-j must be 1 or more, not {jobs}")
    if len(set(paths)) != len(paths):
        raise DreamError("a store is listed twice in --stores")
    done: dict[int, StoreRun] = {}
    if jobs == 1 or len(paths) == 1:
        for i, path in enumerate(paths):
            done[i] = run_one(path, engine, options)
            on_done(done[i])
        return [done[i] for i in range(len(paths))]
    with ProcessPoolExecutor(max_workers=min(jobs, len(paths))) as pool:
        futures: dict[Future[StoreRun], int] = {
            pool.submit(run_one, path, engine, options): i for i, path in enumerate(paths)
        }
        for future in as_completed(futures):
            i = futures[future]
            try:
                done[i] = future.result()
            except Exception as exc:  # the worker process died (killed, out of memory)
                done[i] = StoreRun(paths[i], "error", f"worker failed: {type(exc).__name__}")
            on_done(done[i])
    return [done[i] for i in range(len(paths))]
