"""Query expansion by pseudo-relevance feedback, from the store's own best items.

A question often shares no word with the turn that answers it ("What did Caroline
research?" vs "adoption agencies"). Dream has already distilled turns into claims,
so the best few distilled items of a first search say what the question is about in
the store's own words. ``feedback_terms`` takes their words that are frequent among
those items and rare among the rest of the candidates (a person's name that every
candidate holds says nothing new), RM3-style; a second search on the question plus
those words is then merged with the first by weighted reciprocal rank fusion
(``fuse``), the first search weighing more.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

from memoryfs.pages.archives import page_title
from memoryfs.read.ranking import STOPWORDS
from memoryfs.read.search import Hit

__all__ = ["FEEDBACK_ITEMS", "FEEDBACK_TERMS", "RRF_K", "feedback_terms", "fuse"]

FEEDBACK_ITEMS = 8  # best distilled items read for feedback
FEEDBACK_TERMS = 6  # words added to the query
RRF_K = 20  # reciprocal rank fusion constant (small: the top ranks decide)
_WORD_RE = re.compile(r"[^\W\d_]{3,}")


def _content_words(text: str) -> set[str]:
    return {w for w in _WORD_RE.findall(text.lower()) if w not in STOPWORDS}


def _about(h: Hit) -> str:
    """A hit's title and text; an archive's title as its page's (a head's text may be its title)."""
    title = page_title(h.path, h.title)
    return f"{title} {title if h.text == h.title else h.text}"


def feedback_terms(
    hits: Sequence[Hit],
    query: Sequence[str],
    *,
    items: int = FEEDBACK_ITEMS,
    terms: int = FEEDBACK_TERMS,
) -> list[str]:
    """Words of the best distilled ``hits`` (not turns) to add to ``query``, best first.

    A word's weight is the rank-discounted share of feedback items holding it times
    its inverse frequency among all ``hits`` (the first search's candidates), so
    words every candidate shares weigh nothing. Words of ``query`` (or sharing
    their first five letters) are left out; a word must occur in two feedback items.
    An archive's title qualifier is not a word of it: "(2023-05-08 archive)" says where
    a claim is kept, not what it is about (``memoryfs.pages.archives``).
    """
    feedback = [h for h in hits if h.kind != "turn"][:items]
    if len(feedback) < 2:
        return []
    background: Counter[str] = Counter()
    for h in hits:
        background.update(_content_words(_about(h)))
    held: Counter[str] = Counter()
    weight: dict[str, float] = {}
    for rank, h in enumerate(feedback):
        for w in _content_words(_about(h)):
            held[w] += 1
            weight[w] = weight.get(w, 0.0) + 1.0 / (rank + 1)
    known = {q[:5] for q in query}
    n = len(hits)
    scored = [
        (weight[w] * math.log(1 + n / background[w]), w)
        for w in weight
        if held[w] >= 2 and w[:5] not in known and background[w] < n
    ]
    scored.sort(key=lambda pair: (-pair[0], pair[1]))
    return [w for _, w in scored[:terms]]


def fuse(rankings: Sequence[Sequence[Hit]], weights: Sequence[float], k: int) -> list[Hit]:
    """The ``k`` best hits of several rankings by weighted reciprocal rank fusion.

    Each hit keeps the score of the rank it lands on in the first ranking (so later
    stages that compare scores see the first search's scale); hits past its end
    keep their own score, capped at its last.
    """
    fused: dict[str, float] = {}
    by_ref: dict[str, Hit] = {}
    for ranking, w in zip(rankings, weights, strict=True):
        for rank, h in enumerate(ranking):
            fused[h.ref] = fused.get(h.ref, 0.0) + w / (RRF_K + rank + 1)
            by_ref.setdefault(h.ref, h)
    order = sorted(fused, key=lambda ref: (-fused[ref], ref))[:k]
    scale = [h.score for h in rankings[0]] if rankings else []
    out: list[Hit] = []
    for i, ref in enumerate(order):
        h = by_ref[ref]
        score = scale[i] if i < len(scale) else min(h.score, scale[-1] if scale else h.score)
        out.append(replace(h, score=score))
    return out
