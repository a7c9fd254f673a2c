"""The subject pages the wiki phase holds open, bounded so a full run's memory stays flat.

Job: give the wiki phase (``dream.phases.wiki``) a subject's ``WikiPage``, loading it on first use,
and keep at most ``PAGE_BUDGET`` claim entries open. Past the budget the pages used least
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

__all__ = ["PAGE_BUDGET", "OpenPages"]

# Claim entries held open (a claim line, its indexes and keys: ~1 KB each). The pages one
# night's sessions touch fit; a full run of a large store lets its cold pages go. A trim
# keeps 3/4 of the budget open (what was let go is opened again less often), and the
# total is looked at every ``TRIM_EVERY`` edits or once an eighth of the budget was opened
# since the last look: the open set stays near the budget between two looks. Counting a
# page's source entries too let pages go so often that a full run took twice as long.
PAGE_BUDGET = 5_000
KEEP = 3 / 4  # of the budget kept open by a trim
TRIM_EVERY = 200  # edits between two looks at the total (``step``)


class OpenPages:
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
        ``budget``: the claim entries held open, ``PAGE_BUDGET`` if None."""
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
