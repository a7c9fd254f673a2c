"""A session read once: its sentences, who says them, and the subjects it names.

Job: split every turn but tool traffic into sentences (``dream.language.sentences``), map speaker
labels to display names (the assistant to ""), and build the session's ``EntityTable``;
``analyze`` keeps the last few results so the summary and the facts of one run share one
reading.

Boundary: one transcript in, its analysis out; no store access.
"""

from __future__ import annotations

from dataclasses import dataclass

from dream.language.entities import EntityTable
from dream.language.sentences import split_sentences
from memoryfs.pages.transcript import Transcript, Turn

__all__ = ["Analysis", "Sentence", "addressee", "analyze", "session_sentences", "speaker_names"]

# tool calls and results (``[tool call] ...`` lines an importer wrote): machine traffic, not
# something the user or the assistant said; the assistant's own turns say what came of them
_TRAFFIC_SPEAKERS = {"tool"}


@dataclass(frozen=True)
class Sentence:
    """One sentence of a session with where it was said."""

    turn: Turn
    speaker: str  # display name ("Dana"), "" for the assistant
    text: str  # as said (whitespace collapsed)


def speaker_names(t: Transcript) -> dict[str, str]:
    """Speaker label -> display name (the store's ``user_name`` for the user's turns);
    the assistant side maps to ""."""
    roster = t.speakers
    return {label: roster.person(label) for label in dict.fromkeys(x.speaker for x in t.turns)}


def addressee(t: Transcript, people: tuple[str, ...] | set[str]) -> str:
    """The assistant's name when one person talks to it in ``t`` (their "you", as in "the
    tagine you suggested"), "" in a talk between people."""
    roster = t.speakers
    talks_to_one = any(roster.role(x.speaker) == "assistant" for x in t.turns)
    return roster.assistant_name if talks_to_one and len(people) <= 1 else ""


def session_sentences(t: Transcript) -> list[Sentence]:
    names = speaker_names(t)
    return [
        Sentence(turn, names.get(turn.speaker, turn.speaker), s)
        for turn in t.turns
        if turn.speaker.lower() not in _TRAFFIC_SPEAKERS
        for s in split_sentences(turn.text)
    ]


@dataclass(frozen=True)
class Analysis:
    """One session read once: its sentences, speakers and named subjects."""

    sentences: list[Sentence]
    people: tuple[str, ...]  # display names of the people who speak (not the assistant)
    table: EntityTable


_ANALYSES: dict[tuple[str, str, tuple[str, ...]], Analysis] = {}


def analyze(t: Transcript) -> Analysis:
    """The analysis of ``t``, shared by the summary and the facts of one run (a session is
    split and scanned for names once, not twice). Keyed by every turn's hash: a turn edited
    or forgotten in the middle of a transcript is another text (keyed by the last turn, a
    process that ran Dream before the edit was served the old turn's sentences)."""
    key = (t.id, t.speakers.user_name, tuple(turn.hash for turn in t.turns))
    found = _ANALYSES.get(key)
    if found is None:
        sentences = session_sentences(t)
        people = tuple(sorted({n for n in speaker_names(t).values() if n}))
        found = Analysis(sentences, people, EntityTable([s.text for s in sentences], people))
        if len(_ANALYSES) >= 4:
            _ANALYSES.pop(next(iter(_ANALYSES)))
        _ANALYSES[key] = found
    return found
