"""``memoryfs validate``: the deterministic gate over a store tree.

One pass over ``memory/`` reads and parses every file once (transcripts are kept
for the citation checks), then the cross-file rules run on what was parsed. A
malformed file is a finding, never a traceback. ``root`` lets Dream validate a
staged worktree with the live store's config. Findings are sorted by (path, line,
code); each has a stable code (the table is in ``memoryfs.findings``), a message
and a one-line fix hint. The deletion log's rules live in ``memoryfs.tombstones``.

``deletions.jsonl`` lines: ``{"kind": "page"|"session", "id": ...}`` or
``{"kind": "phrase", "hash": H, "words": N}`` with H = ``phrase_hash`` of the N
``normalize_words``. Transcripts are not searched for phrases: ``forget`` redacts
them in its own commit, and validation guards what Dream writes.
"""

from __future__ import annotations

import datetime as _dt
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memoryfs.errors import PageError
from memoryfs.findings import CODES, Finding
from memoryfs.links import extract
from memoryfs.page import REQUIRED_KEYS, Page, parse_page, split_frontmatter
from memoryfs.store import Store
from memoryfs.tombstones import normalize_words, phrase_hash, tombstone_findings
from memoryfs.transcript import Transcript, parse_transcript

__all__ = ["CODES", "Finding", "validate_store", "normalize_words", "phrase_hash"]

_PAGE_LAYERS = ("knowledge/", "notes/")
_SUMMARIES = "sessions/summaries/"
_TRANSCRIPTS = "sessions/transcripts/"
_NOT_PAGES = {"INDEX.md", "sessions/index.md"}
_REF_RE = re.compile(r"^sessions/transcripts/([^/#]+)\.md#(t\d+)$")
_HASH_RE = re.compile(r"^[0-9a-f]{4,64}$")
_SCHEME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://|^(?:file|data|javascript|mailto):", re.I)
_WORD_RE = re.compile(r"\w+")
_LINE_PREFIX_RE = re.compile(r"^(\d+): ")
_STATUSES = ("current", "superseded")


@dataclass
class _Run:
    store: Store
    root: Path
    findings: list[Finding] = field(default_factory=list)
    pages: dict[str, Page] = field(default_factory=dict)  # knowledge/ + notes/, by rel path
    summaries: dict[str, Page] = field(default_factory=dict)
    texts: dict[str, str] = field(default_factory=dict)  # every decoded file, by rel path
    transcripts: dict[str, Transcript | None] = field(default_factory=dict)  # None: unreadable
    page_files: list[str] = field(default_factory=list)  # knowledge/ + notes/, parsed or not
    deletions: str | None = None

    def add(self, rel: str, line: int, code: str, message: str) -> None:
        self.findings.append(Finding(f"memory/{rel}", line, code, message, CODES[code]))

    def at_key(self, rel: str, key: str, code: str, message: str) -> None:
        """A finding on the line of a top-level frontmatter key (1 when absent)."""
        self.add(rel, _key_line(self.texts[rel], key), code, message)


def validate_store(store: Store, root: Path | None = None) -> list[Finding]:
    """Validate the store's tree (or the same layout under ``root``) and return the findings."""
    run = _Run(store=store, root=Path(root) if root is not None else store.root)
    mem = run.root / "memory"
    if mem.is_symlink():
        run.findings.append(Finding("memory", 0, "MF302", "memory/ is a symlink", CODES["MF302"]))
        return run.findings
    if not mem.is_dir():
        run.findings.append(Finding("memory", 0, "MF306", "no memory/ folder", CODES["MF306"]))
        return run.findings
    _walk(run, mem)
    _check_pages(run)
    if run.deletions:
        _check_deletions(run, run.deletions)
    return sorted(run.findings, key=lambda f: (f.path, f.line, f.code, f.message))


# -- pass 1: read every file once ------------------------------------------------


def _walk(run: _Run, mem: Path) -> None:
    """Read every file under ``mem`` once; symlinks are checked, never followed."""
    real_root = os.path.realpath(run.root)
    stack = [(mem, "")]
    while stack:
        folder, prefix = stack.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            rel = prefix + entry.name
            if entry.is_symlink():
                target, shown = os.path.realpath(entry.path), os.readlink(entry.path)
                if os.path.commonpath([real_root, target]) != real_root:
                    run.add(rel, 0, "MF302", f"symlink points outside the store ({shown})")
                elif not os.path.exists(target):
                    run.add(rel, 0, "MF303", f"broken symlink ({shown})")
            elif entry.is_dir(follow_symlinks=False):
                stack.append((Path(entry.path), rel + "/"))
            elif entry.is_file(follow_symlinks=False) and not _hidden(rel):
                _read(run, Path(entry.path), rel)


def _stem(rel: str) -> str:
    return rel.rsplit("/", 1)[-1].removesuffix(".md")


def _hidden(rel: str) -> bool:
    return any(part.startswith(".") for part in rel.split("/"))


def _read(run: _Run, path: Path, rel: str) -> None:
    kind = _kind(rel)
    if kind is None:
        return
    if kind == "page":
        run.page_files.append(rel)
    elif kind == "transcript":
        run.transcripts[rel] = None  # until it parses
    limit = run.store.config.budgets.max_file_bytes
    try:
        size = path.stat().st_size
        data = path.read_bytes() if size <= limit else b""
    except OSError:
        return  # vanished or unreadable mid-walk
    if size > limit:
        run.add(rel, 0, "MF305", f"file is {size} bytes, over the {limit} byte limit")
        return
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        run.add(rel, line, "MF304", f"not valid UTF-8 (byte {exc.start})")
        return
    run.texts[rel] = text
    if kind == "deletions":
        run.deletions = text
    elif kind == "transcript":
        run.transcripts[rel] = _read_transcript(run, rel, text)
    else:
        try:
            page = parse_page(text, rel)
        except PageError as exc:
            _frontmatter_finding(run, rel, text, str(exc))
            return
        (run.pages if kind == "page" else run.summaries)[rel] = page


def _kind(rel: str) -> str | None:
    if rel == "deletions.jsonl":
        return "deletions"
    if not rel.endswith(".md") or rel in _NOT_PAGES:
        return None
    if rel.startswith(_PAGE_LAYERS):
        return "page"
    if rel.startswith(_SUMMARIES) and rel.count("/") == 2:
        return "summary"
    if rel.startswith(_TRANSCRIPTS) and rel.count("/") == 2:
        return "transcript"
    return None


def _frontmatter_finding(run: _Run, rel: str, text: str, message: str) -> None:
    message = message.removeprefix(f"{rel}: ")
    if split_frontmatter(text) is None:
        run.add(rel, 1, "MF001", "no YAML frontmatter")
    elif "must be a mapping" in message:
        run.add(rel, 2, "MF003", "frontmatter is not a mapping of keys to values")
    else:
        m = re.search(r"at frontmatter line (\d+)", message)
        run.add(rel, int(m.group(1)) if m else 1, "MF002", message)


def _read_transcript(run: _Run, rel: str, text: str) -> Transcript | None:
    try:
        t = parse_transcript(text, rel)
    except PageError as exc:
        try:
            parse_page(text, rel)
        except PageError as page_exc:
            _frontmatter_finding(run, rel, text, str(page_exc))
            return None
        message = str(exc).removeprefix(rel).removeprefix(": ").removeprefix(":")
        m = _LINE_PREFIX_RE.match(message)
        key = re.match(r"frontmatter '(\w+)'", message)
        line = int(m.group(1)) if m else _key_line(text, key.group(1)) if key else 1
        run.add(rel, line, "MF401", message[m.end() :] if m else message)
        return None
    if t.id != _stem(rel):
        run.at_key(rel, "id", "MF402", f"id {t.id!r} differs from file name {_stem(rel)!r}")
    _check_scope(run, rel, t.meta, required=True)
    return t


def _check_scope(run: _Run, rel: str, meta: dict[str, Any], required: bool) -> None:
    scope = meta.get("scope")
    if scope is None and not required:
        return
    cfg = run.store.config
    want = {"user": cfg.user, "assistant": cfg.assistant}
    got = {k: str(scope.get(k)) for k in want} if isinstance(scope, dict) else None
    if got != want:
        shown = "no scope" if scope is None else f"scope {scope!r}"
        if got:
            shown = f"scope {got['user']}/{got['assistant']}"
        run.at_key(rel, "scope", "MF403", f"{shown}; the store's is {cfg.user}/{cfg.assistant}")


def _key_line(text: str, key: str) -> int:
    """File line of a top-level frontmatter key (1, the '---' line, when absent)."""
    pattern = re.compile(rf"^['\"]?{re.escape(key)}['\"]?\s*:")
    for i, line in enumerate(text.split("\n")[1:], start=2):
        if line.rstrip("\r") == "---":
            break
        if pattern.match(line):
            return i
    return 1


def _source_lines(text: str, count: int) -> list[int]:
    """File lines of the first ``count`` entries of a block-style ``sources`` list."""
    lines = text.split("\n")
    start = _key_line(text, "sources")
    out: list[int] = []
    indent: int | None = None
    for i in range(start, len(lines)):
        line = lines[i].rstrip("\r")
        if line == "---" or (line and not line[0].isspace() and not line.startswith("-")):
            break
        m = re.match(r"^(\s*)- ", line)
        if m and (indent is None or len(m.group(1)) == indent):
            indent = len(m.group(1))
            out.append(i + 1)
    return (out + [start] * count)[:count]


# -- pass 2: page rules and cross-file rules -----------------------------------


def _check_pages(run: _Run) -> None:
    by_id: dict[str, list[str]] = {}
    for rel, page in run.pages.items():
        by_id.setdefault(page.id, []).append(rel)
    keys = set(by_id) | {k.lower() for k in by_id}
    keys |= {_stem(rel).lower() for rel in run.page_files}
    for page in run.pages.values():
        keys |= {a.lower() for a in page.aliases}
    for pid, rels in by_id.items():
        if pid and len(rels) > 1:
            for rel in rels:
                others = ", ".join(f"memory/{r}" for r in rels if r != rel)
                run.at_key(rel, "id", "MF007", f"duplicate id {pid!r} (also {others})")
    ids_lower = {pid.lower(): rels[0] for pid, rels in by_id.items()}
    stems = {_stem(rel) for rel in run.transcripts}
    for rel, page in [*run.pages.items(), *run.summaries.items()]:
        _check_meta(run, rel, page.meta)
        if rel in run.pages:
            for alias in page.aliases:
                owner = ids_lower.get(alias.lower(), rel)
                if owner != rel:
                    run.at_key(
                        rel, "aliases", "MF008", f"alias {alias!r} is the id of memory/{owner}"
                    )
        elif _stem(rel) not in stems:
            run.add(rel, 0, "MF404", f"no transcript {_TRANSCRIPTS}{_stem(rel)}.md")
        _check_body(run, rel, page, keys)


def _check_meta(run: _Run, rel: str, meta: dict[str, Any]) -> None:
    for key in REQUIRED_KEYS:
        if meta.get(key) in (None, "", [], {}):
            run.add(rel, 1, "MF004", f"missing required key {key!r}")
    pid = meta.get("id")
    if pid is not None and not isinstance(pid, str):
        run.at_key(rel, "id", "MF005", f"id must be a string, not {pid!r}")
    elif pid and pid != _stem(rel):
        run.at_key(rel, "id", "MF006", f"id {pid!r} differs from file name {_stem(rel)!r}")
    for key in ("updated", "created"):
        if meta.get(key) not in (None, "") and not _iso_date(meta[key]):
            run.at_key(rel, key, "MF005", f"{key} {meta[key]!r} is not an ISO date")
    aliases = meta.get("aliases")
    if not isinstance(aliases, str | None) and not (
        isinstance(aliases, list) and all(isinstance(a, str) for a in aliases)
    ):
        run.at_key(rel, "aliases", "MF005", "aliases must be a list of strings")
    if meta.get("status") not in (None, *_STATUSES):
        run.at_key(rel, "status", "MF005", f"status {meta['status']!r} is not current/superseded")
    _check_scope(run, rel, meta, required=False)


def _iso_date(value: Any) -> bool:
    if isinstance(value, _dt.date):
        return True
    if not isinstance(value, str):
        return False
    try:
        _dt.datetime.fromisoformat(value)
    except ValueError:
        return False
    return True


def _unsafe(path: str) -> str:
    """Why ``path`` would escape the store, or "" when it is a plain relative path."""
    if "\x00" in path:
        return "holds a NUL byte"
    if path.startswith(("/", "\\", "~")) or re.match(r"^[A-Za-z]:[\\/]", path):
        return "is absolute"
    if _SCHEME_RE.match(path):
        return "has a URL scheme"
    if ".." in re.split(r"[\\/]", path.split("#", 1)[0]):
        return "climbs out with '..'"
    return ""


def _check_body(run: _Run, rel: str, page: Page, keys: set[str]) -> None:
    body = page.body
    links, cites = extract(body) if "[[" in body or "[cite:" in body else ([], [])
    offset = page.body_line - 1
    for link in links:
        target = link.target.split("#", 1)[0].strip()
        why = _unsafe(link.target)
        if why:
            run.add(rel, offset + link.line, "MF301", f"link {link.target!r} {why}")
        elif target and target not in keys and target.lower() not in keys:
            run.add(rel, offset + link.line, "MF201", f"link [[{link.target}]] resolves to no page")
    if "sources" not in page.meta:
        if cites:
            run.add(rel, offset + cites[0].line, "MF101", "body cites but has no 'sources' list")
        return
    valid = _check_sources(run, rel, page.meta["sources"])
    for cite in cites:
        if cite.n not in valid:
            run.add(rel, offset + cite.line, "MF106", f"[cite:{cite.n}] names no source")


def _check_sources(run: _Run, rel: str, sources: Any) -> set[int]:
    """Check every entry; return the ids a ``[cite:N]`` may name."""
    if not isinstance(sources, list):
        run.at_key(rel, "sources", "MF102", "sources must be a list")
        return set()
    seen: set[int] = set()
    for entry, line in zip(sources, _source_lines(run.texts[rel], len(sources)), strict=True):
        if not isinstance(entry, dict):
            run.add(rel, line, "MF102", f"source entry {entry!r} is not a mapping")
            continue
        sid = entry.get("id")
        if isinstance(sid, bool) or not isinstance(sid, int):
            run.add(rel, line, "MF103", f"source id {sid!r} is not an integer")
        elif sid in seen:
            run.add(rel, line, "MF103", f"source id {sid} is used twice")
        else:
            seen.add(sid)
        at, digest = entry.get("at"), entry.get("hash")
        if at is not None and not _iso_date(at):
            run.add(rel, line, "MF105", f"source at {at!r} is not an ISO date")
        if digest is not None and not (isinstance(digest, str) and _HASH_RE.match(digest)):
            run.add(rel, line, "MF105", f"source hash {digest!r} is not a lowercase hex string")
            digest = None
        _check_ref(run, rel, line, entry.get("ref"), digest)
    return seen


def _check_ref(run: _Run, rel: str, line: int, ref: Any, digest: str | None) -> None:
    if not isinstance(ref, str):
        why = "has no 'ref'" if ref is None else f"ref {ref!r} is not a string"
        run.add(rel, line, "MF104", f"source {why}")
        return
    why = _unsafe(ref)
    if why:
        run.add(rel, line, "MF301", f"source ref {ref!r} {why}")
        return
    m = _REF_RE.match(ref)
    if m is None:
        run.add(rel, line, "MF104", f"source ref {ref!r} is not a transcript turn")
        return
    path = f"{_TRANSCRIPTS}{m.group(1)}.md"
    if path not in run.transcripts:
        run.add(rel, line, "MF107", f"source ref {ref!r}: no transcript memory/{path}")
        return
    transcript = run.transcripts[path]
    if transcript is None:
        return  # unreadable transcript: reported on the transcript itself
    turn = transcript.turn(m.group(2))
    if turn is None:
        run.add(rel, line, "MF108", f"source ref {ref!r}: the transcript has no turn {m.group(2)}")
    elif digest and turn.hash != digest:
        run.add(rel, line, "MF109", f"stale citation {ref!r}: hash {digest}, turn is {turn.hash}")


# -- the deletion log ----------------------------------------------------------


def _check_deletions(run: _Run, log: str) -> None:
    pages: dict[str, list[str]] = {}
    for rel in run.page_files:
        pages.setdefault(_stem(rel), []).append(rel)
    for rel, page in run.pages.items():
        pages.setdefault(page.id, []).append(rel)
    sessions: dict[str, list[str]] = {}
    for rel in [*run.transcripts, *run.summaries]:
        sessions.setdefault(_stem(rel), []).append(rel)
    texts = {rel: run.texts[rel] for rel in [*run.pages, *run.summaries]}
    for rel, line, code, message in tombstone_findings(log, pages, sessions, texts):
        run.add(rel, line, code, message)
