"""The subjects a store already has, and resolving a name to one of them.

Job: know every knowledge page by id, title and aliases (read once per run, frontmatter
only), resolve a mention to an existing page before a new one is made (exact key, then
rapidfuzz ``token_set_ratio`` with a guard against "Ocean" matching "Marlow Institute for
Ocean Research"), and mint unique page ids (slugs equal to file names) for new subjects.

Boundary: reads frontmatter of ``knowledge/`` pages and the file names under ``notes/``;
writes nothing (the wiki phase writes pages).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from rapidfuzz import fuzz, process

from memoryfs.errors import PageError
from memoryfs.forget.deletions import Deletions, has_phrase
from memoryfs.pages.bounded_yaml import limits_for_text, load_yaml
from memoryfs.pages.page import split_frontmatter
from memoryfs.store.cache_db import connect
from memoryfs.store.scan import read_text
from memoryfs.store.slugs import slugify
from memoryfs.store.store import Store

__all__ = ["FOLDERS", "Subject", "Registry", "TakenIds", "without_sources"]

FOLDERS = {
    "person": "people",
    "org": "orgs",
    "place": "places",
    "project": "projects",
    "topic": "topics",
    "preference": "preferences",
}
# the top-level ``sources:`` key; its entries run up to the next top-level key
_SOURCES_KEY_RE = re.compile(r"^sources:", re.MULTILINE)
_TOP_KEY_RE = re.compile(r"^[A-Za-z_][\w-]*:", re.MULTILINE)
_FUZZ_CUTOFF = 90
_ARCHIVE_RE = re.compile(r"-archive-\d{4}(?:-\d{2}){0,2}$")  # yearly, monthly, daily


@dataclass(slots=True)
class Subject:
    """A knowledge page, existing or about to be created."""

    id: str
    title: str
    type: str
    path: str  # relative to memory/
    aliases: list[str] = field(default_factory=list)
    new: bool = False


def without_sources(head: str) -> str:
    """``head`` (frontmatter) without each top-level ``sources:`` block, up to the next
    top-level key or the end: a search for each end, not a pattern tried at every
    character of a hub page's hundreds of entries."""
    kept: list[str] = []
    pos = 0
    while (key := _SOURCES_KEY_RE.search(head, pos)) is not None:
        kept.append(head[pos : key.start()])
        after = _TOP_KEY_RE.search(head, key.end())
        pos = after.start() if after is not None else len(head)
    kept.append(head[pos:])
    return "".join(kept)


def _head_meta(text: str) -> dict[str, Any]:
    """Frontmatter without its ``sources`` list (the expensive part nobody needs here)."""
    parts = split_frontmatter(text)
    if parts is None:
        return {}
    try:
        head = without_sources(parts[0])
        meta = load_yaml(head, limits_for_text(head))
    except (yaml.YAMLError, PageError, RecursionError, ValueError, TypeError):
        return {}
    return meta if isinstance(meta, dict) else {}


class TakenIds:
    """The page and note ids in use, in a private temporary SQLite database (on disk, gone
    when it is closed): a full run mints an id per note, 40,000 at 8,000 synthetic
    sessions, and a set of them would grow its peak with the store by ~6 MB."""

    def __init__(self, ids: Iterable[str] = ()) -> None:
        self._db = connect("")  # "": a temporary database, on disk
        self._db.execute("CREATE TABLE ids(id TEXT PRIMARY KEY) WITHOUT ROWID")
        self.update(ids)

    def __contains__(self, sid: object) -> bool:
        return self._db.execute("SELECT 1 FROM ids WHERE id = ?", (sid,)).fetchone() is not None

    def add(self, sid: str) -> None:
        self._db.execute("INSERT OR IGNORE INTO ids VALUES (?)", (sid,))

    def update(self, ids: Iterable[str]) -> None:
        self._db.executemany("INSERT OR IGNORE INTO ids VALUES (?)", ((i,) for i in ids))


class Registry:
    """Every subject by id, title and alias; resolves names; mints ids. ``subjects`` holds
    the pages names resolve to; archives (``dream.wiki.rollover``: no name resolves to one)
    are asked for by ``archive_of``."""

    def __init__(
        self, subjects: list[Subject], taken: Iterable[str] | TakenIds, deletions: Deletions
    ) -> None:
        self.subjects: dict[str, Subject] = {}
        self._archives: dict[str, Subject] = {}
        self._keys: dict[str, str] = {}  # lower-cased title / alias / id -> id
        self._choices: list[str] = []
        self._choice_ids: list[str] = []
        self.taken = taken if isinstance(taken, TakenIds) else TakenIds(taken)
        self.deletions = deletions
        for s in subjects:
            self._add(s)

    @classmethod
    def load(cls, store: Store, deletions: Deletions) -> Registry:
        subjects: list[Subject] = []
        taken = TakenIds()
        for layer in ("knowledge", "notes"):
            top = store.memory / layer
            for dirpath, dirnames, filenames in os.walk(top):
                dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
                for name in sorted(filenames):
                    if not name.endswith(".md") or name.startswith("."):
                        continue
                    taken.add(name[:-3])
                    if layer != "knowledge":
                        continue
                    path = Path(dirpath, name)
                    rel = path.relative_to(store.memory).as_posix()
                    # a regular file only: a link to /dev/zero or a FIFO is never read
                    text = read_text(store.memory, rel, store.config.budgets.max_file_bytes)
                    if text is None:
                        continue
                    meta = _head_meta(text)
                    sid = str(meta.get("id") or name[:-3])
                    raw_aliases = meta.get("aliases") or []
                    aliases = [str(a) for a in raw_aliases] if isinstance(raw_aliases, list) else []
                    subjects.append(
                        Subject(
                            id=sid,
                            title=str(meta.get("title") or sid),
                            type=str(meta.get("type") or "topic"),
                            path=rel,
                            aliases=aliases,
                        )
                    )
        return cls(subjects, taken, deletions)

    def _add(self, s: Subject) -> None:
        self.taken.add(s.id)
        if _ARCHIVE_RE.search(s.id):
            self._archives[s.id] = s  # never what a name refers to; its main page is
            return
        self.subjects[s.id] = s
        for key in (s.id, s.title, *s.aliases):
            self._key(key, s.id)

    def _key(self, key: str, sid: str) -> None:
        low = key.lower()
        if low and low not in self._keys:
            self._keys[low] = sid
            self._choices.append(key)
            self._choice_ids.append(sid)

    def add_alias(self, s: Subject, alias: str) -> bool:
        """Record ``alias`` for ``s``; True when it is new for that page."""
        known = {a.lower() for a in (s.title, s.id, *s.aliases)}
        if alias.lower() in known:
            return False
        s.aliases.append(alias)
        self._key(alias, s.id)
        return True

    def type_of(self, name: str) -> str:
        """The type of the subject ``name`` is the title, alias or id of ("" when none is):
        an exact look-up, with none of ``resolve``'s fuzzy matching."""
        sid = self._keys.get(name.lower()) or self._keys.get(slugify(name))
        return self.subjects[sid].type if sid else ""

    def resolve(self, name: str, kind: str = "") -> Subject | None:
        """The existing subject ``name`` refers to, or None."""
        sid = self._keys.get(name.lower()) or self._keys.get(slugify(name))
        if sid:
            return self.subjects[sid]
        if not self._choices:
            return None
        hit = process.extractOne(
            name, self._choices, scorer=fuzz.token_set_ratio, score_cutoff=_FUZZ_CUTOFF
        )
        if hit is None:
            return None
        choice, _, index = hit
        subject = self.subjects[self._choice_ids[index]]
        if not _same_subject(name, choice, subject.type, kind):
            return None
        if subject.type == "place" and _place_head(name, choice):
            # "the Keys" names "Florida Keys" only when no other place ends in "Keys"
            ends = {s.id for s in self.subjects.values() if s.type == "place"
                    for key in (s.title, *s.aliases) if _place_head(name, key)}  # fmt: skip
            return subject if len(ends) == 1 else None
        return subject

    def create(self, name: str, kind: str, title: str = "") -> Subject | None:
        """A new subject page for ``name`` (None when its id is tombstoned)."""
        base = slugify(title or name, empty=kind or "subject")
        if base in self.deletions.pages or has_phrase(title or name, self.deletions):
            return None
        sid = self.new_id(base)
        folder = FOLDERS.get(kind, "topics")
        s = Subject(sid, title or name, kind, f"knowledge/{folder}/{sid}.md", new=True)
        self._add(s)
        return s

    def preferences_of(self, person: Subject) -> Subject | None:
        """The per-user preferences page of ``person`` (created on first use)."""
        sid = f"{person.id}-preferences"
        if sid in self.subjects:
            return self.subjects[sid]
        if sid in self.deletions.pages:
            return None
        s = Subject(
            sid,
            f"{person.title}'s preferences",
            "preference",
            f"knowledge/preferences/{sid}.md",
            new=True,
        )
        self.subjects[sid] = s
        self.taken.add(sid)
        self._keys.setdefault(sid, sid)
        return s

    def archive_of(self, s: Subject, period: str) -> Subject:
        """The archive page of ``s`` for ``period`` (``dream.wiki.rollover``), made on first use."""
        sid = f"{s.id}-archive-{period}"
        archive = self._archives.get(sid)
        if archive is None:
            folder = s.path.rsplit("/", 1)[0]
            title = f"{s.title} ({period} archive)"
            archive = Subject(sid, title, s.type, f"{folder}/{sid}.md", new=True)
            self._add(archive)
        return archive

    def new_id(self, base: str) -> str:
        sid, n = base, 2
        while sid in self.taken or sid in self.deletions.pages:
            sid = f"{base}-{n}"
            n += 1
        self.taken.add(sid)
        return sid


def _place_head(name: str, title: str) -> bool:
    """``name`` is the last word(s) of a longer place name: "Keys" of "Florida Keys"."""
    short, long_ = name.lower().split(), title.lower().split()
    return 0 < len(short) < len(long_) and long_[-len(short) :] == short


def _same_subject(name: str, choice: str, page_type: str, kind: str) -> bool:
    """Guard on a fuzzy hit: a spelling variant, or a short form of a person's or an
    organisation's full name ("Priya" / "Natarajan" for "Priya Natarajan", "Tidewater"
    for "Tidewater Analytics") or of a place's ("the Keys" for "Florida Keys"), never a
    common word inside a long name."""
    if fuzz.ratio(name.lower(), choice.lower()) >= _FUZZ_CUTOFF:
        return True
    a, b = name.lower().split(), choice.lower().split()
    short, long_ = (a, b) if len(a) <= len(b) else (b, a)
    if not short or not set(short) <= set(long_):
        return False
    if kind and kind not in ("topic", page_type):
        return False
    if page_type == "person":
        return short[0] == long_[0] or short[-1] == long_[-1]
    if page_type in ("org", "project"):
        return short[0] == long_[0]
    if page_type == "place":
        return _place_head(name, choice)  # the head of the name, never "Berlin" of "Berlin Hbf"
    return False
