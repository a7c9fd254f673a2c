"""One-hop notes: ``notes/<subject>/<id>.md``, one cited claim each, the cheap grep surface.

Job: for a claim that answers a one-hop question on its own (a decision, a plan or event
with a resolved date, a preference, a role/city/manager fact) write a small page under the
folder of the subject it is about, linking back to that subject's page. A note's id is
derived from its subject, date and first words, so re-reading a session never writes the
same note twice. Boundary: called by the wiki phase; writes through the ``Workset``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

from rapidfuzz import fuzz

from dream.phases.attach import Filing
from dream.phases.workset import Workset
from dream.wiki.claim_keys import MERGE_RATIO, norm
from dream.wiki.render import as_date, render_note
from dream.wiki.subjects import Registry, Subject
from memoryfs.pages.page import parse_page, render_page
from memoryfs.store.slugs import ascii_words, slugify

__all__ = ["maybe_note", "retire_note", "wants_note"]

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


_CLASH_TRIES = 20  # names tried for a note renamed on a clash (base, base-2, ...)


def wants_note(filing: Filing) -> bool:
    f = filing.fact
    if filing.subject.type == "topic":
        return False
    return bool(
        f.slot
        or f.kind in ("decision", "preference", "advice")
        or f.kind in ("event", "plan")
        and _RESOLVED_RE.search(f.text)
    )


def _title(text: str) -> str:
    if len(text) <= _TITLE_CHARS:
        return text.rstrip(".")
    return text[:_TITLE_CHARS].rsplit(" ", 1)[0].rstrip(",;:") + " …"


def _base(subject: Subject, text: str, day: str) -> str:
    """The name a note of ``text``, said on ``day``, gets (before any clash suffix): its
    subject, day and first words, spelt in ASCII ("Eimsbüttel" -> "eimsbuttel"; a word
    of a script with no ASCII spelling is its short hash, ``memoryfs.store.slugs``)."""
    own = set(ascii_words(subject.title))
    words = [w for w in ascii_words(text) if w not in _STOP and w not in own]
    return slugify(f"{subject.id} {day} {' '.join(words[:6])}", 80)


def _ascii_only_base(subject: Subject, text: str, day: str) -> str:
    """The name the ASCII-only rule gives the same note (a letter outside ASCII splits
    its word, "eimsb-ttel", or is dropped): stores hold notes by that name, so it is
    looked for too, and a session read again never writes its note twice, and a claim
    superseded later still finds its note."""
    words = [
        w
        for w in re.findall(r"[a-z0-9]+", text.lower())
        if w not in _STOP and w not in subject.title.lower().split()
    ]
    raw = unicodedata.normalize("NFKD", f"{subject.id} {day} {' '.join(words[:6])}")
    slug = re.sub(r"[^a-z0-9]+", "-", raw.encode("ascii", "ignore").decode().lower())
    return slug.strip("-")[:80].rstrip("-") or "subject"


def _bases(subject: Subject, text: str, day: str) -> tuple[str, ...]:
    """The name a note gets, then the name an older store may have given it."""
    return tuple(dict.fromkeys((_base(subject, text, day), _ascii_only_base(subject, text, day))))


def maybe_note(ws: Workset, registry: Registry, filing: Filing) -> str:
    """Write the note for ``filing`` if it wants one and has none yet; its path or ""."""
    if not wants_note(filing):
        return ""
    subject, fact = filing.subject, filing.fact
    base, *older = _bases(subject, fact.text, fact.evidence[0].date)
    folder = f"notes/{subject.id}"
    if any(ws.exists(f"{folder}/{name}.md") for name in (base, *older)):
        return ""  # this session's note was written by an earlier run
    note_id = registry.new_id(base)
    rel = f"{folder}/{note_id}.md"
    ws.write(
        rel,
        render_note(
            note_id, _title(fact.text), fact.text, fact.evidence, (subject.id, subject.title)
        ),
    )
    return rel


def retire_note(
    ws: Workset,
    subject: Subject,
    text: str,
    said: str,
    on: str,
    refs: Iterable[str] = (),
    days: Iterable[str] = (),
) -> list[str]:
    """Mark the notes of a claim ``subject``'s page superseded ``on`` a day as superseded
    too (``status: superseded``, its line marked like the page's); their paths.

    The note is found by the name ``maybe_note`` gave it, or that name with the suffix
    ``Registry.new_id`` adds on a clash ("-2", "-3", ...), holding the claim's text. A
    claim said again in later sessions (``days``: the days of the turns it cites, ``refs``
    those turns) merged into the page's line, but each session wrote its own note, under
    its own day, perhaps in other words: those notes cite one of ``refs`` and say nearly
    what the claim says, and go too (else one would stay current beside the new value)."""
    found = [hit] if (hit := _find_note(ws, subject, text, said)) is not None else []
    wanted = set(refs)
    if wanted:
        seen = {rel for rel, _ in found}
        for day in sorted(set(days) - {said}):
            found += [h for h in _notes_citing(ws, subject, day, wanted, text) if h[0] not in seen]
    marked: list[str] = []
    for rel, old in found:
        if _mark(ws, rel, old, on):
            marked.append(rel)
    return marked


def _mark(ws: Workset, rel: str, old: str, on: str) -> bool:
    note = parse_page(old, rel)
    if note.meta.get("status") == "superseded" or note.type != "note":
        return False
    lines = note.body.split("\n")
    for i, line in enumerate(lines):
        if line.startswith("- ") and "[cite:" in line:
            lines[i] = f"{line} (superseded on {on})"
            break
    else:
        return False
    marked = note.with_meta(status="superseded", updated=as_date(max(on, note.updated)))
    ws.write(rel, render_page(marked.with_body("\n".join(lines))))
    return True


def _notes_citing(
    ws: Workset, subject: Subject, day: str, refs: set[str], text: str
) -> list[tuple[str, str]]:
    """(path, text) of the notes of ``subject`` written for ``day`` that cite one of
    ``refs`` and say nearly ``text`` (as alike as a merged claim)."""
    folder = f"notes/{subject.id}"
    out: list[tuple[str, str]] = []
    for name in ws.names_in(folder, f"{subject.id}-{day}-"):
        rel = f"{folder}/{name}"
        old = ws.read(rel)
        if old is None or not any(f"ref: {ref}" in old for ref in refs):
            continue
        line = next((ln for ln in old.split("\n") if ln.startswith("- ") and "[cite:" in ln), "")
        if line and fuzz.ratio(norm(line[2:].split(" [cite:")[0]), norm(text)) >= MERGE_RATIO:
            out.append((rel, old))
    return out


def _find_note(ws: Workset, subject: Subject, text: str, said: str) -> tuple[str, str] | None:
    """(path, text) of the note ``maybe_note`` wrote for the claim ``text`` said on ``said``."""
    for base in _bases(subject, text, said):
        for n in range(1, _CLASH_TRIES + 1):
            rel = f"notes/{subject.id}/{base}" + (".md" if n == 1 else f"-{n}.md")
            old = ws.read(rel)
            if old is not None and text in old:
                return rel, old
    return None
