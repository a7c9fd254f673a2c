"""Gate 1, deterministic validation: ``memoryfs validate`` on the staged tree.

A run changes a few files of a large store, so by default the gate validates a
*view* of the staged tree rather than all of it: every page of ``knowledge/`` and
``notes/`` (ids, aliases and links are cross-page rules), each changed file, the
transcripts those cite or summarize, and the deletion log. Unchanged pages enter
the view as stubs (their id, title, type, updated and aliases; no body) unless a
page was deleted or changed its id or aliases, when links elsewhere may have
broken and they enter whole. The view is built from
hard links, so it costs no copying, and ``memoryfs.validate.validate_store`` runs on
it unchanged. Of its findings on unchanged pages only the cross-page ones
(duplicate ids, aliases, dangling links) are kept: the view holds no transcripts for
their citations. For whatever a run can change this gives the same findings as
validating the whole tree; what it leaves out (unchanged pages' own rules,
unchanged summaries, uncited transcripts) a run cannot break. A change to anything
else (a transcript, the deletion log, ``memory.toml``, a symlink) falls back to the
whole tree.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from dream.gates import GateReport, Problem, base_page, staged_page
from dream.staging import Change, run_git
from memoryfs.page import Page, render_meta, split_frontmatter
from memoryfs.store import Store
from memoryfs.validate import Finding, validate_store

__all__ = ["validate_stage", "VIEW_PREFIX"]

GATE = "validation"
VIEW_PREFIX = ".view-"
_PAGE_DIRS = ("memory/knowledge/", "memory/notes/")
_INCREMENTAL = (
    *_PAGE_DIRS,
    "memory/sessions/summaries/",
    "memory/INDEX.md",
    "memory/sessions/index.md",
)
_CROSS_PAGE = {"MF007", "MF008", "MF201"}  # duplicate id, alias = another id, dangling link
_STUB_ORDER = ("id", "title", "type", "aliases", "updated")
_STUB_KEYS = set(_STUB_ORDER)
_TOP_KEY_RE = re.compile(r"^['\"]?([A-Za-z_][\w-]*)['\"]?\s*:")
_REF_RE = re.compile(r"^sessions/transcripts/([^/#]+\.md)#")
_SUMMARIES = "memory/sessions/summaries/"
_TRANSCRIPTS = "memory/sessions/transcripts/"
_GENERATED = ("memory/INDEX.md", "memory/sessions/index.md")


def validate_stage(
    store: Store, stage_root: Path, changes: list[Change], full: bool = False, base: str = ""
) -> GateReport:
    """Validate the staged tree at ``stage_root`` (which started from ``base``); only the
    changed part unless ``full``."""
    if full or not _incremental_ok(stage_root, changes):
        findings = validate_store(store, root=stage_root)
        return _report(findings, checked=-1)
    plan = _plan(store, stage_root, base, changes)
    view = Path(tempfile.mkdtemp(prefix=VIEW_PREFIX, dir=stage_root.parent))
    try:
        checked = _build_view(store, stage_root, view, changes, plan, base)
        findings = validate_store(store, root=view)
    finally:
        shutil.rmtree(view, ignore_errors=True)
    # An unchanged page is in the view for the cross-page rules only (its citations'
    # transcripts are not): keep what those rules say about it, nothing else. Nor are
    # the transcripts of a changed page's unchanged sources: "no transcript" for those
    # is the view's doing, not the run's.
    changed = {c.path for c in changes}
    unseen = {f"source ref {ref!r}" for ref in plan.unseen_refs}
    kept = [
        f
        for f in findings
        if (f.path in changed or f.code in _CROSS_PAGE)
        and not (f.code == "MF107" and f.message.partition(": no transcript")[0] in unseen)
    ]
    return _report(kept, checked=checked)


@dataclass
class _Plan:
    stubs: bool = True  # unchanged pages enter as stubs
    transcripts: set[str] = field(default_factory=set)  # memory/... transcripts to include
    unseen_refs: set[str] = field(default_factory=set)  # unchanged sources left unchecked


def _plan(store: Store, stage_root: Path, base: str, changes: list[Change]) -> _Plan:
    """What the view needs: whole pages or stubs, and which transcripts.

    Unchanged pages can be stubs unless a page left or a changed page dropped its id
    or an alias (links elsewhere may have broken). A changed page needs the
    transcripts of its new or changed sources; an entry unchanged since the base
    (same ref, same hash) was checked when the base was made, and transcripts only
    grow, so a hub page citing every session does not pull in every transcript.
    """
    plan = _Plan(stubs=bool(base))
    skipped: dict[str, str] = {}  # ref -> its transcript
    for change in changes:
        path = change.path
        in_pages = path.startswith(_PAGE_DIRS)
        if change.status == "D":
            plan.stubs = plan.stubs and not in_pages
            continue
        if path.startswith(_SUMMARIES) and path.endswith(".md"):
            plan.transcripts.add(_TRANSCRIPTS + path.rsplit("/", 1)[1])
        if not path.endswith(".md") or path in _GENERATED:
            continue
        new = staged_page(stage_root, path)
        old = base_page(store, base, path) if base and change.status == "M" else None
        if in_pages and change.status == "M" and not _keeps_keys(old, new):
            plan.stubs = False
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


def _keeps_keys(old: Page | None, new: Page | None) -> bool:
    """The page kept its id and every alias (adding aliases breaks no link)."""
    if old is None or new is None or old.id != new.id:
        return False
    return {a.lower() for a in old.aliases} <= {a.lower() for a in new.aliases}


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


def _link(src: Path, dst: Path) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(src, dst, follow_symlinks=False)
    except OSError:
        shutil.copy2(src, dst, follow_symlinks=False)


def _build_view(
    store: Store, stage_root: Path, view: Path, changes: list[Change], plan: _Plan, base: str
) -> int:
    """Link what the changed files depend on into ``view``; returns the file count."""
    pages: set[str] = set()
    for top in _PAGE_DIRS:
        folder = stage_root / top
        for dirpath, dirnames, filenames in os.walk(folder):
            dirnames[:] = [d for d in dirnames if not d.startswith(".")]
            rel_dir = Path(dirpath).relative_to(stage_root).as_posix()
            pages.update(f"{rel_dir}/{name}" for name in filenames if name.endswith(".md"))
    wanted = {"memory/deletions.jsonl", *plan.transcripts}
    wanted.update(c.path for c in changes if c.status != "D")
    (view / "memory").mkdir(parents=True, exist_ok=True)
    count = 0
    stubs = _Stubs(store, base) if base else None
    for rel in sorted(pages - wanted):
        stub = stubs.get(stage_root, rel) if stubs is not None and plan.stubs else None
        _link(stub or stage_root / rel, view / rel)
        count += 1
    if stubs is not None:
        for change in changes:
            if change.status != "D" and change.path in pages:
                stubs.learn(stage_root, change.path)
        stubs.prune()
    for rel in sorted(wanted):
        src = stage_root / rel
        if src.is_file() or src.is_symlink():
            _link(src, view / rel)
            count += 1
    return count


class _Stubs:
    """Stub files of pages, kept by Git blob id in ``.memoryfs/dream-stubs/<blob>.md``.

    An unchanged page is the base's blob, and a blob id names exact content, so a
    stub is never stale; deleting the folder only costs time. The view hard-links
    them: on the file systems measured, creating a file costs 50 times a link.
    """

    def __init__(self, store: Store, base: str) -> None:
        self.folder = store.cache_dir / "dream-stubs"
        self.folder.mkdir(parents=True, exist_ok=True)
        listing = run_git(store.root, "ls-tree", "-r", "-z", base, "--", *_PAGE_DIRS, check=False)
        self.blobs: dict[str, str] = {}
        for entry in listing.split("\0"):
            meta, _, rel = entry.partition("\t")
            parts = meta.split()
            if len(parts) == 3 and parts[1] == "blob":
                self.blobs[rel] = parts[2]
        self.used: set[str] = set()

    def get(self, stage_root: Path, rel: str) -> Path | None:
        """The stub of the unchanged page ``rel``; None when it must enter whole."""
        blob = self.blobs.get(rel)
        if blob is None:
            return None
        path = self.folder / f"{blob}.md"
        if not path.exists():
            text = _stub(stage_root / rel)
            if text is None:
                return None
            self._write(path, text)
        self.used.add(path.name)
        return path

    def learn(self, stage_root: Path, rel: str) -> None:
        """Keep the stub of a changed page (the gates parsed it already): the next
        run's unchanged pages are this run's changed ones."""
        try:
            data = (stage_root / rel).read_bytes()
        except OSError:
            return
        blob = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()  # git's blob id
        path = self.folder / f"{blob}.md"
        if not path.exists():
            page = staged_page(stage_root, rel)
            if page is None or not isinstance(page.meta.get("id"), str):
                return
            meta = {k: page.meta[k] for k in _STUB_ORDER if k in page.meta}
            self._write(path, f"---\n{render_meta(meta)}---\n")
        self.used.add(path.name)

    def _write(self, path: Path, text: str) -> None:
        tmp = path.with_suffix(".tmp")
        with contextlib.suppress(OSError):  # a cache: losing a write only costs time
            tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, path)

    def prune(self) -> None:
        """Drop stubs no page of this tree uses, once they outnumber the used ones."""
        names = os.listdir(self.folder)
        if len(names) > 2 * len(self.used) + 100:
            for name in names:
                if name not in self.used:
                    with contextlib.suppress(OSError):
                        os.unlink(self.folder / name)


def _stub(path: Path) -> str | None:
    """An unchanged page cut to the keys the cross-page rules read (id, aliases and the
    required keys), without its body; None when that cannot be done safely."""
    try:
        parts = split_frontmatter(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return None
    if parts is None:
        return None
    kept: list[str] = []
    keep = False
    for line in parts[0].split("\n"):
        top = _TOP_KEY_RE.match(line)
        if top:
            keep = top.group(1) in _STUB_KEYS
        elif line and not line[0].isspace() and not line.startswith("- "):
            return None  # not plain block YAML: validate the whole page instead
        if keep:
            kept.append(line)
    stub = "\n".join(kept).rstrip("\n") + "\n"
    try:
        meta = yaml.safe_load(stub)
    except yaml.YAMLError:
        return None
    if not isinstance(meta, dict) or not isinstance(meta.get("id"), str):
        return None
    return f"---\n{stub}---\n"
