"""What the generated index needs from each file, cached by the file's content.

Regenerating INDEX.md and sessions/index.md needs a few fields of every page
(id, title, summary, aliases, outgoing links) and of every transcript (date,
turn count). Parsing YAML and Markdown for thousands of files on every Dream
run is what made the index cost grow with the store; reading the bytes and
hashing them is cheap. So facts are cached in ``.memoryfs/index-facts.json``
under the SHA-1 of the file's bytes: a changed file is parsed again, an
unchanged one never; a file whose size, mtime and inode did not change is not
even read. The cache is a cache: deleting it loses nothing.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from memoryfs.atomic import atomic_write_text
from memoryfs.errors import MemoryFSError
from memoryfs.links import extract_links
from memoryfs.page import parse_page
from memoryfs.store import Store
from memoryfs.transcript import parse_transcript

__all__ = ["PageFacts", "SessionFacts", "IndexCache"]

_VERSION = 1
_NAME = "index-facts.json"


@dataclass(frozen=True)
class PageFacts:
    id: str
    title: str
    type: str
    summary: str
    updated: str
    aliases: tuple[str, ...]
    links: tuple[str, ...]  # link targets as written, in order


@dataclass(frozen=True)
class SessionFacts:
    id: str
    date: str
    title: str
    turns: int


class IndexCache:
    """Facts of a store's files by content hash; ``save`` keeps only what was used."""

    def __init__(self, store: Store, path: Path | None = None) -> None:
        """``path``: where the cache lives (default ``.memoryfs/index-facts.json`` of
        ``store``); a staged worktree, whose own ``.memoryfs`` each run cleans away,
        keeps its cache in the live store's."""
        self.store = store
        self.path = path if path is not None else store.cache_dir / _NAME
        self._old: dict[str, Any] = {}
        self._used: dict[str, Any] = {}
        self._old_stats: dict[str, Any] = {}
        self._stats: dict[str, Any] = {}
        self._dirs: dict[str, Path | None] = {}  # folder (rel) -> its resolved path
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            if isinstance(data, dict) and data.get("version") == _VERSION:
                entries, stats = data.get("entries"), data.get("stats")
                self._old = entries if isinstance(entries, dict) else {}
                self._old_stats = stats if isinstance(stats, dict) else {}
        except (OSError, ValueError):
            self._old = {}

    def _key(self, rel: str, kind: str) -> tuple[str, str | None] | None:
        """(cache key, text or None when cached) of a file; None when unreadable or outside.

        A file whose size, mtime (ns) and inode are those recorded with a cached key
        is not read again; any other file is read and keyed by its content.
        """
        try:
            path, st = self._stat(rel)
            sig = [st.st_size, st.st_mtime_ns, st.st_ino]
            old = self._old_stats.get(rel)
            if isinstance(old, list) and old[:3] == sig and old[3] in self._old:
                self._stats[rel] = old
                return old[3], None
            data = path.read_bytes()
            text = data.decode("utf-8")
        except (OSError, UnicodeDecodeError, MemoryFSError, ValueError):
            return None
        key = f"{kind}:{hashlib.sha1(data).hexdigest()}"
        self._stats[rel] = [*sig, key]
        return key, text

    def _stat(self, rel: str) -> tuple[Path, os.stat_result]:
        """``store.resolve(rel)`` and its stat, resolving each folder once: a store of
        thousands of files has a few dozen folders, and resolving every file's path
        was most of what an unchanged store cost."""
        folder, _, name = rel.rpartition("/")
        plain = name not in ("", ".", "..") and not any(
            part in ("", ".", "..") for part in folder.split("/") if folder
        )
        if plain and folder not in self._dirs:
            try:
                self._dirs[folder] = self.store.resolve(folder) if folder else None
            except MemoryFSError:
                self._dirs[folder] = None
        base = self._dirs.get(folder) if plain else None
        if base is not None and not any(c in name for c in ("\x00", "\n", "\\", "://")):
            path = base / name
            st = os.lstat(path)
            if not stat.S_ISLNK(st.st_mode):
                return path, st
        path = self.store.resolve(rel)
        return path, path.stat()

    def page(self, rel: str) -> PageFacts | None:
        found = self._key(rel, "page")
        if found is None:
            return None
        key, text = found
        raw = self._old[key] if key in self._old or text is None else _page_facts(text, rel)
        self._used[key] = raw
        if not raw:
            return None
        return PageFacts(**{**raw, "aliases": tuple(raw["aliases"]), "links": tuple(raw["links"])})

    def transcript(self, rel: str) -> SessionFacts | None:
        found = self._key(rel, "session")
        if found is None:
            return None
        key, text = found
        raw = self._old[key] if key in self._old or text is None else _session_facts(text, rel)
        self._used[key] = raw
        return SessionFacts(**raw) if raw else None

    def save(self) -> None:
        if (self._used, self._stats) == (self._old, self._old_stats):
            return
        if self.store.cache_dir.is_symlink() or self.path.parent.is_symlink():
            return
        with contextlib.suppress(OSError):  # a cache that cannot be written only costs time
            atomic_write_text(
                self.path,
                json.dumps(
                    {"version": _VERSION, "entries": self._used, "stats": self._stats},
                    separators=(",", ":"),
                ),
            )


def _page_facts(text: str, rel: str) -> dict[str, Any] | None:
    try:
        page = parse_page(text, rel)
    except (MemoryFSError, ValueError):
        return None
    return asdict(
        PageFacts(
            id=page.id,
            title=page.title,
            type=page.type,
            summary=page.summary,
            updated=page.updated,
            aliases=tuple(page.aliases),
            links=tuple(link.target for link in extract_links(page.body)),
        )
    )


def _session_facts(text: str, rel: str) -> dict[str, Any] | None:
    try:
        t = parse_transcript(text, rel)
    except (MemoryFSError, ValueError):
        return None
    return asdict(
        SessionFacts(id=t.id, date=t.date, title=str(t.meta.get("title") or ""), turns=len(t.turns))
    )
