"""Keeping hub pages bounded: old dated sections roll over into archive pages written once.

Job: a subject everyone talks about (the user, the main project) would otherwise gather
every claim ever made, and every run that files a claim there would load, rewrite and
re-check an ever larger page. When a page holds more than ``ROLL_AT`` current claims, its
oldest dated sections move, whole days at a time, to a new page
``<id>-archive-<yyyy-mm-dd>`` (same folder and type; the day is the oldest one it holds;
at most ``VOLUME`` current and ``VOLUME`` history claims, so a first run over a long
history makes a series of archives) until ``ROLL_KEEP`` remain, with their citations;
claims that fill a functional slot (role, city, ...) stay, so supersession still sees
them, and so do the newest ``KEEP_HISTORY`` history lines. A later roll starts after the
days an earlier one took, so it makes a new archive instead of rewriting an old one (a
monthly archive would be rewritten by every roll in its month): an archive is written
once. The main page links its newest archives under Related (``dream.phases.wiki``
``LINKED_ARCHIVES``), each archive its page and the archive before it, and the main page
drops the sources nothing cites any more.

The bound is low: a run that files a claim on a hub page loads, renders and re-checks at
most ``ROLL_AT`` current claims. Rolling early costs recall little because
``memoryfs.pages.archives`` folds archives into their page; a recall that weighs each
archive as a page of its own loses 3 points of cited evidence on LoCoMo conv-26 rolled at
60. LoCoMo, wiki
arm, 1,000 tokens, conv-41/42/43 (tuning data), S@5/EvD/EvC/Ans, multi-hop EvC, temporal Ans:
ROLL_AT 400 .874/.585/.822/.788/.619/.840; 80 .873/.590/.823/.785/.620/.840 (tuning
conv-26/30 EvC .852 -> .856); 60 (with archives' heads kept) .872/.587/.824/.790/.625/
.840; 120 with a recall that does not fold .878/.584/.817/.779/.595/.840. Dream's claims
are the same, only split. ``bench/bench_dream.py`` at 2,000 sessions, CPU seconds of the
run (the machine was loaded, wall times meaningless): ROLL_AT 400 full 61.9 s, incremental
3.46 s (5.6%), incremental peak 89.6 MB; 80: full 69.2 s, incremental 2.77 s (4.0%), peak
70.6 MB; 60: full 62.6 s, incremental 2.76 s (4.4%), peak 68.8 MB (full runs vary ~10%).

Boundary: pure page surgery on ``WikiPage`` objects; the wiki phase decides when and
writes the results.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from dream.wiki.render import HISTORY, Claim, day_of

if TYPE_CHECKING:
    from dream.wiki.subject_page import WikiPage

__all__ = [
    "ROLL_AT",
    "ROLL_KEEP",
    "KEEP_HISTORY",
    "VOLUME",
    "needs_roll",
    "roll",
]

ROLL_AT = 80
ROLL_KEEP = 40
KEEP_HISTORY = 60
VOLUME = ROLL_AT - ROLL_KEEP  # claims one archive takes at most (whole days: a few more)
_SUPERSEDED_ON_RE = re.compile(r"superseded on (\d{4}-\d{2}-\d{2})")
_CITE_RE = re.compile(r"\[cite:(\d+)\]")


def needs_roll(page: WikiPage) -> bool:
    return page.current_count() > ROLL_AT or page.history_count() > 2 * KEEP_HISTORY


def roll(page: WikiPage, archive_of: Callable[[str], WikiPage]) -> str:
    """Move old claims of ``page`` to a new archive; its id ("" when nothing moved).

    ``archive_of(day)`` gives the archive page named after ``day`` (new, or the one an
    earlier roll made for that day when a roll moves nothing newer)."""
    surplus = page.current_count() - ROLL_KEEP
    moving: list[Any] = []
    for entry in page.current_entries():  # oldest first
        full = surplus <= 0 or len(moving) >= VOLUME
        if full and (not moving or moving[-1].sec is not entry.sec):
            break  # whole days only: the next roll starts on a day of its own
        if page.slot_of(entry):
            continue  # a role or a city stays where supersession looks for it
        moving.append(entry)
        surplus -= 1
    history = page.history_entries()
    old_history: list[Any] = []
    if moving or len(history) > 2 * KEEP_HISTORY:  # with a roll anyway, or when due
        old_history = history[: min(VOLUME, max(0, len(history) - KEEP_HISTORY))]
    if not moving and not old_history:
        return ""
    if moving:
        day = day_of(moving[0].sec.title)
    else:
        m = _SUPERSEDED_ON_RE.search(old_history[0].claim.tail)
        day = m.group(1) if m else page.first_date() or "0000-00-00"
    archive = archive_of(day)

    def move(title: str, claim: Claim) -> None:
        cites = []
        for n in claim.cites:
            entry = page.sources.entry(n)
            if entry is not None:
                cites.append(archive.sources.copy(entry))
        archive.put(title, Claim(claim.text, tuple(dict.fromkeys(cites)), claim.tail))

    for entry in moving:
        page.take(entry)
        move(entry.sec.title, entry.claim)
    for entry in old_history:
        page.take(entry)
        move(HISTORY, entry.claim)
    used = {int(n) for n in _CITE_RE.findall(page.outline.render())}
    page.sources.keep_only(used)
    return archive.subject.id
