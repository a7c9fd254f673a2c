"""The two gates between a staged tree and ``main``: deterministic validation and
semantic verification. Each takes the stage and the list of changed files and
returns a ``GateReport``; a report with problems keeps ``main`` where it is.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from memoryfs.errors import PageError
from memoryfs.page import Page, parse_page
from memoryfs.store import Store

__all__ = ["Problem", "GateReport", "staged_page", "base_page"]


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


@lru_cache(maxsize=512)
def _parsed(text: str, rel: str) -> Page | None:
    # Both gates read the same changed pages, the base side too; a hub page's
    # frontmatter can hold thousands of sources, so each text is parsed once.
    try:
        return parse_page(text, rel)
    except (PageError, ValueError):
        return None


def staged_page(stage_root: Path, path: str) -> Page | None:
    """The page at ``path`` (relative to the root) in the staged tree; None when
    unreadable (validation reports why)."""
    try:
        text = (stage_root / path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    return _parsed(text, path.removeprefix("memory/"))


def base_page(store: Store, base: str, path: str) -> Page | None:
    """The page at ``path`` in commit ``base``; None when absent or unreadable."""
    try:
        blob = store.repo.commit(base).tree / path
        text = blob.data_stream.read().decode("utf-8")
    except (KeyError, ValueError, UnicodeDecodeError):
        return None
    return _parsed(text, path.removeprefix("memory/"))
