"""Cue words: what kind of claim a sentence makes, and which slot it fills.

Job: tell a statement worth a claim from chat (``informative``), name the kind of claim
(``classify``: preference, decision, plan, event, fact) and the functional slot a claim
about someone fills (``claim_slot``: role, city, manager, preference on a thing), so the
wiki phase can supersede an older value. The cue regexes are shared with
``dream.extract``, which decides whom a claim is about.

Boundary: text in, labels out; English cue words, no model.
"""

from __future__ import annotations

import re

from dream.lexicon import CHAT_WORDS, ROLE_NOUNS

__all__ = [
    "CHANGE_RE",
    "FIRST_PERSON_RE",
    "GENERAL_RE",
    "IMPERATIVE_RE",
    "INSTRUCTION_RE",
    "PAST_RE",
    "PLAN_RE",
    "PREFERENCE_RE",
    "WE_RE",
    "SLOT_SEP",
    "claim_slot",
    "classify",
    "informative",
    "slot_parts",
]

# "I" only capitalized (a lone "i" is rarely the speaker); "My"/"Me" open sentences.
FIRST_PERSON_RE = re.compile(r"\b(?:I|I'm|I’m|I've|I'd|I'll|[Mm]e|[Mm]y|[Mm]ine|[Mm]yself)\b")
WE_RE = re.compile(r"\b(?:we|our|us)\b", re.IGNORECASE)
PREFERENCE_RE = re.compile(
    r"\b(?:prefer|prefers|preferred|preference|favou?rite|can['’]?t stand|cannot stand|"
    r"don['’]t like|do not like|dislike|hate|hates|big fan of|fan of)\b|"
    r"\b(?:always|never|please)\s+(?:\w+\s+){0,2}(?:give|send|use|write|make|keep|sign|put|"
    r"format|cite|book|take|schedule|want|start|end|do)\b|"
    r"\bno\s+\w+\s+(?:before|after)\b|\b(?:i|we)\s+(?:really\s+)?(?:love|enjoy|like)\s+\w+|"
    r"\b(?:in general|by default|as a rule)\b",
    re.IGNORECASE,
)
_DECISION_RE = re.compile(
    r"\b(?:decided|decide|decision|go with|going with|chose|choose|agreed|settled on|let['’]s|"
    r"switching to|switch to|we['’]re changing|from now on|accepted|accept the|signed|"
    r"the plan is|we['’]ll use|we will use|approved|confirmed|final answer)\b",
    re.IGNORECASE,
)
PLAN_RE = re.compile(
    r"\b(?:going to|gonna|plan to|plans to|planning|will|['’]ll|intend|hope to|hoping to|"
    r"want to|wants to|aim to|about to|next|upcoming|tomorrow|soon|later this)\b",
    re.IGNORECASE,
)
PAST_RE = re.compile(
    r"\b(?:was|were|did|had|went|got|made|took|came|told|said|found|gave|met|ran|saw|sent|"
    r"bought|visited|started|finished|joined|moved|won|lost|\w{3,}ed)\b",
    re.IGNORECASE,
)
CHANGE_RE = re.compile(
    r"\b(?:now|instead|no longer|anymore|any more|switch|switched|switching|from now on|"
    r"rather than|changed|changing)\b",
    re.IGNORECASE,
)
_PRONOUN = "(?i:he|she|they)"
SLOT_SEP = "+"  # between the slots of a claim that fills several ("city+role")
_NEGATED_RE = re.compile(r"\b(?:no longer|not|n['’]t|never|used to|former|ex-|would|might)\b")
_ROLE_RE = "|".join(sorted(ROLE_NOUNS, key=len, reverse=True))
INSTRUCTION_RE = re.compile(
    r"^(?:sign|use|avoid|cite|no|don['’]t|do not|never|always|stick|prefer|call|address|"
    r"start|end|reply|answer|respond|schedule|book|save|export|name|label)\b",
    re.IGNORECASE,
)
_WANT_RE = re.compile(r"\b(?:I|we)\s+(?:want|need|like|would like|['’]d like)\b", re.IGNORECASE)
GENERAL_RE = re.compile(
    r"\b(?:always|never|in general|from now on|every time|whenever|by default|as a rule|"
    r"any(?:thing|one|time)?|every(?:thing|one|where)?|all|each|no more)\b",
    re.IGNORECASE,
)
IMPERATIVE_RE = re.compile(
    r"^(?:please\s+)?(?:give|send|put|write|make|draft|check|add|tell|show|remind|draw|list|"
    r"help|find|fix|suggest|explain|summarise|summarize|translate|rewrite|convert|run|create|"
    r"generate|update|keep|turn|change|format|compute|plot|do|let me|can you|could you)\b",
    re.IGNORECASE,
)


def informative(text: str, has_name: bool, dated: bool = False) -> bool:
    """Worth a claim: a statement with some content beyond chat. ``dated``: it holds a
    date resolved from a relative phrase ("Started hitting the gym last week."), which
    anchors it like a name does: chat is rarely dated."""
    if text.endswith("?") or len(text) < 12:
        return False
    words = re.findall(r"[\w'’-]+", text.lower())
    content = [w for w in words if w not in CHAT_WORDS and len(w) > 2]
    if len(words) < 4 and not has_name:
        return False
    anchored = (
        has_name
        or dated
        or bool(FIRST_PERSON_RE.search(text) or WE_RE.search(text))
        or any(ch.isdigit() for ch in text)
        or bool(_DECISION_RE.search(text) or PREFERENCE_RE.search(text))
    )
    return anchored and len(content) >= 2


def classify(text: str, has_date: bool, future: bool) -> str:
    """fact | event | plan | decision | preference (first matching cue wins, in that order
    of strength: preference, decision, plan, event)."""
    if PREFERENCE_RE.search(text) or _WANT_RE.search(text) and GENERAL_RE.search(text):
        return "preference"
    if _DECISION_RE.search(text):
        return "decision"
    if future or PLAN_RE.search(text) and not PAST_RE.search(text):
        return "plan"
    if has_date or PAST_RE.search(text):
        return "event"
    return "fact"


def _clause_slot(clause: str) -> str:
    """The slot one clause fills, ``clause`` being what follows the subject."""
    if re.match(
        r"^\s+(?:is|was|has been|started|starts|will start|became|becomes|works|worked|"
        r"joined|is now|now works)\s+(?:now\s+|currently\s+|officially\s+)?"
        rf"(?:as\s+(?:a\s+|an\s+|the\s+)?|a\s+|an\s+|the\s+)(?:[\w-]+\s+){{0,3}}?"
        rf"(?:{_ROLE_RE}|[a-z]+(?:ist|ician))s?\b",
        clause,
        re.IGNORECASE,
    ) or re.match(r"^\s+(?:now\s+)?(?:works?|worked|working)\s+(?:at|for)\s+[A-Z]", clause):
        return "role"
    if re.match(
        r"^\s+(?:\w+\s+){0,2}?(?:lives|lived|live|moved|moves|relocated|is based|"
        r"are based|based)\s+(?:together\s+)?(?:in|to)\s+(?:the\s+)?[A-Z]",
        clause,
    ):
        return "city"
    if re.match(r"^\s+(?:now\s+)?(?:reports|is reporting|reporting)\s+to\s+[A-Z]", clause):
        return "manager"
    return ""


def slot_parts(slot: str) -> tuple[str, ...]:
    """The slots of a claim's slot label ("city+role" -> ("city", "role"); "" -> ())."""
    return tuple(slot.split(SLOT_SEP)) if slot else ()


def claim_slot(text: str, names: list[str], kind: str = "") -> str:
    """The functional slot a claim about ``names`` fills ("role", "city", "manager",
    "preference:<thing>"), or "" when many such claims can hold at once. A claim that
    fills several ("Dana moved to Lisbon, now works at Acme") gets them all, sorted and
    joined by ``+`` ("city+role"; ``slot_parts`` splits them)."""
    subj = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True) if n)
    if not subj:
        return ""
    head = re.match(rf"^(?:{subj})\b", text)
    if head:
        found: set[str] = set()
        clauses = re.split(r"[,;:]| and | but | which ", text[head.end() :])
        for i, clause in enumerate(clauses):
            if i:
                # a later clause counts when it goes on about the subject ("..., now works
                # at Acme", "... and she lives in Porto"), not when it has a subject of its own
                clause = re.sub(rf"^\s*((?i:now\s+)?)(?:{_PRONOUN}|{subj})?\b", r" \1", clause)
            if not _NEGATED_RE.search(clause) and (slot := _clause_slot(clause)):
                found.add(slot)
        if found:
            return SLOT_SEP.join(sorted(found))
    if kind == "preference":
        m = re.search(
            r"\b(?:prefers?|likes?|loves?|wants?|hates?|favou?rite|enjoys?)\s+"
            r"(?:the\s+|a\s+|an\s+|to\s+|using\s+)?([A-Za-z][\w-]+)",
            text,
        ) or re.search(
            r"\b(?:always|never|please)\s+(?:\w+\s+)?(?:give|send|use|make|write|keep)\s+"
            rf"(?:(?:{subj})\s+)?(?:the\s+)?([A-Za-z][\w-]+)",
            text,
        )
        if m:
            return "preference:" + m.group(1).lower().rstrip("s")
    return ""
