"""Whether a sentence makes a claim that stands on its own.

Job: three checks between a sentence said in a session and the claim made of it, for what
would read wrong or say nothing out of its conversation: a sentence that only gives the
speaker's name ("My name is Maya."), one that names what it is about only by a pronoun
("I'll look for them at the library"), and a question that opens with a statement ("I
usually bake on Saturday mornings, so I'd feed it Friday night?"), whose statement is kept.

Boundary: text in, a yes or no or a sentence out; no store access, no model, English only
(like ``dream.language.lexicon``).
"""

from __future__ import annotations

import re

from dream.language.lexicon import STOP_WORDS

__all__ = ["points_back", "restates_name", "stated_before_asking"]

_WORD_RE = re.compile(r"[A-Za-z][\w'’-]*")

_INTRO_WORDS = frozenset({
    "i", "i'm", "i’m", "im", "am", "is", "my", "me", "name", "name's", "name’s", "names",
    "call", "called", "this", "it's", "it’s", "here", "hi", "hello", "hey", "btw", "by", "the",
    "way", "just", "so", "and", "oh", "well", "yes", "yeah", "a", "as", "you", "know",
    "remember", "go",
})  # fmt: skip


def restates_name(said: str, speaker: str) -> bool:
    """``said`` only gives the speaker's own name ("My name is Maya.", "I'm Maya Okafor, by
    the way."): nothing a page titled with that name does not already say."""
    if not speaker:
        return False
    own = {w.lower() for w in _WORD_RE.findall(speaker)}
    words = [w.lower() for w in _WORD_RE.findall(said)]
    named = any(w in own for w in words)
    return named and all(w in own or w in _INTRO_WORDS for w in words)


# an object pronoun ("look for them", "tried it", "went there"), not "it was", "there are"
_ANAPHOR_RE = re.compile(
    r"\b(?P<p>them|it|those|these|there)\b"
    r"(?!['’](?:s|ll|d)\b|\s+(?:is|are|was|were|will|would|has|had|seems|seemed|looks|looked|"
    r"sounds|sounded|feels|felt|might|may|must|can|could)\b)",
    re.IGNORECASE,
)
_NAMED_AFTER_RE = re.compile(
    r"(?<![.!?]\s)\b(?!(?:I|Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday|January|"
    r"February|March|April|May|June|July|August|September|October|November|December)\b)"
    r"[A-Z][a-z]+"
)
_SELF_WORDS = frozenset({"i", "i'm", "i’m", "i've", "i’ve", "i'll", "i’ll", "i'd", "i’d", "me",
                         "my", "we", "our", "us"})  # fmt: skip


def points_back(said: str, speaker: str = "") -> bool:
    """``said`` names what it is about only by a pronoun said before anything else ("I'll
    look for them at the library", "I tried it"): on its own, a claim made of it would say
    nothing a reader can place."""
    m = _ANAPHOR_RE.search(said)
    if m is None:
        return False
    own = {w.lower() for w in _WORD_RE.findall(speaker)}
    if _NAMED_AFTER_RE.search(said, m.end()):
        return False  # "I named it Brood Pitt": the sentence names what it is about
    before = [
        w
        for w in _WORD_RE.findall(said[: m.start()])
        if w.lower() not in STOP_WORDS and w.lower() not in own and w.lower() not in _SELF_WORDS
    ]
    return len(before) < 2


_STATED_RE = re.compile(
    r"^(?P<stated>(?:I|I['’](?:m|ve|d|ll)|My|We|We['’](?:re|ve|ll|d)|Our)\s[^?]{8,}?)"
    r",\s*(?:so|but|and|which|is|are|do|does|should|would|could|can|what|how|any)\b[^?]*\?$"
)


def stated_before_asking(said: str) -> str:
    """The statement a question opens with ("I usually bake on Saturday mornings, so I'd
    feed it Friday night?" -> "I usually bake on Saturday mornings."); "" when it opens
    with none."""
    m = _STATED_RE.match(said)
    return m.group("stated").rstrip(" ,") + "." if m else ""
