"""Who does what (DV107): the person a claim opens with, and the doer of its verb.

The person a claim opens with speaks in its cited turns or is named in them; and when a
verb follows ("Jonas hired Dana", or a light verb with a person after it: "got Marta
into"), someone the turns have doing that verb. For each time a turn uses the verb, its
doer is the person before it in its clause: "I" is the speaker, "you" the one spoken to,
a name shaped like a doer that name (not after a preposition or an article, not a month,
not an interjection opening a sentence), "he", "she" or "who" the last such name before
it; "it" or "they" could be anyone. A claim is rejected only when every use of its verb in
the turns has a known doer and none is the claim's subject; a claim that opens with no
person, in the passive or with a possessive ("Lena's collection") is let through.

Boundary: claim text and cited turns (``dream.gates.entailment.Evidence``) in, a reason
out; reading words and stems is ``dream.gates.entailment``'s.
"""

from __future__ import annotations

import re
from functools import lru_cache

from dream.gates.entailment import (
    CLAUSE_BREAK,
    TOKEN_RE,
    Evidence,
    TurnView,
    covered,
    key,
    said_otherwise,
    sentence_start,
    tokens_of,
)
from dream.language.lexicon import ANYONE_PRONOUNS as ANYONE
from dream.language.lexicon import AUXILIARIES as AUX
from dream.language.lexicon import BE_FORMS as BE
from dream.language.lexicon import FUNCTION_WORDS as STOP
from dream.language.lexicon import LISTENER_PRONOUNS as LISTENER
from dream.language.lexicon import REPORTING_WORDS as FRAMING
from dream.language.lexicon import SPEAKER_PRONOUNS as SPEAKER

__all__ = ["actor_problem"]

_NAME_WORD_RE = re.compile(r"[\w'’-]+")
_POSSESSIVE_S_RE = re.compile(r"['’]s$")
_CAPITALIZED_RE = re.compile(r"\b[A-Z][\w-]+")

_LEAD_RE = re.compile(
    r"^(?P<who>[A-Z][\w-]*(?:\s+[A-Z][\w-]*)*(?:\s+and\s+[A-Z][\w-]*(?:\s+[A-Z][\w-]*)*)?)"
    r"(?P<rest>(?:['’]s)?(?:\s|[,.;:!?)]).*)$",  # the name whole: "Ingrid Berg, Oskar Lind"
    re.DOTALL,
)
_NUMBER_WORDS = frozenset(
    (
        "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
        "eleven", "twelve", "twenty", "thirty", "forty", "fifty", "hundred", "thousand",
        "first", "second", "third", "last", "next", "both", "all", "most", "some", "many",
    )
)  # fmt: skip
_RELATIVE = frozenset(("he", "she", "who", "he's", "she's", "he'd", "she'd", "he'll", "she'll"))


def _lead(rest: str) -> tuple[set[str], str] | None:
    """The person a claim opens with (lower-cased name words) and the rest of it, or None
    when it opens with no name ("The team ...", "Moved to ...", "Three figures ...")."""
    m = _LEAD_RE.match(rest.strip())
    if not m:
        return None
    words = [w.lower() for w in _NAME_WORD_RE.findall(m["who"]) if w.lower() != "and"]
    who = {_POSSESSIVE_S_RE.sub("", w) for w in words}
    if not who or any(
        w in STOP or w in FRAMING or w in AUX or w in _NUMBER_WORDS
        or len(w) > 4 and w.endswith(("ed", "ing"))  # "Moved to Porto": no one named
        for w in who
    ):  # fmt: skip
        return None
    return who, m["rest"]


def _verb(rest: str) -> str | None:
    """The stem of the verb after a claim's subject, None in the passive ("Dana was hired
    by ...": the doer is after) or when a possessive or a label follows ("Dana's ...")."""
    passive = False
    tokens = tokens_of(rest)[:7]
    for i, t in enumerate(tokens):
        if t in CLAUSE_BREAK or t.startswith("'"):
            return None
        # a light verb with a person after it does something to them: "got Marta into"
        after = tokens[i + 1] if i + 1 < len(tokens) else ""
        if t in _LIGHT and not passive and after[:1].isalpha() and after not in STOP:
            return key(t)
        if t in AUX or t in ("to", "others"):
            passive = passive or t in BE
            continue
        if passive or t in STOP:
            return None
        return key(t)
    return None


_LIGHT = frozenset(("got", "gets", "get", "made", "makes", "took", "takes", "let", "lets"))


def _antecedent(
    text: str, at: int, speaker: frozenset[str], known: frozenset[str] | set[str]
) -> frozenset[str] | None:
    """The person "he", "she" or "who" at character ``at`` most likely names: the last
    name before it in the turn, shaped like a doer, that is not the speaker's ("Jonas and
    I had the beer. He ran ..."); None when there is none."""
    for m in reversed(list(_NAME_BEFORE_RE.finditer(text[:at]))):
        word = m.group(2).split()[-1].lower()
        if word not in speaker and _doer_shaped(text, m, known):
            return frozenset({word})
    return None


# a name (the words of one, "Blue Horizon Fund") and the word before it
_NAME_BEFORE_RE = re.compile(r"(\S+\s+)?\b((?:[A-Z][\w-]*\s+)*[A-Z][\w-]+)")
_INTERJECTIONS = frozenset(
    ("yeah", "aww", "wow", "haha", "lol", "omg", "congrats", "cool", "nice", "great", "sorry")
)


def _doer_shaped(text: str, m: re.Match[str], known: frozenset[str] | set[str]) -> bool:
    """The name ``m`` (group 2, the word before it group 1) may do a verb: no function
    word, month or weekday, not after a preposition or an article ("in Berlin", "the
    Finals"), and a known person's name where a sentence starts ("Yeah, ...")."""
    word, prior = m.group(2).split()[-1].lower(), (m.group(1) or "").strip().lower()
    opens = sentence_start(text, m.start(2))
    return (
        word not in STOP
        and word not in AUX
        and word not in _NUMBER_WORDS
        and word not in _INTERJECTIONS
        and word.capitalize() not in _CALENDAR
        and prior not in _NOT_BEFORE_A_DOER
        and not prior.strip("'’,.").isdigit()
        # where a sentence starts, a capital is a name when it is one known, or when it
        # opens a pair ("Jonas and I", not "Yeah, ..." or "Remember that ...")
        and (word in known or not opens or text[m.end(2) :].startswith((" and ", " & ")))
    )


_CALENDAR = frozenset(
    (
        "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday",
        "January", "February", "March", "April", "May", "June", "July", "August",
        "September", "October", "November", "December",
    )
)  # fmt: skip
_NOT_BEFORE_A_DOER = frozenset(
    (
        "in", "at", "on", "from", "to", "by", "of", "for", "with", "into", "the", "a", "an",
        "this", "that", "my", "your", "his", "her", "their", "our", "its", "about", "near",
    )
)  # fmt: skip


def _doers(
    text: str, at: int, turn: TurnView, known: frozenset[str] | set[str] = frozenset()
) -> frozenset[str] | None:
    """Who does the verb at character ``at`` of ``text``: name words; None when it could
    be anyone."""
    before = text[:at].rstrip()
    m = re.search(
        r"(\S+\s+)?((?:[A-Z][\w-]*\s+)*[A-Z][\w-]+)(?:\s+(?:also|just|really|then|finally))?$",
        before,
    )
    if m and _doer_shaped(text, m, known):  # a name right before the verb: "Henrik asked"
        return frozenset({m.group(2).split()[-1].lower()})
    tokens = tokens_of(before)
    spans = [mm.start() for mm in TOKEN_RE.finditer(before)]
    i = len(tokens) - 1
    saw_be = False
    while i >= 0 and len(tokens) - i <= 5 and tokens[i] not in CLAUSE_BREAK:
        t = tokens[i]
        if t in BE:
            saw_be = True
        elif t in SPEAKER:
            return None if saw_be else turn.speaker
        elif t in LISTENER:
            return None if saw_be or not turn.listener else turn.listener
        elif t in _RELATIVE:
            return None if saw_be else _antecedent(text, spans[i], turn.speaker, known)
        elif t in ANYONE:
            return None
        elif t in ("and", "or", "but", "then", "so", "because", "that", "if", "when"):
            return None  # another clause's doer, or more than one
        i -= 1
    return None


def actor_problem(rest: str, ev: Evidence, names: set[str]) -> str:
    found = _lead(rest)
    if found is None:
        return ""
    who, after = found
    people = names | {w for t in ev.turns for w in t.speaker | t.listener}
    # "Works as a nurse." names no one: its first word is what the turn says otherwise
    if not who & people and not any(
        covered(key(w), ev.stems) or said_otherwise(key(w), ev) for w in who
    ):
        return (
            f"who does what: {' '.join(sorted(who))} neither speaks in the cited turn nor is "
            "named in it"
        )
    capitals = set().union(*(_capitals(t.text) for t in ev.turns))
    if not who <= people | capitals:
        return ""  # "Goes bouldering with Marta": no person does it
    if after.startswith(("'", "’")):
        return ""  # "Lena's collection ...": the claim's subject is the thing, not Lena
    verb = _verb(after)
    if verb is None:
        return ""
    doers: list[frozenset[str]] = []
    for turn in ev.turns:
        for at in _keyed_at(turn.text).get(verb, ()):
            doer = _doers(turn.text, at, turn, people)
            if doer is None:
                return ""  # a use of the verb whose doer could be the claim's subject
            doers.append(doer)
    if not doers or any(who & d for d in doers):
        return ""
    shown = sorted({w for d in doers for w in d})
    return (
        f"who does what: the cited turn has {', '.join(shown)} do {verb!r}, "
        f"not {' '.join(sorted(who))}"
    )


# what the rules read of a turn, read once for all the claims citing it
@lru_cache(maxsize=512)
def _capitals(text: str) -> frozenset[str]:
    """The capitalised words of a turn that may be names (not "The", not "Three")."""
    words = (m.group(0).lower() for m in _CAPITALIZED_RE.finditer(text))
    return frozenset(w for w in words if w not in STOP and w not in _NUMBER_WORDS)


@lru_cache(maxsize=512)
def _keyed_at(text: str) -> dict[str, tuple[int, ...]]:
    """Each ``key`` of a turn's tokens -> where the tokens with it start."""
    out: dict[str, list[int]] = {}
    for m in TOKEN_RE.finditer(text):
        out.setdefault(key(m.group(0)), []).append(m.start())
    return {k: tuple(v) for k, v in out.items()}


def _word_in(word: str, haystack: str) -> bool:
    return re.search(r"(?<![\w])" + re.escape(word) + r"(?![\w])", haystack) is not None
