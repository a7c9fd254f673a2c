"""Which files of ``memory/`` may differ from a tree seen earlier, as Git tells it.

A cache of per-file facts (``memoryfs.index_cache``) that knows the commit its last pass
was measured from and the files that differed from that commit then (its ``Anchor``)
needs to look again only at: those files, the files that differ between that commit and
the current one, and the files that differ from the current one now. Git answers the
last two from its index's stat cache (in C, no file read unless its stat moved), so a
pass over a store of thousands of files costs what changed, not a stat of every file in
Python. Hand edits, untracked and ignored files count as differing; a rename is a
deletion and an addition. When Git cannot answer (no repository, an unknown commit, an
entry it reports as a whole folder), the answer is None and the caller looks at every
file.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Anchor", "anchor_of", "changed_between"]

_PREFIX = "memory/"
_ENV = {"GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C", "GIT_TERMINAL_PROMPT": "0"}


@dataclass(frozen=True)
class Anchor:
    """A commit and the files (relative to ``memory/``) that differed from it, measured
    before a pass looked at the files."""

    commit: str
    dirty: frozenset[str]


def _git(root: Path, *args: str) -> bytes | None:
    try:
        proc = subprocess.run(
            ["git", "-c", "core.quotePath=false", *args],
            cwd=root,
            capture_output=True,
            env={**os.environ, **_ENV},
            check=False,
            timeout=120,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout if proc.returncode == 0 else None


def _rel(path: str) -> str | None:
    """``path`` (relative to the root, as Git prints it) relative to ``memory/``; None
    for a folder (Git names a whole folder only when it did not look inside)."""
    if path.endswith("/") or not path.startswith(_PREFIX):
        return None
    return path[len(_PREFIX) :]


def anchor_of(root: Path) -> Anchor | None:
    """``HEAD`` of the work tree at ``root`` and the files of ``memory/`` that differ from
    it (staged, unstaged, untracked or ignored); None when Git cannot tell."""
    out = _git(
        root,
        "status",
        "--porcelain=v2",
        "--branch",
        "-z",
        "--untracked-files=all",
        "--ignored=traditional",  # with --untracked-files=all: each ignored file
        "--no-renames",
        "--",
        "memory",
    )
    if out is None:
        return None
    commit = ""
    dirty: set[str] = set()
    for raw in out.split(b"\0"):
        if not raw:
            continue
        entry = raw.decode("utf-8", "surrogateescape")
        kind = entry[:2]
        if kind == "# ":
            if entry.startswith("# branch.oid "):
                commit = entry.removeprefix("# branch.oid ").strip()
            continue
        if kind == "1 ":
            path = entry.split(" ", 8)[8]
        elif kind == "u ":
            path = entry.split(" ", 10)[10]
        elif kind in ("? ", "! "):
            path = entry[2:]
        else:
            return None  # a rename or copy (not asked for) or a format this code does not know
        rel = _rel(path)
        if rel is None:
            return None
        dirty.add(rel)
    if len(commit) < 40 or not all(c in "0123456789abcdef" for c in commit):
        return None  # no commit yet ("(initial)"), or not understood
    return Anchor(commit, frozenset(dirty))


def changed_between(root: Path, old: str, new: str) -> set[str] | None:
    """Files of ``memory/`` that differ between commits ``old`` and ``new``; None when
    Git cannot tell (a commit it does not have)."""
    if old == new:
        return set()
    out = _git(root, "diff", "--name-only", "-z", "--no-renames", old, new, "--", "memory")
    if out is None:
        return None
    changed: set[str] = set()
    for raw in out.split(b"\0"):
        if raw:
            rel = _rel(raw.decode("utf-8", "surrogateescape"))
            if rel is None:
                return None
            changed.add(rel)
    return changed
