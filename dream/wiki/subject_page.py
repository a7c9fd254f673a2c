"""A subject page as the wiki phase edits it: its claims indexed for merging and supersession.

Job: ``WikiPage`` loads a page's text once and files facts on it: a claim already held with
that evidence is a duplicate, a near-duplicate current claim takes the new citations (up to
``MAX_CITES``), a claim filling the same functional slot (role, city, manager, a changed
preference) supersedes the current one (the old line moves under ``## History`` marked
``(superseded on <date>)``), a claim saying a value no longer holds ("no longer works at
X") supersedes the current claim of that slot naming it, anything else goes under the
session's dated section. It also
gives rollover (``dream.wiki.rollover``) the entries it moves, adds Related links, and renders
the page with refreshed frontmatter (sources, aliases, ``summary``, ``updated``).
Boundary: one page in memory; the phase that drives it is ``dream.phases.wiki``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from rapidfuzz import fuzz

from dream.engines.embedded.extract import CHANGE_RE, claim_slot
from dream.gates.slots import clash, slot_of
from dream.language.cues import KindOf, closed_slots, slot_parts
from dream.records import Fact
from dream.wiki.claim_keys import MERGE_RATIO, ClaimEntry, blocking_keys, norm
from dream.wiki.profile import PROFILE, carried, profile_lines, summary_parts
from dream.wiki.render import (
    HISTORY,
    RELATED,
    Claim,
    Outline,
    as_date,
    day_of,
    day_title,
    load_page_text,
    new_subject_body,
    page_text,
    parse_claim,
    render_claim,
)
from dream.wiki.sources import Sources
from dream.wiki.subjects import Subject
from memoryfs.errors import PageError
from memoryfs.pages.archives import main_stem
from memoryfs.pages.page import Page

__all__ = ["MAX_CITES", "Retired", "WikiPage"]

_LINK_RE = re.compile(r"\[\[([^\[\]|\n]+)")
_RELATED_LINE_RE = re.compile(r"- \[\[([^\[\]|\n]+)\|([^\[\]\n]+)\]\]")  # a Related line
_NUMBER_RE = re.compile(r"\d+(?:[.,:]\d+)*")
MAX_CITES = 8  # citations kept on one claim; later repetitions do not touch the page
_SUMMARY_CHARS = 140
_PERSON_SUMMARY_CHARS = 200


@dataclass(frozen=True, slots=True)
class Retired:
    """A claim a page just superseded: its text, the day it was said, the day it was
    superseded, and the turns it cites."""

    text: str
    said: str
    on: str
    refs: frozenset[str]
    days: frozenset[str] = frozenset()  # the days of the turns it cites (its notes' days)


class WikiPage:
    """One subject page being edited in memory, with its claims indexed by text, by
    near-duplicate key and by slot, so filing a claim costs the same on a page of ten
    claims as on a page of ten thousand."""

    def __init__(
        self, subject: Subject, text: str | None, speakers: set[str], memo: bool = True
    ) -> None:
        """``memo=False``: ``text`` is this run's own (a page let go and opened again),
        which no gate reads: it is not kept in the parse memo."""
        self.subject = subject
        self.page: Page | None = None
        if text is not None:
            try:
                self.page = load_page_text(text, subject.path, memo)
            except PageError:
                self.page = None
        body = self.page.body if self.page else new_subject_body(subject.title)
        self.meta: dict[str, Any] = dict(self.page.meta) if self.page else {}
        self.outline = Outline(body)
        # the sources list is held apart, compactly (``dream.wiki.sources``), and not as the
        # parsed dicts: the page's text, its claims and its citations are what stays open
        listed = self.meta.get("sources")
        if isinstance(listed, list) and listed:
            del self.meta["sources"]
        else:
            listed = None
        self.sources = Sources(listed)
        # rendered from the outline; ``meta`` is the page's, less its sources list
        self.page = self.page and replace(self.page, body="", meta=dict(self.meta))
        self.names = [subject.title, subject.title.split()[0], *subject.aliases]
        if subject.type == "person" and subject.title in speakers:
            self.names.append("We")
        self.kind = "preference" if subject.type == "preference" else ""
        # the days of the claims filed this run, as their first and last (not one string a claim)
        self.dated = False
        self.first_day = self.last_day = ""
        # claims this page just superseded, for their notes and their copies on other pages
        self.retired: list[Retired] = []
        self._by_norm: dict[str, list[ClaimEntry]] = {}  # norm -> the entries with it
        self._by_key: dict[str, list[ClaimEntry]] = {}
        self._by_slot: dict[str, list[ClaimEntry]] | None = None
        self._all: dict[ClaimEntry, None] = {}  # every entry, in the order indexed
        for sec, line, claim in self.outline.claims():
            if sec.title != PROFILE:  # generated from the claims (dream.wiki.profile)
                self._index(ClaimEntry(sec, line, claim))
        # ref -> the cited turn's speaker and thing keys (None: unknown); the wiki phase
        # answers from ``dream.wiki.cited_names``
        self.keys_of: Callable[[str], tuple[str, frozenset[str]] | None] = lambda ref: None
        self._named: dict[int, frozenset[str]] = {}
        # what a name is known as ("org", "place", ...; "" unknown): a move to an
        # organisation fills the role, not the city (``dream.language.cues.claim_slot``); the wiki
        # phase answers from the store's subjects
        self.kind_of: KindOf = lambda name: ""
        # a person who speaks in the transcripts: their profile cites their own words only
        self._voice = {n.lower() for n in self.names} if "We" in self.names else None

    # -- what rollover needs ----------------------------------------------------------

    def current_count(self) -> int:
        return sum(1 for e in self._all if e.current)

    def history_count(self) -> int:
        return sum(1 for e in self._all if e.sec.title == HISTORY)

    def _ordered(self, keep: Callable[[ClaimEntry], bool]) -> list[ClaimEntry]:
        entries = [e for e in self._all if keep(e)]
        return sorted(entries, key=lambda e: (e.sec.title, e.sec.lines.index(e.line)))

    def current_entries(self) -> list[ClaimEntry]:
        """Current claims, oldest section first, in page order within a section."""
        return self._ordered(lambda e: e.current)

    def history_entries(self) -> list[ClaimEntry]:
        return self._ordered(lambda e: e.sec.title == HISTORY)

    def slot_of(self, e: ClaimEntry) -> str:
        if e.slot is None:
            e.slot = self._text_slot(e.claim.text)
        return e.slot

    def _text_slot(self, text: str) -> str:
        return claim_slot(text, self.names, self.kind, self.kind_of)

    def first_date(self) -> str:
        dated = [d for sec in self.outline.sections if (d := day_of(sec.title))]
        return min(dated) if dated else ""

    def take(self, e: ClaimEntry) -> None:
        self._unindex(e)
        self.outline.remove(e.sec, e.line)

    def put(self, title: str, claim: Claim) -> None:
        if not any(e.claim.cites == claim.cites for e in self._exact(norm(claim.text))):
            self._append(title, claim)
            if day_of(title):
                self._dated(day_of(title))

    def _dated(self, day: str) -> None:
        self.first_day = min(self.first_day, day) if self.dated else day
        self.last_day = max(self.last_day, day) if self.dated else day
        self.dated = True

    # -- indexes -------------------------------------------------------------------

    def _exact(self, normed: str) -> list[ClaimEntry]:
        return self._by_norm.get(normed, [])

    def _index(self, e: ClaimEntry) -> None:
        self._all[e] = None
        self._by_norm.setdefault(e.norm, []).append(e)
        if not e.current:
            return
        for key in blocking_keys(e.norm):
            self._by_key.setdefault(key, []).append(e)
        if self._by_slot is not None:
            self._slot_index(e)

    def _slot_index(self, e: ClaimEntry) -> None:
        assert self._by_slot is not None
        for part in slot_parts(self.slot_of(e)):
            self._by_slot.setdefault(part, []).append(e)

    def _unindex(self, e: ClaimEntry) -> None:
        del self._all[e]
        self._by_norm[e.norm].remove(e)
        for key in blocking_keys(e.norm):
            bucket = self._by_key.get(key, [])
            if e in bucket:
                bucket.remove(e)
        if self._by_slot is not None:
            for part in slot_parts(e.slot or ""):
                self._by_slot[part].remove(e)

    def _slots(self, slot: str) -> list[ClaimEntry]:
        """Current claims sharing a slot with ``slot`` ("city+role" shares both), page order."""
        if self._by_slot is None:  # built on first need: most pages never supersede
            self._by_slot = {}
            for e in self._all:
                if e.current:
                    self._slot_index(e)
        by_slot = self._by_slot
        return list({id(e): e for part in slot_parts(slot) for e in by_slot.get(part, [])}.values())

    def add(self, fact: Fact) -> str:
        """File ``fact``; returns what happened: added, merged, superseded or duplicate."""
        result = self._add(fact)
        if result != "duplicate":
            self._dated(fact.evidence[0].date)
        if self.sources.changed and self.page is not None and self.page.raw_meta is not None:
            # new sources: the frontmatter will be written anew, its old text is not needed
            self.page = replace(self.page, raw_meta=None)
        return result

    def _append(self, title: str, claim: Claim) -> None:
        line = render_claim(claim)
        sec = self.outline.append(title, line)
        self._index(ClaimEntry(sec, line, claim))

    def _add(self, fact: Fact) -> str:
        refs = {e.ref for e in fact.evidence}
        new = norm(fact.text)
        day = fact.evidence[0].date
        exact = self._exact(new)
        for e in exact:
            if refs <= {self.sources.ref_of(n) for n in e.claim.cites}:
                return "duplicate"  # filed before (a session read again after it grew)
        near = {id(e): (100.0, e) for e in exact if e.current}  # id -> (how alike, entry)
        numbers = _NUMBER_RE.findall(new)
        for key in blocking_keys(new):
            for e in self._by_key.get(key, []):
                if id(e) in near or _NUMBER_RE.findall(e.norm) != numbers:
                    continue  # "0.8 has 2465 recordings" is not "0.8 has 2459 recordings"
                if (alike := fuzz.ratio(e.norm, new)) >= MERGE_RATIO and not self._other_value(
                    e.claim.text, fact.text
                ):
                    near[id(e)] = (alike, e)
        if near:
            e = self._closest(list(near.values()))
            if len(e.claim.cites) >= MAX_CITES:
                return "duplicate"  # said often enough: more citations add bulk, not proof
            cited = {self.sources.ref_of(n) for n in e.claim.cites}
            extra = tuple(self.sources.cite(ev) for ev in fact.evidence if ev.ref not in cited)
            merged = Claim(e.claim.text, e.claim.cites + extra, e.claim.tail)
            self._unindex(e)
            line = render_claim(merged)
            self.outline.replace(e.sec, e.line, line)
            self._index(ClaimEntry(e.sec, line, merged))
            return "merged"
        claim = Claim(fact.text, tuple(dict.fromkeys(self.sources.cite(e) for e in fact.evidence)))
        slot = fact.slot
        closes: tuple[tuple[str, str], ...] = ()
        if self.subject.type == "person":
            # read from the text, as the slots of the claims already here are: the session
            # may have typed the name otherwise ("Rui moved to ..." a topic, Rui's page a person)
            slot = slot or self._text_slot(fact.text)
            closes = closed_slots(fact.text, self.names)
        retiring = [e for e in self._closed(closes) if day_of(e.sec.title) <= day]
        if slot and (not slot.startswith("preference") or CHANGE_RE.search(fact.text)):
            older = self._slots(slot)
            if any(day_of(e.sec.title) > day for e in older):
                # a session read late: the page already holds a newer value
                later = min(day_of(e.sec.title) for e in older if day_of(e.sec.title) > day)
                self._append(HISTORY, Claim(claim.text, claim.cites, f" (superseded on {later})"))
                self.retired.append(
                    Retired(claim.text, day, later, self._refs(claim), self._days(claim))
                )
                return "superseded"
            retiring = list({id(e): e for e in (*older, *retiring)}.values())
        for e in retiring:
            self._retire(e, day)
        self._append(day_title(day), claim)
        return "superseded" if retiring else "added"

    def _other_value(self, held: str, text: str) -> bool:
        """``text`` gives a slot another value than ``held`` does ("works as designer at X"
        and "works as data engineer at X" are alike, but one supersedes the other), as the
        verification gate reads slots (``dream.gates.slots``)."""
        if self.subject.type != "person":
            return False
        a, b = slot_of(held, self.names, self.kind_of), slot_of(text, self.names, self.kind_of)
        return a is not None and b is not None and a[0] == b[0] and clash(a[1], b[1])

    def _closed(self, closes: tuple[tuple[str, str], ...]) -> list[ClaimEntry]:
        """The current claims of each closed slot that name its value ("Rui works at the
        Douro Research Centre" for ("role", "Douro Research Centre")), page order."""
        out: dict[int, ClaimEntry] = {}
        for slot, value in closes:
            said = re.compile(rf"\b{re.escape(value.lower())}\b")
            for e in self._slots(slot):
                if said.search(e.claim.text.lower()):
                    out[id(e)] = e
        return list(out.values())

    def _retire(self, e: ClaimEntry, day: str) -> None:
        """Move current claim ``e`` under History, superseded on ``day``."""
        self._unindex(e)
        self.outline.remove(e.sec, e.line)
        tail = f"{e.claim.tail} (superseded on {day})"
        self._append(HISTORY, Claim(e.claim.text, e.claim.cites, tail))
        self.retired.append(
            Retired(
                e.claim.text, day_of(e.sec.title), day, self._refs(e.claim), self._days(e.claim)
            )
        )

    def _closest(self, near: list[tuple[float, ClaimEntry]]) -> ClaimEntry:
        """The near-duplicate a claim merges into: the most alike, then the first in page
        order, so the choice depends on the page, not on the order claims were filed in."""
        order = {id(sec): i for i, sec in enumerate(self.outline.sections)}
        at = {id(e): (order.get(id(e.sec), len(order)), e.sec.lines.index(e.line)) for _, e in near}
        return min(near, key=lambda pair: (-pair[0], at[id(pair[1])]))[1]

    def _refs(self, c: Claim) -> frozenset[str]:
        return frozenset(self.sources.ref_of(n) for n in c.cites)

    def _days(self, c: Claim) -> frozenset[str]:
        found = (self.sources.entry(n) for n in c.cites)
        return frozenset(str(e["at"])[:10] for e in found if e is not None and e.get("at"))

    def retire_copy(self, old: Retired) -> bool:
        """Supersede this page's current copy of a claim another page superseded (the same
        text, or nearly, or more after it, citing one of the same turns: a claim is filed
        on each subject it names, in the words of the fact filed there)."""
        said = norm(old.text)
        alike = [*self._exact(said), *self._by_key.get(blocking_keys(said)[0], [])]
        copies = [
            e
            for e in dict.fromkeys(alike)
            if e.current
            and self._refs(e.claim) & old.refs
            and (e.norm.startswith(said) or fuzz.ratio(e.norm, said) >= MERGE_RATIO)
        ]
        for e in copies:
            self._unindex(e)
            self.outline.remove(e.sec, e.line)
            tail = f"{e.claim.tail} (superseded on {old.on})"
            self._append(HISTORY, Claim(e.claim.text, e.claim.cites, tail))
        return bool(copies)

    def linked(self) -> list[str]:
        """Ids this page links to under Related, in page order."""
        return [
            m.group(1).strip()
            for sec in self.outline.sections
            if sec.title == RELATED
            for line in sec.lines
            if (m := _LINK_RE.search(line))
        ]

    def archive_links(self) -> list[tuple[str, str]]:
        """(id, title) of this page's own archives linked under Related, in page order."""
        sec = self.outline.get(RELATED)
        found = [_RELATED_LINE_RE.fullmatch(line) for line in (sec.lines if sec else [])]
        return [
            (m.group(1), m.group(2))
            for m in found
            if m and m.group(1).startswith(f"{self.subject.id}-archive-")
        ]

    def unlink(self, sid: str) -> None:
        """Drop the Related line Dream wrote for ``sid`` (``- [[sid|title]]``)."""
        sec = self.outline.get(RELATED)
        if sec is None:
            return
        for line in list(sec.lines):
            if (m := _RELATED_LINE_RE.fullmatch(line)) and m.group(1) == sid:
                self.outline.remove(sec, line)

    def link(self, targets: list[tuple[str, str]]) -> None:
        """Add ``[[id|title]]`` lines under Related for targets not linked yet."""
        have = {m.group(1).strip() for m in _LINK_RE.finditer(self.outline.render())}
        for sid, title in sorted(targets):
            if sid not in have and sid != self.subject.id:
                self.outline.append(RELATED, f"- [[{sid}|{title}]]")
                have.add(sid)

    @property
    def size(self) -> int:
        """Claim entries held (what ``dream.phases.open_pages`` budgets)."""
        return len(self._all)

    @property
    def changed(self) -> bool:
        return self.outline.changed or self.sources.changed

    @property
    def has_profile(self) -> bool:
        """A person's page has a ``## Profile``; archives and other pages have none."""
        return self.subject.type == "person" and main_stem(self.subject.path) is None

    def refresh_profile(self) -> None:
        """Regenerate a person page's ``## Profile`` from its current claims and the
        citations it carries for rolled ones (``dream.wiki.profile``)."""
        if not self.has_profile:
            return
        sec = self.outline.get(PROFILE)
        cited = {n for e in self._all for n in e.claim.cites}
        known = set(self.sources.ids())
        kept = carried(sec.lines, cited, known) if sec is not None else {}
        claims = [(e.claim.text, e.claim.cites) for e in self._current_in_order()]
        lines = profile_lines(claims, kept, self.names, self._session_of, self._names_it)
        self.outline.put_first(PROFILE, lines)
        # what each cited turn names is asked again next time (``keys_of`` remembers it): a
        # full run keeps every page open, and the words of all their turns would stay too
        self._named.clear()

    def _session_of(self, n: int) -> str:
        return self.sources.ref_of(n).split("#", 1)[0]

    def _names_it(self, n: int, key: str) -> bool:
        """Whether the turn source ``n`` cites names a word of stem ``key`` (said by the
        page's person, when they are a speaker)."""
        if n not in self._named:
            speaker, keys = self.keys_of(self.sources.ref_of(n)) or ("", frozenset())
            own = self._voice is None or speaker.lower() in self._voice
            self._named[n] = keys if own else frozenset()
        return key in self._named[n]

    def render(self, profile: bool = True) -> str:
        """The page text; unchanged frontmatter keeps its bytes. ``profile=False`` leaves
        the profile as it is (a page let go mid-run: ``dream.phases.open_pages``)."""
        if profile and self.changed:
            self.refresh_profile()
        meta = dict(self.meta)
        meta["id"] = meta.get("id") or self.subject.id
        meta["title"] = meta.get("title") or self.subject.title
        meta["type"] = meta.get("type") or self.subject.type
        aliases = [a for a in self.subject.aliases if a.lower() != self.subject.title.lower()]
        if aliases:
            meta["aliases"] = aliases
        summary = self._summary()
        if summary:
            meta["summary"] = summary
        if self.dated:
            if not meta.get("created"):
                meta["created"] = as_date(self.first_day)
            last = max(self.last_day, str(meta.get("updated") or ""))
            meta["updated"] = as_date(last)
        if not meta.get("updated"):
            # A page that got no dated claim this run (e.g. created as a link target) still
            # needs 'updated': the newest evidence it holds, else when it was created.
            ats = list(self.sources.days())
            fallback = max(ats) if ats else str(meta.get("created") or "")
            if fallback:
                meta["updated"] = as_date(fallback)
        return page_text(self.page, meta, self.outline.render(), self.sources)

    def _current_in_order(self) -> list[ClaimEntry]:
        """The claims of the dated sections in page order, each as its indexed entry (whose
        slot is worked out once), so a page of hundreds of claims is not parsed again."""
        by_line = {e.line: e for e in self._all}  # one line, one claim and slot
        out: list[ClaimEntry] = []
        for sec in self.outline.sections:
            if not day_of(sec.title):
                continue
            for line in sec.lines:
                e = by_line.get(line)
                if e is None and (claim := parse_claim(line)) is not None:
                    e = ClaimEntry(sec, line, claim)
                if e is not None:
                    out.append(e)
        return out

    def _summary(self) -> str:
        """One line for INDEX.md: the current role and city claims, else the first claim; for
        a person, the role and city, then the things their claims keep coming back to (their
        ``## Profile``)."""
        entries = self._current_in_order()
        current = [e.claim for e in entries]
        if not current:
            return str(self.meta.get("summary") or "")
        slotted = [
            e.claim.text for e in entries if {"role", "city"} & set(slot_parts(self.slot_of(e)))
        ]
        if self.subject.type == "person":
            # a person: the role and city, then what their claims keep coming back to, in
            # the words of the page's cited profile (a summary says what its claims say)
            profiled = self.outline.get(PROFILE) if self.has_profile else None
            parts = [t.rstrip(".") for t in slotted[-2:]]
            parts += summary_parts(profiled.lines) if profiled is not None else []
            line, limit = "; ".join(parts), _PERSON_SUMMARY_CHARS
        else:
            line, limit = " ".join(slotted[-2:] if slotted else [current[0].text]), _SUMMARY_CHARS
        if len(line) > limit:
            line = line[:limit].rsplit(" ", 1)[0].rstrip(",;:") + " …"
        return line
