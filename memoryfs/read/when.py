"""A question that asks when, and the items that state a date.

"When did Nate get his first two turtles?" is answered by the item that says when
("Nate has had them for 3 years now (since 2019)"), but a lexical search ranks it
with every other item about turtles, and a claim that names its object by a pronoun
("had them") matches the question's words less than the chat around it. Every item
recall prints carries its session's date; an item whose own text states a date (a
day, a month or a year, as Dream writes the relative dates it resolves) says more
than that date. So when the question asks when (``asks_when``), items that state a
date (``states_date``) are weighted by ``WHEN_DATED``. Measured on the five LoCoMo
conversations, all tuning data (bench/QUALITY_LOG.md, session 20): answer token recall
+.0024 [+.0003, +.0059] at 1,000 tokens, four conv-42 questions.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["WHEN_DATED", "asks_when", "states_date", "when_weights"]

WHEN_DATED = 1.3  # weight of an item stating a date, for a question that asks when

_WHEN_RE = re.compile(
    r"\s*(?:when\b|(?:what|which|in\s+which)\s+(?:day|date|month|year|week|weekend)\b|"
    r"how\s+long\s+ago\b)",
    re.IGNORECASE,
)
_MONTHS = "January|February|March|April|May|June|July|August|September|October|November|December"
# "20 May 2023", "May 2023", "2019": a year, with a month and a day if there are any
_DATE_RE = re.compile(rf"\b(?:(?:\d{{1,2}}\s+)?(?:{_MONTHS})\s+)?(?:19|20)\d{{2}}\b")


def asks_when(question: str) -> bool:
    """``question`` asks for a time ("When ...", "What year ...", "In which month ...")."""
    return bool(_WHEN_RE.match(question))


def states_date(text: str) -> bool:
    """``text`` states a date: a year, alone or with its month and day."""
    return bool(_DATE_RE.search(text))


def when_weights(question: str, texts: Sequence[str]) -> list[float]:
    """One weight per item text: ``WHEN_DATED`` for a dated item when ``question`` asks when."""
    if not asks_when(question):
        return [1.0] * len(texts)
    return [WHEN_DATED if states_date(t) else 1.0 for t in texts]
