"""The tree as ``memoryfs validate`` reads it: every file once, parsed, findings kept.

Pass 1 of validation (``memoryfs.validate.rules`` holds the rules): a ``Run`` collects the
findings about single files (unreadable bytes, malformed frontmatter or turns, scope)
and hands each parsed page to ``Run.on_page`` (the rules of one page), keeping of it
only what the cross-page rules need (``ReadPage``); of a transcript it keeps its turns'
hashes (``TurnHashes``). Transcripts are read before pages, so a page's citations can
be checked as it is read: a tree of thousands of pages is never held parsed. ``walk``
reads a whole ``memory/``; ``visit`` reads one file by name, treating it exactly as
``walk`` would. Symlinks are checked, never followed.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memoryfs.errors import PageError
from memoryfs.pages.page import Page, parse_page, split_frontmatter
from memoryfs.pages.transcript import Transcript, parse_transcript
from memoryfs.store.store import Store
from memoryfs.validate.findings import CODES, Finding
from memoryfs.validate.keys import KnownPages, OtherPages, PageKeys

__all__ = [
    "PageKeys",
    "ReadPage",
    "Run",
    "TurnHashes",
    "TRANSCRIPTS",
    "check_scope",
    "hidden",
    "key_line",
    "stem",
    "visit",
    "visit_files",
    "walk",
]

_PAGE_LAYERS = ("knowledge/", "notes/")
_SUMMARIES = "sessions/summaries/"
TRANSCRIPTS = "sessions/transcripts/"
_NOT_PAGES = {"INDEX.md", "sessions/index.md"}
_LINE_PREFIX_RE = re.compile(r"^(\d+): ")


@dataclass(frozen=True, slots=True)
class ReadPage:
    """What the cross-page rules need of a page read: its id and aliases (as ``Page``
    gives them) and the (file line, target) of each link left to resolve."""

    id: str
    aliases: tuple[str, ...] = ()
    links: tuple[tuple[int, str], ...] = ()


class TurnHashes:
    """The turns of a transcript as a citation names them: ``hash_of("t3")`` is the hash
    of the turn ``Transcript.turn("t3")`` gives, None when it gives none.

    Kept for every transcript a validation reads (all of them in a full Dream run: as
    tuples of strings, ~6 MB at 8,000 synthetic sessions), so kept small: turns numbered
    1..n need no numbers, and hashes of one even length in lower-case hex are one
    ``bytes`` (a tuple of strings, as written, otherwise)."""

    __slots__ = ("numbers", "hashes", "width")

    def __init__(self, t: Transcript) -> None:
        numbers = tuple(turn.n for turn in t.turns)
        hashes = [turn.hash for turn in t.turns]
        self.numbers: tuple[int, ...] | int = (
            len(numbers) if numbers == tuple(range(1, len(numbers) + 1)) else numbers
        )
        width = len(hashes[0]) if hashes else 0
        if width and width % 2 == 0 and all(len(h) == width and _hex(h) for h in hashes):
            self.hashes: bytes | tuple[str, ...] = bytes.fromhex("".join(hashes))
            self.width = width // 2
        else:
            self.hashes, self.width = tuple(hashes), 0

    def hash_of(self, anchor: str) -> str | None:
        if not anchor.startswith("t") or not anchor[1:].isdigit():
            return None
        n = int(anchor[1:])
        numbers = self.numbers
        if isinstance(numbers, int):
            i = n - 1 if 1 <= n <= numbers else -1
        elif 1 <= n <= len(numbers) and numbers[n - 1] == n:
            i = n - 1
        else:
            i = next((i for i, number in enumerate(numbers) if number == n), -1)
        if i < 0:
            return None
        if isinstance(self.hashes, bytes):
            return self.hashes[i * self.width : (i + 1) * self.width].hex()
        return self.hashes[i]


def _hex(text: str) -> bool:
    return all(c in "0123456789abcdef" for c in text)


def _keep_all(run: Run, rel: str, page: Page, kind: str) -> ReadPage:
    return ReadPage(id=page.id, aliases=tuple(page.aliases))


@dataclass
class Run:
    store: Store
    root: Path
    findings: list[Finding] = field(default_factory=list)
    pages: dict[str, ReadPage] = field(default_factory=dict)  # knowledge/ + notes/, by rel path
    summaries: dict[str, ReadPage] = field(default_factory=dict)
    transcripts: dict[str, TurnHashes | None] = field(default_factory=dict)  # None: unreadable
    page_files: list[str] = field(default_factory=list)  # knowledge/ + notes/, parsed or not
    deletions: str | None = None
    others: OtherPages = field(default_factory=lambda: KnownPages({}))  # known, not read
    # source refs whose transcripts the caller left out on purpose: not reported missing
    unread_refs: frozenset[str] = frozenset()
    # the rules of one page (kind "page" or "summary"), run as it is read; what it returns
    # is what is kept of the page
    on_page: Callable[[Run, str, Page, str], ReadPage] = _keep_all

    def add(self, rel: str, line: int, code: str, message: str) -> None:
        self.findings.append(Finding(f"memory/{rel}", line, code, message, CODES[code]))

    def at_key(self, rel: str, key: str, code: str, message: str) -> None:
        """A finding on the line of a top-level frontmatter key (1 when absent)."""
        self.add(rel, key_line(self.text(rel), key), code, message)

    def text(self, rel: str) -> str:
        """A file's text, read again when a finding needs its lines ("" if it cannot be),
        rather than every file's text held until the end beside its parsed page."""
        try:
            return (self.root / "memory" / rel).read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError):
            return ""


def walk(run: Run, mem: Path) -> None:
    """Read every file under ``mem`` once, transcripts first; symlinks are checked, never
    followed."""
    _walk(run, mem, transcripts=True)
    _walk(run, mem, transcripts=False)


def _walk(run: Run, mem: Path, transcripts: bool) -> None:
    """The transcripts under ``mem``, or the other files (and the symlinks)."""
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
                if transcripts:
                    continue
                target, shown = os.path.realpath(entry.path), os.readlink(entry.path)
                if os.path.commonpath([real_root, target]) != real_root:
                    run.add(rel, 0, "MF302", f"symlink points outside the store ({shown})")
                elif not os.path.exists(target):
                    run.add(rel, 0, "MF303", f"broken symlink ({shown})")
            elif entry.is_dir(follow_symlinks=False):
                stack.append((Path(entry.path), rel + "/"))
            elif (
                entry.is_file(follow_symlinks=False)
                and not hidden(rel)
                and (_kind(rel) == "transcript") == transcripts
            ):
                _read(run, Path(entry.path), rel)


def visit_files(run: Run, mem: Path, rels: Iterable[str]) -> None:
    """``visit`` each of ``rels`` (sorted), transcripts first; hidden ones are skipped, and
    so are transcripts ``run`` holds already."""
    ordered = sorted(rel for rel in set(rels) if not hidden(rel))
    for rel in [r for r in ordered if _kind(r) == "transcript" and r not in run.transcripts]:
        visit(run, Path(os.path.join(mem, rel)), rel)
    for rel in [r for r in ordered if _kind(r) != "transcript"]:
        visit(run, Path(os.path.join(mem, rel)), rel)


def visit(run: Run, path: Path, rel: str) -> None:
    """One file by name, as ``walk`` treats what it finds (a missing one is skipped)."""
    real_root = os.path.realpath(run.root)
    if os.path.islink(path):
        target, shown = os.path.realpath(path), os.readlink(path)
        if os.path.commonpath([real_root, target]) != real_root:
            run.add(rel, 0, "MF302", f"symlink points outside the store ({shown})")
        elif not os.path.exists(target):
            run.add(rel, 0, "MF303", f"broken symlink ({shown})")
    elif not os.path.realpath(path.parent).startswith(real_root + os.sep):
        run.add(rel, 0, "MF302", "a folder on its path points outside the store")
    elif path.is_file():
        _read(run, path, rel)


def stem(rel: str) -> str:
    return rel.rsplit("/", 1)[-1].removesuffix(".md")


def hidden(rel: str) -> bool:
    return any(part.startswith(".") for part in rel.split("/"))


def _read(run: Run, path: Path, rel: str) -> None:
    kind = _kind(rel)
    if kind is None:
        return
    if kind == "page":
        run.page_files.append(rel)
    elif kind == "transcript":
        run.transcripts[rel] = None  # until it parses
    limit = run.store.config.budgets.max_file_bytes
    if kind == "transcript":
        limit = min(limit, run.store.config.limits.transcript_bytes)
    try:
        # the file itself (O_NOFOLLOW), and only a regular one: a FIFO or a device put in
        # its place is never read (O_NONBLOCK: nor waited on)
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return  # vanished, replaced by a link, or unreadable mid-walk
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return
        size = st.st_size
        try:
            data = fh.read(limit + 1) if size <= limit else b""
        except OSError:
            return
        size = max(size, len(data))
    if size > limit:
        run.add(rel, 0, "MF305", f"file is {size} bytes, over the {limit} byte limit")
        return
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        run.add(rel, line, "MF304", f"not valid UTF-8 (byte {exc.start})")
        return
    if kind == "deletions":
        run.deletions = text
    elif kind == "transcript":
        run.transcripts[rel] = _read_transcript(run, rel, text)
    else:
        try:
            page = parse_page(text, rel, limits=run.store.config.limits.yaml)
        except PageError as exc:
            _frontmatter_finding(run, rel, text, str(exc))
            return
        (run.pages if kind == "page" else run.summaries)[rel] = run.on_page(run, rel, page, kind)


def _kind(rel: str) -> str | None:
    if rel == "deletions.jsonl":
        return "deletions"
    if not rel.endswith(".md") or rel in _NOT_PAGES:
        return None
    if rel.startswith(_PAGE_LAYERS):
        return "page"
    if rel.startswith(_SUMMARIES) and rel.count("/") == 2:
        return "summary"
    if rel.startswith(TRANSCRIPTS) and rel.count("/") == 2:
        return "transcript"
    return None


def _frontmatter_finding(run: Run, rel: str, text: str, message: str) -> None:
    message = message.removeprefix(f"{rel}: ")
    if split_frontmatter(text) is None:
        run.add(rel, 1, "MF001", "no YAML frontmatter")
    elif "must be a mapping" in message:
        run.add(rel, 2, "MF003", "frontmatter is not a mapping of keys to values")
    else:
        m = re.search(r"at frontmatter line (\d+)", message)
        run.add(rel, int(m.group(1)) if m else 1, "MF002", message)


def _read_transcript(run: Run, rel: str, text: str) -> TurnHashes | None:
    limits = run.store.config.limits.yaml
    try:
        t = parse_transcript(text, rel, limits=limits)
    except PageError as exc:
        try:
            parse_page(text, rel, limits=limits)
        except PageError as page_exc:
            _frontmatter_finding(run, rel, text, str(page_exc))
            return None
        message = str(exc).removeprefix(rel).removeprefix(": ").removeprefix(":")
        m = _LINE_PREFIX_RE.match(message)
        key = re.match(r"frontmatter '(\w+)'", message)
        line = int(m.group(1)) if m else key_line(text, key.group(1)) if key else 1
        run.add(rel, line, "MF401", message[m.end() :] if m else message)
        return None
    if t.id != stem(rel):
        run.at_key(rel, "id", "MF402", f"id {t.id!r} differs from file name {stem(rel)!r}")
    check_scope(run, rel, t.meta, required=True)
    return TurnHashes(t)


def check_scope(run: Run, rel: str, meta: dict[str, Any], required: bool) -> None:
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


def key_line(text: str, key: str) -> int:
    """File line of a top-level frontmatter key (1, the '---' line, when absent)."""
    pattern = re.compile(rf"^['\"]?{re.escape(key)}['\"]?\s*:")
    for i, line in enumerate(text.split("\n")[1:], start=2):
        if line.rstrip("\r") == "---":
            break
        if pattern.match(line):
            return i
    return 1
