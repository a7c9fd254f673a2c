"""Turn a sentence said in a session into a claim that reads on its own.

Job: resolve relative dates against the session date and write them as absolute dates with
the original phrase kept (``on 20 May 2023 ("last Saturday")``), and rewrite first person to
the speaker's name (``I'm``, ``my``, ``I need`` -> ``Dana is``, ``Dana's``, ``Dana needs``).
Everything else stays as said: the semantic gate checks that a claim's names and numbers are
in the turn it cites, so a claim is the turn's own words, lightly normalized.

Boundary: relative phrases come from ``dream.language.dates.find_relative_dates`` and nowhere else,
so the semantic gate, which resolves phrases the same way, accepts every date written here
(a bare "on Monday" stays as said: it could point either way). No grammar model:
conjugation is a short rule list.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable

from dream.language.dates import DateMention, find_relative_dates

__all__ = ["dated", "third_person", "tidy", "with_subject", "PAST_VERBS"]

_PREPOSITIONS = {
    "since", "until", "till", "by", "from", "before", "after", "during", "over", "for",
    "around", "through", "in", "on", "at", "of", "between", "to",
}  # fmt: skip
PAST_VERBS = {
    "was", "were", "did", "had", "went", "got", "made", "took", "came", "told", "said", "found",
    "gave", "felt", "thought", "bought", "brought", "left", "met", "began", "wrote", "ran",
    "saw", "kept", "heard", "sent", "spent", "won", "lost", "taught", "caught", "built", "sat",
    "stood", "held", "knew", "grew", "drew", "flew", "threw", "wore", "broke", "chose", "drove",
    "rode", "ate", "drank", "swam", "sang", "forgot", "became", "fell", "paid", "led", "slept",
    "understood", "spoke", "woke", "shot", "hung", "fought", "sold", "meant", "dealt",
}  # fmt: skip
_NOT_PAST_ED = {
    "need",
    "feed",
    "seed",
    "bed",
    "red",
    "shed",
    "speed",
    "proceed",
    "exceed",
    "indeed",
}


def _is_past_word(word: str) -> bool:
    w = word.lower()
    return w in PAST_VERBS or (len(w) > 3 and w.endswith("ed") and w not in _NOT_PAST_ED)


def dated(text: str, base: datetime.date) -> tuple[str, list[DateMention]]:
    """``text`` with each relative date written as an absolute one, original phrase kept."""
    mentions = sorted(find_relative_dates(text, base), key=lambda d: d.start)
    if not mentions:
        return text, []
    pieces: list[str] = []
    pos = 0
    for d in mentions:
        before = text[pos : d.start]
        if d.since:  # "for 4 years" stays as said; when it began follows it
            pieces.append(before)
            pieces.append(f"{d.phrase} (since {d.render()})")
            pos = d.end
            continue
        owner = re.match(r"['’]s\b", text[d.end :])
        if owner:  # "last week's release": the date owns it, the phrase follows it
            pieces.append(before)
            pieces.append(f'{d.render()}{owner.group()} ("{d.phrase}{owner.group()}")')
            pos = d.end + len(owner.group())
            continue
        prev_word = re.findall(r"[A-Za-z]+", before[-12:])
        phrase_word = d.phrase.split()[0].lower()
        prep = ""
        if phrase_word in ("by", "for"):  # "by Friday": a deadline stays one
            prep = phrase_word + " "
        elif (
            phrase_word in ("on", "in")
            or not prev_word
            or prev_word[-1].lower() not in _PREPOSITIONS
        ):
            prep = "on " if d.granularity in ("day", "weekend") else "in "
        pieces.append(before)
        pieces.append(f'{prep}{d.render()} ("{d.phrase}")')
        pos = d.end
    pieces.append(text[pos:])
    return "".join(pieces), mentions


# --- first person to the speaker's name ---------------------------------------------------

_APOS = "['’]"
_MODALS = {"can", "could", "will", "would", "should", "shall", "may", "might", "must"}
_ADVERBS = {
    "just", "also", "really", "still", "never", "always", "usually", "often", "finally",
    "recently", "actually", "even", "only", "already", "sometimes", "definitely", "totally",
    "honestly", "probably", "kinda", "absolutely", "truly", "rarely", "mostly", "now", "too",
}  # fmt: skip
_IRREGULAR = {"have": "has", "be": "is", "do": "does", "go": "goes", "am": "is"}
_NOT_VERBS = {"and", "or", "but", "to", "a", "the", "too", "think,", "guess,"}


def _third(verb: str) -> str:
    low = verb.lower()
    if low in _IRREGULAR:
        return _IRREGULAR[low]
    if low in ("are", "were"):  # only ever plural: "... and I are"
        return verb
    if low in _MODALS or _is_past_word(low) or low.endswith(("ing", "n't")) or low in PAST_VERBS:
        return verb
    if low in ("wanna", "gonna", "gotta"):  # "I wanna start" stays as said
        return verb
    if low.endswith(("s", "sh", "ch", "x", "z", "o")):
        return verb + "es"
    if len(low) > 2 and low.endswith("y") and low[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


# (pattern, first mention, later mention): the first mention names the speaker, later
# ones say "they" / "their", so a claim reads "Melanie is carving out time for running,
# which refreshes them", not "... which refreshes Melanie and helps Melanie ..." (a name
# said five times also outweighs the rest of the claim in search)
_SUBJECT_FORMS = [
    (re.compile(rf"\bI{_APOS}m\b|\bI am\b"), "{n} is", "they are"),
    (re.compile(rf"\bI{_APOS}ve\b"), "{n} has", "they have"),
    (re.compile(rf"\bI{_APOS}ll\b|\bI will\b"), "{n} will", "they will"),
    (
        re.compile(rf"\bI{_APOS}d(?=\s+(?:been|never|already|just|had|gone|seen|done|[a-z]+ed)\b)"),
        "{n} had",
        "they had",
    ),  # fmt: skip
    (re.compile(rf"\bI{_APOS}d\b"), "{n} would", "they would"),
    (re.compile(rf"\bI don{_APOS}t\b|\bI do not\b"), "{n} doesn't", "they don't"),
    (re.compile(rf"\bI haven{_APOS}t\b|\bI have not\b"), "{n} hasn't", "they haven't"),
]
# a verb with a contraction ("didn't", "wasn't", "can't") keeps its form
_I_VERB_RE = re.compile(
    r"\bI\b((?:\s+(?:" + "|".join(sorted(_ADVERBS)) + r"))*+)\s+([a-z]+)\b(?![’'])"
)
_OBJECT_FORMS = [
    (re.compile(r"\s+myself(?=\s*(?:[.,;:!?]|$))"), "", ""),  # emphatic: "I'll do it myself"
    (re.compile(r"\bmyself\b", re.IGNORECASE), "themself", "themself"),
    (re.compile(r"\bmine\b", re.IGNORECASE), "{n}'s", "theirs"),
    (re.compile(r"\bmy\b", re.IGNORECASE), "{n}'s", "their"),
    (re.compile(r"(?<![\w-])me(?![\w-])"), "{n}", "{n}"),  # not "me-time"
]
_THEY_RE = re.compile(r"\b(?:they|them|their|theirs|themselves)\b", re.IGNORECASE)
_MARK_RE = re.compile("\ue000(\\d+)\ue001")
_STARTS_RE = re.compile(r"(?:^|[.!?]\s+)$")
_JOINED_RE = re.compile(r"\b(?:and|or|nor)\s+$", re.IGNORECASE)
# "I'm Dana, a marine biologist" / "My name is Maya Okafor and I ..." (the speaker's name)
_SELF_INTRO_RE = re.compile(
    rf"\b(?:I{_APOS}m|I am|[Mm]y name is|[Mm]y name{_APOS}s)\s+"
    r"(?P<name>[A-Z][\w'’-]*(?:\s+[A-Z][\w'’-]*){0,3})(?P<sep>,\s+|\s+and\s+(?=I\b))"
)


_QUOTED_RE = re.compile(r'("[^"]*"|“[^”]*”)')


_YOU_OBJECT_RE = re.compile(
    r"\b(?P<w>of|for|to|with|about|at|from|like|than|love|miss|thank|thanks|see|help|told|tell|"
    r"asked|ask|invite|invited|support|supporting|believe in|inspire|inspired|congratulate|"
    r"remind|send|give|show|email|call|text|ping|notify|nudge|let)"
    r"\s+you\b(?!['’])",
    re.IGNORECASE,
)
_YOUR_RE = re.compile(r"\byour\b", re.IGNORECASE)
# "the tagine you suggested": who suggested it is the listener
_YOU_TOLD_RE = re.compile(
    r"\byou(?=\s+(?:(?:just|already|also|once)\s+)?(?:suggested|recommended|mentioned|said|"
    r"told|gave|sent|proposed|showed|shared|found|listed|wrote|picked|chose|helped|explained|"
    r"pointed|offered|promised|reminded|planned|drafted|booked|made)\b)",
    re.IGNORECASE,
)


def third_person(text: str, name: str, listener: str = "") -> str:
    """First person singular rewritten to ``name`` (and, when the other side of the
    conversation is a person, ``you``/``your`` in object position to ``listener``);
    quoted words untouched."""
    if not name:
        return text
    parts = _QUOTED_RE.split(text)
    return "".join(
        p if i % 2 else _second_person(_third_person(p, name), listener)
        for i, p in enumerate(parts)
    )


def _second_person(text: str, listener: str) -> str:
    if not listener:
        return text
    text = _YOU_OBJECT_RE.sub(lambda m: f"{m.group('w')} {listener}", text)
    text = _YOU_TOLD_RE.sub(listener, text)
    return _YOUR_RE.sub(f"{listener}'s", text)


def _third_person(text: str, name: str) -> str:
    text = re.sub(r"(?<![\w'’])i(?=(?:['’](?:m|ve|ll|d)\b|\s))", "I", text)  # chat-style "i"
    m = _SELF_INTRO_RE.search(text)
    said = {w.lower() for w in m.group("name").split()} if m else set()
    if m and said and said <= {w.lower() for w in name.split()}:
        # the name is the page's: "I'm Dana, a biologist" -> "Dana is a biologist";
        # "I'm Maya Okafor and I work ..." -> "Maya Okafor works ..."
        intro = f"{name} is " if m.group("sep").startswith(",") else ""
        text = text[: m.start()] + intro + text[m.end() :]
    # Each first-person form becomes a mark; the marks are then written out in order, the
    # first as the name, later ones as "they" unless the sentence already says "they".
    forms: list[tuple[str, str]] = []

    def mark(first: str, later: str) -> str:
        forms.append((first.format(n=name), later.format(n=name)))
        return f"\ue000{len(forms) - 1}\ue001"

    def marker(first: str, later: str) -> Callable[[re.Match[str]], str]:
        return lambda _m: mark(first, later)

    for regex, first, later in _SUBJECT_FORMS:
        text = regex.sub(marker(first, later), text)

    def verb(m: re.Match[str]) -> str:
        adverbs, word = m.group(1), m.group(2)
        if _JOINED_RE.search(m.string, 0, m.start()):
            if re.search(r"\bI\b|\ue000|,\s*(?:and|or|nor)\s+$", m.string[: m.start()]):
                # "I loved it and I usually read", "Leila is marrying in June, and I have
                # no idea": a clause of the speaker's of its own
                verb_form = word if word in _NOT_VERBS else _third(word)
            else:  # "my partner and I are moving": one plural subject
                verb_form = "were" if word == "was" else "are" if word == "am" else word
            name_verb = f"{{n}}{adverbs} {verb_form}"
            return mark(name_verb, name_verb)
        if word in _NOT_VERBS:
            return mark(f"{{n}}{adverbs} {word}", f"they{adverbs} {word}")
        plural = "were" if word == "was" else "are" if word == "am" else word
        return mark(f"{{n}}{adverbs} {_third(word)}", f"they{adverbs} {plural}")

    text = _I_VERB_RE.sub(verb, text)
    text = re.sub(r"\bI\b", marker("{n}", "{n}"), text)  # "my cat and I": the name
    for regex, first, later in (*_OBJECT_FORMS, *_WE_FORMS):
        text = regex.sub(marker(first, later), text)
    if not forms:
        return text
    plain = _THEY_RE.search(_MARK_RE.sub(" ", text)) is not None
    out: list[str] = []
    pos = 0
    named = False
    for m in _MARK_RE.finditer(text):
        first, later = forms[int(m.group(1))]
        word = first if not named or plain else later
        named = named or name in first
        if word and _STARTS_RE.search(text[: m.start()]):
            word = word[:1].upper() + word[1:]
        out.append(text[pos : m.start()] + word)
        pos = m.end()
    out.append(text[pos:])
    return "".join(out)


# "we" is the speaker and someone else: the claim names the speaker ("We went camping" ->
# "Melanie and others went camping"); "us" stays, it rarely carries the fact
_WE_FORMS = [
    (re.compile(rf"\b[Ww]e{_APOS}re\b"), "{n} and others are", "they are"),
    (re.compile(rf"\b[Ww]e{_APOS}ve\b"), "{n} and others have", "they have"),
    (re.compile(rf"\b[Ww]e{_APOS}ll\b"), "{n} and others will", "they will"),
    (re.compile(rf"\b[Ww]e{_APOS}d\b"), "{n} and others would", "they would"),
    (re.compile(r"\b[Ww]e\b"), "{n} and others", "they"),
    (re.compile(r"\b(?:[Oo]urs|[Oo]ur)\b"), "{n}'s", "their"),
]


_LEADING_RE = re.compile(
    r"^(?:(?:oh|well|yeah|yes|ok|okay|right|hey|wow|sure|update|status update|quick update|fyi|"
    r"so|and|but|plus|anyway|also|btw|by the way|honestly|actually)[,:!.]\s+|"
    r"(?:so(?!\s+far\b)|and|but|plus|anyway|also|btw|by the way|honestly|actually)\s+(?=[A-Z]))+",
    re.IGNORECASE,
)
# "Status update for your notes: I started ..." -> "I started ..."; a preamble that gives
# the rest its context ("For my emails in general: keep them short") stays.
_PREAMBLE_RE = re.compile(
    r"^[^:\d]{0,60}:\s+(?=(?:I|I['’]m|I['’]ve|My|We|Our)\b|[A-Z][\w-]+ [a-z])"
)


def tidy(sentence: str) -> str:
    """A sentence trimmed of discourse openers ("So,", "Update:") and shouting."""
    s = sentence.strip()
    s = _PREAMBLE_RE.sub("", s)
    s = _LEADING_RE.sub("", s)
    s = re.sub(r"[!?]*!+[!?]*$", ".", s)
    s = s.replace("[[", "[ [").replace("]]", "] ]")
    s = re.sub(r"\[cite:", "[cite :", s)
    s = s.lstrip("#>-*+ ").strip()
    if s and s[0].islower():
        s = s[0].upper() + s[1:]
    return s


_ADJECTIVE_ED = {
    "based", "tired", "excited", "bored", "stressed", "married", "interested", "worried",
    "scared", "pleased", "surprised", "confused", "exhausted", "obsessed", "annoyed", "used",
    "supposed", "done", "gone",
}  # fmt: skip
_AFTER_VERB_RE = re.compile(
    r"\s+(?:the|a|an|my|our|into|in|to|up|out|off|back|from|with|for|on|at|it|them|some|"
    r"two|three|four|five|\d|over|home|around|through|by|about|[a-z]+ing)\b",
    re.IGNORECASE,
)
_ADVERB_OPEN_RE = re.compile(r"^(?:(?:just|finally|also|already|still|actually)\s+)+", re.I)


def with_subject(said: str) -> str:
    """A sentence the speaker says of themself without a subject ("Moved into the Lombok
    flat on Saturday", "Finally ordered the print") with its "I" back, so it reads as
    theirs; anything else as it is."""
    adverbs = _ADVERB_OPEN_RE.match(said)
    lead = adverbs.group(0) if adverbs else ""
    rest = said[len(lead) :]
    m = re.match(r"([A-Za-z]+)", rest)
    if not m:
        return said
    word = m.group(1)
    low = word.lower()
    past = low in PAST_VERBS or (_is_past_word(low) and low not in _ADJECTIVE_ED)
    # a gerund is mostly a subject itself ("Talking to them made me ..."): left alone
    if not past or not _AFTER_VERB_RE.match(rest, m.end()):
        return said
    return f"I {lead.lower()}{low}{rest[m.end() :]}"
