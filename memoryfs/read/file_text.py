"""One file of memory by its path: a page, a note, a summary, a transcript or one turn.

``read_file`` is what an agent without a sandbox (the MCP ``read`` tool) uses to follow
a path that search or recall gave it. The path is relative to ``memory/`` and must
stay there: an absolute path, a ``..`` component, a hidden component or a symlink
that leads out of ``memory/`` is refused, and only Markdown files are served.
``path#tN`` gives one turn of a transcript; ``lines`` ("12", "12-30", "12-") a slice
of the file by 1-based line numbers.

A page served whole or in part gets a ``recalled`` receipt at the content hash of the
file it was read from, in the store's ``.memoryfs/receipts/`` (as ``recall`` without a
sandbox), so a later ``used`` receipt names a version a reader was given.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from memoryfs.errors import MemoryFSError
from memoryfs.pages.transcript import parse_transcript, render_turn
from memoryfs.receipts.log import local_receipt_dir
from memoryfs.receipts.reads import record_reads
from memoryfs.store.hashing import content_hash
from memoryfs.store.store import Store

__all__ = ["FileText", "read_file"]

MAX_FILE_BYTES = 20_000_000  # larger than any page or transcript Dream or ingest writes
_LINES_RE = re.compile(r"^\s*(\d{1,9})\s*(?:(-)\s*(\d{1,9})?)?\s*$")
_TURN_RE = re.compile(r"^t(\d{1,7})$")


@dataclass(frozen=True)
class FileText:
    """What ``read_file`` served."""

    path: str  # relative to memory/, without the #tN anchor
    text: str  # the file, the lines asked for, or the one turn
    version: str  # content hash of the whole file it was read from
    start: int  # first line served (1-based)
    end: int  # last line served
    total_lines: int
    turn: str = ""  # "tN" when one turn was asked for
    section: str = ""  # the headings of the sections shown (``memoryfs.read.show``)
    cut: bool = False  # lines were left out to fit a token budget

    def to_json(self) -> dict[str, object]:
        return {
            "path": self.path,
            "turn": self.turn or None,
            "section": self.section or None,
            "cut": self.cut,
            "start": self.start,
            "end": self.end,
            "totalLines": self.total_lines,
            "version": self.version,
            "text": self.text,
        }


def _locate(store: Store, rel: str) -> tuple[str, Path]:
    """``rel`` checked to name a Markdown file inside ``memory/``: ``rel`` in posix form
    relative to ``memory/``, and the file with every link resolved. Raises
    ``MemoryFSError`` with the reason otherwise."""
    rel = rel.strip().removeprefix("memory/")
    parts = rel.replace("\\", "/").split("/")
    if (
        not rel
        or "\x00" in rel
        or "\n" in rel
        or "://" in rel
        or rel.startswith(("/", "\\", "~"))
        or any(p in ("", ".", "..") or p.startswith(".") for p in parts)
    ):
        raise MemoryFSError(
            f"path {rel[:200]!r} is not a path inside memory/ "
            "(relative, no '..', no hidden parts; e.g. knowledge/people/sam.md)"
        )
    if not rel.endswith(".md"):
        raise MemoryFSError(f"{rel}: only Markdown files (.md) under memory/ can be read")
    memory = store.memory.resolve()
    path = (memory / rel).resolve()
    if not path.is_relative_to(memory):
        raise MemoryFSError(f"{rel}: a symlink leads out of memory/; refused")
    if not path.is_file():
        raise MemoryFSError(f"{rel}: no such file under memory/")
    return rel, path


def _read(rel: str, path: Path) -> bytes:
    try:
        # the resolved file, O_NOFOLLOW: a link put in its place after the check is not followed
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError as exc:
        raise MemoryFSError(f"{rel}: cannot read: {exc.strerror or exc}") from None
    with os.fdopen(fd, "rb") as fh:
        data = fh.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise MemoryFSError(f"{rel}: larger than {MAX_FILE_BYTES} bytes; read it with lines")
    return data


def _line_range(spec: str, total: int) -> tuple[int, int]:
    m = _LINES_RE.match(spec)
    if m is None:
        raise MemoryFSError(f"lines {spec[:40]!r}: use N, N-M or N- (1-based line numbers)")
    start = int(m.group(1))
    end = int(m.group(3)) if m.group(3) else (total if m.group(2) else start)
    if start < 1 or end < start:
        raise MemoryFSError(
            f"lines {spec}: the range must start at 1 or later and not run backwards"
        )
    if start > total:
        raise MemoryFSError(f"lines {spec}: the file has {total} lines")
    return start, min(end, total)


def read_file(store: Store, ref: str, lines: str | None = None) -> FileText:
    """The file ``ref`` names (relative to ``memory/``; ``path#tN`` for one turn of a
    transcript), whole or the ``lines`` asked for."""
    rel, _, anchor = ref.partition("#")
    rel, path = _locate(store, rel)
    data = _read(rel, path)
    version = content_hash(data)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise MemoryFSError(f"{rel}: not UTF-8 text") from None
    all_lines = text.split("\n")
    if all_lines and all_lines[-1] == "":
        all_lines.pop()
    total = len(all_lines)
    turn = ""
    if anchor:
        if lines:
            raise MemoryFSError(f"{ref}: give a turn (#tN) or lines, not both")
        text, start, end, turn = _turn(store, rel, anchor, text)
    elif lines:
        start, end = _line_range(lines, total)
        text = "\n".join(all_lines[start - 1 : end]) + "\n"
    else:
        start, end = 1, total
    record_reads(store, local_receipt_dir(store.root), "recalled", {rel: version})
    return FileText(rel, text, version, start, end, total, turn)


def _turn(store: Store, rel: str, anchor: str, text: str) -> tuple[str, int, int, str]:
    """One turn of a transcript: its text as the file has it, its first and last line."""
    m = _TURN_RE.match(anchor)
    if m is None or not rel.startswith("sessions/transcripts/"):
        raise MemoryFSError(
            f"{rel}#{anchor}: an anchor selects a turn of a transcript "
            "(sessions/transcripts/<id>.md#tN)"
        )
    transcript = parse_transcript(text, rel, store.config.roster)
    n = int(m.group(1))
    if not 1 <= n <= len(transcript.turns):
        raise MemoryFSError(f"{rel}: no turn t{n} (the session has {len(transcript.turns)})")
    turn = transcript.turns[n - 1]
    body = render_turn(turn).lstrip("\n")
    return body, turn.line, turn.line + body.count("\n") - 1, turn.anchor
