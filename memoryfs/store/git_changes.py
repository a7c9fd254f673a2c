"""Which files of ``memory/`` may differ from a tree seen earlier, as Git tells it.

A cache of per-file facts (``memoryfs.index.facts_cache``) that knows the commit its last pass
was measured from and the files that differed from that commit then (its anchor)
needs to look again only at: those files, the files that differ between that commit and
the current one, and the files that differ from the current one now. Git answers the
last two from its index's stat cache (in C, no file read unless its stat moved), so a
pass over a store of thousands of files costs what changed, not a stat of every file in
Python. Hand edits, untracked and ignored files count as differing; a rename is a
deletion and an addition. When Git cannot answer (no repository, an unknown commit, an
entry it reports as a whole folder), the answer is None or ``Untold`` and the caller
looks at every file. The lists stream from Git a block at a time: after a full Dream run
they name every file of the store.
"""

from __future__ import annotations

import itertools
import os
import subprocess
from collections.abc import Generator, Iterator
from pathlib import Path

__all__ = ["Untold", "anchor_of", "changed_between", "git_entries"]

_PREFIX = "memory/"
_ENV = {"GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C", "GIT_TERMINAL_PROMPT": "0"}


class Untold(Exception):
    """Git cannot tell (no repository, an unknown commit, an entry naming a whole folder,
    a format this code does not know): the caller looks at every file."""


_READ = 1 << 16  # bytes of Git's output read at a time


def git_entries(root: Path, *args: str) -> Generator[str, None, None]:
    """The NUL-separated entries Git prints for ``args``, as Git prints them: read a
    block at a time, never the whole output (a full Dream run changes every file of a
    large store, and its whole listing would be megabytes of the run's peak). Raises ``Untold``
    when Git fails."""
    try:
        proc = subprocess.Popen(
            ["git", "-c", "core.quotePath=false", *args],
            cwd=root,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={**os.environ, **_ENV},
        )
    except OSError:
        raise Untold from None
    assert proc.stdout is not None
    try:
        rest = b""
        while block := proc.stdout.read(_READ):
            *whole, rest = (rest + block).split(b"\0")
            for raw in whole:
                if raw:
                    yield raw.decode("utf-8", "surrogateescape")
        if rest:
            yield rest.decode("utf-8", "surrogateescape")
        if proc.wait() != 0:
            raise Untold
    finally:
        if proc.poll() is None:  # left early (an entry not understood, or the caller's error)
            proc.kill()
            proc.wait()
        proc.stdout.close()


def _rel(path: str) -> str:
    """``path`` (relative to the root, as Git prints it) relative to ``memory/``; ``Untold``
    for a folder (Git names a whole folder only when it did not look inside)."""
    if path.endswith("/") or not path.startswith(_PREFIX):
        raise Untold
    return path[len(_PREFIX) :]


def anchor_of(root: Path) -> tuple[str, Iterator[str]] | None:
    """``HEAD`` of the work tree at ``root`` and the files of ``memory/`` that differ from
    it (staged, unstaged, untracked or ignored), streamed from Git: iterate them once, at
    once (they are what differs now), catching ``Untold``. None when Git cannot tell the
    commit."""
    entries = git_entries(
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
    commit = ""
    first: str | None = None
    try:
        for entry in entries:  # the headers come first
            if entry[:2] != "# ":
                first = entry
                break
            if entry.startswith("# branch.oid "):
                commit = entry.removeprefix("# branch.oid ").strip()
    except Untold:
        return None
    if len(commit) < 40 or not all(c in "0123456789abcdef" for c in commit):
        entries.close()
        return None  # no commit yet ("(initial)"), or not understood
    return commit, _dirty(first, entries)


def _dirty(first: str | None, entries: Iterator[str]) -> Iterator[str]:
    """The paths (relative to ``memory/``) of ``git status --porcelain=v2`` entries."""
    if first is None:
        return
    for entry in itertools.chain([first], entries):
        kind = entry[:2]
        if kind == "# ":
            continue
        if kind == "1 ":
            path = entry.split(" ", 8)[8]
        elif kind == "u ":
            path = entry.split(" ", 10)[10]
        elif kind in ("? ", "! "):
            path = entry[2:]
        else:
            raise Untold  # a rename or copy (not asked for) or a format this code does not know
        yield _rel(path)


def changed_between(root: Path, old: str, new: str) -> Iterator[str]:
    """Files of ``memory/`` that differ between commits ``old`` and ``new``, streamed from
    Git; raises ``Untold`` (as it goes) when Git cannot tell (a commit it does not have)."""
    if old == new:
        return
    for entry in git_entries(
        root, "diff", "--name-only", "-z", "--no-renames", old, new, "--", "memory"
    ):
        yield _rel(entry)
