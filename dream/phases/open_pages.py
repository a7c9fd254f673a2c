"""The subject pages the wiki phase holds open, bounded so a full run's memory stays flat.

Job: give the wiki phase (``dream.phases.wiki``) a subject's ``WikiPage``, loading it on first use,
and keep at most a budget of claim entries open (``budget_for``: ``PAGE_BUDGET``, less for
a run of few sessions). Past the budget the pages used least
recently are let go: rendered, staged with the run's other writes (``Workset.write``) and
dropped; the next use loads the staged text again. A page's rendered text holds everything
filing needs (its claims, sources, links and dates), so letting a page go and loading it
again gives the same bytes as holding it (tests compare whole trees with a budget of one).
What the text does not hold, whether the page got a dated claim this run (for its links),
is kept here. Without the bound a full run held every page it touched until the end: the
store's whole wiki, pages and archives, in memory at once.
Boundary: pages only; what to file on them, rollover and links stay in ``dream.phases.wiki``.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable

from dream.phases.workset import Workset
from dream.wiki.subject_page import WikiPage
from dream.wiki.subjects import Registry, Subject
from memoryfs.pages.archives import main_stem

__all__ = ["PAGE_BUDGET", "LivePages", "budget_for"]

# Claim entries held open (a claim line, its indexes and keys: ~1 KB each). The pages one
# night's sessions touch fit; a full run of a large store lets its cold pages go. (Counting
# the pages' source entries too, or 4,000 claims, let pages go so often that a full run of
# 2,000 sessions took twice as long; so did source entries at half a claim, +24% of the
# summarize-to-wiki time.) 5,000, a trim keeping 3/4 of it and a look once an eighth of it
# was opened: the open set peaks at ~5,600 claims, not ~7,500 as with 6,000, half and a
# quarter, in about the same time (4,000 sessions: wiki peak 57.9 -> 56.6 MB).
PAGE_BUDGET = 5_000
# A run of a few sessions holds less: the pages it touches are in proportion to its
# sessions (20 touch ~58 pages), and holding them all only costs memory. A 20-session run
# holds 2,500: the touched pages of a 500-session store (3,578 claims) and of a 2,000 one
# (5,494) no longer both fit, one not the other, so its peak stops growing with the store
# (43.6 MB at 2,000 sessions, 46.5 with 5,000; +0.35 s). A run of 50 sessions or more holds
# the full budget: a full run of 2,000 sessions took 98 s with 2,500, 82 s with 5,000.
MIN_BUDGET = 2_500
PER_SESSION = 100
KEEP = 3 / 4  # of the budget kept open by a trim: what was let go is opened again less
TRIM_EVERY = 200  # edits between two looks at the total (``step``)


def budget_for(sessions: int) -> int:
    """The claim entries a run consolidating ``sessions`` sessions holds open."""
    return min(PAGE_BUDGET, max(MIN_BUDGET, PER_SESSION * sessions))


class LivePages:
    """Open ``WikiPage`` objects by subject id, least recently used first."""

    def __init__(
        self,
        ws: Workset,
        speakers: set[str],
        registry: Registry | None,
        keys_of: Callable[[str], tuple[str, frozenset[str]] | None],
        budget: int | None = None,
    ) -> None:
        """``speakers``: the display names of the people who spoke in the run's sessions;
        ``registry``: the subjects, for the kind of a thing a claim names (None: unknown);
        ``budget``: the claim entries held open (``budget_for``), ``PAGE_BUDGET`` if None."""
        self._ws = ws
        self._speakers = speakers
        self._registry = registry
        self._budget = PAGE_BUDGET if budget is None else budget
        self._keys_of = keys_of
        self._open: OrderedDict[str, WikiPage] = OrderedDict()
        self._staged: set[str] = set()  # pages let go with their text staged
        # let go changed with a profile (person pages): regenerated at the end
        self._unsettled: set[str] = set()
        self._dated: set[str] = set()  # pages let go after a dated claim this run
        # every page but archives opened this run: a full run rolls thousands of archives
        # (1,576 at 8,000 sessions), none with a profile to settle or a link to make later
        self._subjects: dict[str, Subject] = {}
        self._steps = 0
        self._loaded = 0  # the size of the pages opened since the last trim

    def get(self, subject: Subject) -> WikiPage:
        """The page of ``subject``, opened on first use (a new subject: a new page)."""
        page = self._open.get(subject.id)
        if page is not None:
            self._open.move_to_end(subject.id)
            return page
        staged = subject.id in self._staged  # its text is this run's: not memoized
        fresh = subject.new and not staged
        text = None if fresh else self._ws.read(subject.path)
        page = WikiPage(subject, text, self._speakers, memo=not staged)
        page.keys_of = self._keys_of
        if self._registry is not None:
            page.kind_of = self._registry.type_of
        self._loaded += page.size
        self._open[subject.id] = page
        if main_stem(subject.path) is None:
            self._subjects[subject.id] = subject
        return page

    def __getitem__(self, sid: str) -> WikiPage:
        """An open page (``get`` first): rollover asks for the archive it just opened."""
        return self._open[sid]

    def opened(self) -> list[Subject]:
        """Every subject whose page was opened this run, archives aside, in first-use order."""
        return list(self._subjects.values())

    def dated(self, sid: str) -> bool:
        """Whether the page got a dated claim this run (open or let go)."""
        page = self._open.get(sid)
        return sid in self._dated or (page is not None and page.dated)

    def live(self) -> list[WikiPage]:
        return list(self._open.values())

    def step(self) -> None:
        """One edit done (the caller holds no page): every ``TRIM_EVERY``, or once the
        pages opened since add up to an eighth of the budget, ``trim``."""
        self._steps += 1
        if self._steps % TRIM_EVERY == 0 or self._loaded > self._budget // 8:
            self.trim()

    def trim(self) -> None:
        """Let go of the least recently used pages while over the budget, down to ``KEEP``
        of it. Only between two edits: a page let go while a caller still edits it would lose
        the edit."""
        self._loaded = 0
        total = sum(p.size for p in self._open.values())
        if total <= self._budget:
            return
        for sid in list(self._open):
            if total <= self._budget * KEEP:
                return
            total -= self._open[sid].size
            self._release(sid, final=False)

    def _release(self, sid: str, final: bool) -> None:
        """Stage the page if it changed (or is new) and drop it. Its profile is regenerated
        once, at the end (``final``): each regeneration carries what the last one listed
        for rolled claims (``dream.wiki.profile``), so an extra one mid-run would change it.
        A page without a profile is staged as it will stay: it is not opened again."""
        page = self._open.pop(sid)
        if page.dated:
            self._dated.add(sid)
        changed = page.changed or sid in self._unsettled
        if final and changed:
            page.refresh_profile()
        if changed or (page.subject.new and sid not in self._staged):
            self._ws.write(page.subject.path, page.render(profile=False))
            self._staged.add(sid)
        if final:
            self._unsettled.discard(sid)
        elif changed and page.has_profile:
            self._unsettled.add(sid)

    def close(self) -> None:
        """Stage every page that changed this run with its final profile; nothing stays open."""
        for sid in list(self._open):
            self._release(sid, final=True)
        for sid in sorted(self._unsettled):  # let go before the end: opened once more
            self.get(self._subjects[sid])
            self._release(sid, final=True)
