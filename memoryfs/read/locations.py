"""Short, unambiguous names for the files a recall output points at (``s01#t3`` for a
turn, ``melanie`` for a page): a location costs a few tokens on the line it belongs to,
and no legend of paths is needed. Used by ``memoryfs.read.recall``.
"""

from __future__ import annotations

import re
from typing import Protocol

from memoryfs.pages.archives import Families

__all__ = ["FileNames", "NameLookup"]

_TRANSCRIPTS = "sessions/transcripts/"
_SUMMARIES = "sessions/summaries/"
_LETTER_RE = re.compile(r"[^\W\d_]")


class FileNames:
    """Short, unambiguous names for the files a synthesis points at.

    A name resolves to the file called ``NAME.md`` if there is exactly one, else
    to the one file whose name ends in ``-NAME.md``. A file gets the shortest
    hyphen-separated tail of its name that holds a letter and resolves back to it
    (``s01`` for ``2023-05-08-conv-26-s01``, ``archive-2023-03`` for
    ``john-archive-2023-03``, ``caroline`` for ``knowledge/people/caroline.md``);
    a session's transcript and summary share one name (``#tN`` says turn, ``:L``
    says line). A file name shared by two files in different folders keeps its
    path (without ``.md``). So a location costs a few tokens, on the line it
    belongs to, and no legend is needed. A claim rolled into an archive is cited
    under its page's name (``page``): the page links its archives, and an archive's
    name would cost eight tokens on every line. Each name costs a few indexed lookups
    (``SearchIndex.named`` / ``name_taken``), not a pass over every indexed path.
    """

    def __init__(self, files: NameLookup, families: Families | None = None) -> None:
        self._files = files
        self._families = families or Families(())
        self._cache: dict[str, str] = {}

    def __call__(self, path: str) -> str:
        name = self._cache.get(path)
        if name is None:
            name = self._cache[path] = self._name(path)
        return name

    def page(self, path: str) -> str:
        """The name of the page ``path`` is part of (an archive's: its main page's)."""
        return self(self._families.main_of(path))

    def _name(self, path: str) -> str:
        stem = _stem(path)
        if not stem or len({_session_key(p) for p in self._files.named(stem)}) > 1:
            return path.removesuffix(".md")
        parts = stem.split("-")
        for n in range(1, len(parts)):
            tail = "-".join(parts[-n:])
            if not _LETTER_RE.search(tail):
                continue  # "12" or "2022-12" would read as a number or a date
            if not self._files.name_taken(tail, stem):
                return tail
        return stem


class NameLookup(Protocol):
    """What naming asks of the file list (``SearchIndex``: indexed lookups, not a scan)."""

    def named(self, stem: str) -> list[str]: ...

    def name_taken(self, tail: str, stem: str) -> bool: ...


def _stem(path: str) -> str:
    return path.rsplit("/", 1)[-1].removesuffix(".md")


def _session_key(path: str) -> str:
    """Transcript and summary of one session count as one file for naming."""
    for folder in (_TRANSCRIPTS, _SUMMARIES):
        if path.startswith(folder):
            return "sessions/" + path[len(folder) :]
    return path
