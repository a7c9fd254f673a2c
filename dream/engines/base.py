"""The engine interface: the thinking inside Dream's phases 2-4.

Staging, gates and sync never depend on which engine ran. An engine either
implements ``summarize`` and ``extract`` and lets the shared phases write the
files (``summarize``/``attach``/``wiki`` modules), or overrides ``consolidate``
to write into the staged tree itself (an external agent). Either way, whatever
it writes goes through the same validation and verification gates. The shared phases reach
an engine as ``EngineContext.phases`` (the run passes ``dream.phases.consolidate``), so no
engine imports a phase.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dream.errors import DreamError
from dream.records import ConsolidationReport, Fact, PendingSession, SummaryDraft
from memoryfs.pages.transcript import Transcript
from memoryfs.store.store import Store

__all__ = ["Engine", "EngineContext", "Phases"]

# The shared phases 2-4 (``dream.phases.consolidate.consolidate_with``): summarize, attach
# and file the pending sessions with an engine's ``summarize`` and ``extract``.
Phases = Callable[["Engine", "EngineContext"], ConsolidationReport]


@dataclass
class EngineContext:
    store: Store  # the live store: config and scope only; never written by an engine
    stage_root: Path  # the staged worktree root (stage_root / "memory" mirrors the store)
    pending: Sequence[PendingSession]  # oldest first
    run_id: str
    base_commit: str
    deadline: float | None = None  # time.monotonic() value after which the run stops cleanly
    progress: Callable[[str, int, int], None] = field(default=lambda phase, done, total: None)
    phases: Phases | None = None  # the shared phases; None for an engine that writes itself

    @property
    def memory(self) -> Path:
        return self.stage_root / "memory"

    def out_of_time(self) -> bool:
        return self.deadline is not None and time.monotonic() >= self.deadline


class Engine(ABC):
    """One way of thinking about sessions. ``name`` goes into the Dream-Engine trailer.

    ``acts_on_skill``: the engine takes the dream skill as its instructions (a model's
    system prompt, an external agent's brief), so a run refuses a skill the store has not
    approved (``dream.skills.check_skill``). An engine that does not read it (the
    embedded one) says False and runs without an approval; an engine that does not say
    is held to the approval.
    """

    name: str = "engine"
    version: str = "0"
    acts_on_skill: bool = True

    @abstractmethod
    def summarize(self, session: Transcript) -> SummaryDraft:
        """Phase 2: a summary draft of one session, every key point citing a turn."""

    @abstractmethod
    def extract(self, session: Transcript) -> list[Fact]:
        """Phase 3: the facts of one session, each citing the turn(s) it came from."""

    def consolidate(self, ctx: EngineContext) -> ConsolidationReport:
        """Phases 2-4 over the pending sessions, writing into ``ctx.stage_root``."""
        if ctx.phases is None:
            raise DreamError(f"engine {self.name}: no shared phases were given to run")
        return ctx.phases(self, ctx)

    @property
    def label(self) -> str:
        return f"{self.name}/{self.version}"

    def configuration(self) -> dict[str, Any]:
        """The settings that change what the engine writes (a model, its temperature; never
        a secret): receipts pin their hash in ``sourceVersion``."""
        return {}
