"""Cue words: what kind of claim a sentence makes, and which slot it fills.

Job: tell a statement worth a claim from chat (``informative``), name the kind of claim
(``classify``: preference, decision, plan, event, fact), the functional slot a claim
about someone fills (``claim_slot``: role, city, manager, partner, preference on a thing) and the
values it says no longer hold (``closed_slots``: "no longer works at X"), so the wiki
phase can supersede an older value. The "role" slot is the job: as what and where, so
"works at X", "is a postdoc at X" and a move to an organisation all fill it. The cue
regexes are shared with ``dream.engines.embedded.extract``, which decides whom a claim is about.

Boundary: text in, labels out; English cue words, no model.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from dream.language.lexicon import CHAT_WORDS, CONNECTORS, ORG_PREFIXES, ORG_SUFFIXES, ROLE_NOUNS

__all__ = [
    "CHANGE_RE",
    "KindOf",
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
    "closed_slots",
    "informative",
    "moved_to_org",
    "org_shaped",
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


# A name as claims write it: capitalized words, joined by connectors ("Marlow Institute
# for Ocean Research", "Banco de Portugal").
_NAME = r"[A-Z][\w’'&-]*(?:\s+(?:(?:" + "|".join(sorted(CONNECTORS)) + r")\s+)?[A-Z][\w’'&-]*)*"
_MANAGER = r"(?:(?:line|direct)\s+)?(?:manager|boss|team\s+lead(?:er)?|lead|supervisor)"
# What may come before the subject of a clause and is no subject: a time ("since 9 March
# 2026 ("last Monday") Dana reports to ...", "Since the reorg Dana ...", "Now Dana ..."), a
# label ("Big change: Dana's manager is ...").
_LEAD = (
    r"(?:[A-Z][\w'’-]*(?:\s+[\w'’-]+){0,3}:\s+)?"
    r"(?:(?i:since|from|after|as\s+of|starting|following)\s+[^,;:.]{1,60}?,?\s+|"
    r"(?i:on|in|by)\s+(?:the\s+week(?:end)?\s+of\s+)?\d[^,;:.]{0,40}?,?\s+|"
    r"(?i:now|today|currently|recently|lately)\b,?\s+)?"
)
# "Dana moved to the X Institute": the verb, the preposition and where to
_LIVES_RE = re.compile(
    r"^\s+(?:\w+\s+){0,2}?(?P<verb>lives|lived|live|moved|moves|relocated|is based|"
    r"are based|based)\s+(?:together\s+)?(?P<prep>in|to)\s+(?:the\s+)?(?P<to>" + _NAME + ")"
)
_MOVE_VERBS = {"moved", "moves", "relocated"}
# one partner at a time, named ("is married to Mia", "is dating Lea", "'s wife is Ana"), as
# ``dream.gates.slots`` reads the partner slot
_PARTNER_RE = re.compile(
    r"^(?:\s+(?:is\s+|got\s+)?(?:now\s+)?(?:(?:married|engaged)\s+to|dating)\s+|"
    r"['’]s\s+(?:new\s+|current\s+)?(?:partner|wife|husband|spouse|girlfriend|boyfriend|"
    r"fianc[eé]e?)\s+(?:is|has\s+been|became)\s+(?:now\s+)?)[A-Z]"
)
_CLOSES = [
    (
        "role",
        re.compile(
            r"^\s+(?:now\s+)?no\s+longer\s+(?:works?|is\s+working|is\s+employed)\s+"
            r"(?:at|for|with)\s+(?:the\s+)?(?P<v>" + _NAME + ")"
        ),
    ),
    (
        "role",
        re.compile(
            r"^\s+(?:does\s+not|doesn['’]t)\s+work\s+(?:at|for)\s+(?:the\s+)?(?P<v>"
            + _NAME
            + r")\s+any\s*more"
        ),
    ),
    ("city", re.compile(r"^\s+no\s+longer\s+lives\s+in\s+(?:the\s+)?(?P<v>" + _NAME + ")")),
    (
        "partner",
        re.compile(
            r"^\s+(?:is\s+no\s+longer\s+(?:dating|married\s+to|engaged\s+to|with)|"
            r"(?:broke|split)\s+up\s+with|divorced)\s+(?P<v>" + _NAME + ")"
        ),
    ),
    (
        "manager",
        re.compile(
            r"^\s+(?:no\s+longer\s+reports|(?:does\s+not|doesn['’]t)\s+report)\s+to\s+"
            r"(?P<v>" + _NAME + ")"
        ),
    ),
    (
        "manager",
        re.compile(r"^['’]s\s+" + _MANAGER + r"\s+is\s+no\s+longer\s+(?P<v>" + _NAME + ")"),
    ),
]


def org_shaped(name: str) -> bool:
    """``name`` reads as an organisation's: an organisation word ends it, opens it, or ends
    its head ("Minho Biology Institute", "University of Leeds", "Marlow Institute for Ocean
    Research")."""
    low = [w.lower().strip("’'") for w in name.split()]
    if len(low) < 2:
        return False
    if low[-1] in ORG_SUFFIXES or low[0] in ORG_PREFIXES:
        return True
    head = next((i for i, w in enumerate(low) if w in CONNECTORS and i > 0), 0)
    return bool(head) and low[head - 1] in ORG_SUFFIXES


def _no_kind(name: str) -> str:
    return ""


KindOf = Callable[[str], str]  # a name -> the subject type it is known as ("" unknown)


def moved_to_org(where: str, kind_of: KindOf = _no_kind) -> bool:
    """A move to ``where`` (what follows "moved to") is to an organisation: the name it
    opens with is shaped like one, or ``kind_of`` knows it as one."""
    m = re.match(r"(?:the\s+)?(" + _NAME + ")", where.strip())
    if not m:
        return False
    name = re.sub(r"['’]s$", "", m.group(1))
    return org_shaped(name) or kind_of(name) == "org"


def _clause_slot(clause: str, kind_of: KindOf = _no_kind) -> str:
    """The slot one clause fills, ``clause`` being what follows the subject."""
    if re.match(
        r"^\s+(?:is|was|has been|started|starts|will start|became|becomes|works|worked|"
        r"joined|is now|now works)\s+(?:now\s+|currently\s+|officially\s+)?"
        rf"(?:as\s+(?:a\s+|an\s+|the\s+)?|a\s+|an\s+|the\s+)(?:[\w-]+\s+){{0,3}}?"
        rf"(?:{_ROLE_RE}|[a-z]+(?:ist|ician))s?\b",
        clause,
        re.IGNORECASE,
    ) or re.match(
        r"^\s+(?:now\s+)?(?:works?|worked|working)\s+(?:at|for)\s+(?:the\s+)?[A-Z]", clause
    ):
        return "role"
    lives = _LIVES_RE.match(clause)
    if lives:
        moved = lives["verb"] in _MOVE_VERBS and lives["prep"] == "to"
        if moved and moved_to_org(lives["to"], kind_of):
            return "role"  # a move to an organisation is a new employer, not a new home
        return "city"
    if re.match(r"^\s+(?:now\s+)?(?:reports|is reporting|reporting)\s+to\s+[A-Z]", clause):
        return "manager"
    if _PARTNER_RE.match(clause):
        return "partner"
    if re.match(
        rf"^['’]s\s+(?:new\s+|current\s+)?{_MANAGER}\s+(?:is|has\s+been|became|will\s+be)\s+"
        r"(?:now\s+)?[A-Z]",
        clause,
    ):
        return "manager"
    return ""


def _subject_re(names: list[str]) -> str:
    return "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True) if n)


def _clauses(text: str, subj: str) -> list[str] | None:
    """What follows the subject in each clause of a claim about it, or None when the claim
    does not open with the subject (after a time: "Since the reorg Dana ..."). A later
    clause counts when it goes on about the subject ("..., now works at Acme", "... and
    she lives in Porto"); one with a subject of its own keeps it and fills no slot."""
    head = re.match(rf"^(?:{_LEAD}(?=(?:{subj})\b))?(?:{subj})\b", text)
    if not head:
        return None
    clauses = re.split(r"[,;:]| and | but | which ", text[head.end() :])
    who = rf"(?:{_PRONOUN}|{subj})"
    return [clauses[0]] + [
        re.sub(rf"^\s*(?:{_LEAD}(?={who}\b))?((?i:now\s+)?)(?:{who})?\b", r" \1", clause)
        for clause in clauses[1:]
    ]


def slot_parts(slot: str) -> tuple[str, ...]:
    """The slots of a claim's slot label ("city+role" -> ("city", "role"); "" -> ())."""
    return tuple(slot.split(SLOT_SEP)) if slot else ()


def claim_slot(text: str, names: list[str], kind: str = "", kind_of: KindOf = _no_kind) -> str:
    """The functional slot a claim about ``names`` fills ("role", "city", "manager",
    "preference:<thing>"), or "" when many such claims can hold at once. A claim that
    fills several ("Dana moved to Lisbon, now works at Acme") gets them all, sorted and
    joined by ``+`` ("city+role"; ``slot_parts`` splits them). ``kind_of`` says what a
    name is known as: a move to an organisation ("moved to Acme", Acme an org) fills the
    role, a move anywhere else the city; a name shaped like an organisation's ("the
    Minho Biology Institute") counts as one whatever ``kind_of`` says."""
    subj = _subject_re(names)
    if not subj:
        return ""
    clauses = _clauses(text, subj)
    if clauses is not None:
        found = {
            slot
            for clause in clauses
            if not _NEGATED_RE.search(clause) and (slot := _clause_slot(clause, kind_of))
        }
        if found:
            return SLOT_SEP.join(sorted(found))
    if re.match(
        rf"^{_NAME}\s+(?:is|has\s+become|became)\s+(?:now\s+)?(?:{subj})['’]s\s+"
        rf"(?:new\s+)?{_MANAGER}\b",
        text,
    ):
        return "manager"  # "Marco Bellini is Dana's new team lead"
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


def closed_slots(text: str, names: list[str]) -> tuple[tuple[str, str], ...]:
    """The (slot, value) pairs a claim about ``names`` says no longer hold: "Rui no longer
    works at the Douro Research Centre" closes ("role", "Douro Research Centre"), "Dana's
    manager is no longer Ines" ("manager", "Ines"), "Ines is no longer Dana's boss" too.
    The claim filling the slot with that value is what it supersedes."""
    subj = _subject_re(names)
    if not subj:
        return ()
    out: list[tuple[str, str]] = []
    for clause in _clauses(text, subj) or ():
        for slot, regex in _CLOSES:
            if m := regex.match(clause):
                out.append((slot, m["v"]))
    if m := re.match(rf"^(?P<v>{_NAME})\s+is\s+no\s+longer\s+(?:{subj})['’]s\s+{_MANAGER}\b", text):
        out.append(("manager", m["v"]))
    return tuple(dict.fromkeys(out))
