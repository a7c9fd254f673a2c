"""The citations of an item that cites several sessions, ordered by what the question asks.

A profile line (a person's things in one facet, each with the turns that first
mention it, each thing's first mention first: ``memoryfs.index.units``) or a claim that
gathers evidence from several sessions cites them in the same order whatever the question. An
agent reads citations left to right and opens the first few, so the turns the
question is about should come first: ``order_citations`` puts first the cited turns
whose text holds the most query terms (``memoryfs.read.ranking.matched_terms``, by stem
prefix), and keeps the written order among equals. "Where has Melanie camped?"
then reads a profile line's camping turns before its painting ones.
On LoCoMo tuning (conv-26/30), wiki arm, 1,000 tokens, session recall@5 (which
reads an item's sessions in citation order) moves on two questions, one up and
one down (.892 -> .890); evidence and answer recall unchanged. The cited turns are
those recall already looked up for their speakers (``memoryfs.read.voice``): no slower.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from memoryfs.read.ranking import matched_terms

__all__ = ["order_citations"]


def order_citations(
    citations: Sequence[str], terms: list[str], text_of: Callable[[str], str]
) -> tuple[str, ...]:
    """``citations`` (transcript refs ``path#tN``), those citing more query terms first.

    Only an item citing two sessions or more is reordered (one session's turns are
    read together anyway); ``text_of`` gives a cited turn's text ("" if unknown).
    """
    cites = tuple(citations)
    if not terms or len({ref.split("#", 1)[0] for ref in cites}) < 2:
        return cites
    matched = {ref: matched_terms(text_of(ref), terms) for ref in dict.fromkeys(cites)}
    return tuple(sorted(cites, key=lambda ref: -matched[ref]))
