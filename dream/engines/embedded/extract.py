"""Cue-based fact extraction: the sentences of a session that are worth remembering.

Job: for every sentence a person (not the assistant) says, decide whether it states
something durable (a preference, a fact about someone or something, a dated event, a
decision, a plan), write it as a claim (``dream.engines.embedded.phrasing``), find whom it is about
(``dream.language.entities``) and emit one ``Fact`` per subject it should be filed under, each
citing the turn it came from; the sentences one turn says about one subject make one claim. The
reading of a session is ``dream.language.analysis``; the cue words that
tell a claim's kind and slot are ``dream.language.cues``.

Boundary: one session in, facts out; no store access. Claims stay extractive: the turn's
words with first person turned into the speaker's name and relative dates made absolute.
"""

from __future__ import annotations

import dataclasses
import datetime
import re
from dataclasses import dataclass

from dream.engines.embedded.advice import advice_facts
from dream.engines.embedded.distill import (
    asked,
    glue,
    needs_question,
    question_claim,
    substantive,
    topic_of,
    trim,
    vague,
)
from dream.engines.embedded.phrasing import dated, third_person, tidy, with_subject
from dream.engines.embedded.standalone import points_back, restates_name, stated_before_asking
from dream.engines.embedded.todos import as_request
from dream.gates.claimtext import plain
from dream.gates.entailment import uncovered
from dream.gates.support import Support, check_claim, support_for
from dream.language.analysis import (
    Analysis,
    Sentence,
    addressee,
    analyze,
    session_sentences,
    speaker_names,
)
from dream.language.cues import (
    CHANGE_RE,
    FIRST_PERSON_RE,
    GENERAL_RE,
    IMPERATIVE_RE,
    INSTRUCTION_RE,
    PAST_RE,
    PLAN_RE,
    PREFERENCE_RE,
    WE_RE,
    claim_slot,
    classify,
    informative,
)
from dream.language.dates import DateMention
from dream.language.entities import EntityTable
from dream.language.sentences import PHOTO_RE
from dream.records import Evidence, Fact
from memoryfs.pages.transcript import Transcript, Turn

# The reading of a session and the cue words live in their own modules; they are
# re-exported here, where callers have always found them.
__all__ = [
    "Analysis",
    "Sentence",
    "analyze",
    "claim_slot",
    "classify",
    "extract_facts",
    "informative",
    "session_sentences",
    "speaker_names",
    "CHANGE_RE",
]

_OPENS_FIRST_RE = re.compile(r"^(?:I|I['’](?:m|ve|d|ll)|My|Me|We|We['’](?:re|ve|ll|d)|Our)\b")
_PRONOUN_RE = re.compile(r"^(?P<p>He|She|His|Her)(?P<s>['’](?:s|ll|d|ve))?\b")
_CONTRACTIONS = {"s": " is", "ll": " will", "d": " would", "ve": " has"}
_THEY_RE = re.compile(r"^(?:They|Their)\b")
# a name said after "in", "at", "near", "from" or "to" names where, not who: it is never
# the person "she" or "he" stands for, though the session types it no place
_WHERE_RE = re.compile(r"\b(?:in|at|near|from|to)\s+(?:the\s+)?$", re.IGNORECASE)
_OPENING_WORD_RE = re.compile(r"^(?:It|It['’]s|They|Their|This|That|These|Those|There|The|A|An)\b")
_MAX_TARGETS = 4
# a sentence that has its own subject: a pronoun, a possessive, or a word and a verb
_OWN_SUBJECT_RE = re.compile(
    r"^(?:I|I['’](?:m|ve|d|ll)|My|We|We['’](?:re|ve|ll|d)|Our|It|It['’]?s|Its|They|"
    r"They['’](?:re|ve)|Their|He|She|His|Her|This|That|There|These|Those)\b",
    re.IGNORECASE,
)


def extract_facts(t: Transcript) -> list[Fact]:
    """The facts of one session, in turn order, one per (claim, subject it is filed under)."""
    base = datetime.date.fromisoformat(t.date)
    a = analyze(t)
    sentences, people, table = a.sentences, a.people, a.table
    main = _main_subject(table, sentences)
    names = speaker_names(t)
    addressed = addressee(t, people)  # with an assistant, "the tagine you suggested" names it
    recent: list[_Seen] = []  # most recent last
    facts: list[Fact] = []
    dangling: list[bool] = []  # per fact: its sentence points back to what it does not say
    prefs_turn = -1  # the turn whose earlier sentence stated a preference
    turn_n = -1
    state = _TurnState()
    for s in sentences:
        if s.turn.n != turn_n:
            turn_n = s.turn.n
            state = _TurnState(_question_before(t, s.turn, names))
        mentions = table.mentions(s.text)
        if s.speaker and s.turn.text:
            found = _facts_of(
                t, s, mentions, recent, people, base, prefs_turn == s.turn.n, main, state, addressed
            )
            if found:
                state.question = None  # answered by the turn's first claim, or not at all
            if any(f.kind == "preference" for f in found):
                prefs_turn = s.turn.n
            facts.extend(found)
            dangling.extend([state.dangling] * len(found))
            state.dangling = False
        for name, kind, start, end in mentions:
            if kind == "topic" and _WHERE_RE.search(s.text, 0, start):
                kind = "place"  # "works at X in Wellington": no one "she" can stand for
            recent.append((name, kind, s.turn, s.text[start:end]))
        del recent[:-12]
    if table.weak or table.guessed:
        facts = [
            dataclasses.replace(f, weak=True)
            if f.subject_type == "place"
            and f.subject in table.weak
            or f.subject_type == "person"
            and f.subject in table.guessed
            else f
            for f in facts
        ]
    # what the assistant recommended or promised, in turn order with the rest
    told = advice_facts(t, base)
    return sorted(_by_turn(facts, dangling) + told, key=lambda f: f.evidence[0].turn)


_KEEP_APART = ("preference",)


def _by_turn(facts: list[Fact], dangling: list[bool] | None = None) -> list[Fact]:
    """One claim per turn and subject: the sentences a turn says about one subject read as
    one claim citing that turn, in the order said, not as several lines that each cost a
    date and a citation (on LoCoMo, 1,000 tokens: answer token recall +0.03, cited evidence
    +0.01). Claims that fill a slot and preferences stay apart: they are superseded, or
    filed on the preferences page. A decision joins the rest ("I signed up for a pottery
    class yesterday. It's like therapy for me."): in chat it is mostly an event told.
    A ``dangling`` sentence ("I'll look for them at the library") reads right only after
    the sentence it points back to: it joins one or is left out."""
    out: list[Fact] = []
    open_: dict[tuple[str, str, tuple[str, ...]], int] = {}
    for i, f in enumerate(facts):
        key = (f.subject, f.subject_type, tuple(e.ref for e in f.evidence))
        apart = bool(f.slot) or f.kind in _KEEP_APART
        at = open_.get(key)
        if dangling is not None and dangling[i] and (at is None or apart):
            continue
        if at is None or apart:
            if not apart:
                open_[key] = len(out)
            out.append(f)
            continue
        prev = out[at]
        mentions = tuple(dict.fromkeys((*prev.mentions, *f.mentions)))
        text = prev.text.rstrip()
        if not text.endswith((".", "!", "?", "…")):
            text += "."  # a photo's "X shared a photo of ..." has no full stop
        text += " " + f.text.lstrip()
        out[at] = dataclasses.replace(prev, text=text, mentions=mentions)
    return out


@dataclass
class _TurnState:
    """What one turn's sentences pass on to the next: the question the turn may answer, and
    the date a dropped sentence gave ("Last night was amazing! We celebrated ...") and
    whether that sentence told of something done (a photo after it shows it)."""

    question: _Asked | None = None
    carried: DateMention | None = None
    carried_past: bool = False
    dangling: bool = False  # the sentence just read points back to what it does not say


@dataclass(frozen=True)
class _Asked:
    """A question the turn before asked: its text, turn and who asked ("" the assistant)."""

    text: str
    turn: Turn
    asker: str
    topic: str = ""  # what a vague question refers to, from the talk before it
    context: Turn | None = None  # the turn before the question, that the topic may come from


def _names(surface: str, text: str) -> bool:
    """``text`` names ``surface`` as a word of its own ("forMax" does not name Max)."""
    return re.search(rf"(?<![\w]){re.escape(surface)}(?![\w])", text) is not None


def _says_more(text: str, support: Support) -> bool:
    """``text`` says something its cited turns (``support``) do not: a name, a number, a
    date or a content word."""
    return bool(
        check_claim(text, support) or uncovered(plain(text), support.evidence, support.names)
    )


def _question_before(t: Transcript, turn: Turn, names: dict[str, str]) -> _Asked | None:
    i = turn.n - 2  # turns are numbered from 1, in order
    prev = t.turns[i] if 0 <= i < len(t.turns) and t.turns[i].n == turn.n - 1 else None
    if prev is None or prev.speaker == turn.speaker:
        return None
    q = asked(prev.text)
    if not q:
        return None
    topic = ""
    if vague(q):
        before = t.turns[i - 1] if i >= 1 and t.turns[i - 1].n == prev.n - 1 else None
        texts = [x.text for x in (before, prev) if x is not None]
        topic = topic_of(texts, {n.lower() for n in names.values() if n})
        return _Asked(q, prev, names.get(prev.speaker, prev.speaker), topic, before)
    return _Asked(q, prev, names.get(prev.speaker, prev.speaker), topic)


def _listener(speaker: str, people: tuple[str, ...]) -> str:
    """The one other person in a two-person conversation ("" with an assistant)."""
    others = [p for p in people if p != speaker]
    return others[0] if len(others) == 1 else ""


def _main_subject(table: EntityTable, sentences: list[Sentence]) -> tuple[str, str] | None:
    """The project or organisation a session keeps coming back to (3+ mentions), if any."""
    counts: dict[tuple[str, str], int] = {}
    for s in sentences:
        for name, kind, _, _ in table.mentions(s.text):
            if kind in ("project", "org"):
                counts[(name, kind)] = counts.get((name, kind), 0) + 1
    best = sorted(counts, key=lambda k: (-counts[k], k))
    return best[0] if best and counts[best[0]] >= 3 else None


_Seen = tuple[str, str, Turn, str]  # (name, type, turn it was said in, the words used)


def _antecedent(recent: list[_Seen], kinds: tuple[str, ...], exclude: set[str]) -> _Seen | None:
    for seen in reversed(recent):
        if seen[1] in kinds and seen[0] not in exclude:
            return seen
    return None


def _facts_of(
    t: Transcript,
    s: Sentence,
    mentions: list[tuple[str, str, int, int]],
    recent: list[_Seen],
    people: tuple[str, ...],
    base: datetime.date,
    prefs_in_turn: bool,
    main: tuple[str, str] | None,
    state: _TurnState | None = None,
    talking_to: str = "",
) -> list[Fact]:
    """The facts of one sentence. ``talking_to``: the assistant's name when the speaker talks
    to one (never a subject of the claim: "the tagine you suggested" names it)."""
    state = state or _TurnState()
    question = state.question
    photo = PHOTO_RE.fullmatch(s.text)
    said = with_subject(tidy(s.text))  # "Moved into the flat on Saturday": the speaker did
    listener = _listener(s.speaker, people)
    if photo:
        caption = photo.group("caption").strip()
        said = (
            f"{s.speaker} shared {caption}"
            if caption.lower().startswith("a photo")
            else (f"{s.speaker} shared a photo: {caption}")
        )
    else:
        said = trim(said, listener)
        # "can you remind me on wednesday to chase the vendor?" is the speaker's plan
        said = as_request(said) or said
        if said.endswith("?"):
            said = stated_before_asking(said) or said
        if not said:
            return []
    fused = (
        question is not None
        and not photo
        and not said.endswith("?")
        and needs_question(said, listener)
        # an assistant's question is fused only into an answer that needs it ("Twice a
        # week."): "it's a python job on airflow" says what it is on its own
        and not (talking_to and not question.asker and _OWN_SUBJECT_RE.match(said))
    )
    # talking to an assistant, a statement of the speaker's is about their life even with
    # no name in it (chat in lower case names no one: "jess read about lake bohinj")
    has_name = (
        bool(mentions)
        or bool(_PRONOUN_RE.match(said))
        or bool(talking_to and len(substantive(said)) >= 3 and not _YOU_RE.search(said))
    )
    text, dates = dated(said, base)
    # a fragment said to an assistant ("so pescatarian now, not vegetarian anymore") says
    # something only after the speaker's sentence before it: it may join that claim, no more
    fragment = False
    if not photo and not fused and not informative(said, has_name, _dated_event(said, dates)):
        fragment = (
            bool(talking_to)  # to an assistant: between people it is mostly a reaction
            and not dates  # "Last week was wild.": its date passes on to the next sentence
            and informative(said, True)
            and not _YOU_RE.search(said)
            and not glue(said)
        )
        if not fragment:
            _carry(state, dates, said)
            return []
    standing = False
    if IMPERATIVE_RE.match(said) or INSTRUCTION_RE.match(said):
        # a request to the assistant ("Give me a template") is not a fact; a standing
        # instruction ("Sign off with ...", "always ...") is a preference
        standing = bool(GENERAL_RE.search(said) or PREFERENCE_RE.search(said)) or prefs_in_turn
        if not standing:
            return []
    others = [n for n, _, _, _ in mentions if n != listener]
    anchored = bool(dates or others or re.search(r"\d", said))
    if not photo and not standing and not fused and glue(said, listener, anchored):
        _carry(state, dates, said)
        return []
    if restates_name(said, s.speaker):
        return []  # "I'm Maya Okafor, by the way": the page already says who they are
    state.dangling = fragment or not photo and not fused and points_back(said, s.speaker)
    text = third_person(text, s.speaker, listener or talking_to)
    text = text[:1].upper() + text[1:]
    # a fragment that may only join the claim before it leaves a carried date for the
    # sentence after it ("Last week was wild. Just crazy! I got an endorsement ...")
    carried = state.carried if not fragment else None
    if not fragment:
        state.carried = None
    if carried and not dates and not photo and _told_before(said):
        prep = "On" if carried.granularity in ("day", "weekend") else "In"
        if _OPENING_WORD_RE.match(text):  # "It was great" -> "On 5 May 2023 (...), it was great"
            text = text[:1].lower() + text[1:]
        text = f'{prep} {carried.render()} ("{carried.phrase}"), {text}'
        dates = [carried]
    elif carried and photo and state.carried_past:
        # "Something not so great happened yesterday... [a photo of a damaged car]"
        text = f'{text}, from {carried.render()} ("{carried.phrase}")'
        dates = [carried]
    evidence = [Evidence(t.id, s.turn.n, s.turn.hash, t.date)]
    if fused and question is not None:
        q_text, q_dates = dated(question.text, base)
        q_text = third_person(q_text, question.asker)  # its "you": question_claim
        text = question_claim(q_text, text, s.speaker, question.topic)
        dates = dates + q_dates
        cited = [(t, s.turn)]
        for turn in (question.turn, question.context):
            if turn is None or not _says_more(text, support_for(cited, (s.speaker,))):
                break
            # the question (or the talk it refers to) says something the answer does not:
            # cite it too
            cited.append((t, turn))
            evidence.append(Evidence(t.id, turn.n, turn.hash, t.date))
    primary: tuple[str, str] | None = None
    typed = [(n, k) for n, k, _, _ in mentions]
    # what the session takes each name said here for: "moved to Acme" fills the role when
    # Acme is an organisation (``claim_slot``)
    typed_as = {**dict(typed), **{s.text[a:b]: k for _, k, a, b in mentions}}
    if photo or fused or _OPENS_FIRST_RE.match(said) or said.startswith(s.speaker):
        primary = (s.speaker, "person")
    elif mentions and said.startswith(mentions[0][0].split()[0]):
        primary = (mentions[0][0], mentions[0][1])
    else:
        pm = _PRONOUN_RE.match(said)
        if pm or _THEY_RE.match(said):
            kinds = ("person",) if pm else ("org",)
            found = _antecedent(recent, kinds, set(people))
            if found is None and pm:
                found = _antecedent(recent, ("topic",), set(people))  # "she": a person anyway
            if found:
                name, kind, turn, surface = found
                primary = (name, "person" if pm else kind)
                if pm:  # "She" -> the words the antecedent was named with ("Lena")
                    text = _name_pronoun(text, pm, surface)
                if turn.n != s.turn.n and not _names(surface, s.turn.text):
                    evidence.append(Evidence(t.id, turn.n, turn.hash, t.date))
    targets: list[tuple[str, str]] = []
    if primary:
        targets.append(primary)
    if listener and listener in text and listener not in said and not fused:
        targets.append((listener, "person"))  # "Melanie is proud of Caroline ..."
    if s.speaker not in [n for n, _ in targets] and (
        FIRST_PERSON_RE.search(said) or WE_RE.search(said) or not (typed or primary)
    ):
        targets.append((s.speaker, "person"))
    for n, k in typed:
        if n not in [x for x, _ in targets] and len(targets) < _MAX_TARGETS:
            targets.append((n, k))
    if not typed and main and main[0] not in [x for x, _ in targets]:
        targets.append(main)  # "releases are every two weeks now": about the session's project
    future = any(d.date > base for d in dates)
    kind = "preference" if standing else classify(said, bool(dates), future)
    day = next((d.date.isoformat() for d in dates if d.granularity == "day"), t.date)
    out: list[Fact] = []

    def type_of(name: str) -> str:
        return typed_as.get(name, "")

    for i, (name, subject_type) in enumerate(targets):
        is_primary = primary is not None and i == 0
        if kind == "preference" and name == s.speaker:
            subject_type = "preference"  # filed on the speaker's preferences page
            is_primary = True
        aliases = [name, name.split()[0], *([] if name != s.speaker else ["We"])]
        slot = claim_slot(text, aliases, kind, type_of) if is_primary and not fused else ""
        if slot and not slot.startswith("preference") and subject_type != "person":
            slot = ""
        out.append(
            Fact(
                subject=name,
                subject_type=subject_type,
                kind=kind,
                slot=slot,
                text=text,
                evidence=tuple(evidence),
                date=day,
                mentions=tuple(n for n, _ in targets if n != name),
            )
        )
    return out


def _carry(state: _TurnState, dates: list[DateMention], said: str) -> None:
    """A dropped sentence's date is kept for the turn's next sentence."""
    when = [d for d in dates if not d.since]
    if when:
        state.carried = when[-1]
        state.carried_past = _told_before(said)


_YOU_RE = re.compile(r"\b(?:you|your|ya)\b", re.IGNORECASE)


def _dated_event(said: str, dates: list[DateMention]) -> bool:
    """``said`` dates something it tells ("Got back from a road trip yesterday", "Started
    hitting the gym last week"): a date inside the sentence, not its subject ("Last week was
    wild" passes its date on instead: ``_carry``), not a possessive ("tomorrow's opening"),
    in a sentence not said to the listener ("see you tomorrow", "enjoy it tomorrow, you
    earned it")."""
    if _YOU_RE.search(said):
        return False
    return any(
        not d.since and d.start > 0 and not re.match(r"['’]s\b", said[d.end :]) for d in dates
    )


def _told_before(said: str) -> bool:
    """A sentence about something done (past tense), not a plan or a standing fact."""
    return bool(PAST_RE.search(said)) and not PLAN_RE.search(said)


def _name_pronoun(text: str, m: re.Match[str], name: str) -> str:
    p, s = m.group("p"), m.group("s")
    rest = text[m.end() :]
    if p in ("His", "Her") and not s:
        return f"{name}'s" + rest
    verb = _CONTRACTIONS[s[1:]] if s else ""
    if s and s[1:] == "s" and re.match(r"\s+(?:been|got|gone|had|done)\b", rest):
        verb = " has"  # "She's been" is "has been"
    return name + verb + rest
