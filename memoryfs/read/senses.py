"""Word senses: the instances a category word in a question stands for.

A question asking with a category word ("Which cities has Jon visited?", "What
sports ...") is answered by turns that name instances ("Rome", "tennis"), which a
word search does not find. ``data/senses.tsv`` maps common category nouns to their
common instance words; it is derived from WordNet 3.0 (Princeton University; its
license is ``data/WORDNET_LICENSE.txt``) by ``tools/build_senses.py``, which says
what is kept. Nothing reads WordNet at run time.

A category word counts when the question asks "what" or "which" and the word is
one of the first ``WINDOW`` words after it, before any auxiliary verb: "Which
cities has ...", "Which city did ...", "What LGBTQ+ events has ...", "What kind
of art does ..."; not "What are the new shoes ..." nor "What inspired her
painting ...". A question asking for a time ("What year did ...", "What month is
...": ``memoryfs.read.when.asks_when``) asks when, not for kinds of years or months.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

from memoryfs.read.when import asks_when

__all__ = ["instance_words", "lexicon", "category_of"]

DATA = Path(__file__).resolve().parents[1] / "data" / "senses.tsv"
_WORD_RE = re.compile(r"[a-z]+")
_ASKED_RE = re.compile(r"\b(?:what|which)\b(.*)")
_KIND_WORDS = frozenset({"kind", "kinds", "type", "types", "sort", "sorts"})
# the asked noun phrase ends at the verb: "Which cities | has Jon visited?"
_VERBS = frozenset(
    ("do", "does", "did", "has", "have", "had", "is", "are", "was", "were")
    + ("can", "could", "will", "would", "should", "may", "might")
)
# The asked noun is near "what": "What (LGBTQ+) events", "What kind of art", not
# "What inspired Caroline's painting" (the painting is not what is asked for).
WINDOW = 3


@cache
def lexicon(path: Path = DATA) -> dict[str, tuple[str, ...]]:
    """Category noun -> its instance words, most common first (``category<TAB>words``)."""
    table: dict[str, tuple[str, ...]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        category, _, words = line.partition("\t")
        if category and words:
            table[category] = tuple(words.split())
    return table


def category_of(word: str, table: dict[str, tuple[str, ...]]) -> str | None:
    """The category ``word`` names, itself or by its singular ("cities" -> "city"), if any."""
    forms = [word]
    if word.endswith("ies") and len(word) > 4:
        forms.append(word[:-3] + "y")
    if word.endswith("es") and len(word) > 4:
        forms.append(word[:-2])
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        forms.append(word[:-1])
    return next((f for f in forms if f in table), None)


def instance_words(
    question: str, size: int = 32, table: dict[str, tuple[str, ...]] | None = None
) -> list[str]:
    """Instance words of the categories ``question`` asks about, at most ``size``, the
    categories' words taken in turn; none of the question's own words. ``[]`` when it
    asks with no category word.

    "Which cities has Jon visited?" -> ["washington", "chicago", "paris", ...].
    """
    table = lexicon() if table is None else table
    if asks_when(question):
        return []
    text = question.lower()
    asks = _ASKED_RE.search(text)
    if asks is None:
        return []
    words = _WORD_RE.findall(asks[1])
    ends = [i for i, w in enumerate(words) if w in _VERBS]
    words = words[: ends[0]] if ends else words
    words = words[: int(WINDOW)]
    categories: list[str] = []
    for word in words:
        if word in _KIND_WORDS:
            continue
        category = category_of(word, table)
        if category is not None and category not in categories:
            categories.append(category)
    if not categories:
        return []
    own = set(_WORD_RE.findall(text))
    lists = [[w for w in table[c] if w not in own] for c in categories]
    out: list[str] = []
    for rank in range(max(map(len, lists))):
        for ws in lists:
            if rank < len(ws) and ws[rank] not in out:
                out.append(ws[rank])
    return out[:size]
