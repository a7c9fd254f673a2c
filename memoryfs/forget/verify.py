"""``memoryfs forget --verify``: prove that what the deletion log forgets is nowhere.

The scanner looks for every entry of ``memory/deletions.jsonl`` by what the log
keeps, never by the text: a phrase by its hash, a page or session by its id (its
files, links and citations) and by its ``traces`` (``memoryfs.forget.traces``).
Places, each reported on one line when something remains:

- ``working tree``: every file of the store outside ``.git/``, ``.memoryfs/`` and
  ``.dream/``, by content and by path;
- ``caches``: ``.memoryfs/`` (the search and parse indexes);
- ``dream logs``: ``.dream/`` but its worktrees (run logs, receipts);
- ``dream worktrees``: ``.dream/worktrees/`` (staging checkouts);
- ``branches``: the trees at the tips of every ref (a kept Dream run, a tag), but
  ``refs/memoryfs/``: the remote's main as a clone last saw it is the remote's history,
  which the forget's push moves on (``memoryfs.remote``) and the history scan covers;
- with ``history``: ``git objects`` (every object, ``git cat-file
  --batch-all-objects``: blobs by content, trees by entry names, commit and tag
  messages), ``reflogs`` and ``git metadata`` (the other files under ``.git/``).

A forget checks the live places (history keeps everything until
``--purge-history``); ``forget --verify`` and a purge check history too.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memoryfs.forget.deletions import Deletions, has_phrase, load_deletions
from memoryfs.store.store import Store

__all__ = ["PLACES", "Remains", "VerifyReport", "verify_forgotten"]

REMOTE_REFS = "refs/memoryfs/"  # a clone's record of its remote (memoryfs.remote.sync)

PLACES = (
    "working tree", "caches", "dream logs", "dream worktrees", "branches",
    "git objects", "reflogs", "git metadata",
)  # fmt: skip
_MAX_EXAMPLES = 5
_HISTORY = ("git objects", "reflogs", "git metadata")


@dataclass(frozen=True)
class Remains:
    place: str
    count: int
    examples: tuple[str, ...]  # paths or object ids, never the text found

    def line(self) -> str:
        shown = ", ".join(self.examples)
        more = (
            f", +{self.count - len(self.examples)} more" if self.count > len(self.examples) else ""
        )
        hint = "; memoryfs forget --purge-history removes it" if self.place in _HISTORY else ""
        return f"{self.place}: {self.count} still hold forgotten content ({shown}{more}){hint}"


@dataclass(frozen=True)
class VerifyReport:
    history: bool  # whether history (objects, reflogs, .git) was scanned
    entries: int  # deletion log entries checked
    remains: tuple[Remains, ...] = field(default=())

    @property
    def ok(self) -> bool:
        return not self.remains

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "history": self.history,
            "entries": self.entries,
            "remains": [
                {"place": r.place, "count": r.count, "examples": list(r.examples)}
                for r in self.remains
            ],
        }


class _Matcher:
    """What one text or path of a store must not hold, from the deletion log."""

    def __init__(self, deletions: Deletions) -> None:
        self.d = deletions
        sessions = "|".join(re.escape(s) for s in sorted(deletions.sessions))
        pages = "|".join(re.escape(p) for p in sorted(deletions.pages))
        parts = []
        if sessions:
            parts.append(rf"(?:transcripts|summaries)/(?:{sessions})\.md\b|^\| (?:{sessions}) \|")
        if pages:
            parts.append(
                rf"\[\[(?:{pages})\s*[\]|#]|(?:knowledge|notes)/(?:[^\s()\[\]]*/)?(?:{pages})\.md\b"
            )
        self._ids = re.compile("|".join(parts), re.M | re.I) if parts else None
        self._names = {f"{s}.md".lower() for s in (*deletions.sessions, *deletions.pages)}

    def text(self, text: str) -> bool:
        if self._ids is not None and self._ids.search(text):
            return True
        return has_phrase(text, self.d, traces=True)

    def name(self, name: str) -> bool:
        """A file or tree entry name: a forgotten id's file, or forgotten words."""
        return name.lower() in self._names or has_phrase(name, self.d, traces=True)

    def path(self, rel: str) -> bool:
        parts = rel.split("/")
        if parts[-1].lower() in self._names and (
            "sessions" in parts or "knowledge" in parts or "notes" in parts
        ):
            return True
        return has_phrase(rel, self.d, traces=True)


def verify_forgotten(store: Store, history: bool = True) -> VerifyReport:
    """Scan the store for what its deletion log forgets; see the module docstring."""
    deletions = load_deletions(store)
    report = VerifyReport(history=history, entries=len(deletions.entries))
    if not deletions:
        return report
    m = _Matcher(deletions)
    root = store.root
    found: dict[str, list[str]] = {}

    def scan_files(place: str, top: Path, skip: tuple[Path, ...] = ()) -> None:
        for path in _files(top, skip):
            rel = path.relative_to(root).as_posix()
            if m.path(rel) or m.text(_read(path)):
                found.setdefault(place, []).append(rel)

    scan_files("working tree", root, (root / ".git", store.cache_dir, store.dream_dir))
    scan_files("caches", store.cache_dir, (store.cache_dir / "locks",))
    scan_files("dream logs", store.dream_dir, (store.dream_dir / "worktrees",))
    scan_files("dream worktrees", store.dream_dir / "worktrees")
    found.update(_branches(store, m))
    if history:
        git_dir = Path(store.repo.git_dir)
        found.update(_objects(root, m))
        scan_files("reflogs", git_dir / "logs")
        scan_files("git metadata", git_dir, (git_dir / "objects", git_dir / "logs"))
    remains = tuple(
        Remains(place, len(found[place]), tuple(found[place][:_MAX_EXAMPLES]))
        for place in PLACES
        if found.get(place)
    )
    return VerifyReport(history=history, entries=len(deletions.entries), remains=remains)


def _files(top: Path, skip: tuple[Path, ...]) -> Iterator[Path]:
    if top.is_symlink() or not top.is_dir():
        return
    skipped = {os.path.realpath(s) for s in skip}
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames[:] = [
            d for d in dirnames if os.path.realpath(os.path.join(dirpath, d)) not in skipped
        ]
        for name in filenames:
            path = Path(dirpath, name)
            if not path.is_symlink() and path.is_file():
                yield path


def _read(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8", errors="replace")
    except OSError:
        return ""


def _branches(store: Store, m: _Matcher) -> dict[str, list[str]]:
    """Refs whose tip tree holds forgotten content (HEAD's is the working tree's)."""
    repo = store.repo
    out: list[str] = []
    listing = repo.git.for_each_ref("--format=%(refname)")
    for ref in listing.splitlines():
        if ref.startswith(REMOTE_REFS):
            continue
        files = repo.git.ls_tree("-r", "-z", "--full-tree", ref).split("\0")
        blobs: list[str] = []
        hit = False
        for item in files:
            meta, _, path = item.partition("\t")
            if not path:
                continue
            if m.path(path):
                hit = True
                break
            parts = meta.split()
            if len(parts) == 3 and parts[1] == "blob":
                blobs.append(parts[2])
        if not hit and blobs:
            hit = any(m.text(text) for _, kind, text in _cat(store.root, blobs) if kind == "blob")
        if hit:
            out.append(ref)
    return {"branches": out} if out else {}


def _objects(root: Path, m: _Matcher) -> dict[str, list[str]]:
    out: list[str] = []
    for sha, kind, text in _cat(root, None):
        if kind == "tree":
            if any(m.name(name) for name in _tree_names(text)):
                out.append(f"{kind} {sha[:10]}")
        elif kind in ("blob", "commit", "tag") and m.text(text):
            out.append(f"{kind} {sha[:10]}")
    return {"git objects": out} if out else {}


def _tree_names(raw: str) -> list[str]:
    """Entry names of a tree object (decoded with surrogateescape by ``_cat``)."""
    data = raw.encode("utf-8", errors="surrogateescape")
    names: list[str] = []
    pos = 0
    while pos < len(data):
        space = data.find(b" ", pos)
        nul = data.find(b"\0", space)
        if space < 0 or nul < 0:
            break
        names.append(data[space + 1 : nul].decode("utf-8", errors="replace"))
        pos = nul + 21
    return names


def _cat(root: Path, shas: list[str] | None) -> Iterator[tuple[str, str, str]]:
    """``(sha, type, content)`` of the given objects, or of all with ``None``."""
    args = ["git", "-C", str(root), "cat-file", "--batch"]
    if shas is None:
        args += ["--batch-all-objects", "--unordered"]
    proc = subprocess.Popen(
        args,
        stdin=subprocess.PIPE if shas is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
    )
    assert proc.stdout is not None
    if shas is not None:
        assert proc.stdin is not None
        proc.stdin.write("".join(f"{s}\n" for s in shas).encode())
        proc.stdin.close()
    try:
        while True:
            header = proc.stdout.readline()
            if not header:
                break
            parts = header.split()
            if len(parts) < 3:  # "<sha> missing"
                continue
            size = int(parts[2])
            data = proc.stdout.read(size)
            proc.stdout.read(1)
            yield (
                parts[0].decode(),
                parts[1].decode(),
                data.decode("utf-8", errors="surrogateescape"),
            )
    finally:
        proc.stdout.close()
        proc.wait()
