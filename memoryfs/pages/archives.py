"""A page and its archives: one page to recall.

Dream keeps a hub page bounded by rolling its old dated sections into archive pages
written once (``dream.wiki.rollover``): ``<id>-archive-<date>`` (a day, a month or a year) in
the page's folder, linked from the page under Related. What a person said is then spread
over a small current page and several archives. A recall that weighs pages as well as
claims and counts each archive as a page of its own loses, on LoCoMo with pages rolled at
120 claims, 1.7 points of cited evidence on conv-26/30 (0.5 on conv-41/42/43; all tuning data), for
reasons measured one by one:

- every line citing an archived claim names the archive (``melanie-archive-2023-05-08``,
  nine tokens instead of one), so fewer lines fit the budget;
- an archive's head (its own summary) takes a line, and two heads of one person make
  feedback (``memoryfs.read.expand``) pick the facet words they share ("outdoors", "crafts");
- "(2023-05-08 archive)" in the context column lengthens every archived claim's unit,
  so BM25 ranks it a little below the same claim on the page;
- archives take the best-page slots whose links recall follows, a link hop into a page
  searches only its current claims, and an alias of the page does not name its archives.

``Families`` maps each archive to its page (when that page is indexed) and each page to
its archives, so recall treats them as one (``memoryfs.read.recall``, ``memoryfs.read.search``,
``memoryfs.index.units``). A store without archives has no families: its recall is the
same with or without them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

__all__ = ["ARCHIVE_RE", "Families", "main_stem", "page_title"]

ARCHIVE_RE = re.compile(r"^(?P<main>.+)-archive-\d{4}(?:-\d{2}){0,2}$")  # daily, monthly, yearly
_QUALIFIER_RE = re.compile(r"\s*\([^()]*\)\s*$")


def main_stem(path: str) -> str | None:
    """The path the page at ``path`` would be an archive of, by name; None if not an archive."""
    folder, slash, name = path.rpartition("/")
    m = ARCHIVE_RE.match(name.removesuffix(".md"))
    return f"{folder}{slash}{m.group('main')}.md" if m else None


def page_title(path: str, title: str) -> str:
    """An archive's title as its page's: "Dana (2023-01-02 archive)" -> "Dana".

    The qualifier says where a claim is kept, not what it is about; other titles
    (and their parentheses) are left as they are.
    """
    if main_stem(path) is None:
        return title
    return _QUALIFIER_RE.sub("", title) or title


class Families:
    """Archives grouped under their page, among the indexed ``paths``.

    An archive whose page is not indexed (deleted, or a name that only looks like an
    archive's) stands for itself.
    """

    def __init__(self, paths: Iterable[str]) -> None:
        self._main: dict[str, str] = {}
        self._archives: dict[str, list[str]] = {}
        every = list(paths)
        named = sorted({p for p in every if "-archive-" in p})  # cheap: most stores have none
        if not named:
            return
        known = set(every)
        for path in named:
            main = main_stem(path)
            if main is not None and main in known:
                self._main[path] = main
                self._archives.setdefault(main, []).append(path)

    def main_of(self, path: str) -> str:
        """The page ``path`` is part of: its main page for an archive, else itself."""
        return self._main.get(path, path)

    def members(self, path: str) -> list[str]:
        """The page ``path`` is part of, then its archives (oldest first)."""
        main = self.main_of(path)
        return [main, *self._archives.get(main, ())]

    def is_archive(self, path: str) -> bool:
        return path in self._main

    def with_archives(self, paths: Sequence[str]) -> list[str]:
        """``paths`` with each page's archives right after it (and each family once)."""
        out: dict[str, None] = {}
        for path in paths:
            for member in self.members(path):
                out.setdefault(member, None)
        return list(out)
