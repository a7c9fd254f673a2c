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
is about all of them: an item voiced by any of them is theirs, and their turns get
``NAMED_TURN``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from memoryfs.read.ranking import query_terms
from memoryfs.read.search import Hit

__all__ = [
    "NAMED_TURN",
    "OTHER_VOICE",
    "named_speakers",
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


def voice_weights(
    question: str, hits: Sequence[Hit], speaker_of: Callable[[str], str]
) -> list[float]:
    """One weight per hit (1 when the question names no speaker).

    ``OTHER_VOICE`` when only others than the named speakers are heard,
    ``NAMED_TURN`` for a named speaker's own turn, else 1.
    """
    # The speakers of the candidate turns name the people first (no lookup needed).
    named = named_speakers(question, {h.speaker for h in hits if h.kind == "turn" and h.speaker})
    if not named:
        return [1.0] * len(hits)
    heard = [voices(h, speaker_of) for h in hits]
    return [
        OTHER_VOICE if v and not v & named else NAMED_TURN if h.kind == "turn" and v else 1.0
        for h, v in zip(hits, heard, strict=True)
    ]
