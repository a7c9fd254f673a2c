"""A question about where someone stands: where they work, where they live, whom they
report to; and the items that state it.

"Where does Dana work now?" is answered by the claim "Dana started as staff scientist at
Tidewater Analytics on 9 February 2026", which shares no word with the question but the
name, and a name a store holds in nearly every unit weighs nothing in a lexical search:
the question is then a search for "work", which finds every turn that says "work"
("Both sent. Now the real work.") before the claim that answers it. And the answer is
the *current* value: the claim Dream has marked superseded when she changed employer
answers "Where did she work before?", not "now".

So a question that asks for one of these slots (``asked_slot``) is searched again with
the words the claims filling it use (``SLOT_WORDS``: "joined", "started", "hired",
"job", "staff" ...), and the items that state the slot (``states_slot``: "works at X",
"started as ... at X", "is a postdoc ... at X") about the person the question names are
weighted up by ``SLOT_WEIGHT``. When the question asks for the present ("now",
"currently", or a present tense: "Where does she work?"; not "did", "used to",
"before"), the newest of those items states the current value and is weighted up by
``NEWEST_NOW`` too, while an older one (a session's summary or turn says what was true
then; only claims are marked superseded) and any superseded item are weighted by
``SUPERSEDED_NOW``: the current value comes first, and the old one, if shown at all,
below it, dated, and marked superseded where it is a claim.

Boundary: question and hit text in, weights and words out; English cue words, no model.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from memoryfs.read.search import Hit

__all__ = [
    "NEWEST_NOW",
    "SLOT_WEIGHT",
    "SLOT_WORDS",
    "SUPERSEDED_NOW",
    "asked_slot",
    "asks_current",
    "asked_names",
    "situation_weights",
    "states_slot",
]

SLOT_WEIGHT = 2.0  # an item stating the asked slot about the person asked about
NEWEST_NOW = 1.5  # the newest such item, when the question asks for the present
SUPERSEDED_NOW = 0.3  # a superseded item, when the question asks for the present

_A = r"['’]"
_QUESTIONS = {
    "work": re.compile(
        r"\bwhere\b.*\b(?:work|works|working|employed|job)\b|"
        r"\b(?:who|what\s+\w+)\b.*\b(?:work|works|working)\s+(?:for|at)\b|"
        r"\bwhat\b.*\b(?:job|employer|workplace|occupation|profession)\b|"
        r"\bwhat\b.*\bdo(?:es)?\b.*\b(?:for\s+(?:a\s+)?living|for\s+work)\b|"
        r"\b(?:employer|workplace)\b",
        re.IGNORECASE,
    ),
    "home": re.compile(
        r"\bwhere\b.*\b(?:live|lives|living|based|reside|resides|residing|moved|move)\b|"
        r"\bwhat\s+(?:city|town|country|neighbou?rhood|district|area|part\s+of\s+town)\b.*"
        r"\b(?:live|lives|living|based|moved|move)\b",
        re.IGNORECASE,
    ),
    "manager": re.compile(
        r"\bwho\b.*\b(?:reports?|reporting)\s+to\b|"
        r"\bwho\b.*\b(?:manager|boss|supervisor|line\s+manager)\b",
        re.IGNORECASE,
    ),
}
# the words the claims filling each slot use, searched with the person's name
SLOT_WORDS = {
    "work": (
        "work", "job", "joined", "started", "starts", "hired", "employed", "employer",
        "company", "staff", "role", "position", "offer", "contract", "team", "colleague",
    ),
    "home": (
        "live", "lives", "moved", "move", "based", "home", "flat", "apartment", "house",
        "rent", "neighbourhood", "city",
    ),
    "manager": ("manager", "reports", "boss", "supervisor", "lead", "team", "pi"),
}  # fmt: skip
# "works at X", "started as a data scientist at X", "joined X", "is a postdoc in the
# marine acoustics group at the X Institute", "X hired her"
_STATES = {
    "work": re.compile(
        r"\b(?:works?|working|worked|employed|hired|started|starts|starting|begins|began|"
        r"job|position|role|staff|intern|internship|postdoc|contract)\b[^.;]{0,80}?"
        r"\b(?:at|for|with|by|joined)\s+(?:the\s+)?[A-Z]|"
        r"\b(?:joined|joins|joining)\s+(?:the\s+)?[A-Z]|"
        r"\b(?:is|was|as)\s+(?:a|an|the)\s+[^.;]{1,60}?\s+(?:at|for)\s+(?:the\s+)?[A-Z]"
    ),
    "home": re.compile(
        r"\b(?:(?:lives?|living|lived|moved|moving|moves|relocated|relocating|based|settled)"
        r"(?:\s+(?:together|now|here|back|over|out|permanently|recently|just))?|"
        r"(?:home|flat|apartment|house)\s+(?:is|was)?)\s*(?:into|in|to|at|near)\s+(?:the\s+)?[A-Z]"
    ),
    "manager": re.compile(
        r"\b(?:reports?|reporting)\s+to\s+[A-Z]|\b(?:manager|boss|supervisor)\b[^.;]{0,40}?"
        r"\b(?:is|was)\s+[A-Z]|\b[A-Z][\w-]*['’]s\s+(?:manager|boss|supervisor)\b"
    ),
}
_NOW_RE = re.compile(
    r"\b(?:now|currently|current|these\s+days|at\s+the\s+moment|at\s+present|presently|"
    r"nowadays|today|still|any\s*more|latest|most\s+recent)\b",
    re.IGNORECASE,
)
_PRESENT_RE = re.compile(r"\b(?:does|do|is|are)\b|['’]s\b", re.IGNORECASE)
_PAST_RE = re.compile(
    rf"\b(?:did|was|were|used\s+to|before|previously|formerly|former|first|ever|has|have|"
    rf"had|last|old|earlier|until|past|prior)\b|\b\w+n{_A}t\s+\w+\s+before\b",
    re.IGNORECASE,
)
_NAME_RE = re.compile(r"\b[A-Z][\w'’-]*")
# the speaker as the subject of a turn's statement
_SELF_RE = re.compile(
    rf"\b(?:I|I{_A}m|I{_A}ve|I{_A}ll|[Ww]e|[Ww]e{_A}re|[Ww]e{_A}ve)\b|"
    r"\b(?:[Mm]y|[Oo]ur)\s+(?:home|flat|apartment|house|job|employer|company|manager|boss)\b"
)
_SENTENCE_END_RE = re.compile(r"[.!?;]\s+")
_NOBODY = re.compile(r"(?!)")  # matches nothing
_QUESTION_WORDS = frozenset(
    ("where", "who", "what", "which", "when", "how", "why", "does", "do", "did", "is")
    + ("are", "was", "were", "has", "have", "can", "could", "would", "will", "i")
)


def asked_slot(question: str) -> str:
    """The slot ``question`` asks for ("work", "home", "manager"), or ""."""
    return next((slot for slot, rx in _QUESTIONS.items() if rx.search(question)), "")


def asks_current(question: str) -> bool:
    """``question`` asks for the present value: "now", "currently", or a present tense
    ("Where does she work?"), not "did", "used to" or "before"."""
    if _NOW_RE.search(question):
        return True
    return bool(_PRESENT_RE.search(question)) and not _PAST_RE.search(question)


def asked_names(question: str) -> list[str]:
    """The names ``question`` asks about: its capitalized words, but the question words
    ("Where does Dana work now?" -> ["Dana"]), possessives stripped."""
    out: list[str] = []
    for m in _NAME_RE.finditer(question):
        word = re.sub(r"['’]s$", "", m.group()).rstrip("'’-")
        if word.lower() not in _QUESTION_WORDS and word not in out:
            out.append(word)
    return out


def states_slot(slot: str, text: str, subject: re.Pattern[str] | None = None) -> bool:
    """``text`` states a value of ``slot`` ("Mara started as a data scientist at Northwind
    Bank" states "work"); with ``subject``, a value of the one ``subject`` matches in the
    same sentence before it ("I started as ...", "Mara lives in ...", not "Mara owes him
    a beer. Jonas lives in ...")."""
    rx = _STATES.get(slot)
    if rx is None:
        return False
    for m in rx.finditer(text):
        if subject is None:
            return True
        starts = [b.end() for b in _SENTENCE_END_RE.finditer(text, 0, m.start())]
        if subject.search(text[starts[-1] if starts else 0 : m.start() + 1]):
            return True
    return False


def _subject(hit: Hit, names: list[str], user: str) -> re.Pattern[str] | None:
    """What names the person asked about in ``hit`` (``names``; ``user``: the store's
    user, whose turns a transcript marks "user"): None for anyone (no name asked),
    ``_NOBODY`` when ``hit`` cannot be about them. A turn is about its speaker, who says
    "I"; another item names them, or says "she" on their own page."""
    if not names:
        return None
    low = {n.lower() for n in names}
    if hit.kind == "turn":
        speaker = hit.speaker.lower()
        named_user = bool(user) and set(user.split()) <= low  # "Where does Noor Haddad ..."
        mine = speaker in low or speaker in ("user", user) and named_user
        return _SELF_RE if mine else _NOBODY
    words = "|".join(re.escape(n) for n in names)
    if any(n in hit.title.lower() for n in low):
        words += "|[Ss]he|[Hh]e|[Tt]hey"
    return re.compile(rf"\b(?:{words})\b")


def situation_weights(question: str, hits: Sequence[Hit], user: str = "") -> list[float]:
    """One weight per hit: ``SLOT_WEIGHT`` for an item stating the asked slot about the
    person asked about (``user``: the store's user, whose turns a transcript says are
    the user's). For a question asking for the present, the newest such item that is
    not superseded states the current value (``SLOT_WEIGHT * NEWEST_NOW``); an older
    one, and any superseded item, is outdated (``SUPERSEDED_NOW``). All 1.0 for a
    question asking for no slot."""
    slot = asked_slot(question)
    if not slot:
        return [1.0] * len(hits)
    names = asked_names(question)
    # a page's head is dated by the page's last change, not by what it says
    stating = [
        h.kind != "head" and states_slot(slot, h.text, _subject(h, names, user.lower()))
        for h in hits
    ]
    if not asks_current(question):
        return [SLOT_WEIGHT if s else 1.0 for s in stating]
    newest = max(
        (h.date[:10] for h, s in zip(hits, stating, strict=True) if s and not h.superseded),
        default="",
    )
    weights: list[float] = []
    for h, s in zip(hits, stating, strict=True):
        if h.superseded or s and h.date[:10] < newest:
            weights.append(SUPERSEDED_NOW)
        elif s:
            weights.append(SLOT_WEIGHT * NEWEST_NOW)
        else:
            weights.append(1.0)
    return weights
