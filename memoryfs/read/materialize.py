"""The materializer: lay a working set of memory into an agent's sandbox.

``materialize`` writes the two generated maps (``memory/INDEX.md`` and
``memory/sessions/index.md``: always, they tell the agent what else exists) and
the most useful pages within a byte budget: preference pages, then in turn the
most linked and the most recently updated knowledge pages, the most recent
session summaries and notes (``plan_working_set``; ``fill_budget`` is the filling
rule, shared with ``memoryfs.remote.sandbox``, which lays a working set from a
Git server). Files keep their relative paths from the store; ``.materialized.json``
lists each with its Git blob hash (the version the agent got), the reason it is
there and its size. ``add_files`` (used by ``recall --into``) adds files on demand
with reason ``recall``; those stay across re-runs until the store deletes them,
while the budgeted set is re-chosen each run. Writing the sandbox (manifest,
receipts, crash safety, locks, refusals) is ``memoryfs.read.sandbox``'s job.

The set is chosen from the search index after the refresh every read starts with
(``SearchIndex.refresh_for_read``: on a store of 5,000+ files an in-place edit of a
page's metadata counts for the choice from the next full walk, at most a minute
later; additions, removals and replacements at once), while every byte copied is
read from the store there and then, without following any symlink.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Sequence
from pathlib import Path

from memoryfs.errors import MemoryFSError
from memoryfs.index.catalog import FileRow
from memoryfs.read.sandbox import (
    MANIFEST,
    RECALL,
    ManifestEntry,
    MaterializeResult,
    Origin,
    blob_hash,
    load_manifest,
    locked,
    sandbox_root,
    sync,
)
from memoryfs.read.search import SearchIndex
from memoryfs.store.scan import read_file
from memoryfs.store.store import Store

__all__ = [
    "MANIFEST",
    "GENERATED",
    "ManifestEntry",
    "MaterializeResult",
    "materialize",
    "add_files",
    "fill_budget",
    "plan_working_set",
    "blob_hash",
]

GENERATED = ("INDEX.md", "sessions/index.md")  # the maps, relative to memory/
_MAX_MISSES = 200


def plan_working_set(rows: Sequence[FileRow], budget_bytes: int) -> list[tuple[str, str]]:
    """(path relative to memory/, reason) of the pages that fill ``budget_bytes``.

    Preference pages first, then one at a time from each queue in turn (most
    linked, most recently updated, most recent session summaries, notes); a page
    that does not fit is skipped and the next one tried.
    """
    pages = [r for r in rows if r.kind == "page" and r.layer == "knowledge"]
    prefs = sorted((r for r in pages if r.preference), key=lambda r: (_neg(r.updated), r.path))
    others = [r for r in pages if not r.preference]
    queues: list[tuple[str, list[FileRow]]] = [
        (
            "most-linked",
            sorted(
                (r for r in others if r.inbound),
                key=lambda r: (-r.inbound, _neg(r.updated), r.path),
            ),
        ),
        ("recently-updated", sorted(others, key=lambda r: (_neg(r.updated), r.path))),
        (
            "recent-session",
            sorted((r for r in rows if r.kind == "summary"), key=lambda r: (_neg(r.date), r.path)),
        ),
        (
            "note",
            sorted(
                (r for r in rows if r.layer == "notes" and r.kind == "page"),
                key=lambda r: (_neg(r.updated), r.path),
            ),
        ),
    ]
    sizes = {r.path: r.size for r in rows}
    return fill_budget(
        [r.path for r in prefs],
        [(reason, [r.path for r in queue]) for reason, queue in queues],
        sizes.__getitem__,
        budget_bytes,
    )


def fill_budget(
    first: Sequence[str],
    queues: Sequence[tuple[str, Sequence[str]]],
    size: Callable[[str], int],
    budget_bytes: int,
    max_misses: int = _MAX_MISSES,
) -> list[tuple[str, str]]:
    """(path, reason) of the pages that fill ``budget_bytes``: every page of ``first``
    that fits (reason ``preference``), then one at a time from each queue in turn
    (``(reason, paths best first)``); a page that does not fit is skipped and the next
    one tried, until every queue is done or ``max_misses`` pages did not fit."""
    chosen: list[tuple[str, str]] = []
    used = 0
    taken: set[str] = set()
    misses = 0

    def take(path: str, reason: str) -> None:
        nonlocal used, misses
        if path in taken:
            return
        got = size(path)
        if used + got > budget_bytes:
            misses += 1
            return
        taken.add(path)
        chosen.append((path, reason))
        used += got

    for path in first:
        take(path, "preference")
    cursors = [0] * len(queues)
    while misses < max_misses and any(
        c < len(q) for c, (_, q) in zip(cursors, queues, strict=True)
    ):
        for i, (reason, queue) in enumerate(queues):
            while cursors[i] < len(queue) and queue[cursors[i]] in taken:
                cursors[i] += 1
            if cursors[i] < len(queue):
                take(queue[cursors[i]], reason)
                cursors[i] += 1
    return chosen


def _neg(date: str) -> str:
    # Sort newest first with a plain string key: invert each digit.
    return date.translate(str.maketrans("0123456789", "9876543210")) if date else "~"


def materialize(store: Store, sandbox: Path, budget_bytes: int | None = None) -> MaterializeResult:
    """Write INDEX.md and the working set into ``sandbox``; incremental on re-runs."""
    budget = store.config.budgets.materialize_bytes if budget_bytes is None else budget_bytes
    if budget < 0:
        raise MemoryFSError("the byte budget must not be negative")
    root = sandbox_root(sandbox, store.root)
    with locked(root):
        with SearchIndex.open(store) as idx:
            idx.refresh_for_read()
            # Enough candidates of each kind to fill the budget with small pages.
            rows = idx.candidates(min(budget // 500 + 50, 20_000))
        # The two generated maps always go, outside the budget: without them an
        # agent cannot tell what else to ask for.
        plan = [(rel, "index") for rel in GENERATED if _size(store, rel) >= 0]
        plan += plan_working_set(rows, budget)
        old = load_manifest(root)
        wanted: dict[str, str] = {f"memory/{rel}": reason for rel, reason in plan}
        for path, entry in old.items():
            if entry.reason == RECALL:  # on-demand files stay until the store deletes them
                wanted[path] = RECALL
        return sync(_origin(store), root, wanted, old, budget, prune=True)


def add_files(
    store: Store, sandbox: Path, paths: Sequence[str], reason: str = RECALL
) -> MaterializeResult:
    """Add files (relative to memory/) to a sandbox, keeping what is already there."""
    root = sandbox_root(sandbox, store.root)
    with locked(root):
        old = load_manifest(root)
        wanted = {path: entry.reason for path, entry in old.items()}
        for rel in paths:
            wanted.setdefault(f"memory/{rel}", reason)
        budget = store.config.budgets.materialize_bytes
        return sync(_origin(store), root, wanted, old, budget, prune=False)


# -- store side -----------------------------------------------------------------


def _origin(store: Store) -> Origin:
    return Origin(
        read=lambda rel: _read_source(store, rel),
        commit=store.head(),
        config=store.config,
        where={"store": str(store.root)},
    )


def _read_source(store: Store, rel: str) -> bytes | None:
    """A store file's bytes, or None if missing, too large, or reached through a symlink."""
    got = read_file(store.memory, rel, store.config.budgets.max_file_bytes)
    return None if got is None or got.oversize else got.data


def _size(store: Store, rel: str) -> int:
    try:
        st = os.lstat(store.memory / rel)
    except OSError:
        return -1
    return st.st_size if stat.S_ISREG(st.st_mode) else -1
