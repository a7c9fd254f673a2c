"""Slots: the one value a subject has at a time (role, employer, city, a preference).

Contradictions: on a changed page under ``knowledge/`` or ``notes/``, no two current
claims may give different values for one *slot*. The subject is the page. A slot is
found by a small, fixed table of predicates at the start of a claim (after an optional
leading date and the subject's name): ``works as`` / ``role:`` (role), ``works at|for``
/ ``employer:`` (employer), ``lives in`` / ``moved to`` / ``city:`` (city), ``prefers X
as|in`` (preference:X), ``is married|engaged to`` / ``is dating`` / ``'s partner|wife|
husband is`` followed by a name (partner). A move to an organisation ("moved to the
Minho Biology Institute": a name shaped like an organisation's, or one ``kind_of`` knows
as an org) is a change of employer, as ``dream.language.cues.claim_slot`` reads it, not of city.
The value is the rest of the clause ("Leipzig and commutes to Berlin": Leipzig); two
values clash unless one's words contain the other's. Anything the table does not
recognise has no slot: the check errs towards letting a claim through rather than
blocking a run on a guess. Across pages: ``dream.gates.crosspage``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from dream.gates import Problem
from dream.gates.claimtext import claim_dates
from dream.gates.claimtext import plain as _plain
from dream.language.cues import KindOf, moved_to_org
from memoryfs.pages.claims import Claim
from memoryfs.pages.page import Page

__all__ = ["slot_of", "clash", "opening_name", "contradictions"]

GATE = "verification"

_SLOT_TABLE = [
    ("role", r"(?:now\s+|currently\s+)?(?:works|is\s+working|is\s+employed)\s+as\s+(?P<v>.+)"),
    ("role", r"(?:role|job|job\s+title|position|occupation)\s*(?::|is\b)\s*(?P<v>.+)"),
    (
        "employer",
        r"(?:now\s+|currently\s+)?(?:works|is\s+working|is\s+employed)\s+(?:at|for|by)\s+(?P<v>.+)",
    ),
    ("employer", r"(?:employer|company|workplace)\s*(?::|is\b)\s*(?P<v>.+)"),
    ("city", r"(?:now\s+|currently\s+)?(?:lives|is\s+living|is\s+based|resides)\s+in\s+(?P<v>.+)"),
    ("city", r"(?:moved|relocated)\s+to\s+(?P<to>(?P<v>.+))"),
    ("city", r"(?:city|home\s+city|lives\s+in)\s*:\s*(?P<v>.+)"),
    # relationships: one partner at a time; the value must be a name ("is married to Sam",
    # "Dana's partner is Sam", "is dating Lea"), so "married to the job" or "dating
    # someone new" fill no slot
    (
        "partner",
        r"(?:now\s+|currently\s+)?(?:is\s+|got\s+)?(?:now\s+)?(?:married|engaged)\s+to\s+"
        r"(?P<v>(?-i:[A-Z]).+)",
    ),
    ("partner", r"(?:is\s+)?(?:now\s+)?dating\s+(?P<v>(?-i:[A-Z]).+)"),
    (
        "partner",
        r"(?:(?:his|her|their)\s+)?(?:partner|wife|husband|spouse|girlfriend|boyfriend|"
        r"fianc[eé]e?)\s*(?::|is\b)\s*(?P<v>(?-i:[A-Z]).+)",
    ),
    (
        "preference:{obj}",
        r"(?:now\s+|currently\s+|always\s+)?prefers\s+(?P<obj>[\w-]+(?:\s+[\w-]+)?)\s+(?:as|in)\s+(?P<v>.+)",
    ),
]
_SLOT_RES = [(slot, re.compile(pattern, re.IGNORECASE)) for slot, pattern in _SLOT_TABLE]
_LEAD_DATE_RE = re.compile(r"^\W*(?:\d{4}-\d{2}-\d{2}|\d{1,2}\s+[A-Z][a-z]+\s+\d{4})\W*\s*")
_LEAD_PRONOUN_RE = re.compile(r"^(?:the\s+user|user|she|he|they)\s+", re.IGNORECASE)
_VALUE_END = (
    r"[,.;()\[]| since | from | until | as of "
    r"| (?:and|but|so|where|while|because|who|which|with|though|although) (?-i:[a-z])"
)
_ARTICLES = {"a", "an", "the", "now", "currently"}
_DANGLING = {"on", "in", "at", "of", "the", "weekend", "week", "around", "by", "during"}


def _no_kind(name: str) -> str:
    return ""


def slot_of(
    text: str, subject: Iterable[str] = (), kind_of: KindOf = _no_kind
) -> tuple[str, str] | None:
    """(slot, normalized value) of a claim, or None when the table knows no slot for it.
    ``kind_of``: what a name is known as ("org", ...; "" when unknown)."""
    plain = _plain(text)
    plain = _LEAD_DATE_RE.sub("", plain)
    for name in sorted((s for s in subject if s), key=len, reverse=True):
        if plain.lower().startswith(name.lower() + " "):
            plain = plain[len(name) + 1 :]
            break
        if plain.lower().startswith(name.lower() + "'s "):
            plain = plain[len(name) + 3 :]
            break
    plain = _LEAD_PRONOUN_RE.sub("", plain)
    for slot, regex in _SLOT_RES:
        m = regex.match(plain)
        if not m:
            continue
        # the value ends with its clause: "Leipzig and commutes to Berlin" is Leipzig
        value = re.split(_VALUE_END, m["v"], maxsplit=1)[0]
        value = claim_dates(value)[1]  # "Munich on 24 June 2023": the date is not the value
        words = [w for w in re.findall(r"[\w'-]+", value.lower()) if w not in _ARTICLES]
        while words and words[-1] in _DANGLING:
            words.pop()
        if not words:
            return None
        obj = m.groupdict().get("obj") or ""
        if m.groupdict().get("to") and moved_to_org(m["to"], kind_of):
            slot = "employer"
        return slot.format(obj=obj.lower()), " ".join(words)
    return None


def clash(a: str, b: str) -> bool:
    """Two normalized slot values differ: neither's words contain the other's."""
    wa, wb = set(a.split()), set(b.split())
    return not (wa <= wb or wb <= wa)


# capitalized words that open a claim ("Jonas", "Jonas Weber", "Dr. Weber")
_OPENING_NAME_RE = re.compile(r"(?-i:[A-Z][\w’'.-]*)(?:\s+(?-i:[A-Z][\w’'-]*)){0,3}")


def opening_name(text: str) -> str:
    """The name a claim opens with (after a leading date), without a possessive "'s";
    "" when it opens with no capitalized word or with a pronoun ("She lives in ...")."""
    plain = _LEAD_DATE_RE.sub("", _plain(text))
    m = _OPENING_NAME_RE.match(plain)
    if not m:
        return ""
    name = re.sub(r"['’]s$", "", m.group(0).rstrip(".'’-"))
    if _LEAD_PRONOUN_RE.match(name + " ") or name.lower() in {"i", "we", "you", "it"}:
        return ""
    return name


def contradictions(
    page: Page, path: str, claims: list[Claim], kind_of: KindOf = _no_kind
) -> list[Problem]:
    subject = (page.title, page.id, *page.aliases)
    seen: dict[str, tuple[Claim, str]] = {}
    out: list[Problem] = []
    for claim in claims:
        if claim.superseded:
            continue
        found = slot_of(claim.text, subject, kind_of)
        if found is None:
            continue
        slot, value = found
        if slot in seen and clash(seen[slot][1], value):
            first, first_value = seen[slot]
            out.append(
                Problem(
                    GATE,
                    path,
                    claim.line,
                    "DV201",
                    f"contradicts line {first.line} for {page.title or page.id!r}, slot {slot}: "
                    f"{value!r} vs {first_value!r} (mark the older one superseded)",
                )
            )
        else:
            seen.setdefault(slot, (claim, value))
    return out
