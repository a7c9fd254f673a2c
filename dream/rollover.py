"""Keeping hub pages bounded: old dated sections roll over into monthly archive pages.

Job: a subject everyone talks about (the user, the main project) would otherwise gather
every claim ever made, so each run would load and rewrite an ever larger page. When a page
holds more than ``ROLL_AT`` current claims, its oldest dated sections move to
``<id>-archive-<yyyy-mm>`` pages (same folder and type) until ``ROLL_KEEP`` remain, with
their citations (monthly: a yearly archive of a hub subject outgrew the page size limit on a
1,000-session store); claims that fill a functional slot (role, city, ...) stay, so
supersession still sees them, and so do the newest ``KEEP_HISTORY`` history lines. The
main page links its archives under Related and drops the sources nothing cites any more.

Boundary: pure page surgery on ``WikiPage`` objects; the wiki phase decides when and
writes the results.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from dream.pagewriter import HISTORY, Claim

if TYPE_CHECKING:
    from dream.wiki import WikiPage

__all__ = ["ROLL_AT", "ROLL_KEEP", "KEEP_HISTORY", "needs_roll", "roll"]

ROLL_AT = 400
ROLL_KEEP = 250
KEEP_HISTORY = 60
_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_SUPERSEDED_ON_RE = re.compile(r"superseded on (\d{4}-\d{2})-\d{2}")
_CITE_RE = re.compile(r"\[cite:(\d+)\]")


def needs_roll(page: WikiPage) -> bool:
    return page.current_count() > ROLL_AT or page.history_count() > 2 * KEEP_HISTORY


def roll(page: WikiPage, archive_of: Callable[[str], WikiPage]) -> list[str]:
    """Move old claims of ``page`` to its monthly archives; the archive ids it filled."""
    filled: list[str] = []

    def move(title: str, claim: Claim, year: str) -> None:
        archive = archive_of(year)
        cites = []
        for n in claim.cites:
            entry = page.sources.entry(n)
            if entry is not None:
                cites.append(archive.sources.copy(entry))
        archive.put(title, Claim(claim.text, tuple(dict.fromkeys(cites)), claim.tail))
        if archive.subject.id not in filled:
            filled.append(archive.subject.id)

    surplus = page.current_count() - ROLL_KEEP
    for entry in page.current_entries():  # oldest first
        if surplus <= 0:
            break
        if page.slot_of(entry):
            continue  # a role or a city stays where supersession looks for it
        page.take(entry)
        move(entry.sec.title, entry.claim, entry.sec.title[:7])
        surplus -= 1
    history = page.history_entries()
    for entry in history[: max(0, len(history) - KEEP_HISTORY)]:
        m = _SUPERSEDED_ON_RE.search(entry.claim.tail)
        month = m.group(1) if m else (page.first_date() or "0000-00")[:7]
        page.take(entry)
        move(HISTORY, entry.claim, month)
    if filled:
        used = {int(n) for n in _CITE_RE.findall(page.outline.render())}
        page.sources.keep_only(used)
    return filled
