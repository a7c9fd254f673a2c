"""What the LLM engine asks the model for, and how it reads the answer.

Job: the prompt (the skill as the system message, the answer format, the session with
numbered turns) and the parser that turns the model's text into an ``Answer``. The
parser is strict about shape (a malformed answer is retried, then the session stays
pending) and says nothing about truth: whether a claim is supported by the turn it
cites is ``dream.engines.llm.engine``'s check, and the gates' after that.

The answer, one JSON object::

    {"summary": {"title": str,
                 "key_points": [{"text": str, "turn": int}, ...],
                 "outcome": {"text": str, "turn": int} | null,
                 "open_threads": [{"text": str, "turn": int}, ...]},
     "facts": [{"subject": str, "type": "person|org|place|project|topic|preference",
                "kind": "preference|fact|event|decision|plan|advice", "slot": str,
                "text": str, "turn": int, "date": "YYYY-MM-DD" (optional),
                "mentions": [str, ...] (optional)}, ...]}
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from memoryfs.pages.speakers import Roster
from memoryfs.pages.transcript import Transcript

__all__ = [
    "SUBJECT_TYPES",
    "FACT_KINDS",
    "Point",
    "RawFact",
    "Answer",
    "Malformed",
    "json_reply",
    "messages_for",
    "retry_message",
    "parse_answer",
]

SUBJECT_TYPES = ("person", "org", "place", "project", "topic", "preference")
FACT_KINDS = ("preference", "fact", "event", "decision", "plan", "advice")
_MAX_TEXT = 600  # characters of one claim; a longer one is not a claim but a paste
_FENCE_RE = re.compile(r"^\s*```(?:json)?\s*\n(.*?)\n\s*```\s*$", re.DOTALL)

FORMAT = """\
## Your answer

You are given ONE session below. Answer with exactly one JSON object and nothing else:

{"summary": {"title": "<short title>",
             "key_points": [{"text": "<one sentence>", "turn": <turn number>}],
             "outcome": {"text": "<what was decided or produced>", "turn": <n>} or null,
             "open_threads": [{"text": "<what is left open>", "turn": <n>}]},
 "facts": [{"subject": "<name of the person, org, place, project or topic>",
            "type": "person|org|place|project|topic|preference",
            "kind": "preference|fact|event|decision|plan|advice",
            "slot": "<functional slot such as role, city, employer, preference:figures, or ''>",
            "text": "<the claim, one sentence>", "turn": <turn number>,
            "date": "<YYYY-MM-DD the claim is about, optional>",
            "mentions": ["<other subjects named in the claim>"]}]}

Rules: 3-8 key points. Every "turn" is the number N of the turn [tN] the claim comes from,
and every name, number and date in a claim must appear in that very turn (resolve relative
dates against the session date and keep the phrase: 6 May 2023 ("last Saturday")).
Use "type": "preference" for the speaker's own preferences. Facts may be an empty list.
Write claims in the third person with the speakers' names as given below ("I moved" by the
user is "<user name> moved"). What the assistant recommended, suggested or promised is a
claim of the assistant's by its name, with "kind": "advice" (or "plan" for a promise),
filed on the user: "<assistant> recommended Piranesi to <user>".
Claims that do not match their turn are discarded."""


@dataclass(frozen=True)
class Point:
    text: str
    turn: int


@dataclass(frozen=True)
class RawFact:
    subject: str
    type: str
    kind: str
    slot: str
    text: str
    turn: int
    date: str = ""
    mentions: tuple[str, ...] = ()


@dataclass(frozen=True)
class Answer:
    title: str
    key_points: tuple[Point, ...]
    outcome: Point | None
    open_threads: tuple[Point, ...]
    facts: tuple[RawFact, ...]


class Malformed(ValueError):
    """The answer is not the JSON object asked for; the message says what is wrong."""


def messages_for(skill: str, t: Transcript) -> list[dict[str, str]]:
    """The conversation for one session: the skill (system), then the session."""
    roster = t.speakers
    lines = [
        f"Session {t.id}, started {t.started} (session date {t.date}).",
        f"Participants: {', '.join(t.participants) or 'unknown'}.",
        f"The user is {roster.user_name or 'unnamed'}; the assistant is {roster.assistant_name}.",
        "",
        "Turns:",
    ]
    lines += [
        f"[t{turn.n}] {_who(roster, turn.speaker)} ({turn.ts}): {turn.text}" for turn in t.turns
    ]
    system = f"{skill.strip()}\n\n{FORMAT}" if skill.strip() else FORMAT
    return [{"role": "system", "content": system}, {"role": "user", "content": "\n".join(lines)}]


def _who(roster: Roster, label: str) -> str:
    """A turn's speaker by name, with the role when the name is not the label."""
    name = roster.name(label)
    return name if name == label else f"{name} ({label})"


def retry_message(problem: str) -> dict[str, str]:
    return {
        "role": "user",
        "content": f"That answer was not usable: {problem}. Answer again with only the JSON "
        "object described above.",
    }


def json_reply(text: str) -> object:
    """The JSON a model replied with, a ```json fence around it allowed; ``Malformed``
    when it is not JSON."""
    raw = text.strip()
    fenced = _FENCE_RE.match(raw)
    if fenced:
        raw = fenced.group(1)
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        raise Malformed(f"not valid JSON ({exc.msg} at line {exc.lineno})") from None
    except RecursionError:
        raise Malformed("JSON nested too deeply") from None


def parse_answer(text: str) -> Answer:
    """The model's text as an ``Answer``; ``Malformed`` says what is wrong with it."""
    obj = _mapping(json_reply(text), "the answer")
    summary = _mapping(obj.get("summary"), "summary")
    facts = obj.get("facts", [])
    if not isinstance(facts, list):
        raise Malformed("facts is not a list")
    outcome = summary.get("outcome")
    return Answer(
        title=_text(summary.get("title"), "summary.title"),
        key_points=tuple(_points(summary.get("key_points"), "summary.key_points")),
        outcome=None if outcome in (None, "", {}) else _point(outcome, "summary.outcome"),
        open_threads=tuple(_points(summary.get("open_threads", []), "summary.open_threads")),
        facts=tuple(_fact(f, f"facts[{i}]") for i, f in enumerate(facts)),
    )


def _mapping(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise Malformed(f"{where} is not a JSON object")
    return value


def _text(value: Any, where: str, empty_ok: bool = False) -> str:
    if not isinstance(value, str) or (not value.strip() and not empty_ok):
        raise Malformed(f"{where} is not a non-empty string")
    text = " ".join(value.split())
    if len(text) > _MAX_TEXT:
        raise Malformed(f"{where} is longer than {_MAX_TEXT} characters")
    return text


def _turn(value: Any, where: str) -> int:
    if isinstance(value, str) and re.fullmatch(r"t?\d{1,7}", value.strip()):
        value = int(value.strip().lstrip("t"))
    if isinstance(value, bool) or not isinstance(value, int):
        raise Malformed(f"{where} is not a turn number")
    return value


def _point(value: Any, where: str) -> Point:
    obj = _mapping(value, where)
    return Point(_text(obj.get("text"), f"{where}.text"), _turn(obj.get("turn"), f"{where}.turn"))


def _points(value: Any, where: str) -> list[Point]:
    if not isinstance(value, list):
        raise Malformed(f"{where} is not a list")
    return [_point(v, f"{where}[{i}]") for i, v in enumerate(value)]


def _fact(value: Any, where: str) -> RawFact:
    obj = _mapping(value, where)
    kind = _text(obj.get("kind"), f"{where}.kind").lower()
    subject_type = _text(obj.get("type"), f"{where}.type").lower()
    if subject_type not in SUBJECT_TYPES:
        raise Malformed(f"{where}.type must be one of {', '.join(SUBJECT_TYPES)}")
    if kind not in FACT_KINDS:
        raise Malformed(f"{where}.kind must be one of {', '.join(FACT_KINDS)}")
    mentions = obj.get("mentions") or []
    if not isinstance(mentions, list) or not all(isinstance(m, str) for m in mentions):
        raise Malformed(f"{where}.mentions is not a list of names")
    date = obj.get("date") or ""
    if not isinstance(date, str):
        raise Malformed(f"{where}.date is not a YYYY-MM-DD string")
    return RawFact(
        subject=_text(obj.get("subject"), f"{where}.subject"),
        type=subject_type,
        kind=kind,
        slot=_text(obj.get("slot") or "", f"{where}.slot", empty_ok=True),
        text=_text(obj.get("text"), f"{where}.text"),
        turn=_turn(obj.get("turn"), f"{where}.turn"),
        date=date.strip(),
        mentions=tuple(" ".join(m.split()) for m in mentions if m.strip()),
    )
