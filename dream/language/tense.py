"""The tense of the clause around a date phrase: told in the past, or pointing ahead.

Job: tell ``dream.language.dates`` whether a bare "on Friday" or "on the 15th" is a day gone or one
to come, and whether a duration ("for 4 years") runs up to now ("have known them ..."). Words
that point ahead (a request too: "asked me to present ... on the 20th" is a thing to do),
then past verbs (irregular or -ed); and the tense of a "be" right before a date, which
decides for it (what *is* on a day is scheduled: "Sam's birthday is on the 14th"; what
*was* on it is done). No grammar model, a short word list like
``dream.engines.embedded.phrasing``'s. Boundary: text and offsets in, a yes or no out.
"""

from __future__ import annotations

import re

__all__ = ["HAVE_RE", "be_before", "clause_start", "pointing", "told_in_past"]


def _wordset(text: str) -> frozenset[str]:
    return frozenset(text.split())


_PAST_WORDS = _wordset(
    """
    was were did had went got made took came told said found gave felt thought bought brought
    left met began wrote ran saw kept heard sent spent won lost taught caught built sat stood
    held knew grew drew flew threw wore broke chose drove rode ate drank swam sang forgot
    became fell paid led slept spoke woke sold hung fought
    """
)
_NOT_PAST_ED = _wordset("need feed seed bed red shed speed proceed exceed indeed")
_AHEAD_RE = re.compile(
    r"\b(?:will|won['\u2019]t|['\u2019]ll|going\s+to|gonna|plan|plans|planning|planned\s+to|"
    r"hope|hoping|can['\u2019]t\s+wait|next|tomorrow|upcoming|coming|soon|every|each|"
    r"want|wants|need|needs|have\s+to|has\s+to|got\s+to|gotta|remind|to\s+be\s+reminded|"
    r"starts|begins|arrives|leaves|opens|flies)\b",
    re.IGNORECASE,
)
# someone asked to do something: the date in the clause is when it is to be done
_REQUEST_RE = re.compile(
    r"\b(?:asked|invited|told|reminded|wants|needs|would\s+like|['\u2019]d\s+like)\s+"
    r"(?:me|us|him|her|them|you)\s+to\s+(?!(?:the|a|an|my|our|his|her|their|your)\b)[a-z]+",
    re.IGNORECASE,
)
# a form of "be" right before a date phrase: "is on the 14th", "was the 2nd", "'s Friday"
_BE_BEFORE_RE = re.compile(
    r"(?:\b(?P<now>is|are|am)|['\u2019](?P<short>s|re)|\b(?P<then>was|were)|\bbe)\s+$",
    re.IGNORECASE,
)
HAVE_RE = re.compile(r"\b(?:have|has|['\u2019]ve)\b", re.IGNORECASE)
_CLAUSE_END_RE = re.compile(r"[.!?;]")


def clause_start(text: str, start: int) -> int:
    """Where the sentence holding ``text[start]`` begins (a bounded look back)."""
    lo = max(0, start - 400)
    ends = [e.end() for e in _CLAUSE_END_RE.finditer(text, lo, start)]
    return ends[-1] if ends else lo


def clause(text: str, start: int, end: int) -> str:
    """The sentence around ``text[start:end]`` (at most 400 characters either side)."""
    stop = _CLAUSE_END_RE.search(text, end, end + 400)
    return text[clause_start(text, start) : stop.start() if stop else min(len(text), end + 400)]


def pointing(text: str, start: int, end: int) -> int:
    """Which way the sentence around ``text[start:end]`` points: 1 ahead (a word that points
    ahead, a request), -1 back (something done: a past verb), 0 neither."""
    said = clause(text, start, end)
    if _AHEAD_RE.search(said) or _REQUEST_RE.search(said):
        return 1
    for w in re.findall(r"[A-Za-z]+", said):
        low = w.lower()
        if low in _PAST_WORDS or (len(low) > 4 and low.endswith("ed") and low not in _NOT_PAST_ED):
            return -1
    return 0


def be_before(text: str, start: int) -> int | None:
    """The tense of a "be" right before ``text[start]``: 1 the present ("Sam's birthday is
    on the 14th": scheduled), -1 the past ("The deadline was the 2nd"), 0 a bare "be" (its
    tense is the clause's: "will be"); None when no "be" is there."""
    m = _BE_BEFORE_RE.search(text, max(0, start - 12), start)
    if m is None:
        return None
    if m["now"] or m["short"]:
        return 1
    return -1 if m["then"] else 0


def told_in_past(text: str, start: int, end: int) -> bool:
    """The sentence around ``text[start:end]`` tells of something done, not to come."""
    return pointing(text, start, end) < 0
