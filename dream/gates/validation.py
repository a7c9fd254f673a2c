"""Gate 1, deterministic validation: ``memoryfs validate`` on the staged tree.

A run changes a few files of a large store, so by default the gate validates what
changed rather than all of it (``memoryfs.validate.validate_files``): each changed
file whole, the transcripts its new or changed citations name, and the deletion log;
every other page of ``knowledge/`` and ``notes/`` takes part in the cross-page rules
(duplicate ids, an alias that is another page's id, links that resolve to no page)
through its keys: id, aliases and link targets. An unchanged page is the base commit's
blob, so its keys are kept by Git blob id in ``.memoryfs/dream-page-keys.json`` (a blob
id names exact content: the cache is never stale, and deleting it costs one slow run).
An unchanged page whose links a run broke (a page deleted, renamed, or an alias
dropped), or whose id or alias now clashes, is read and validated whole, so the finding
carries its line; of its findings only the cross-page ones are kept (its citations'
transcripts are not read). For whatever a run can change this gives the findings of
validating the whole tree; what it leaves out (unchanged pages' own rules, unchanged
summaries, uncited transcripts) a run cannot break. A change to anything else (a
transcript, the deletion log, ``memory.toml``, a symlink) validates the whole tree.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dream.gates import GateReport, Problem, base_page, parse_staged, staged_page
from dream.staging import Change, run_git
from memoryfs.atomic import atomic_write_text
from memoryfs.page import Page
from memoryfs.store import Store
from memoryfs.validate import Finding, PageKeys, page_keys, validate_files, validate_store

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
_KEYS_CACHE = "dream-page-keys.json"
_KEYS_VERSION = 1
_REF_RE = re.compile(r"^sessions/transcripts/([^/#]+\.md)#")
_SUMMARIES = "memory/sessions/summaries/"
_TRANSCRIPTS = "memory/sessions/transcripts/"
_GENERATED = ("memory/INDEX.md", "memory/sessions/index.md")


def validate_stage(
    store: Store, stage_root: Path, changes: list[Change], full: bool = False, base: str = ""
) -> GateReport:
    """Validate the staged tree at ``stage_root`` (which started from ``base``); only the
    changed part unless ``full``."""
    if full or not base or not _incremental_ok(stage_root, changes):
        findings = validate_store(store, root=stage_root)
        return _report(findings, checked=-1)
    plan = _plan(store, stage_root, base, changes)
    keys = _PageKeysCache(store, base)
    changed = {c.path for c in changes}
    others = keys.unchanged(stage_root, changed)
    files = {c.path for c in changes if c.status != "D"} | plan.transcripts
    files.add("memory/deletions.jsonl")
    rels = [f.removeprefix("memory/") for f in files]
    findings = validate_files(
        store, stage_root, rels, others, parse=parse_staged, unread_refs=plan.unseen_refs
    )
    for change in changes:
        if change.status != "D" and change.path.startswith(_PAGE_DIRS):
            keys.learn(stage_root, change.path)
    keys.save()
    # An unchanged page is read only for the cross-page rules (its citations' transcripts
    # are not): keep what those rules say about it, nothing else. Nor are the transcripts
    # of a changed page's unchanged sources read (``unread_refs``): "no transcript" for
    # those would be the gate's doing, not the run's, and is never reported.
    kept = [f for f in findings if f.path in changed or f.code in _CROSS_PAGE]
    return _report(kept, checked=len(files) + len(others))


@dataclass
class _Plan:
    transcripts: set[str] = field(default_factory=set)  # memory/... transcripts to include
    unseen_refs: set[str] = field(default_factory=set)  # unchanged sources left unchecked


def _plan(store: Store, stage_root: Path, base: str, changes: list[Change]) -> _Plan:
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
        if not path.endswith(".md") or path in _GENERATED:
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
    return {(s.ref, s.hash) for s in page.sources}


def _report(findings: list[Finding], checked: int) -> GateReport:
    problems = tuple(
        Problem(GATE, f.path, f.line, f.code, f"{f.message} ({f.hint})") for f in findings
    )
    return GateReport(gate=GATE, problems=problems, checked=checked)


def _incremental_ok(stage_root: Path, changes: list[Change]) -> bool:
    for change in changes:
        if not change.path.startswith(_INCREMENTAL):
            return False
        if os.path.islink(stage_root / change.path):
            return False
    return True


class _PageKeysCache:
    """The keys of pages (``memoryfs.validate.PageKeys``) by Git blob id, in
    ``.memoryfs/dream-page-keys.json``; ``save`` keeps those of the current tree."""

    def __init__(self, store: Store, base: str) -> None:
        self.path = store.cache_dir / _KEYS_CACHE
        listing = run_git(store.root, "ls-tree", "-r", "-z", base, "--", *_PAGE_DIRS, check=False)
        self.blobs: dict[str, str] = {}  # memory/... -> blob id, in the base
        for entry in listing.split("\0"):
            meta, _, rel = entry.partition("\t")
            parts = meta.split()
            if len(parts) == 3 and parts[1] == "blob" and rel.endswith(".md"):
                self.blobs[rel] = parts[2]
        self.old: dict[str, Any] = {}
        with contextlib.suppress(OSError, ValueError):
            data = json.loads(self.path.read_text(encoding="utf-8"))
            if isinstance(data, dict) and data.get("version") == _KEYS_VERSION:
                self.old = data.get("keys") or {}
        self.used: dict[str, Any] = {}
        # a cache of an earlier gate design: stub files, one per page
        shutil.rmtree(store.cache_dir / "dream-stubs", ignore_errors=True)

    def unchanged(self, stage_root: Path, changed: set[str]) -> dict[str, PageKeys]:
        """Keys of the base's pages that the run left alone, by path relative to memory/."""
        out: dict[str, PageKeys] = {}
        for rel, blob in self.blobs.items():
            if rel in changed:
                continue
            raw = self.old.get(blob)
            keys = _decode(raw) if raw is not None else _read_keys(stage_root, rel)
            if keys is None:
                continue  # unreadable: it was so in the base too (validated when it came)
            self.used[blob] = raw if raw is not None else _encode(keys)  # not a second copy
            out[rel.removeprefix("memory/")] = keys
        return out

    def learn(self, stage_root: Path, rel: str) -> None:
        """Keep a changed page's keys (parsed already): the next run's unchanged pages are
        this run's changed ones."""
        try:
            data = (stage_root / rel).read_bytes()
        except OSError:
            return
        blob = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()  # git's blob id
        if blob not in self.used:
            keys = _read_keys(stage_root, rel)
            if keys is not None:
                self.used[blob] = _encode(keys)

    def save(self) -> None:
        if self.used == self.old:
            return
        with contextlib.suppress(OSError):  # a cache: losing a write only costs time
            atomic_write_text(
                self.path,
                json.dumps({"version": _KEYS_VERSION, "keys": self.used}, separators=(",", ":")),
            )


def _read_keys(stage_root: Path, rel: str) -> PageKeys | None:
    page = staged_page(stage_root, rel)
    return page_keys(page) if page is not None and isinstance(page.meta.get("id"), str) else None


def _encode(keys: PageKeys) -> list[Any]:
    return [keys.id, list(keys.aliases), list(keys.links)]


def _decode(raw: Any) -> PageKeys | None:
    if not (isinstance(raw, list) and len(raw) == 3 and isinstance(raw[0], str)):
        return None
    return PageKeys(id=raw[0], aliases=tuple(raw[1]), links=tuple(raw[2]))
