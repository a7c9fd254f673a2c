"""Redacting transcripts against the deletion log: the one change a transcript may undergo.

Pure functions, no I/O (``memoryfs.forget.remove`` writes, ``memoryfs.forget.purge`` rewrites
history, ingest redacts incoming sessions). A forgotten session's transcript is
removed; a forgotten phrase becomes ``[forgotten]`` in turn texts, speakers and
frontmatter values. Ids, dates, turn numbers, timestamps and keys never change:
a phrase inside a session id is refused (forget the session instead). Only the
turns that change are re-rendered, so every other byte of the file stays.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from memoryfs.errors import MemoryFSError, PageError
from memoryfs.forget.deletions import Deletions, has_phrase, redact, redact_values
from memoryfs.pages.page import render_meta, split_frontmatter
from memoryfs.pages.transcript import HEADING_RE, Transcript, Turn, parse_transcript, render_turn

__all__ = ["TranscriptScrub", "scrub_transcript", "scrub_incoming"]

_STRUCTURE = frozenset({"id", "type", "started", "scope"})
_TRANSCRIPT_ORDER = ("id", "type", "started", "participants", "scope")


def _stem(rel: str) -> str:
    return rel.rsplit("/", 1)[-1].removesuffix(".md")


@dataclass(frozen=True)
class TranscriptScrub:
    text: str | None  # None: remove the file
    turns: int = 0  # turns redacted
    rehash: dict[str, tuple[str, str]] = field(default_factory=dict)  # ref -> (old, new hash)


def scrub_transcript(text: str, rel: str, deletions: Deletions) -> TranscriptScrub:
    """Scrub a transcript: removed when its session is forgotten, else phrases redacted.

    Raises ``MemoryFSError`` when the phrase is part of the session id or the
    redaction would change the transcript's structure.
    """
    stem = _stem(rel)
    if stem in deletions.sessions:
        return TranscriptScrub(text=None)
    if not deletions.phrases or not has_phrase(text, deletions):
        return TranscriptScrub(text=text)
    try:
        t = parse_transcript(text, rel)
    except PageError:  # malformed already: plain redaction is all that is safe to do
        return TranscriptScrub(text=redact(text, deletions))
    if has_phrase(t.id, deletions) or has_phrase(stem, deletions):
        raise MemoryFSError(
            f"the phrase is part of session id {stem!r}; forget that session with "
            f"--session {stem} instead"
        )
    parts = split_frontmatter(text)
    assert parts is not None  # parse_transcript succeeded
    raw_meta, body, _ = parts
    head = text[: len(text) - len(body)]
    meta = redact_values(t.meta, deletions, skip=_STRUCTURE)
    if meta != t.meta:
        head = "---\n" + render_meta(meta, _TRANSCRIPT_ORDER) + "---\n"
    lines = body.split("\n")
    heads = [i for i, line in enumerate(lines) if HEADING_RE.match(line)]
    out = lines[: heads[0]] if heads else list(lines)
    rehash: dict[str, tuple[str, str]] = {}
    expected: list[Turn] = []
    for k, turn in enumerate(t.turns):
        end = heads[k + 1] if k + 1 < len(heads) else len(lines)
        new = replace(
            turn, text=redact(turn.text, deletions), speaker=redact(turn.speaker, deletions)
        )
        if new.text == turn.text and new.speaker == turn.speaker:
            out.extend(lines[heads[k] : end])
        else:
            out.extend(render_turn(new)[1:].split("\n"))
            rehash[f"sessions/transcripts/{stem}.md#{turn.anchor}"] = (turn.hash, new.hash)
        expected.append(new)
    new_text = head + "\n".join(out)
    _check_structure(t, new_text, rel, expected)
    return TranscriptScrub(text=new_text, turns=len(rehash), rehash=rehash)


def _check_structure(old: Transcript, new_text: str, rel: str, expected: list[Turn]) -> None:
    try:
        new = parse_transcript(new_text, rel)
    except PageError:
        new = None
    same = new is not None and (
        (new.id, new.started, new.scope) == (old.id, old.started, old.scope)
        and [(t.n, t.ts, t.text.strip()) for t in new.turns]
        == [(t.n, t.ts, t.text.strip()) for t in expected]
    )
    if not same:
        raise MemoryFSError(
            f"memory/{rel}: redacting the phrase would change the transcript's structure "
            "(its id, dates or turn headings); use a more specific phrase or forget the session"
        )


def scrub_incoming(t: Transcript, deletions: Deletions) -> Transcript | None:
    """An incoming session as the store may keep it: None when it was forgotten."""
    if t.id in deletions.sessions:
        return None
    if not deletions.phrases:
        return t
    if has_phrase(t.id, deletions):
        raise MemoryFSError(
            f"session id {t.id!r} holds a forgotten phrase (deletions.jsonl); rename the input"
        )
    turns = tuple(
        replace(turn, text=redact(turn.text, deletions), speaker=redact(turn.speaker, deletions))
        for turn in t.turns
    )
    return replace(
        t,
        turns=turns,
        participants=tuple(redact(p, deletions) for p in t.participants),
        meta=redact_values(t.meta, deletions, skip=_STRUCTURE),
    )
