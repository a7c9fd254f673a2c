"""The two gates between a staged tree and ``main``: deterministic validation and
semantic verification. Each takes the stage and the list of changed files and
returns a ``GateReport``; a report with problems keeps ``main`` where it is.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from memoryfs.errors import PageError
from memoryfs.page import Page, parse_page
from memoryfs.store import Store

__all__ = ["Problem", "GateReport", "staged_page", "base_page", "prefetch_base"]


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


def _parsed(text: str, rel: str) -> Page | None:
    # Both gates read the same changed pages, the base side too: parse_page memoizes
    # by text, so each is parsed once per run.
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


_base_texts: dict[tuple[str, str], str | None] = {}  # (commit, path) -> text; one run's


def prefetch_base(store: Store, base: str, paths: list[str]) -> None:
    """Read ``paths`` (relative to the root) at commit ``base`` with one ``git cat-file``,
    for ``base_page``: a run's changed pages, rather than one object lookup each."""
    _base_texts.clear()
    wanted = [p for p in paths if "\n" not in p and "\r" not in p]
    if not wanted:
        return
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
    proc = subprocess.run(
        ["git", "cat-file", "--batch"],
        cwd=store.root,
        input="".join(f"{base}:{p}\n" for p in wanted).encode(),
        capture_output=True,
        env=env,
        check=False,
    )
    if proc.returncode != 0:
        return  # base_page reads each on its own
    out, pos = proc.stdout, 0
    for path in wanted:
        end = out.find(b"\n", pos)
        if end < 0:
            return
        header = out[pos:end].split()
        pos = end + 1
        if len(header) != 3:
            _base_texts[(base, path)] = None  # missing
            continue
        size = int(header[2])
        data = out[pos : pos + size]
        pos += size + 1
        if header[1] != b"blob":
            _base_texts[(base, path)] = None  # not a file
            continue
        try:
            _base_texts[(base, path)] = data.decode("utf-8")
        except UnicodeDecodeError:
            _base_texts[(base, path)] = None


def base_page(store: Store, base: str, path: str) -> Page | None:
    """The page at ``path`` in commit ``base``; None when absent or unreadable."""
    if (base, path) in _base_texts:
        text = _base_texts[(base, path)]
        return None if text is None else _parsed(text, path.removeprefix("memory/"))
    try:
        blob = store.repo.commit(base).tree / path
        text = blob.data_stream.read().decode("utf-8")
    except (KeyError, ValueError, UnicodeDecodeError):
        return None
    return _parsed(text, path.removeprefix("memory/"))
