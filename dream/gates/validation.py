"""Gate 1, deterministic validation: ``memoryfs validate`` on the staged tree.

A run changes a few files of a large store, so by default the gate validates what
changed rather than all of it (``memoryfs.validate.rules.validate_files``): each changed
file whole, the transcripts its new or changed citations name, and the deletion log;
every other page of ``knowledge/`` and ``notes/`` takes part in the cross-page rules
(duplicate ids, an alias that is another page's id, links that resolve to no page)
through its keys: id, aliases and link targets, kept by Git blob id in SQLite and asked
there (``dream.gates.pagekeys``; deleting the cache costs one slow run). An unchanged
page whose links a run broke (a page deleted, renamed, or an alias dropped), or whose id
or alias now clashes, is read and validated whole, so the finding carries its line; of
its findings only the cross-page ones are kept (its citations' transcripts are not
read). An uncited factual line (MF110) counts only when the run wrote it: one its base
already held is ``memoryfs validate``'s to report. For whatever a run can change this
gives the findings of validating the whole tree; what it leaves out (unchanged pages'
own rules, unchanged summaries, uncited transcripts) a run cannot break. A change to
anything else (a transcript, the deletion log, ``memory.toml``, a symlink) validates the
whole tree.

A run that changes many files (a full run writes every page, note and summary) is
validated ``SLICE_FILES`` at a time, with the rules of ``memoryfs validate``: the changed
pages' keys join the page-key cache, each slice's pages leave it while they are read,
every transcript is read once for all the slices, and a finding two slices make is
reported once.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from dream.gates import (
    GENERATED,
    GateReport,
    Problem,
    base_page,
    source_entries,
    staged_page,
)
from dream.gates.pagekeys import PageKeyCache, with_page_keys
from dream.landing.staging import Change
from memoryfs.pages.page import Page
from memoryfs.store.store import Store
from memoryfs.validate.read import TurnHashes
from memoryfs.validate.rules import Finding, validate_files, validate_store

__all__ = ["validate_stage"]

GATE = "validation"
_PAGE_DIRS = ("memory/knowledge/", "memory/notes/")
_INCREMENTAL = (
    *_PAGE_DIRS,
    "memory/sessions/summaries/",
    "memory/INDEX.md",
    "memory/sessions/index.md",
)
_CROSS_PAGE = {"MF007", "MF008", "MF201"}  # duplicate id, alias = another id, dangling link
_REF_RE = re.compile(r"^sessions/transcripts/([^/#]+\.md)#")
_SUMMARIES = "memory/sessions/summaries/"
_TRANSCRIPTS = "memory/sessions/transcripts/"
# Changed files validated at once. What validation keeps of each file read (its id,
# aliases and links) lasts until the cross-page rules ran, so a full run's every page,
# note and summary at once (50,000 files at 8,000 synthetic sessions) would hold tens of
# MB (one pass at 8,000 synthetic sessions: 143 MB against the run's 94 MB peak); a slice
# holds a bounded share. A night's run is one slice. No cross-page rule depends on which
# pages a slice read, so the slices find what one pass does.
SLICE_FILES = 1_000


def validate_stage(
    store: Store, stage_root: Path, changes: Sequence[Change], full: bool = False, base: str = ""
) -> GateReport:
    """Validate the staged tree at ``stage_root`` (which started from ``base``); only the
    changed part unless ``full``."""
    if full or not base or not _incremental_ok(stage_root, changes):
        findings = validate_store(store, root=stage_root)
        return _report(_written_lines(store, stage_root, base, changes, findings), checked=-1)
    plan = _plan(store, stage_root, base, changes)
    changed = {c.path for c in changes}
    written = sorted(c.path for c in changes if c.status != "D")
    deletions = "memory/deletions.jsonl"
    transcripts: dict[str, TurnHashes | None] = {}  # read once, shared by the slices

    def check(keys: PageKeyCache) -> tuple[list[Finding], int]:
        keys.list_tree(store, base, stage_root, changed)
        others = keys.size()
        keys.add_changed(stage_root, (p for p in written if p.startswith(_PAGE_DIRS)))
        found: dict[Finding, None] = {}
        first = sorted(plan.transcripts)  # read in the first slice, for every slice
        for start in range(0, max(len(written), 1), SLICE_FILES):
            part = written[start : start + SLICE_FILES]
            rels = [f.removeprefix("memory/") for f in [*first, *part, deletions]]
            for f in validate_files(
                store, stage_root, rels, keys, unread_refs=plan.unseen_refs, transcripts=transcripts
            ):
                # a page of another slice, read here for the cross-page rules (as an
                # unchanged page is), is found as its own slice finds it: once
                found.setdefault(f, None)
            keys.restore()
            first = []
        keys.save()
        return sorted(found, key=lambda f: (f.path, f.line, f.code, f.message)), others

    findings, others = with_page_keys(store, check)
    # An unchanged page is read only for the cross-page rules (its citations' transcripts
    # are not): keep what those rules say about it, nothing else. Nor are the transcripts
    # of a changed page's unchanged sources read (``unread_refs``): "no transcript" for
    # those would be the gate's doing, not the run's, and is never reported.
    kept = [f for f in findings if f.path in changed or f.code in _CROSS_PAGE]
    kept = _written_lines(store, stage_root, base, changes, kept)
    unchanged = sum(1 for t in plan.transcripts if t not in changed)
    return _report(kept, checked=len(written) + unchanged + 1 + others)


def _written_lines(
    store: Store, stage_root: Path, base: str, changes: Sequence[Change], found: list[Finding]
) -> list[Finding]:
    """``found`` less the uncited lines (MF110) the run did not write: on a file it did
    not change, or a line its base already held (written before the rule, or by hand).
    Those are ``memoryfs validate``'s to report; leaving the page out for them would
    keep every later update off it."""
    if not any(f.code == "MF110" for f in found):
        return found
    status = {c.path: c.status for c in changes if c.path in {f.path for f in found}}
    held: dict[str, tuple[list[str], set[str]]] = {}  # path -> (staged lines, base lines)

    def written(f: Finding) -> bool:
        if f.path not in status:
            return False
        if f.path not in held:
            try:
                lines = (stage_root / f.path).read_text(encoding="utf-8").split("\n")
            except (OSError, UnicodeDecodeError):
                lines = []
            old = base_page(store, base, f.path) if base and status[f.path] == "M" else None
            held[f.path] = (lines, set(old.body.split("\n")) if old is not None else set())
        lines, old_lines = held[f.path]
        return not 0 < f.line <= len(lines) or lines[f.line - 1] not in old_lines

    return [f for f in found if f.code != "MF110" or written(f)]


@dataclass
class _Plan:
    transcripts: set[str] = field(default_factory=set)  # memory/... transcripts to include
    unseen_refs: set[str] = field(default_factory=set)  # unchanged sources left unchecked


def _plan(store: Store, stage_root: Path, base: str, changes: Sequence[Change]) -> _Plan:
    """Which transcripts the changed files need.

    A changed page needs the transcripts of its new or changed sources; an entry
    unchanged since the base (same ref, same hash) was checked when the base was made,
    and transcripts only
    grow, so a hub page citing every session does not pull in every transcript.
    """
    plan = _Plan()
    skipped: dict[str, str] = {}  # ref -> its transcript
    for change in changes:
        path = change.path
        if change.status == "D":
            continue
        if path.startswith(_SUMMARIES) and path.endswith(".md"):
            plan.transcripts.add(_TRANSCRIPTS + path.rsplit("/", 1)[1])
        if not path.endswith(".md") or path in GENERATED:
            continue
        new = staged_page(stage_root, path)
        old = base_page(store, base, path) if base and change.status == "M" else None
        old_entries = _entries(old) if old is not None else set()
        for ref, digest in _entries(new) if new is not None else set():
            m = _REF_RE.match(ref)
            if m is None or "/" in m.group(1) or ".." in m.group(1):
                continue
            transcript = _TRANSCRIPTS + m.group(1)
            if (ref, digest) in old_entries:
                skipped[ref] = transcript
            else:
                plan.transcripts.add(transcript)
    plan.unseen_refs = {ref for ref, t in skipped.items() if t not in plan.transcripts}
    return plan


def _entries(page: Page) -> set[tuple[str, str]]:
    """(ref, hash) of each source entry."""
    return {(ref, digest) for _, ref, digest in source_entries(page)}


def _report(findings: list[Finding], checked: int) -> GateReport:
    problems = tuple(
        Problem(GATE, f.path, f.line, f.code, f"{f.message} ({f.hint})") for f in findings
    )
    return GateReport(gate=GATE, problems=problems, checked=checked)


def _incremental_ok(stage_root: Path, changes: Sequence[Change]) -> bool:
    for change in changes:
        if not change.path.startswith(_INCREMENTAL):
            return False
        if os.path.islink(stage_root / change.path):
            return False
    return True
