"""Extractive session summaries: a title, key points by salience, an outcome, open threads.

Job: rank the sentences of one session by how much a later reader would want them (names,
dates, numbers, decisions, preferences, plans; not chat, not questions, not the assistant's
boilerplate), keep 3-8 of them in the order they were said, each citing its turn, and pick
the outcome (the strongest decision, or none) and the threads left open: first what
someone asked to be reminded of, a to-do the speaker states, a reminder the assistant
promises (``dream.engines.embedded.todos``), then plans and things not done yet. Boundary: one
session in, a ``SummaryDraft`` out; no store access.
"""

from __future__ import annotations

import datetime
import re

from rapidfuzz import fuzz

from dream.engines.embedded.advice import advice_facts
from dream.engines.embedded.distill import trim
from dream.engines.embedded.extract import Sentence, analyze, classify, informative, speaker_names
from dream.engines.embedded.phrasing import dated, third_person, tidy
from dream.engines.embedded.standalone import points_back, restates_name
from dream.engines.embedded.todos import as_request, open_item
from dream.language.analysis import addressee
from dream.language.entities import EntityTable
from dream.language.sentences import PHOTO_RE
from dream.records import Evidence, KeyPoint, SummaryDraft
from memoryfs.pages.transcript import Transcript

__all__ = ["summarize_session", "session_title"]

_KIND_WEIGHT = {"decision": 3.0, "preference": 2.5, "plan": 2.0, "event": 1.5, "fact": 1.0}
_OPEN_RE = re.compile(
    r"\b(?:not yet|hasn['’]t|haven['’]t|still|pending|waiting|later|sleep on it|to ?do|"
    r"open issues?|tbd|next step|follow[- ]up|will|['’]ll|need to|have to|plan to|going to)\b",
    re.IGNORECASE,
)
_SLUG_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}-?")
_MIN_POINTS, _MAX_POINTS = 3, 8
_MAX_OPEN_ITEMS = 5  # to-dos and reminders listed as open threads
_MAX_THREADS = 3  # open threads filled up with plans and things not done yet


class _Scored:
    __slots__ = ("sentence", "claim", "kind", "score", "order", "todo")

    def __init__(
        self, sentence: Sentence, claim: str, kind: str, score: float, order: int, todo: bool
    ):
        self.sentence, self.claim, self.kind, self.score, self.order, self.todo = (
            sentence, claim, kind, score, order, todo,
        )  # fmt: skip


def _score_all(
    t: Transcript, sentences: list[Sentence], table: EntityTable, people: set[str]
) -> list[_Scored]:
    base = datetime.date.fromisoformat(t.date)
    roster = t.speakers
    addressed = addressee(t, people)  # a person's "you" when they talk to an assistant
    out: list[_Scored] = []
    for i, s in enumerate(sentences):
        others = [p for p in people if p != s.speaker]
        # talking to one person: no "Hey Caroline," and "you" is the other person (the
        # assistant's "I'll remind you" is addressed to the one user)
        listener = others[0] if len(others) == 1 else ""
        said = trim(tidy(s.text), listener)
        todo = open_item(said, by_assistant=not s.speaker)
        if s.speaker and (request := as_request(said)):
            said = request  # "Remind me to ..." -> "I asked to be reminded to ..."
        names = table.mentions(s.text)
        if PHOTO_RE.fullmatch(s.text) or not informative(said, bool(names)):
            continue
        if s.speaker and (restates_name(said, s.speaker) or points_back(said, s.speaker)):
            continue  # says nothing on its own
        if addressed and s.speaker:
            listener = addressed
        text, dates = dated(said, base)
        speaker = s.speaker or roster.assistant_name
        claim = third_person(text, speaker, listener)
        claim = claim[:1].upper() + claim[1:]
        kind = classify(said, bool(dates), any(d.date > base for d in dates))
        words = len(said.split())
        score = _KIND_WEIGHT[kind] + min(len({n for n, *_ in names}), 3)
        score += 2.0 if dates else 0.0
        score += 1.0 if any(ch.isdigit() for ch in said) else 0.0
        score += 1.0 if 8 <= words <= 40 else 0.0
        score -= 2.0 if words > 60 else 0.0
        score -= 3.0 if not s.speaker else 0.0
        out.append(_Scored(s, claim, kind, score, i, todo))
    return out


def _evidence(t: Transcript, s: _Scored) -> Evidence:
    turn = s.sentence.turn
    return Evidence(t.id, turn.n, turn.hash, t.date)


def _pick(scored: list[_Scored], k: int, exclude: set[int]) -> list[_Scored]:
    chosen: list[_Scored] = []
    per_turn: dict[int, int] = {}
    for s in sorted(scored, key=lambda x: (-x.score, x.order)):
        if len(chosen) >= k:
            break
        n = s.sentence.turn.n
        if s.order in exclude or per_turn.get(n, 0) >= 2:
            continue
        if any(fuzz.token_set_ratio(s.claim, c.claim) >= 90 for c in chosen):
            continue
        chosen.append(s)
        per_turn[n] = per_turn.get(n, 0) + 1
    return sorted(chosen, key=lambda x: x.order)


def session_title(t: Transcript, table: EntityTable, people: set[str]) -> str:
    """The session's own descriptive slug ("2026-01-23-tidewater-interview" -> "Tidewater
    interview") when its words occur in the session; else its most named subjects."""
    slug = _SLUG_DATE_RE.sub("", t.id)
    words = [w for w in re.split(r"[-_]+", slug) if w]
    text = " ".join(turn.text.lower() for turn in t.turns)
    if len(words) >= 2 and all(w.isalpha() and w[:4] in text for w in words):
        title = " ".join(words)
        return title[0].upper() + title[1:]
    counts: dict[str, int] = {}
    for turn in t.turns:
        for name, _, _, _ in table.mentions(turn.text):
            if name not in people:
                counts[name] = counts.get(name, 0) + 1
    top = sorted(counts, key=lambda n: (-counts[n], n))[:3]
    meta_title = str(t.meta.get("title") or "").strip()
    if top:
        joined = ", ".join(top)
        return f"{meta_title}: {joined}" if meta_title else joined
    return meta_title or f"Session {t.id}"


def summarize_session(t: Transcript) -> SummaryDraft:
    names = speaker_names(t)
    a = analyze(t)
    sentences, table, people = a.sentences, a.table, set(a.people)
    scored = _score_all(t, sentences, table, people)
    human = [s for s in scored if s.sentence.speaker]
    pool = human if len(human) >= _MIN_POINTS else scored
    k = max(_MIN_POINTS, min(_MAX_POINTS, len(pool) // 3))
    decisions = sorted(
        (s for s in human if s.kind == "decision" and not s.todo),
        key=lambda x: (-x.score, x.order),
    )
    outcome = decisions[0] if decisions else None
    exclude = {outcome.order} if outcome else set()
    # what is left to do is an open thread, not a key point of what was said
    todos = _pick([s for s in scored if s.todo], _MAX_OPEN_ITEMS, exclude)
    exclude |= {s.order for s in todos}
    points = _pick(pool, k, exclude)
    if len(points) < _MIN_POINTS:
        points = _pick(scored, _MIN_POINTS, exclude)
    used = exclude | {p.order for p in points}
    more = _pick(
        [
            s
            for s in human
            if s.order not in used and (s.kind == "plan" or _OPEN_RE.search(s.claim))
        ],
        max(0, _MAX_THREADS - len(todos)),
        set(),
    )
    threads = sorted([*todos, *more], key=lambda x: x.order)
    participants = tuple(str(p) for p in t.participants) or tuple(sorted(names))
    result = KeyPoint(outcome.claim, _evidence(t, outcome)) if outcome else _produced(t)
    return SummaryDraft(
        session_id=t.id,
        title=session_title(t, table, people),
        date=t.date,
        participants=participants,
        key_points=tuple(KeyPoint(p.claim, _evidence(t, p)) for p in points),
        outcome=result.text if result else "",
        outcome_evidence=result.evidence if result else None,
        open_threads=tuple(KeyPoint(p.claim, _evidence(t, p)) for p in threads),
    )


_ASKED_RE = re.compile(r' \(asked: "[^"]*"\)')


def _produced(t: Transcript) -> KeyPoint | None:
    """With no decision said, what the assistant produced is the outcome: its first
    recommendation (``dream.engines.embedded.advice``), citing its own turn."""
    for f in advice_facts(t, datetime.date.fromisoformat(t.date)):
        if f.kind == "advice":
            return KeyPoint(_ASKED_RE.sub("", f.text), f.evidence[0])
    return None
