"""Records passed between Dream's phases, engines, gates and sync."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Evidence", "Fact", "KeyPoint", "SummaryDraft", "PendingSession", "ConsolidationReport"]


@dataclass(frozen=True, slots=True)
class Evidence:
    """One transcript turn that supports a claim."""

    session_id: str
    turn: int
    hash: str  # memoryfs.store.hashing.turn_hash of the turn's text
    date: str  # ISO date of the session (the citation's ``at``)

    @property
    def ref(self) -> str:
        return f"sessions/transcripts/{self.session_id}.md#t{self.turn}"


@dataclass(frozen=True, slots=True)
class Fact:
    """An observation extracted from a session, about one subject."""

    subject: str  # surface name, e.g. "Melanie", "Lisbon", "figures"
    subject_type: str  # person | org | place | project | topic | preference
    kind: str  # preference | fact | event | decision | plan | advice (the assistant's)
    slot: (
        str  # functional slot ("role", "city", "preference:figures"); "" when many values may hold
    )
    text: str  # the claim, with relative dates resolved and the original phrase kept
    evidence: tuple[Evidence, ...]
    date: str  # ISO date the claim is about (event date) or was stated (session date)
    mentions: tuple[str, ...] = ()  # other subjects named in the same claim (context edges)
    # the subject's type rests on weak cues only ("moved to X" makes a place, but data moves
    # to services too; two capitalized words make a person, but so do "Temple Quay"): the
    # attach phase lets it give way to typed evidence of other sessions and to an existing
    # page of another type
    weak: bool = False


@dataclass(frozen=True, slots=True)
class KeyPoint:
    text: str
    evidence: Evidence


@dataclass(frozen=True)
class SummaryDraft:
    session_id: str
    title: str
    date: str
    participants: tuple[str, ...]
    key_points: tuple[KeyPoint, ...]
    outcome: str  # "" means none recorded
    outcome_evidence: Evidence | None = None
    open_threads: tuple[KeyPoint, ...] = ()


@dataclass(frozen=True, slots=True)
class PendingSession:
    """A transcript with no summary, or whose content changed since it was summarized."""

    id: str
    path: str  # relative to memory/
    content_hash: str  # memoryfs.store.hashing.content_hash of the transcript file
    turns: int
    reason: str  # "new" or "grown"


@dataclass
class ConsolidationReport:
    """What an engine did in the staged tree (mutable while the run builds it)."""

    sessions_summarized: list[str] = field(default_factory=list)
    pages_created: list[str] = field(default_factory=list)  # relative to memory/
    pages_updated: list[str] = field(default_factory=list)
    claims_added: int = 0
    claims_merged: int = 0
    claims_superseded: int = 0
    notes_written: int = 0  # a full run writes tens of thousands: counted, not listed
    rejected: list[str] = field(default_factory=list)  # "path:line: reason"
    stopped_early: str = ""  # why the run stopped before all pending sessions ("deadline", ...)
    tokens: int = 0  # model tokens spent (engines that use a model)
    cost: float = 0.0  # what those tokens cost (the engine's price per 1000 tokens)
