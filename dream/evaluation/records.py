"""Records of the evaluation: questions, what an arm returned, and its scores."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "CATEGORIES",
    "ArmItem",
    "ArmOutput",
    "Question",
    "Score",
    "QuestionResult",
    "ConversationRun",
    "EvalRun",
]

# LoCoMo's question categories scored here; 5 (adversarial, no answer) is skipped.
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}


@dataclass(frozen=True)
class ArmItem:
    """One ranked result of an arm, as far as scoring needs it."""

    path: str  # relative to memory/
    layer: str
    text: str
    citations: tuple[str, ...] = ()


@dataclass(frozen=True)
class ArmOutput:
    """What an arm showed for one question: items best first and the text they make."""

    text: str
    items: tuple[ArmItem, ...]


@dataclass(frozen=True)
class Question:
    conversation: str
    index: int  # position in the conversation's ``qa`` list
    question: str
    answer: str
    category: int
    gold: dict[str, str]  # gold turn ref -> the turn's text
    gold_sessions: tuple[str, ...]
    malformed: tuple[str, ...] = ()  # evidence ids that could not be normalized
    unresolved: tuple[str, ...] = ()  # normalized ids naming no turn of the conversation


@dataclass(frozen=True)
class Score:
    arm: str
    budget: int
    tokens: int
    latency_ms: float
    over_budget: bool
    sessions: tuple[str, ...]  # ranked sessions (first 10)
    session_r5: float | None
    session_r10: float | None
    mrr: float | None
    ev_direct: float | None
    ev_cited: float | None
    answer_tokens: float | None
    exact: bool | None
    missed: tuple[str, ...] = ()  # gold refs neither shown nor cited
    text: str = ""  # the output, kept only when asked for


@dataclass(frozen=True)
class QuestionResult:
    question: Question
    scores: tuple[Score, ...]


@dataclass(frozen=True)
class ConversationRun:
    id: str
    file: str
    sessions: int
    turns: int
    questions: int  # scored (categories 1-4)
    skipped_adversarial: int
    malformed_evidence: int
    unresolved_evidence: int
    dream_seconds: float | None  # None when no arm needed Dream
    dream: dict[str, Any] = field(default_factory=dict)  # what the run reported
    problems: tuple[str, ...] = ()  # importer notes (malformed dia_ids in the turns)
    store: str = ""  # where the store was kept ("" when discarded)


@dataclass(frozen=True)
class EvalRun:
    budgets: tuple[int, ...]
    arms: tuple[str, ...]
    conversations: tuple[ConversationRun, ...]
    results: tuple[QuestionResult, ...]
    tokenizer: str
