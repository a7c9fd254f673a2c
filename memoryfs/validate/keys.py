"""Pages ``memoryfs.validate.rules.validate_files`` knows by their keys only: the rest of
``knowledge/`` and ``notes/`` when a caller validates a few files of a large tree.

The cross-page rules (duplicate ids, an alias that is another page's id, links that
resolve to no page) need every page's id, aliases, file stem and link targets. A caller
hands them over as ``OtherPages``: ``KnownPages`` holds them in a dict (``PageKeys`` by
path); a caller with a large tree can answer the same questions from a database, so the
keys of every page are never all in memory (the Dream gate: ``dream.gates.pagekeys``).
Every method answers about the pages not yet ``discard``-ed.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Protocol

__all__ = ["PageKeys", "OtherPages", "KnownPages", "link_name", "stem", "unsafe"]

_SCHEME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://|^(?:file|data|javascript|mailto):", re.I)


@dataclass(frozen=True)
class PageKeys:
    """What the cross-page rules need of a page that ``validate_files`` does not read:
    the id and aliases other pages' links resolve to, and its own link targets."""

    id: str
    aliases: tuple[str, ...] = ()
    links: tuple[str, ...] = ()  # link targets as written


def stem(rel: str) -> str:
    return rel.rsplit("/", 1)[-1].removesuffix(".md")


def unsafe(path: str) -> str:
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


def link_name(target: str) -> str:
    """The page name a link target must resolve to; "" when there is none to check
    (an empty name, or an unsafe target: another rule)."""
    name = target.split("#", 1)[0].strip()
    return "" if not name or unsafe(target) else name


class OtherPages(Protocol):
    """The pages known by their keys. "Keys" of a page: its id, and its id, file stem
    and aliases lower-cased; a link resolves when its name, or the name lower-cased, is
    a key of some page. Page order (for the pages listed) is the caller's."""

    def __contains__(self, rel: object) -> bool: ...

    def discard(self, rels: Iterable[str]) -> None:
        """These pages are read in full from now on."""

    def with_ids(self, ids: Collection[str], lower: bool = False) -> list[tuple[str, str]]:
        """(id, path) of each page whose id (lower-cased if ``lower``) is in ``ids``."""

    def known(self, name: str) -> bool:
        """Whether ``name`` is a key of one of the pages."""

    def duplicated(self, ids: Collection[str]) -> set[str]:
        """Pages whose (non-empty) id is another of these pages' or in ``ids``."""

    def aliased(self, lowered: Collection[str]) -> list[tuple[str, str]]:
        """(path, alias) of each alias that, lower-cased, is one of these pages' ids
        lower-cased or in ``lowered``."""

    def dangling(self, keys: Collection[str]) -> set[str]:
        """Pages with a link whose name resolves neither among these pages nor to one
        of ``keys``."""


class KnownPages:
    """``OtherPages`` from a dict of ``PageKeys`` by path (copied; in its order)."""

    def __init__(self, pages: Mapping[str, PageKeys]) -> None:
        self.pages = dict(pages)
        self._keys: set[str] | None = None

    def __contains__(self, rel: object) -> bool:
        return rel in self.pages

    def discard(self, rels: Iterable[str]) -> None:
        for rel in rels:
            if self.pages.pop(rel, None) is not None:
                self._keys = None

    def with_ids(self, ids: Collection[str], lower: bool = False) -> list[tuple[str, str]]:
        return [
            (k.id, rel) for rel, k in self.pages.items() if (k.id.lower() if lower else k.id) in ids
        ]

    def known(self, name: str) -> bool:
        if self._keys is None:
            keys = {k.id for k in self.pages.values()}
            keys |= {k.id.lower() for k in self.pages.values()}
            keys |= {stem(rel).lower() for rel in self.pages}
            keys |= {a.lower() for k in self.pages.values() for a in k.aliases}
            self._keys = keys
        return name in self._keys

    def duplicated(self, ids: Collection[str]) -> set[str]:
        count = Counter(k.id for k in self.pages.values())
        return {rel for rel, k in self.pages.items() if k.id and (count[k.id] > 1 or k.id in ids)}

    def aliased(self, lowered: Collection[str]) -> list[tuple[str, str]]:
        ids = {*lowered, *(k.id.lower() for k in self.pages.values())}
        return [(rel, a) for rel, k in self.pages.items() for a in k.aliases if a.lower() in ids]

    def dangling(self, keys: Collection[str]) -> set[str]:
        def resolves(name: str) -> bool:
            return name in keys or self.known(name)

        out: set[str] = set()
        for rel, k in self.pages.items():
            for target in k.links:
                name = link_name(target)
                if name and not resolves(name) and not resolves(name.lower()):
                    out.add(rel)
                    break
        return out
