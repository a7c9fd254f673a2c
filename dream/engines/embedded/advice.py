"""What the assistant said that is memory: recommendations, suggestions and promises.

Job: a user asks "any book recommendations?" and weeks later "what book did you recommend
to me?". For each assistant turn this finds what it recommended (the heads of a list it
gave, the names it set in bold, or its sentence saying "I'd suggest ..."), what it promised
to do ("I'll remind you on Thursday to buy the saffron"), and writes each as a claim of the
assistant's by the store's names ("Juniper recommended The Overstory by Richard Powers;
Piranesi by Susanna Clarke to Maya (asked: "any book recommendations?")"), filed on the
user's page (kind ``advice``). A recommendation cites the assistant's turn and the user's
request before it, whose words (the category asked for) the claim quotes.

Boundary: one session in, facts out, like ``dream.engines.embedded.extract``; no store access.
Extractive: every name, number and date of a claim is in the turns it cites.
"""

from __future__ import annotations

import dataclasses
import datetime
import re
from dataclasses import dataclass

from dream.engines.embedded.phrasing import dated, third_person
from dream.language.analysis import analyze
from dream.language.dates import DateMention
from dream.language.sentences import split_sentences
from dream.records import Evidence, Fact
from memoryfs.pages.transcript import Transcript, Turn

__all__ = ["advice_facts", "question_in", "request_in", "recommended_items"]

_MAX_ITEMS = 6
_MAX_ITEM_WORDS = 10
_MAX_REQUEST_WORDS = 16

# the user asks for a recommendation, a suggestion, ideas or options
_REQUEST_RE = re.compile(
    r"\b(?:recommend|recommendations?|recs|suggest|suggestions?|ideas?|tips|options|picks?|"
    r"(?:need|want|looking\s+for)\s+(?:a|an|some|new|another)|"
    r"what\s+(?:\w+\s+)?should\s+(?:I|we)|which\s+(?:\w+\s+){0,3}(?:should|would|do|is|are)|"
    r"where\s+should\s+(?:I|we)|any\s+(?:good\s+)?\w+\s+(?:for|to)|(?:can|could)\s+you\s+"
    r"(?:recommend|suggest|point|help\s+me\s+(?:pick|choose|find|decide)))\b"
    r"|\b\w+\s+or\s+[\w'’ ]+\?$",  # a choice: "Piranesi or The Memory Police?"
    re.IGNORECASE,
)
_ASK_OPEN_RE = re.compile(
    r"(?:recommend|suggest|any|ideas|tips)\b|.*\b(?:please|needs?|looking\s+for)\b", re.IGNORECASE
)
_PLEASE_RE = re.compile(r"\bplease[.!]?$|^please\b", re.IGNORECASE)
# the assistant recommends, in its own words
_RECOMMEND_RE = re.compile(
    r"\b(?:I(?:['’]d|\s+would)?\s+(?:\w+\s+)?(?:recommend|suggest|go\s+with|pick|choose)|"
    r"my\s+(?:top\s+|first\s+)?(?:pick|recommendation|suggestion|favou?rite)|"
    r"you\s+(?:could|might|should|may|can)\s+(?:also\s+)?(?:try|consider|check\s+out|look\s+into|"
    r"enjoy|like|love|read|watch|visit|start\s+with|go\s+with)|"
    r"(?:^|\.\s+)(?:try|consider|check\s+out|look\s+into|start\s+with|go\s+for)\b|"
    r"(?:a\s+)?(?:good|great|solid|safe)\s+(?:option|choice|bet|pick|fit)|"
    r"here\s+(?:are|is)\s+(?:a\s+few|some|my|three|two|four|five|several)|"
    r"what\s+I['’]?d\s+(?:do|suggest|try|recommend)|until\s+then|in\s+the\s+meantime)",
    re.IGNORECASE,
)
# the assistant promises to do something ("I'll remind you", "I've added it to your list")
_PROMISE_RE = re.compile(
    r"^(?:(?:OK|Okay|Sure|Noted|Done|Got\s+it)[,.!]?\s+)?(?:I['’]ll|I\s+will|I['’]ve|I\s+have)\s+"
    r"(?:also\s+)?(?:remind|set|added|add|scheduled|schedule|noted|note|saved|save|booked|book|"
    r"send|sent|draft|drafted|create|created|put|keep|kept|follow\s+up|check\s+in|update|"
    r"updated|block|blocked|track|flag)\b",
    re.IGNORECASE,
)
_LIST_ITEM_RE = re.compile(r"^\s{0,6}(?:[-*+•]|\d{1,2}[.)])\s+(?P<item>.+)$")
_BOLD_RE = re.compile(r"\*\*(?P<b>[^*\n]{2,80})\*\*|__(?P<u>[^_\n]{2,80})__")
_ITALIC_RE = re.compile(r"(?<![*\w])\*(?P<i>[^*\n]{2,80})\*(?![*\w])")
# not after an abbreviation or initial ("Emily St. John Mandel", "J. R. R. Tolkien")
_HEAD_SPLIT_RE = re.compile(r"\s+[–—-]\s+|:\s+|\s+\(|(?<!\s[A-Z][a-z])(?<!\s[A-Z])[.;!?](?:\s|$)")
_MARKUP_RE = re.compile(r"\*\*|__|`|(?<![\w*])\*(?=\S)|(?<=\S)\*(?![\w*])|^#+\s*")
_WORD_RE = re.compile(r"[A-Za-z][\w'’-]*")
_YOU_RE = re.compile(r"\byou((?:['’](?:d|ll|re|ve))?)\b", re.IGNORECASE)
_YOU_VERBS = {"d": " would", "ll": " will", "re": " is", "ve": " has"}
# a list that only structures the answer ("Pros:", "Step 1", "Budget") names no thing
_GENERIC_HEADS = frozenset({
    "pros", "cons", "tip", "tips", "note", "notes", "step", "steps", "budget", "cost", "costs",
    "time", "timing", "why", "how", "what", "when", "where", "option", "options", "idea",
    "ideas", "summary", "overview", "example", "examples", "bonus", "alternative",
    "alternatives", "ingredients", "instructions", "method", "schedule", "plan", "recipe",
    "signs", "warning", "warnings", "checklist", "timeline", "agenda", "draft", "template",
    "subject", "re",
})  # fmt: skip


_TIME_WORDS = frozenset({
    "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "morning",
    "afternoon", "evening", "night", "day", "days", "week", "weeks", "weekend", "month",
    "first", "then", "next", "later", "before", "after", "during", "today", "tomorrow",
})  # fmt: skip
_POINT_WORDS = frozenset({
    "you", "your", "you're", "you’re", "yours", "is", "are", "was", "were", "do", "does",
    "can", "will", "should", "would", "it's", "it’s", "don't", "don’t",
})  # fmt: skip


@dataclass(frozen=True)
class _Request:
    turn: Turn
    text: str  # the question as asked, short
    recommend: bool  # it asks for a recommendation, not just any question


def request_in(turn: Turn) -> str:
    """The sentence of a user's ``turn`` that asks for a recommendation ("" when none)."""
    return _asking(turn, recommend=True)


def question_in(turn: Turn) -> str:
    """The last question a user's ``turn`` asks ("" when none): what an answer answers."""
    return _asking(turn, recommend=False)


def _asking(turn: Turn, recommend: bool) -> str:
    found = ""
    for sentence in split_sentences(turn.text):
        # "any ideas", "a pick for April" ask for a recommendation; any other request ends
        # with a question mark or says "please"
        asks = (
            sentence.rstrip().endswith("?")
            or _PLEASE_RE.search(sentence)
            or recommend
            and _ASK_OPEN_RE.match(sentence)
        )
        if asks and (not recommend or _REQUEST_RE.search(sentence)):
            sentence = re.sub(r"^\w+:\s+", "", sentence)  # "now: which places ...?"
            words = sentence.split()
            if len(words) > _MAX_REQUEST_WORDS:
                sentence = "… " + " ".join(words[-_MAX_REQUEST_WORDS:])
            found = _plain(sentence).strip()
            if recommend:
                return found
    return found


def _plain(text: str) -> str:
    return " ".join(_MARKUP_RE.sub("", text).split())


def _head(item: str) -> str:
    """What a list item names: the words before a dash or colon ("The Overstory by Richard
    Powers"), else its bold lead."""
    head = _HEAD_SPLIT_RE.split(_plain(item), maxsplit=1)[0].strip()
    m = _BOLD_RE.match(item.strip())
    if m and len(head.split()) > _MAX_ITEM_WORDS:
        return _plain(m.group("b") or m.group("u") or "")
    return head


def _names_thing(head: str, bold: bool = False) -> bool:
    """``head`` names a thing ("Piranesi by Susanna Clarke", "Moroccan vegetable tagine"),
    not a step, a time ("Monday–Tuesday") or a point ("The ending is open"). A ``bold``
    head is one the answer set apart itself ("**Put it in the oven with the light on.**")."""
    words = _WORD_RE.findall(head)
    if not words or len(head.split()) > _MAX_ITEM_WORDS or head.rstrip().endswith("?"):
        return False
    low = [w.lower() for w in words]
    if all(w in _GENERIC_HEADS or w in _TIME_WORDS for w in low):
        return False
    long_words = [w for w in words if len(w) > 3]
    titled = bool(long_words) and all(w[:1].isupper() for w in long_words)  # "The Rest Is ..."
    if not titled and any(w in _POINT_WORDS for w in low):
        return False  # said to the user, or a clause: a point, not a thing
    return bold or any(w[:1].isupper() for w in words[1:]) or len(words) <= 5


def recommended_items(text: str, strict: bool = False) -> list[str]:
    """The things an assistant's answer puts forward: the heads of the items of its first
    list (what follows, after a heading, is detail: signs, steps, extras), else the names
    it set in bold or italics (at most six, in order, no repeats). ``strict``: only list
    items that lead with a name in bold, in any of its lists."""
    items: list[str] = []
    in_fence = listed = False
    for line in text.split("\n"):
        if line.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
            continue
        m = None if in_fence else _LIST_ITEM_RE.match(line)
        if m is None:
            if not strict and listed and line.strip() and not line.startswith((" ", "\t")):
                break  # the first list ended (a strict reading takes what is in bold anywhere)
            continue
        listed = True
        if strict and not _BOLD_RE.match(m.group("item").strip()):
            continue
        head = _head(m.group("item"))
        bold = _BOLD_RE.match(m.group("item").strip())
        if _names_thing(head, bold is not None and _plain(bold.group(0)).startswith(head)):
            items.append(head.rstrip(",.;:"))
    if not items:
        for m in (*_BOLD_RE.finditer(text), *_ITALIC_RE.finditer(text)):
            thing = _plain(m.group(m.lastgroup or 0))
            # "**Subject: Checkout tests**", "**Step 1:**": a label, not a thing
            if ":" not in thing and _names_thing(thing):
                items.append(thing.rstrip(",.;:"))
    return list(dict.fromkeys(items))[:_MAX_ITEMS]


def _joined(items: list[str]) -> str:
    return "; ".join(items)


def advice_facts(t: Transcript, base: datetime.date) -> list[Fact]:
    """The assistant's recommendations and promises in session ``t``, about its user."""
    roster = t.speakers
    user = roster.user_name
    if not user:
        return []
    out: list[Fact] = []
    request: _Request | None = None
    for turn in t.turns:
        role = roster.role(turn.speaker)
        if role == "user":
            asked = request_in(turn)
            question = "" if asked else question_in(turn)
            request = _Request(turn, asked or question, bool(asked)) if asked or question else None
            continue
        if role != "assistant" or turn.speaker.strip().lower() in ("tool", "system", "developer"):
            continue
        out.extend(_turn_facts(t, turn, request, base, roster.assistant_name, user))
        request = None
    return _on_their_pages(t, out, {user, roster.assistant_name})


_MAX_OTHER_PAGES = 3


def _on_their_pages(t: Transcript, facts: list[Fact], speakers: set[str]) -> list[Fact]:
    """Each claim on the user's page, and on the pages of the places, people and things it
    names that the session knows ("Wren recommended Amelisweerd; Fort Rijnauwen ..." is on
    the Amelisweerd page too), with the user as a context edge."""
    if not facts:
        return facts
    table = analyze(t).table
    out: list[Fact] = []
    for f in facts:
        named = [
            (name, kind)
            for name, kind, _, _ in table.mentions(f.text)
            if name not in speakers and not any(w in speakers for w in name.split())
        ]
        named = list(dict.fromkeys(named))[:_MAX_OTHER_PAGES]
        out.append(dataclasses.replace(f, mentions=tuple(n for n, _ in named)))
        out.extend(
            dataclasses.replace(f, subject=name, subject_type=kind, mentions=(f.subject,))
            for name, kind in named
        )
    return out


def _turn_facts(
    t: Transcript,
    turn: Turn,
    request: _Request | None,
    base: datetime.date,
    assistant: str,
    user: str,
) -> list[Fact]:
    facts: list[Fact] = []
    own = Evidence(t.id, turn.n, turn.hash, t.date)
    # a list answers a request for recommendations; without one, a list in a turn that
    # recommends is taken only for the names it sets in bold
    recommends = bool(_RECOMMEND_RE.search(turn.text))
    asked_for = request is not None and request.recommend
    items = recommended_items(turn.text, strict=not asked_for) if request or recommends else []
    if items:
        # asked for a recommendation, the answer recommends; asked anything else, it is the
        # answer's points ("Use lukewarm water; Feed twice a day"), said as such
        if request is None:
            text = f"{assistant} advised {user}: {_joined(items)}"
        elif not request.recommend:
            text = f'{assistant} answered {user} (asked: "{request.text}"): {_joined(items)}'
        else:
            text = f"{assistant} recommended {_joined(items)} to {user}"
            if request is not None:
                text += f' (asked: "{request.text}")'
        evidence: tuple[Evidence, ...] = (own,)
        if request is not None:
            evidence = (own, Evidence(t.id, request.turn.n, request.turn.hash, t.date))
        facts.append(_fact(user, "advice", text.rstrip(".") + ".", evidence, t.date))
    for sentence in split_sentences(turn.text):
        said = _plain(sentence)
        if not said or said.endswith("?"):
            continue
        kind = ""
        named = [_plain(m.group(0)) for m in _BOLD_RE.finditer(sentence)]
        listed = bool(named) and all(any(n in item for item in items) for n in named)
        if _PROMISE_RE.match(said):
            kind = "plan"
        elif (
            (not items or named and not listed)
            and _RECOMMEND_RE.search(said)
            and len(_WORD_RE.findall(said)) >= 5
        ):
            kind = "advice"  # "I'd suggest a **chickpea and apricot tagine**: ..."
        if not kind:
            continue
        resolved, dates = dated(said, base)
        claim = _YOU_RE.sub(
            lambda m: user + _YOU_VERBS.get(m.group(1).lower()[1:], ""),
            third_person(resolved, assistant, user),
        )
        if not claim.startswith(assistant):  # "You could try X": whose advice it is
            claim = f"{assistant} suggested: {claim}"
        claim = claim[:1].upper() + claim[1:]
        if request is not None and kind == "advice":
            claim = claim.rstrip(".") + f' (asked: "{request.text}").'
        evidence = (own,)
        if request is not None and kind == "advice":
            evidence = (own, Evidence(t.id, request.turn.n, request.turn.hash, t.date))
        facts.append(_fact(user, kind, claim, evidence, _day(dates, t.date)))
    return facts


def _day(dates: list[DateMention], default: str) -> str:
    return next((d.date.isoformat() for d in dates if d.granularity == "day"), default)


def _fact(user: str, kind: str, text: str, evidence: tuple[Evidence, ...], day: str) -> Fact:
    """A claim of the assistant's, filed on the page of the user it was said to."""
    return Fact(
        subject=user,
        subject_type="person",
        kind=kind,
        slot="",
        text=text,
        evidence=evidence,
        date=day,
    )
