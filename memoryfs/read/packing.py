"""Packing a recall synthesis: each line shown adds evidence or words.

``memoryfs.read.recall`` offers candidate lines best first; the ``Packer`` keeps those
that fit the token budget and say something the lines already shown do not. A
line stands on evidence: the transcript turns it cites (a turn stands on itself).
Against the shown lines that stand on some of the same evidence, a candidate

- that says nothing new (its content words, and every number, nearly all in those
  lines: the raw turn under the claim that distils it, the short and long forms of
  one claim) is not shown; the citations it adds go onto the shown claim that says
  it, so the evidence stays cited for a few tokens instead of a line;
- that says all a shown line says and more (a summary's key point, then the page
  claim holding it in full) takes that line's place and keeps both citations;
- else is shown.

A line that only says nothing was recorded (``Outcome: none recorded``) is never
shown. The budget is counted per line with ``memoryfs.store.tokens.count_tokens``
(newlines never merge tokens, so costs add up exactly).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from dataclasses import dataclass

from memoryfs.read.ranking import STOPWORDS
from memoryfs.read.search import Hit
from memoryfs.store.tokens import count_tokens

__all__ = [
    "Packer",
    "Packed",
    "content_words",
    "covered",
    "elide",
    "says_nothing",
    "NEAR_DUPLICATE",
]

NEAR_DUPLICATE = 0.6  # share of an item's content words already shown that makes it a repeat
# A line whose evidence is already shown must bring at least half its words anew
# (a claim's turn under it, shown on purpose, is judged as any repeat: 0.6). LoCoMo
# tuning conv-26/30, wiki, 1,000 tokens, EvC / Ans / multi-hop EvC: 0.6 .860/.820/.703,
# 0.5 .865/.827/.703, 0.4 .869/.827/.703 (bench/QUALITY_LOG.md, "Packing").
SAME_EVIDENCE = 0.5
SUBSUMED = 0.8  # share of a shown line's content words a later line must hold to replace it
_WORD_RE = re.compile(r"\w+")
_SENTENCE_END_RE = re.compile(r"(?<=[.!?])\s+(?=\S)")
ELISION = " … "  # where sentences of a turn that the lines above already say were left out
_LABEL_RE = re.compile(r"^\W*(?:[^\W\d_][\w ]{0,30}:\s*)?", re.UNICODE)
# What a summary writes where it has nothing to say (Dream's "none recorded").
_NOTHING = frozenset({"none recorded", "none", "n a", "unknown", "tbd"})
_NOTHING_MAX = 48  # a label of up to 32 characters and the longest of them

Render = Callable[[Hit], str]


@dataclass(frozen=True)
class Packed:
    """One shown line: the hit it shows (citations as shown), its text and its cost."""

    hit: Hit
    shown: str  # the hit's text as shown (an excerpt, a turn with its speaker)
    words: frozenset[str]  # content words of everything this line stands for
    line: str
    cost: int
    score: float
    render: Render  # renders the line for the hit with other citations
    evidence: frozenset[str]  # the turns it stands on (``_evidence``)


def content_words(text: str) -> frozenset[str]:
    return frozenset(w for w in _WORD_RE.findall(text.lower()) if w not in STOPWORDS)


def covered(words: frozenset[str], by: frozenset[str], share: float = NEAR_DUPLICATE) -> bool:
    """Whether ``share`` of an item's content words, and every number (a resolved
    date), are in another."""
    return (
        bool(words)
        and len(words & by) >= share * len(words)
        and all(w in by for w in words if w.isdigit())
    )


def elide(text: str, said: frozenset[str]) -> str:
    """``text`` without the sentences whose content words ``said`` nearly all holds (the
    claim above distils them), the others joined by an ellipsis; "" when none is left.
    A claim keeps one sentence of a turn; the turn's other sentences are evidence too
    ("Woodhaven has had an interesting past ..." under "... sparked ideas for a script")."""
    if not said:
        return text
    sentences = _SENTENCE_END_RE.split(text.strip())
    kept = [s for s in sentences if not covered(content_words(s), said)]
    if len(kept) == len(sentences):
        return text
    # what is left must say something: "So did I!" or "Me too." alone is not evidence
    kept = [s for s in kept if content_words(s)]
    return ELISION.join(kept)


def says_nothing(text: str) -> bool:
    """Whether ``text`` only says that nothing was recorded (after an optional ``Label:``)."""
    if len(text) > _NOTHING_MAX:
        return False  # most lines: no regex run per candidate
    rest = _LABEL_RE.sub("", text.strip(), count=1)
    return " ".join(_WORD_RE.findall(rest.lower())) in _NOTHING or not _WORD_RE.search(text)


def _evidence(hit: Hit) -> frozenset[str]:
    if hit.kind == "profile":
        return frozenset()  # a list of a person's things, each cited: never one fact's evidence
    if hit.kind == "turn" and hit.anchor:
        return frozenset({hit.ref})
    return frozenset(hit.citations)


class Packer:
    """Lines best first within ``budget`` tokens, each adding evidence or words."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.lines: list[Packed] = []
        self.used = 0
        self._refs: set[str] = set()  # units shown or folded into a shown line
        self._cites: set[str] = set()

    def said_on(self, hit: Hit) -> frozenset[str]:
        """Content words of the shown lines standing on evidence ``hit`` stands on."""
        ev = _evidence(hit)
        if not ev:
            return frozenset()
        return frozenset().union(*(p.words for p in self.lines if ev & p.evidence))

    def offer(
        self,
        hit: Hit,
        shown: str,
        words: frozenset[str],
        score: float,
        render: Render,
        follower: bool = False,
    ) -> bool | None:
        """Consider one candidate: True when the output changed, False when it did not
        fit the budget, None when it adds nothing (or was shown already). A follower
        (a turn shown under its claim) never takes another line's place."""
        if hit.ref in self._refs or (hit.kind != "turn" and says_nothing(hit.text)):
            return None
        ev = _evidence(hit)
        sharing = [i for i, p in enumerate(self.lines) if ev & p.evidence] if ev else []
        if sharing:
            pool = frozenset().union(*(self.lines[i].words for i in sharing))
            if covered(words, pool, NEAR_DUPLICATE if follower else SAME_EVIDENCE):
                folded = self._fold(hit, ev, sharing)
                if folded is not False:
                    return folded
            elif not follower:
                subsumed = [
                    i
                    for i in sharing
                    if self.lines[i].evidence <= ev
                    and covered(self.lines[i].words, words, SUBSUMED)
                ]
                if subsumed:
                    return self._replace(_packed(hit, shown, words, score, render), subsumed)
        if set(hit.citations) <= self._cites and any(covered(words, p.words) for p in self.lines):
            return None  # the same fact, on evidence already shown (a note, a claim's turn)
        packed = _packed(hit, shown, words, score, render)
        if self.used + packed.cost > self.budget:
            return False
        self.lines.append(packed)
        self._take(packed)
        return True

    def _fold(self, hit: Hit, ev: frozenset[str], sharing: list[int]) -> bool | None:
        """A candidate the shown lines already say: its new citations go onto the first
        of them that shows citations (False: none can take them within the budget)."""
        shown_ev = frozenset().union(*(self.lines[i].evidence for i in sharing))
        extra = [c for c in hit.citations if c in ev - shown_ev]
        if not extra:
            self._refs.add(hit.ref)
            return None
        for i in sharing:
            host = self.lines[i]
            if host.hit.anchor:
                continue  # a turn shows where it is, not citations
            merged = dataclasses.replace(host.hit, citations=(*host.hit.citations, *extra))
            line = host.render(merged)
            new = dataclasses.replace(
                host, hit=merged, line=line, cost=count_tokens(line), evidence=_evidence(merged)
            )
            if self.used - host.cost + new.cost > self.budget:
                break
            self.used += new.cost - host.cost
            self.lines[i] = new
            self._refs.add(hit.ref)
            self._cites.update(extra)
            return True
        return False

    def _replace(self, new: Packed, subsumed: list[int]) -> bool:
        """A candidate that says all some shown lines say, and more, takes the first one's
        place, with their words and the best of their scores."""
        old = [self.lines[i] for i in subsumed]
        packed = dataclasses.replace(
            new,
            words=new.words.union(*(p.words for p in old)),
            score=max(new.score, *(p.score for p in old)),
        )
        freed = sum(p.cost for p in old)
        if self.used - freed + packed.cost > self.budget:
            return False
        self.used -= freed
        self.lines[subsumed[0]] = packed
        for i in reversed(subsumed[1:]):
            del self.lines[i]
        self._take(packed)
        return True

    def _take(self, packed: Packed) -> None:
        self.used += packed.cost
        self._refs.add(packed.hit.ref)
        self._cites.update(packed.hit.citations)


def _packed(hit: Hit, shown: str, words: frozenset[str], score: float, render: Render) -> Packed:
    line = render(hit)
    return Packed(hit, shown, words, line, count_tokens(line), score, render, _evidence(hit))
