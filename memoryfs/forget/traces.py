"""Traces: what a page or session tombstone keeps so its text can be found without keeping it.

A trace is ``trace_digest`` of a ``TRACE_WORDS``-word window of normalized words
(``memoryfs.forget.deletions``). A forgotten session's traces are the windows of its
turns; a forgotten page's, the windows of its title, aliases, summary and lines
(citation markers and link syntax left out). Windows that a surviving transcript
holds are left out, and for a page also those another page holds: the same words
said in another session, or written on another page, are that other source's
content, not the forgotten one's.

Pure functions of texts; ``memoryfs.forget.remove`` reads the store and writes the
tombstone.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from memoryfs.errors import PageError
from memoryfs.forget.deletions import TRACE_WORDS, trace_digest
from memoryfs.pages.page import parse_page
from memoryfs.pages.transcript import parse_transcript
from memoryfs.validate.tombstones import normalize_words

__all__ = ["windows", "text_windows", "transcript_lines", "page_lines", "traces_of"]

_CITE_RE = re.compile(r"\[cite:\s*\d+\]")
_LINK_RE = re.compile(r"\[\[([^\]|#]+)(?:#[^\]|]*)?(?:\|([^\]]*))?\]\]")


def windows(line: str) -> set[str]:
    """The traces of one line's windows (none when it has fewer words)."""
    words = normalize_words(line)
    return {trace_digest(words[i : i + TRACE_WORDS]) for i in range(len(words) - TRACE_WORDS + 1)}


def text_windows(lines: Iterable[str]) -> set[str]:
    out: set[str] = set()
    for line in lines:
        out |= windows(line)
    return out


def transcript_lines(text: str, rel: str) -> list[str]:
    """What the people in a session said: its turns' text, line by line."""
    try:
        t = parse_transcript(text, rel)
    except PageError:
        return text.split("\n")  # malformed: all of it may be what was said
    return [line for turn in t.turns for line in turn.text.split("\n")]


def page_lines(text: str, rel: str) -> list[str]:
    """A page's own words: title, aliases, summary and body lines, markup left out."""
    try:
        page = parse_page(text, rel)
    except PageError:
        return text.split("\n")
    meta = [page.title, *page.aliases]
    summary = page.meta.get("summary")
    if isinstance(summary, str):
        meta.append(summary)
    body = _LINK_RE.sub(lambda m: m.group(2) or m.group(1), _CITE_RE.sub(" ", page.body))
    return [*meta, *body.split("\n")]


def traces_of(forgotten: Iterable[str], kept: Iterable[str]) -> set[str]:
    """Traces of the ``forgotten`` lines that none of the ``kept`` lines holds."""
    return text_windows(forgotten) - text_windows(kept)
