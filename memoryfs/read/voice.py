"""Whose words an item carries, and a prior for the speakers a question names.

A question about one person ("What activities does Melanie partake in?") is
answered, nearly always, by what that person said: in the LoCoMo conversations
97% of the gold turns of questions naming exactly one speaker are that
speaker's own. A lexical search does not know that: the other speaker's turn
that asks about it ("What's your best camping memory?") or their own news that
happens to share a rare word ranks as high. An item's *voice* is the speaker of
its turn, or of the turns a claim cites (so it works the same with or without
the wiki). When the question names exactly one of the speakers among the
candidates, items voiced only by others are weighted down by ``OTHER_VOICE``;
items with no turn behind them (page heads, uncited prose) are left alone.
The named speaker's own turns get ``NAMED_TURN``: search already boosts the
claims of a page whose title the question names (up to x1.5), and a turn, which
has no title, would otherwise lose to that person's loosely matching claims.

A question naming several speakers ("How do Jon and Gina both like to destress?")
is about all of them: an item voiced by any of them is theirs, their turns get
``NAMED_TURN``, and the title boost search gave each of their pages is undone
(``people_page_weight``). Boosting every named person's page tells none of them
apart; in a conversation between the named people it only lifts every claim of
theirs that holds the names ("Jon won't quit - Gina's words motivate Jon") above
the turn holding the question's topic word. On LoCoMo tuning (conv-26/30, wiki,
1,000 tokens) the 22 questions naming both speakers went from session recall@5
.659 to .727 and cited evidence .575 to .666; on the held-out conv-41/42/43 the 45
such questions from .720 to .694 and .568 to .601, and all held-out questions from
S@5 .867 to .864, cited evidence .839 to .842, answer tokens .808 to .808
(bench/QUALITY_LOG.md, session 7).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from memoryfs.pages.archives import page_title
from memoryfs.read.ranking import query_terms, title_boost
from memoryfs.read.search import Hit

__all__ = [
    "NAMED_TURN",
    "OTHER_VOICE",
    "named_speakers",
    "people_page_weight",
    "voice_weights",
    "voices",
]

OTHER_VOICE = 0.7  # weight of an item voiced only by speakers the question does not name
NAMED_TURN = 1.2  # weight of the named speaker's own turn (a turn has no title to boost)
_TRANSCRIPTS = "sessions/transcripts/"


def voices(hit: Hit, speaker_of: Callable[[str], str]) -> frozenset[str]:
    """Speakers whose words ``hit`` carries: a turn's own, or those of the turns it cites."""
    if hit.kind == "turn":
        return frozenset({hit.speaker}) if hit.speaker else frozenset()
    return frozenset(
        v for ref in hit.citations if ref.startswith(_TRANSCRIPTS) and (v := speaker_of(ref))
    )


def named_speakers(question: str, speakers: set[str] | frozenset[str]) -> frozenset[str]:
    """The speakers whose (first) name is a word of ``question``."""
    words = set(query_terms(question))
    return frozenset(s for s in speakers if s.split() and s.split()[0].lower() in words)


def people_page_weight(hit: Hit, named: frozenset[str], terms: list[str]) -> float:
    """1 / the title boost search gave ``hit`` for naming its page, if the page is a named person's.

    A person's page is one whose title (an archive's: its page's) is one of the
    ``named`` speakers' full or first name; other hits weigh 1.
    """
    if hit.layer not in ("knowledge", "notes") or not hit.title:
        return 1.0
    title = page_title(hit.path, hit.title).strip().lower()
    if not any(title in (s.lower(), s.split()[0].lower()) for s in named if s.split()):
        return 1.0
    return 1.0 / title_boost(terms, [title])


def voice_weights(
    question: str, hits: Sequence[Hit], speaker_of: Callable[[str], str]
) -> list[float]:
    """One weight per hit (1 when the question names no speaker).

    ``OTHER_VOICE`` when only others than the named speakers are heard,
    ``NAMED_TURN`` for a named speaker's own turn, else 1; with several speakers
    named, a hit on one of their pages is also weighed by ``people_page_weight``.
    """
    # The speakers of the candidate turns name the people first (no lookup needed).
    named = named_speakers(question, {h.speaker for h in hits if h.kind == "turn" and h.speaker})
    if not named:
        return [1.0] * len(hits)
    terms = query_terms(question)
    heard = [voices(h, speaker_of) for h in hits]
    return [
        (OTHER_VOICE if v and not v & named else NAMED_TURN if h.kind == "turn" and v else 1.0)
        * (people_page_weight(h, named, terms) if len(named) > 1 else 1.0)
        for h, v in zip(hits, heard, strict=True)
    ]
