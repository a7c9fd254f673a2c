"""The receipt log: append-only day files of receipts, and where they live.

One ``<yyyy-mm-dd>.jsonl`` file per UTC day, continued in ``<yyyy-mm-dd>.<n>.jsonl``
parts once a day's file holds ``PART_BYTES`` (a full Dream run writes megabytes of
receipts in one day; every later commit that day would otherwise make Git hash,
store and check out that whole file again); one JSON object per line, written
with a single O_APPEND write so concurrent appenders never tear a line. Readers
skip (and report) malformed lines instead of failing. Store-side logs are
committed and merged line by line (``UNION_MERGE``); sandbox logs stay local.
The records themselves, and the content-free guard, are in ``memoryfs.receipts.records``.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import re
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from memoryfs.receipts.records import (
    UNION_MERGE,
    Receipt,
    ReceiptError,
    format_utc,
    guard_content_free,
    parse_utc,
    scope_ids,
    session_item,
    source_version,
)
from memoryfs.store.atomic import atomic_write_text

__all__ = [
    "ReceiptLog",
    "ReceiptProblem",
    "appends_undone_on_error",
    "ensure_union_merge",
    "local_receipt_dir",
    "parse_receipts",
    "record_ingested",
    "sandbox_receipt_dir",
    "store_receipt_dir",
]

_MAX_LINE = 4096  # bytes; a longer receipt line is refused on write, skipped on read
PART_BYTES = 1 << 20  # a day's file that holds this much is continued in a new part
_NAME_RE = re.compile(r"^(\d{4}-\d{2}-\d{2})(?:\.([1-9]\d{0,5}))?\.jsonl$")


@dataclass(frozen=True)
class ReceiptProblem:
    """A line the reader skipped; ``reason`` never quotes the line."""

    file: str
    line: int
    reason: str

    def format(self) -> str:
        return f"{self.file}:{self.line}: {self.reason}"


class ReceiptLog:
    """Append-only receipts under ``folder``, one ``<yyyy-mm-dd>.jsonl`` per UTC day
    (continued in ``<yyyy-mm-dd>.<n>.jsonl`` parts, n = 2, 3, ..., past ``part_bytes``)."""

    def __init__(self, folder: Path | str, part_bytes: int = PART_BYTES) -> None:
        self.folder = Path(folder)
        self.part_bytes = part_bytes
        self.problems: list[ReceiptProblem] = []  # from the last ``read``

    def append(self, receipts: Iterable[Receipt]) -> list[Path]:
        """Append ``receipts``; all are checked before any byte is written.

        Returns the files written to. The checked lines wait in a temporary file, not in
        memory: a full Dream run appends tens of thousands.
        """
        by_day: dict[str, IO[bytes]] = {}
        with contextlib.ExitStack() as temps:
            for r in receipts:
                guard_content_free(r)  # also catches instances built around __post_init__
                line = (r.to_line() + "\n").encode("utf-8")
                if len(line) > _MAX_LINE:
                    raise ReceiptError(f"receipt line longer than {_MAX_LINE} bytes")
                day = r.at_utc[:10]
                if day not in by_day:
                    by_day[day] = temps.enter_context(tempfile.TemporaryFile())
                by_day[day].write(line)
            written: list[Path] = []
            if not by_day:
                return written
            self.folder.mkdir(parents=True, exist_ok=True)
            for day in sorted(by_day):
                path = self._part_for(day)
                waiting = by_day[day]
                waiting.seek(0)
                fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
                try:
                    # A crash may have left a torn last line: start on a fresh line so
                    # this append is never glued to it (the reader skips blank lines).
                    if _ends_without_newline(fd):
                        os.write(fd, b"\n")
                    for line in waiting:
                        os.write(fd, line)  # one write per line: whole lines
                    os.fsync(fd)
                finally:
                    os.close(fd)
                written.append(path)
            return written

    def _part_for(self, day: str) -> Path:
        """The file ``day``'s next lines go to: its last part, or a new one when that is full."""
        parts = [n for d, n, _ in self._named() if d == day]
        last = max(parts, default=1)
        path = _part_path(self.folder, day, last)
        try:
            full = path.stat().st_size >= self.part_bytes
        except OSError:
            full = False
        return _part_path(self.folder, day, last + 1) if full else path

    def _named(self) -> list[tuple[str, int, Path]]:
        """(day, part, path) of every receipt file, in day and part order."""
        if not self.folder.is_dir():
            return []
        out: list[tuple[str, int, Path]] = []
        for p in self.folder.iterdir():
            m = _NAME_RE.match(p.name)
            if m and p.is_file():
                out.append((m.group(1), int(m.group(2) or 1), p))
        return sorted(out)

    def files(self) -> list[Path]:
        return [p for _, _, p in self._named()]

    def read(self, since: dt.datetime | str | None = None) -> list[Receipt]:
        """Every well-formed receipt at or after ``since``, oldest first.

        Malformed lines are skipped and listed in ``self.problems``; never raises
        on file content.
        """
        self.problems = []
        cutoff = parse_utc(since) if isinstance(since, str) else since
        if cutoff is not None:
            if cutoff.tzinfo is None:
                raise ReceiptError("'since' must be timezone-aware")
            cutoff = cutoff.astimezone(dt.UTC)
        out: list[tuple[dt.datetime, int, Receipt]] = []
        seq = 0
        for day, _, path in self._named():
            if cutoff is not None and day < cutoff.strftime("%Y-%m-%d"):
                continue
            try:
                data = path.read_bytes()
            except OSError as exc:
                self.problems.append(ReceiptProblem(path.name, 0, f"unreadable: {exc.strerror}"))
                continue
            receipts, problems = parse_receipts(data, path.name)
            self.problems.extend(problems)
            for receipt in receipts:
                when = receipt.at
                if cutoff is not None and when < cutoff:
                    continue
                out.append((when, seq, receipt))
                seq += 1
        out.sort(key=lambda t: (t[0], t[1]))
        return [r for _, _, r in out]


@contextlib.contextmanager
def appends_undone_on_error(folder: Path) -> Iterator[None]:
    """Receipts appended under ``folder`` inside the block are taken back when it raises:
    a receipt says ``committed`` only for what a commit took (a full disk can stop the
    commit after the receipts were written). Hold the lock of every writer there."""
    log = ReceiptLog(folder)
    before = {p: p.stat().st_size for p in log.files()}
    try:
        yield
    except BaseException:
        for path in log.files():
            with contextlib.suppress(OSError):  # shrinking needs no space
                if path not in before:
                    path.unlink()
                elif path.stat().st_size > before[path]:
                    os.truncate(path, before[path])
        raise


def _part_path(folder: Path, day: str, part: int) -> Path:
    return folder / (f"{day}.jsonl" if part == 1 else f"{day}.{part}.jsonl")


def parse_receipts(data: bytes, name: str = "") -> tuple[list[Receipt], list[ReceiptProblem]]:
    """Parse JSON lines; malformed ones become problems (never quoted), never errors."""
    receipts: list[Receipt] = []
    problems: list[ReceiptProblem] = []
    for lineno, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        if len(raw) > _MAX_LINE:
            problems.append(ReceiptProblem(name, lineno, "line too long"))
            continue
        try:
            obj = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            problems.append(ReceiptProblem(name, lineno, "not a JSON object (torn line?)"))
            continue
        if not isinstance(obj, dict):
            problems.append(ReceiptProblem(name, lineno, "not a JSON object"))
            continue
        try:
            receipts.append(Receipt.from_json(obj))
        except ReceiptError as exc:
            problems.append(ReceiptProblem(name, lineno, str(exc)))
    return receipts, problems


def _ends_without_newline(fd: int) -> bool:
    size = os.fstat(fd).st_size
    return size > 0 and os.pread(fd, 1, size - 1) != b"\n"


def store_receipt_dir(root: Path) -> Path:
    """Where a store keeps its generation-side receipts: ``<store root>/.dream/receipts``.

    Committed: each writer appends its lines and commits them with the commit they
    describe (Git merges concurrent appends with the ``union`` driver).
    """
    return Path(root) / ".dream" / "receipts"


def local_receipt_dir(root: Path) -> Path:
    """A store's own read log (recalls without a sandbox): ``.memoryfs/receipts``, git-ignored."""
    return Path(root) / ".memoryfs" / "receipts"


def sandbox_receipt_dir(sandbox: Path) -> Path:
    """A sandbox's read log, beside its manifest: ``<sandbox>/.receipts``."""
    return Path(sandbox) / ".receipts"


def ensure_union_merge(root: Path) -> bool:
    """Make sure ``<root>/.gitattributes`` holds ``UNION_MERGE``; True when it wrote it.

    Stores made before receipts were committed lack the line; the first writer of
    a receipt adds it (and commits ``.gitattributes`` with its receipts).
    """
    path = Path(root) / ".gitattributes"
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        text = ""
    if UNION_MERGE in text.splitlines():
        return False
    if text and not text.endswith("\n"):
        text += "\n"
    atomic_write_text(path, text + UNION_MERGE + "\n")
    return True


def record_ingested(
    root: Path,
    user: str,
    assistant: str,
    versions: Mapping[str, str],
    run_id: str,
    config: Mapping[str, Any] | None = None,
) -> list[str]:
    """Append an ``ingested`` receipt per session (id -> transcript content hash) to the
    store's log at ``root``; returns the paths (relative to ``root``) to commit with them.
    ``config``: the effective configuration its ``sourceVersion`` pins (``config_hash``).

    The folder is returned whole, so lines a killed writer appended are committed too.
    """
    at, source = format_utc(), source_version(config=config)
    scope = scope_ids(user, assistant)
    ReceiptLog(store_receipt_dir(root)).append(
        Receipt(run_id, *scope, session_item(sid), "ingested", version, source, "committed", at)
        for sid, version in sorted(versions.items())
    )
    ensure_union_merge(root)
    folder = store_receipt_dir(Path("."))
    return [folder.as_posix(), ".gitattributes"] if (root / folder).is_dir() else [".gitattributes"]
