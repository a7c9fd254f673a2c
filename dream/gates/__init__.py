"""The two gates between a staged tree and ``main``: deterministic validation and
semantic verification. Each takes the stage and the list of changed files and
returns a ``GateReport``; a report with problems keeps ``main`` where it is.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Problem", "GateReport"]


@dataclass(frozen=True)
class Problem:
    """One reason a gate rejects the staged tree."""

    gate: str  # "validation" or "verification"
    path: str  # relative to the store root (memory/...)
    line: int  # 1-based; 0 when not line-specific
    code: str
    message: str

    def format(self) -> str:
        return f"{self.path}:{self.line}: {self.code} {self.message}"


@dataclass(frozen=True)
class GateReport:
    gate: str
    problems: tuple[Problem, ...] = ()
    checked: int = 0  # files (validation) or claims (verification) looked at
    stats: dict[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.problems
