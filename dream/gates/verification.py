"""Gate 2, semantic verification: new claims say what their cited turns say.

The rules themselves (``check_claim``, ``Support``) live in ``dream.gates.support``; this
module picks the claims to check and runs them over a staged tree.

Checked: every claim (``memoryfs.pages.claims``) of a changed page that is new or changed
relative to the base commit; a claim whose cited turn was re-hashed is changed (its key
pins the turn's hash). A claim's core is its text without ``(superseded ...)`` markers and
strike-through, so moving a fact under a history heading is not a new claim. A claim is
supported when, taken over the turns it cites (together):

- **names** (DV101) -- capitalized words that do not start a sentence -- appear in the
  turn text, or are a participant or speaker of the cited session; a subject page's title
  and aliases count only where the turns name the subject (``with_subject``): the page a
  claim is on is no evidence; month and weekday names count as dates, not names;
- **numbers** (DV102) appear in the turn text (digits, or the word for 2-90), the turn
  counts the same thing with them ("12 new clips" against "2,880 new clips, 12 failed"),
  and says them in a sentence (or after one) about what the claim says them of;
- **dates** (DV103: "7 May 2023", "May 7", "2023-05-07", "May 2023", "the week of 1 May
  2023", a year) are the session date or a turn's date, a date written in the turn, or a
  resolution of a relative phrase in the turn (``dream.language.dates.find_relative_dates``); a
  coarser date that contains one of those is supported too ("May 2023" for 7 May 2023);
  and the turn's sentence that says what the claim's sentence says dates it so, when it
  dates it at all ("on 30 January" for "yesterday" on the 30th is not);
- **meaning** (DV105-DV107): coverage, polarity and who does what
  (``dream.gates.entailment``).

Contradictions: no two current claims of a changed page may give different values for
one slot (``dream.gates.slots``), nor a new claim and a current claim of another page
about the same person (``dream.gates.crosspage``). Claim text and its dates:
``dream.gates.claimtext``. With a model judge (``dream.gates.judge``), the new and
changed claims these checks pass (not ``## Profile`` bullets) are then asked of it: "no"
is DV301, "unclear" DV302.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from dream.gates import (
    GENERATED,
    GateReport,
    Problem,
    base_page,
    source_entries,
    staged_page,
)
from dream.gates.claimtext import claim_dates
from dream.gates.claimtext import plain as _plain
from dream.gates.crosspage import CrossPage
from dream.gates.judge import Judge, Pending
from dream.gates.profilecheck import Problems, ProfileCheck
from dream.gates.slots import contradictions, slot_of
from dream.gates.support import Support, check_claim, turns_support, with_subject
from dream.landing.staging import Change
from dream.wiki.profile import PROFILE
from dream.wiki.subjects import FOLDERS, slugify
from memoryfs.errors import PageError
from memoryfs.pages.claims import Claim, extract_claims
from memoryfs.pages.links import CITE_RE
from memoryfs.pages.page import Page
from memoryfs.pages.speakers import Roster
from memoryfs.pages.transcript import Transcript, Turn, parse_transcript
from memoryfs.store.scan import READ_MAX_BYTES, read_text
from memoryfs.store.store import Store

__all__ = ["verify_stage", "slot_of", "claim_dates"]

GATE = "verification"
_PAGE_PREFIXES = ("memory/knowledge/", "memory/notes/", "memory/sessions/summaries/")
_FACT_PREFIXES = ("memory/knowledge/", "memory/notes/")

# The base side's line reading (see _line_claims), after memoryfs.pages.claims.
_LIST_PREFIX_RE = re.compile(r"^\s*(?:>\s?)*\s*(?:(?:[-*+]|\d{1,9}[.)])\s+)?(?:\[[ xX]\]\s+)?")
_ATX_RE = re.compile(r"^ {0,3}(#{1,6})\s+(.*)$")
_HISTORY_RE = re.compile(r"^\W*(?:history|superseded)\b", re.IGNORECASE)  # as claims reads it
_MARKER_RE = re.compile(r"\(superseded", re.IGNORECASE)
_STRIKE_LINE_RE = re.compile(r"~~[^~\n]+~~")


def _core(claim: Claim) -> str:
    """A claim's text without its markers, lower-cased: what tells whether it is new."""
    return _plain(claim.text).lower()


class _Transcripts:
    """Transcripts of the staged tree, the most recently used ones kept parsed.

    Bounded, so a run that touches every session does not hold every transcript; a page's
    claims are checked together, so the most recent few dozen serve nearly every claim.
    """

    SIZE = 64

    def __init__(self, root: Path, roster: Roster | None = None) -> None:
        self.root = root
        self.roster = roster
        self._cache: OrderedDict[str, Transcript | None] = OrderedDict()

    def get(self, rel: str) -> Transcript | None:
        if rel in self._cache:
            self._cache.move_to_end(rel)
            return self._cache[rel]
        # a regular file only (never a link, FIFO or device); validation holds its size
        text = read_text(self.root / "memory", rel, READ_MAX_BYTES)
        try:
            found: Transcript | None = (
                None if text is None else parse_transcript(text, rel, self.roster)
            )
        except (PageError, ValueError):
            found = None
        self._cache[rel] = found
        if len(self._cache) > self.SIZE:
            self._cache.popitem(last=False)
        return found


def _line_claims(page: Page) -> list[tuple[str, tuple[int, ...], bool]]:
    """The claims of a base page read line by line: (text, citations, superseded).

    A light stand-in for ``extract_claims`` (which parses the Markdown) on the
    base side, where the claims only serve to tell which staged claims are new:
    fenced code is skipped, headings are ATX. A hub page of thousands of lines is
    parsed once per run instead of twice.
    """
    out: list[tuple[str, tuple[int, ...], bool]] = []
    page_superseded = str(page.meta.get("status", "")).strip().lower() == "superseded"
    stack: list[tuple[int, bool]] = []  # (heading level, is a history heading)
    fence = ""
    for line in page.body.split("\n"):
        stripped = line.lstrip()
        if fence:
            if stripped.startswith(fence):
                fence = ""
            continue
        if stripped.startswith(("```", "~~~")):
            fence = stripped[:3]
            continue
        heading = _ATX_RE.match(line)
        if heading:
            level = len(heading.group(1))
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, bool(_HISTORY_RE.search(heading.group(2)))))
            continue
        citations = tuple(dict.fromkeys(int(n) for n in CITE_RE.findall(line)))
        if not citations:
            continue
        text = " ".join(CITE_RE.sub(" ", _LIST_PREFIX_RE.sub("", line, count=1)).split())
        superseded = (
            page_superseded
            or any(history for _, history in stack)
            or bool(_MARKER_RE.search(line) or _STRIKE_LINE_RE.search(line))
        )
        out.append((text, citations, superseded))
    return out


def _refs(page: Page) -> dict[int, str]:
    """Source id -> ref, as ``{s.id: s for s in page.sources}`` would index them."""
    return {sid: ref for sid, ref, _ in source_entries(page)}


def _resolve(sources: dict[int, str], claim: Claim) -> list[str]:
    """The refs of the sources a claim cites (``memoryfs.pages.claims.resolve_claim_sources``,
    with the page's sources indexed once rather than once per claim)."""
    return [sources[n] for n in claim.citations if n in sources]


def _pins(page: Page) -> dict[int, str]:
    """Source id -> ref and the hash of the turn it pins: a claim whose cited turn changed
    (its entry re-hashed, by a run or a hand) is a changed claim, checked again."""
    return {sid: f"{ref}@{digest}" for sid, ref, digest in source_entries(page)}


def _claim_key(pins: dict[int, str], claim: Claim) -> tuple[str, tuple[str, ...]]:
    return _core(claim), tuple(sorted(_resolve(pins, claim)))


def verify_stage(
    store: Store, stage_root: Path, base: str, changes: Sequence[Change], judge: Judge | None = None
) -> GateReport:
    """Check the new and changed claims of the changed pages, their slots, and their
    summaries and titles; with a ``judge``, the claims the deterministic checks pass are
    asked of it at the end."""
    from dream.gates.frontmatter import frontmatter_problems  # it builds on check_claim

    check = _Check(store, base, _Transcripts(stage_root, store.config.roster))
    check.judged = [] if judge is not None else None
    cross = CrossPage(store, stage_root, base, check._kind_of)
    for change in changes:
        path = change.path
        if change.status == "D" or not path.startswith(_PAGE_PREFIXES) or path in GENERATED:
            continue
        page = staged_page(stage_root, path) if path.endswith(".md") else None
        if page is not None:
            check.page(path, page, is_new=change.status == "A")
            # its summary and title, held to its claims (DV110, DV111)
            check.problems.extend(
                frontmatter_problems(store, stage_root, base, path, page, change.status == "A")
            )
            cross.page(path, page, change.status)
    check.problems.extend(cross.problems())  # contradictions across pages (DV202)
    stats = {"claims_checked": check.checked, "claims_superseded": check.superseded}
    if judge is not None and check.judged is not None:
        found, judged = judge.check(check.judged, check.turn, GATE)
        check.problems.extend(found)
        stats.update(judged)
    return GateReport(
        gate=GATE,
        problems=tuple(check.problems),
        checked=check.checked,
        stats=stats,
    )


ClaimKey = tuple[str, tuple[str, ...]]
SUPPORTS_KEPT = 4096


@dataclass
class _Check:
    store: Store
    base: str
    transcripts: _Transcripts
    problems: list[Problem] = field(default_factory=list)
    checked: int = 0
    superseded: int = 0
    # what each set of cited turns supports, the most recently used kept (a claim is on
    # each page it names and in a note: the same turns are asked for several times)
    _supports: OrderedDict[tuple[str, ...], Support | None] = field(default_factory=OrderedDict)
    judged: list[Pending] | None = None  # claims the floor passed, for the judge (if any)

    def page(self, path: str, page: Page, is_new: bool) -> None:
        claims = extract_claims(page)
        sources, pins = _refs(page), _pins(page)
        old = base_page(self.store, self.base, path) if not is_new else None
        old_keys, old_superseded = self._base_claims(old)
        # a subject page's name may be written in full where the turn names it in part
        # ("Jonas Weber" for "Jonas"); a note's or a summary's title is no name
        subject = (page.title, *page.aliases) if path.startswith("memory/knowledge/") else ()
        profile = ProfileCheck(page, old, self._turn_text, self._thing_problems(subject))
        for claim in claims:
            key = _claim_key(pins, claim)
            if claim.superseded and key not in old_superseded:
                self.superseded += 1
            if key in old_keys:
                continue
            if claim.section == PROFILE and not claim.superseded:
                found = profile.check(claim.line)
                if found is not None:  # a well-formed profile bullet: its new pairs
                    self.checked += 1
                    self.problems.extend(
                        Problem(GATE, path, claim.line, code, why) for code, why in found
                    )
                    continue
            refs = tuple(sorted(_resolve(sources, claim)))
            support = self._support(refs, sources, claim, subject)
            if support is None:
                continue  # validation reports citations that resolve to no turn
            self.checked += 1
            found = check_claim(claim.text, support)
            for code, why in found:
                self.problems.append(
                    Problem(GATE, path, claim.line, code, f"{why} {_quoted(claim, sources)}")
                )
            if not found and self.judged is not None and claim.section != PROFILE:
                cites = tuple((n, sources[n]) for n in claim.citations if n in sources)
                about = f"{page.title} ({page.type})"
                self.judged.append(Pending(path, claim.line, _plain(claim.text), about, cites))
        if path.startswith(_FACT_PREFIXES):
            self.problems.extend(contradictions(page, path, claims, self._kind_of))

    def turn(self, ref: str) -> tuple[Transcript, Turn] | None:
        """The transcript and turn ``ref`` names; None when there is none."""
        path, _, anchor = ref.partition("#")
        t = self.transcripts.get(path)
        turn = t.turn(anchor) if t is not None else None
        return (t, turn) if t is not None and turn is not None else None

    def _kind_of(self, name: str) -> str:
        """ "org" when the staged tree has an organisation page of that name ("" else): what
        a move to it changes (``dream.gates.slots``)."""
        org = self.transcripts.root / "memory" / "knowledge" / FOLDERS["org"] / slugify(name)
        return "org" if org.with_suffix(".md").is_file() else ""

    def _turn_text(self, ref: str) -> str | None:
        found = self.turn(ref)
        return found[1].text if found is not None else None

    def _thing_problems(self, subject: tuple[str, ...]) -> Callable[[str, str], Problems]:
        def check(thing: str, ref: str) -> Problems:
            support = self.support_of((ref,), [ref], subject)
            # a thing is a word or two, named in its turn (``ProfileCheck``): its names,
            # numbers and dates are checked here, not what a sentence would mean
            return check_claim(thing, support, meaning=False) if support is not None else []

        return check

    def _base_claims(self, old: Page | None) -> tuple[set[ClaimKey], set[ClaimKey]]:
        keys: set[ClaimKey] = set()
        superseded: set[ClaimKey] = set()
        if old is not None:
            sources = _pins(old)
            for text, citations, is_superseded in _line_claims(old):
                refs = tuple(sorted(sources[n] for n in citations if n in sources))
                key = (_plain(text).lower(), refs)
                keys.add(key)
                if is_superseded:
                    superseded.add(key)
        return keys, superseded

    def _support(
        self,
        refs: tuple[str, ...],
        sources: dict[int, str],
        claim: Claim,
        subject: tuple[str, ...],
    ) -> Support | None:
        """What the cited turns support (computed once per set of turns), plus the subject."""
        return self.support_of(refs, _resolve(sources, claim), subject)

    def support_of(
        self, key: tuple[str, ...], refs: list[str], subject: tuple[str, ...]
    ) -> Support | None:
        if key in self._supports:
            self._supports.move_to_end(key)
        else:
            turns = [hit for ref in refs if (hit := self.turn(ref)) is not None]
            self._supports[key] = turns_support(turns) if turns else None
            if len(self._supports) > SUPPORTS_KEPT:  # bounded: a full run checks every claim
                self._supports.popitem(last=False)
        found = self._supports[key]
        return found if found is None else with_subject(found, subject)


def _cites(claim: Claim) -> str:
    return "cites " + ", ".join(f"[{n}]" for n in claim.citations)


def _quoted(claim: Claim, sources: dict[int, str]) -> str:
    """The claim (its start) and the turns it cites, for a reviewer to find both."""
    text = claim.text if len(claim.text) <= 80 else claim.text[:77].rstrip() + "..."
    cited = ", ".join(f"[{n}] {sources[n]}" if n in sources else f"[{n}]" for n in claim.citations)
    return f"in {text!r} (cites {cited})"
