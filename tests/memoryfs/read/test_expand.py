"""Pseudo-relevance feedback: which words the best distilled items add, and how rankings fuse."""

from __future__ import annotations

from dataclasses import replace

from memoryfs.read.expand import feedback_terms, fuse
from memoryfs.read.search import Hit


def _hit(
    text: str, kind: str = "claim", line: int = 1, score: float = 1.0, path: str = "p.md"
) -> Hit:
    return Hit(
        path=path,
        line=line,
        layer="knowledge" if kind != "turn" else "sessions",
        title="Caroline",
        snippet=text,
        score=score,
        citations=(),
        date="2023-05-08",
        kind=kind,
        text=text,
        anchor=f"t{line}" if kind == "turn" else "",
    )


def test_feedback_words_are_shared_by_the_best_items_and_rare_among_the_rest() -> None:
    hits = [
        _hit("Caroline is researching adoption agencies", line=1),
        _hit("Caroline picked an adoption agency that helps LGBTQ folks", line=2),
        _hit("Caroline went hiking with friends", line=3),
    ] + [_hit(f"Caroline talked about painting number {i}", line=10 + i) for i in range(10)]
    words = feedback_terms(hits, ["caroline", "research"], items=3, terms=3)
    assert words[0] == "adoption"
    # The name every candidate holds and the question's own words (by their stem) add nothing.
    assert "caroline" not in words and "researching" not in words
    # A word in one feedback item only is not enough.
    assert "hiking" not in words


def test_turns_are_not_feedback_and_too_few_items_give_no_words() -> None:
    turns = [_hit("adoption agencies adoption", kind="turn", line=i) for i in range(1, 6)]
    assert feedback_terms(turns, ["caroline"]) == []
    assert feedback_terms([_hit("adoption agencies")] + turns, ["caroline"]) == []


def test_fusion_prefers_hits_both_rankings_found_and_keeps_the_first_scale() -> None:
    a, b, c, d = (_hit(t, line=i) for i, t in enumerate("abcd", start=1))
    first = [
        replace(a, score=9.0),
        replace(b, score=5.0),
        replace(c, score=2.0),
    ]
    second = [replace(c, score=30.0), replace(d, score=20.0)]
    out = fuse([first, second], [1.0, 0.5], k=4)
    # c is in both (3rd and 1st): it overtakes a and b, found by the first search only;
    # d, found by the (lighter) second search only, comes last.
    assert [h.text for h in out] == ["c", "a", "b", "d"]
    # Scores are the first ranking's, by rank (later stages compare them with its
    # scale); past its end, a hit's own score capped at its last.
    assert [h.score for h in out] == [9.0, 5.0, 2.0, 2.0]
    assert [h.text for h in fuse([first, second], [1.0, 0.5], k=2)] == ["c", "a"]
    # Without the second ranking nothing moves.
    assert fuse([first], [1.0], k=3) == first
