"""One-hop notes: ``notes/<subject>/<id>.md``, one cited claim each, the cheap grep surface.

Job: for a claim that answers a one-hop question on its own (a decision, a plan or event
with a resolved date, a preference, a role/city/manager fact) write a small page under the
folder of the subject it is about, linking back to that subject's page. A note's id is
derived from its subject, date and first words, so re-reading a session never writes the
same note twice. Boundary: called by the wiki phase; writes through the ``Workset``.
"""

from __future__ import annotations

import re

from dream.pagewriter import render_note
from dream.subjects import slugify
from dream.workset import Filing, Workset

__all__ = ["maybe_note", "wants_note"]

_RESOLVED_RE = re.compile(r"\d{4}\s\(\"[^\"]+\"\)")
_TITLE_CHARS = 90
_STOP = {
    "the",
    "a",
    "an",
    "and",
    "to",
    "of",
    "on",
    "in",
    "at",
    "is",
    "was",
    "will",
    "for",
    "with",
    "that",
    "this",
    "it",
    "s",
    "has",
    "had",
    "be",
}


def wants_note(filing: Filing) -> bool:
    f = filing.fact
    if filing.subject.type == "topic":
        return False
    return bool(
        f.slot
        or f.kind in ("decision", "preference")
        or f.kind in ("event", "plan")
        and _RESOLVED_RE.search(f.text)
    )


def _title(text: str) -> str:
    if len(text) <= _TITLE_CHARS:
        return text.rstrip(".")
    return text[:_TITLE_CHARS].rsplit(" ", 1)[0].rstrip(",;:") + " …"


def maybe_note(ws: Workset, filing: Filing) -> str:
    """Write the note for ``filing`` if it wants one and has none yet; its path or ""."""
    if not wants_note(filing) or ws.registry is None:
        return ""
    subject, fact = filing.subject, filing.fact
    words = [
        w
        for w in re.findall(r"[a-z0-9]+", fact.text.lower())
        if w not in _STOP and w not in subject.title.lower().split()
    ]
    base = slugify(f"{subject.id} {fact.evidence[0].date} {' '.join(words[:6])}", 80)
    folder = f"notes/{subject.id}"
    if ws.exists(f"{folder}/{base}.md"):
        return ""  # this session's note was written by an earlier run
    note_id = ws.registry.new_id(base)
    rel = f"{folder}/{note_id}.md"
    ws.write(
        rel,
        render_note(
            note_id, _title(fact.text), fact.text, fact.evidence, (subject.id, subject.title)
        ),
    )
    return rel
