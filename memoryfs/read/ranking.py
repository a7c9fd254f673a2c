"""Ranking: from a natural-language query to FTS5 terms, and from BM25 to a final score.

Queries are questions ("When did Melanie run the charity race?"), not FTS syntax:
words are lower-cased, stopwords and question words dropped, and the rest ORed
as quoted FTS5 strings, so no input can raise an FTS syntax error. The final
score multiplies the weighted BM25 relevance by a rapidfuzz boost for query words
that name a page (title or alias, typos tolerated) and a small recency prior.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Iterable

from rapidfuzz.distance import JaroWinkler

from memoryfs.store.tokens import count_tokens, truncate_to_tokens

__all__ = [
    "STOPWORDS",
    "FIELD_WEIGHTS",
    "CONTEXT_WEIGHT",
    "compounds",
    "with_common_terms",
    "query_terms",
    "fts_query",
    "title_boost",
    "recency_prior",
    "days_between",
    "excerpt",
    "matched_terms",
]

# BM25 column weights, in the FTS table's column order: title and aliases above
# summary above body; the context column (page title, section, speaker, date) is
# there so a claim matches its subject's name, but weighs least; the compounds
# column (the unit's hyphenated words written as one, ``compounds``) as body.
CONTEXT_WEIGHT = 0.5
FIELD_WEIGHTS = (10.0, 8.0, 4.0, 1.0, CONTEXT_WEIGHT, 1.0)
MAX_TERMS = 32
FUZZY_MIN = 0.9  # Jaro-Winkler similarity above which a query word names a title word
FUZZY_MIN_LEN = 4  # shorter words must match exactly
TITLE_BOOST = 0.5  # at most x1.5 when the query names a page's whole title
RECENCY_WEIGHT = 0.05  # at most x1.05 for the newest unit; a tie-breaker, not a filter
RECENCY_HALF_LIFE_DAYS = 180.0

_WORD_RE = re.compile(r"\w+", re.UNICODE)
_HYPHENS = "-\u2010\u2011"
# Linear on any input: a match starts only where a run of letters starts (the lookbehind),
# and the runs are possessive (a letter run never gives letters back, so a long word
# without a hyphen fails once, not once per letter: quadratic time otherwise).
_COMPOUND_RE = re.compile(rf"(?<![^\W\d_])[^\W\d_]++(?:[{_HYPHENS}][^\W\d_]++)+")
_HYPHEN_RE = re.compile(f"[{_HYPHENS}]")
_QUALIFIER_RE = re.compile(r"\([^()]*\)")
_SENTENCE_RE = re.compile(r"(?<=[.!?])\s+|\n+")

_STOPWORD_TEXT = """
    a about above after again against all am an and any are aren as at be because been before
    being below between both but by can cannot could couldn did didn do does doesn doing don down
    during each else ever few for from further had hadn has hasn have haven having he her here hers
    herself him himself his how i if in into is isn it its itself just least let like likely ll
    made make many me might more most much must mustn my myself no nor not now of off on once
    only or other ought our ours ourselves out over own per probably re really s same shan she
    should shouldn so some such t than that the their theirs them themselves then there these they
    this those through to too under until up upon us ve very was wasn we were weren what whats
    when whenever where whereas which while who whom whose why will with won would wouldn yet you
    your yours yourself yourselves
    tell know say said get got go went kind sort thing things also
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())


def compounds(text: str) -> list[str]:
    """The hyphenated words of ``text`` written as one, lower-cased ("De-stress" -> "destress").

    FTS5 splits a word at its hyphen, so "de-stress" and "destress" never match;
    the index holds each unit's compounds joined (``memoryfs.index.fts``) and a query
    adds its own, so either spelling finds the other. Only letters are joined: a
    date ("2023-05-08") or a count ("3-2") is not a word.
    """
    return list(dict.fromkeys(_HYPHEN_RE.sub("", m).lower() for m in _COMPOUND_RE.findall(text)))


def with_common_terms(
    score: float, main: str, context: str, terms: dict[str, int], total: int
) -> float:
    """A unit's ``score`` plus what the common ``terms`` (term -> the units holding it, of
    ``total``) left out of a search's MATCH add: each one's BM25 idf, at body strength when
    the unit's title, summary or body (``main``, compounds joined too) holds it, at context
    strength when only its context does."""
    main = f"{main} {' '.join(compounds(main))}"
    for term, df in terms.items():
        idf = math.log(1 + (total - df + 0.5) / (df + 0.5))
        if matched_terms(main, [term]):
            score += idf
        elif matched_terms(context, [term]):
            score += idf * CONTEXT_WEIGHT
    return score


def query_terms(query: str) -> list[str]:
    """The searchable words of ``query``: lower-cased, stopwords dropped, deduplicated.

    A hyphenated word also counts written as one (``compounds``). A query made only
    of stopwords keeps its words (so "the who" still searches).
    """
    words = [w.lower() for w in _WORD_RE.findall(query) if w.strip("_")]
    words += compounds(query)
    kept = [w for w in words if w not in STOPWORDS and not (len(w) == 1 and not w.isdigit())]
    return list(dict.fromkeys(kept or words))[:MAX_TERMS]


def fts_query(terms: Iterable[str]) -> str:
    """An FTS5 MATCH expression ORing ``terms`` as quoted strings ("" if none)."""
    quoted = ['"' + t.replace('"', '""') + '"' for t in terms if t]
    return " OR ".join(quoted)


def title_boost(terms: list[str], names: Iterable[str]) -> float:
    """Multiplier in [1, 1 + TITLE_BOOST]: how fully the query names one of ``names``.

    For each title or alias, the share of its words that some query word matches
    (equal, or for longer words a rapidfuzz Jaro-Winkler similarity >= FUZZY_MIN,
    which favours a shared beginning: "Melany" still names "Melanie").
    """
    long_terms = [t for t in terms if len(t) >= 3 or t.isdigit()]
    if not long_terms:
        return 1.0
    best = 0.0
    for name in names:
        # "John (2023-03 archive)": a parenthetical qualifies a title, it is not part of the name.
        bare = _QUALIFIER_RE.sub(" ", name)
        words = [w for w in _WORD_RE.findall(bare.lower()) if w not in STOPWORDS] or [
            w for w in _WORD_RE.findall(name.lower()) if w not in STOPWORDS
        ]
        if not words:
            continue
        hit = sum(
            1
            for w in words
            if w in long_terms
            or (
                len(w) >= FUZZY_MIN_LEN
                and any(
                    len(t) >= FUZZY_MIN_LEN and JaroWinkler.similarity(w, t) >= FUZZY_MIN
                    for t in long_terms
                )
            )
        )
        best = max(best, hit / len(words))
        if best >= 1.0:
            break
    return 1.0 + TITLE_BOOST * best


def days_between(older: str, newer: str) -> float | None:
    try:
        a = dt.date.fromisoformat(older[:10])
        b = dt.date.fromisoformat(newer[:10])
    except (ValueError, TypeError):
        return None
    return float((b - a).days)


def recency_prior(date: str, newest: str) -> float:
    """Multiplier in [1, 1 + RECENCY_WEIGHT], halving its bonus every half-life of age."""
    age = days_between(date, newest) if date and newest else None
    if age is None:
        return 1.0
    return 1.0 + RECENCY_WEIGHT * 0.5 ** (max(age, 0.0) / RECENCY_HALF_LIFE_DAYS)


def _stem(term: str) -> str:
    # A cheap stand-in for the Porter stemmer FTS5 uses: enough to find where a
    # term occurs in a text for excerpts, never used for ranking.
    return term[: max(4, len(term) - 3)] if len(term) > 4 else term


def matched_terms(text: str, terms: list[str]) -> int:
    """How many distinct ``terms`` occur (by stem prefix) among the words of ``text``."""
    words = {w.lower() for w in _WORD_RE.findall(text)}
    return sum(1 for t in terms if any(w.startswith(_stem(t)) for w in words))


def excerpt(text: str, terms: list[str], max_tokens: int) -> str:
    """``text`` on one line, or its best window of sentences within ``max_tokens``.

    The window starts at the sentence matching most query terms and grows to its
    neighbours while it fits; cut ends are marked with an ellipsis.
    """
    flat = " ".join(text.split())
    if count_tokens(flat) <= max_tokens:
        return flat
    sentences = [" ".join(s.split()) for s in _SENTENCE_RE.split(text) if s.strip()]
    scores = [matched_terms(s, terms) for s in sentences]
    best = max(range(len(sentences)), key=lambda i: (scores[i], -i)) if sentences else 0
    if not sentences or count_tokens(sentences[best]) > max_tokens - 2:
        words = (sentences[best] if sentences else flat).split()
        first = next(
            (i for i, w in enumerate(words) if matched_terms(w, terms)),
            0,
        )
        start = max(0, first - 8)
        cut = truncate_to_tokens(" ".join(words[start:]), max_tokens - 2)
        return ("… " if start or best else "") + cut + " …"
    lo = hi = best
    used = count_tokens(sentences[best]) + 2
    grew = True
    while grew:
        grew = False
        for nxt in (hi + 1, lo - 1):
            if 0 <= nxt < len(sentences) and not lo <= nxt <= hi:
                cost = count_tokens(sentences[nxt])
                if used + cost <= max_tokens:
                    used += cost
                    lo, hi = min(lo, nxt), max(hi, nxt)
                    grew = True
    out = " ".join(sentences[lo : hi + 1])
    return ("… " if lo > 0 else "") + out + (" …" if hi < len(sentences) - 1 else "")
