"""The two gates between a staged tree and ``main``: deterministic validation and
semantic verification. Each takes the stage and the list of changed files and
returns a ``GateReport``; a report with problems keeps ``main`` where it is.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from memoryfs.errors import PageError
from memoryfs.pages.page import Page, parse_page
from memoryfs.pages.page import _scalar as _text
from memoryfs.store.scan import READ_MAX_BYTES, read_text
from memoryfs.store.store import Store

__all__ = [
    "GENERATED",
    "Problem",
    "GateReport",
    "staged_page",
    "base_page",
    "prefetch_base",
    "release_base",
    "source_entries",
]

GENERATED = ("memory/INDEX.md", "memory/sessions/index.md")  # rendered, not written by claims


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
    # by text, so each is parsed once per run while the memo has room.
    try:
        return parse_page(text, rel)
    except (PageError, ValueError):
        return None


def source_entries(page: Page) -> Iterator[tuple[int, str, str]]:
    """(id, ref, hash) of each entry ``Page.sources`` keeps (the well-formed ones)."""
    for sid, ref, item in page.source_items():
        digest = item.get("hash", "")
        yield sid, ref, digest if isinstance(digest, str) else _text(digest)


def staged_page(stage_root: Path, path: str) -> Page | None:
    """The page at ``path`` (relative to the root) in the staged tree; None when
    unreadable (validation reports why)."""
    # a regular file only (a link to /dev/zero or a FIFO is never read); validation holds
    # the store's size limit
    text = read_text(stage_root, path, READ_MAX_BYTES)
    if text is None:
        return None
    try:
        return parse_page(text, path.removeprefix("memory/"))
    except (PageError, ValueError):
        return None


# (commit, path) -> its text (None: absent, not a file, not UTF-8); one run's. Texts, not
# pages: each is parsed when asked (the parse memo often has it already).
_base_texts: dict[tuple[str, str], str | None] = {}


def prefetch_base(store: Store, base: str, paths: list[str]) -> None:
    """Read ``paths`` (relative to the root) at commit ``base`` with one ``git cat-file``,
    for ``base_page``: a run's changed pages, rather than one object lookup each."""
    release_base()
    wanted = [p for p in paths if "\n" not in p and "\r" not in p]
    if not wanted:
        return
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
    with tempfile.TemporaryFile() as names:
        names.write("".join(f"{base}:{p}\n" for p in wanted).encode())
        names.seek(0)
        try:
            proc = subprocess.Popen(
                ["git", "cat-file", "--batch"],
                cwd=store.root,
                stdin=names,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env=env,
            )
        except OSError:
            return  # base_page reads each on its own
        with proc:
            assert proc.stdout is not None
            for path in wanted:
                if not _read_one(proc.stdout, (base, path)):
                    break  # git stopped: base_page reads the rest on its own
            proc.stdout.close()


def _read_one(out: IO[bytes], key: tuple[str, str]) -> bool:
    """Read one ``cat-file --batch`` answer for ``key``; False at the end of the output or
    on one this code does not understand."""
    header = out.readline().split()
    if len(header) == 2 and header[1] == b"missing":
        _base_texts[key] = None
        return True
    if len(header) != 3 or not header[2].isdigit():
        return False
    size = int(header[2])
    data = out.read(size)
    if len(data) != size:
        return False
    out.read(1)  # the newline after the object
    try:
        _base_texts[key] = data.decode("utf-8") if header[1] == b"blob" else None
    except UnicodeDecodeError:
        _base_texts[key] = None
    return True


def release_base() -> None:
    """Forget the pages ``prefetch_base`` read (the gates are done with them)."""
    _base_texts.clear()


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
