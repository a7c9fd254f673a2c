"""Gate 2 on the lines of a page's ``## Profile``: each thing's new citations name it.

A profile line (``dream.wiki.profile``) names up to six things, each citing up to four turns
of distinct sessions. Checked as one claim against all the turns it cites, every run
that changes a person page would read again most of the transcripts the person ever
spoke in, and say less: a thing citing a turn that does not name it would pass as long
as names, numbers and dates were somewhere in the line's turns. Here a well-formed profile
bullet (``dream.wiki.profile.bullet``: a facet's heading, then things each followed by
citations) is checked pair by pair: each (thing, citation) the base commit's version of
the page did not hold (the same thing key, the same ref with the same turn hash) must
cite a turn whose words name the thing (``dream.language.facets.thing_key`` of each of its
words, as the profile is built) and that supports the thing as a claim
(``check_claim``: names, numbers, dates). A pair the base held was checked when it was
committed (or is the user's own), as an unchanged claim is. A line that is not a
well-formed bullet is checked as any claim is.

Boundary: page bodies and sources in, problems out; turns come from the caller.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from dream.language.facets import thing_key, words
from dream.wiki.cited_names import turn_keys
from dream.wiki.profile import PROFILE, bullet
from memoryfs.pages.page import Page

__all__ = ["Pair", "Problems", "ProfileCheck", "base_pairs", "new_pairs", "names_thing"]

Pair = tuple[str, str, str]  # (thing key, ref, turn hash)
Problems = list[tuple[str, str]]  # (code, reason)
_ATX_RE = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")


def _keys(form: str) -> list[str]:
    return [thing_key(w) for w in words(form)]


def base_pairs(body: str, sources: dict[int, tuple[str, str]]) -> set[Pair]:
    """The (thing, citation) pairs of the profile bullets of a page's ``body``;
    ``sources``: id -> (ref, hash)."""
    out: set[Pair] = set()
    inside = False
    for line in body.split("\n"):
        heading = _ATX_RE.match(line)
        if heading:
            inside = heading.group(2) == PROFILE
            continue
        if not inside or "[cite:" not in line:
            continue
        for form, cites in bullet(line) or ():
            for key in _keys(form):
                out.update((key, *sources[n]) for n in cites if n in sources)
    return out


def new_pairs(
    line: str, sources: dict[int, tuple[str, str]], old: set[Pair]
) -> list[tuple[str, int]] | None:
    """(thing, citation) of each pair of the profile bullet ``line`` not in ``old``;
    None when ``line`` is not a well-formed bullet (it is checked as a claim)."""
    things = bullet(line)
    if things is None or any(not _keys(form) for form, _ in things):
        return None
    out: list[tuple[str, int]] = []
    for form, cites in things:
        keys = _keys(form)
        for n in cites:
            src = sources.get(n)
            if src is None or any((key, *src) not in old for key in keys):
                out.append((form, n))
    return out


def names_thing(form: str, text: str) -> bool:
    """Whether a turn saying ``text`` names the thing ``form`` (as ``dream.wiki.profile`` asks)."""
    keys = turn_keys(text)
    return all(k in keys for k in _keys(form))


class ProfileCheck:
    """The profile bullets of one changed ``page``, pair by pair, against ``old`` (its
    version in the base commit; None when new). ``turn_text(ref)``: the cited turn's text
    (None: no such turn, which validation reports); ``check(thing, ref)``:
    ``check_claim`` of the thing against that turn."""

    def __init__(
        self,
        page: Page,
        old: Page | None,
        turn_text: Callable[[str], str | None],
        check: Callable[[str, str], Problems],
    ) -> None:
        self.page, self.old, self.turn_text, self._check = page, old, turn_text, check
        self._sources: dict[int, tuple[str, str]] | None = None
        self._old: set[Pair] = set()
        self._lines: list[str] = []

    def check(self, line_no: int) -> Problems | None:
        """(code, reason) for each new pair of the bullet at line ``line_no`` of the file
        whose turn does not name or support its thing; None: not a well-formed bullet."""
        if self._sources is None:  # the page's first profile line
            self._sources = _sources(self.page)
            self._lines = self.page.body.split("\n")
            if self.old is not None:
                self._old = base_pairs(self.old.body, _sources(self.old))
        at = line_no - self.page.body_line
        line = self._lines[at] if 0 <= at < len(self._lines) else ""
        pairs = new_pairs(line, self._sources, self._old)
        if pairs is None:
            return None
        problems: Problems = []
        for form, n in pairs:
            ref = self._sources[n][0] if n in self._sources else None
            text = self.turn_text(ref) if ref is not None else None
            if ref is None or text is None:
                continue
            if not names_thing(form, text):
                problems.append(("DV104", f"thing {form!r} is not named in the cited turn [{n}]"))
            problems.extend((code, f"{why} [{n}]") for code, why in self._check(form, ref))
        return problems


def _sources(page: Page) -> dict[int, tuple[str, str]]:
    """id -> (ref, turn hash) of the page's well-formed sources."""
    out: dict[int, tuple[str, str]] = {}
    for sid, ref, item in page.source_items():
        digest = item.get("hash", "")
        out[sid] = (ref, digest if isinstance(digest, str) else str(digest))
    return out
