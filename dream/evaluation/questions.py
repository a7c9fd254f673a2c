"""Questions of a LoCoMo conversation, with their gold evidence mapped to transcript turns.

Of ``qa`` only ``question``, ``answer``, ``evidence`` and ``category`` are read;
category 5 (adversarial: no answer expected) is skipped. Evidence ids go through
:func:`memoryfs.ingest.locomo.normalize_dia_id`; one that cannot be normalized, or that
names no turn of the conversation, is counted on the question, never fatal.
"""

from __future__ import annotations

import re

from dream.evaluation.records import CATEGORIES, Question
from dream.evaluation.scoring import ref_session
from memoryfs.ingest.locomo import Conversation, normalize_dia_id

__all__ = ["questions_of"]

_EVIDENCE_SPLIT = re.compile(r"[;,]")


def _evidence_ids(raw: object) -> list[object]:
    """Evidence entries, splitting the few that pack several ids into one string."""
    items = raw if isinstance(raw, list) else [raw] if raw is not None else []
    out: list[object] = []
    for item in items:
        if isinstance(item, str) and _EVIDENCE_SPLIT.search(item):
            out.extend(p for p in _EVIDENCE_SPLIT.split(item) if p.strip())
        else:
            out.append(item)
    return out


def questions_of(conv: Conversation) -> tuple[list[Question], int]:
    """The scored questions of ``conv`` and how many adversarial (or uncategorized) were skipped."""
    turn_text: dict[str, str] = {}
    for t in conv.sessions:
        for turn in t.turns:
            turn_text[f"sessions/transcripts/{t.id}.md#t{turn.n}"] = turn.text
    out: list[Question] = []
    skipped = 0
    for i, qa in enumerate(conv.qa):
        category = qa.get("category")
        question = qa.get("question")
        if category not in CATEGORIES or not isinstance(question, str):
            skipped += 1
            continue
        gold: dict[str, str] = {}
        malformed: list[str] = []
        unresolved: list[str] = []
        for raw in _evidence_ids(qa.get("evidence")):
            dia = normalize_dia_id(raw)
            if dia is None:
                malformed.append(str(raw))
                continue
            ref = conv.dia_map.get(dia)
            if ref is None or ref not in turn_text:
                unresolved.append(dia)
                continue
            gold[ref] = turn_text[ref]
        sessions = tuple(dict.fromkeys(s for r in gold if (s := ref_session(r))))
        answer = qa.get("answer")
        out.append(
            Question(
                conversation=conv.id,
                index=i,
                question=question,
                answer="" if answer is None else str(answer),
                category=int(category),
                gold=gold,
                gold_sessions=sessions,
                malformed=tuple(malformed),
                unresolved=tuple(unresolved),
            )
        )
    return out, skipped
