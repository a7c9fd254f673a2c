"""Scores of one recall output against one LoCoMo question: pure functions, no I/O.

What is scored is what an agent would see within the token budget:

- **session recall@k / MRR**: the output's items are ranked best first; an item's
  sessions are its own session (a transcript or session summary) and then the
  sessions its citations point to. The ranked session list is those, in item
  order, deduplicated. recall@k is the share of the gold evidence sessions among
  the first k; MRR is 1/rank of the first gold session (0 when none).
- **evidence recall**: the share of gold turns found, ``direct`` when the turn's
  text is in the output, ``cited`` when it is, or a claim in the output cites
  the turn's anchor.
- **answer token recall**: the share of the gold answer's distinct non-stopword
  tokens present among the output's tokens (lowercase ``\\w+`` runs, so numbers
  compare as strings: "2022" matches "2022", never "two thousand"; a number glued to
  a word of three letters or more is two tokens, "3June" -> "3", "june", as a
  typo'd gold answer would otherwise never match; "13th", "10am" stay one token);
  ``exact`` is whether the whole normalized answer occurs in the normalized output.

Text comparisons fold case and collapse whitespace, nothing more.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence

__all__ = [
    "STOPWORDS",
    "answer_tokens",
    "answer_token_recall",
    "exact_containment",
    "evidence_recall",
    "item_sessions",
    "mean",
    "mrr",
    "normalize_text",
    "p95",
    "ranked_sessions",
    "recall_at_k",
    "ref_session",
    "text_refs",
    "words",
]

# A fixed list, so a score never depends on an installed corpus. Month names and
# "may" are deliberately absent: they carry the answer of temporal questions.
_STOPWORD_TEXT = """
    a about above after again against all also am an and any are aren as at be because been
    before being below between both but by can cannot could couldn did didn do does doesn doing
    don down during each few for from further had hadn has hasn have haven having he her here
    hers herself him himself his how i if in into is isn it its itself just let ll me more most
    mustn my myself no nor not of off on once only or other ought our ours ourselves out over own
    re s same shan she should shouldn so some such t than that the their theirs them themselves
    then there these they this those through to too under until up ve very was wasn we were
    weren what when where which while who whom why will with won would wouldn you your yours
    yourself yourselves d m o y
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())

_WORD_RE = re.compile(r"\w+")
# between a number and a word glued to it ("3june", "june3"), not an ordinal or unit ("13th")
_GLUED_RE = re.compile(r"(?<=\d)(?=[^\W\d_]{3})|(?<=[^\W\d_]{3})(?=\d)")
_REF_RE = re.compile(r"sessions/transcripts/([A-Za-z0-9][A-Za-z0-9._-]*)\.md#t(\d+)")
_SESSION_PATH_RE = re.compile(r"^(?:memory/)?sessions/(?:transcripts|summaries)/([^/#]+)\.md$")


def normalize_text(text: str) -> str:
    return " ".join(text.lower().split())


def words(text: str) -> list[str]:
    return [part for run in _WORD_RE.findall(text.lower()) for part in _GLUED_RE.split(run)]


def answer_tokens(answer: str) -> frozenset[str]:
    """Distinct non-stopword tokens of ``answer`` (all of its tokens if each is a stopword)."""
    toks = words(answer)
    kept = frozenset(t for t in toks if t not in STOPWORDS)
    return kept or frozenset(toks)


def answer_token_recall(answer: str, output_words: frozenset[str] | set[str]) -> float | None:
    gold = answer_tokens(answer)
    if not gold:
        return None
    return len(gold & output_words) / len(gold)


def exact_containment(answer: str, output_norm: str) -> bool | None:
    gold = normalize_text(answer).strip(" .,;:!?\"'")
    if not gold:
        return None
    return gold in output_norm


def ref_session(ref: str) -> str | None:
    """``sessions/transcripts/<id>.md#tN`` -> ``<id>``."""
    m = _REF_RE.search(ref)
    return m.group(1) if m else None


def text_refs(text: str) -> set[str]:
    """Turn anchors written out in the text itself."""
    return {f"sessions/transcripts/{m.group(1)}.md#t{m.group(2)}" for m in _REF_RE.finditer(text)}


def item_sessions(path: str, citations: Iterable[str]) -> list[str]:
    """The item's own session (if it is a transcript or summary), then its citations' sessions."""
    out: list[str] = []
    m = _SESSION_PATH_RE.match(path.split("#", 1)[0])
    if m:
        out.append(m.group(1))
    for ref in citations:
        sid = ref_session(ref)
        if sid and sid not in out:
            out.append(sid)
    return out


def ranked_sessions(items: Iterable[tuple[str, Sequence[str]]]) -> list[str]:
    """Sessions of ``(path, citations)`` items in rank order, deduplicated."""
    seen: dict[str, None] = {}
    for path, citations in items:
        for sid in item_sessions(path, citations):
            seen.setdefault(sid, None)
    return list(seen)


def recall_at_k(ranked: Sequence[str], gold: Iterable[str], k: int) -> float | None:
    gold_set = set(gold)
    if not gold_set:
        return None
    return len(gold_set & set(ranked[:k])) / len(gold_set)


def mrr(ranked: Sequence[str], gold: Iterable[str]) -> float | None:
    gold_set = set(gold)
    if not gold_set:
        return None
    for i, sid in enumerate(ranked, start=1):
        if sid in gold_set:
            return 1.0 / i
    return 0.0


def evidence_recall(
    gold_turns: Mapping[str, str], output_norm: str, cited: set[str] | frozenset[str]
) -> tuple[float | None, float | None, list[str]]:
    """``(direct, cited, missed_refs)`` for gold ``{ref: turn text}``.

    An empty turn text never counts as found directly (it would be in any output).
    """
    if not gold_turns:
        return None, None, []
    direct_hits = {
        ref for ref, text in gold_turns.items() if (t := normalize_text(text)) and t in output_norm
    }
    cited_hits = direct_hits | (set(gold_turns) & set(cited))
    missed = sorted(set(gold_turns) - cited_hits)
    n = len(gold_turns)
    return len(direct_hits) / n, len(cited_hits) / n, missed


def mean(values: Iterable[float | None]) -> float | None:
    vals = [v for v in values if v is not None]
    return sum(vals) / len(vals) if vals else None


def p95(values: Iterable[float]) -> float | None:
    """Nearest-rank 95th percentile."""
    vals = sorted(values)
    if not vals:
        return None
    return vals[max(0, math.ceil(0.95 * len(vals)) - 1)]
