"""What the generated index keeps of one file (``memoryfs.index.facts_cache`` stores it by file).

A knowledge page or note: its id, title, type, summary, update date, whether it is a
preference, its folder, its lower-cased aliases and the link targets of its body; a
session summary: the same row without aliases and links; a transcript: id, date, title
and turn count. A file that does not parse yields nothing (validation reports why).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from memoryfs.errors import MemoryFSError
from memoryfs.pages.links import extract_links
from memoryfs.pages.page import parse_page
from memoryfs.pages.transcript import parse_transcript

__all__ = ["Facts", "facts_of", "KNOWLEDGE", "NOTE", "SUMMARY", "TRANSCRIPT"]

KNOWLEDGE, NOTE, SUMMARY, TRANSCRIPT = 0, 1, 2, 3


@dataclass(frozen=True)
class Facts:
    """What a pass keeps of one file: its page row or session row, aliases, links."""

    row: tuple[Any, ...]
    aliases: tuple[str, ...] = ()
    links: tuple[str, ...] = ()


def facts_of(text: str, rel: str, kind: int) -> Facts | None:
    try:
        if kind == TRANSCRIPT:
            t = parse_transcript(text, rel)
            return Facts((t.id, t.date, str(t.meta.get("title") or ""), len(t.turns)))
        page = parse_page(text, rel)
    except (MemoryFSError, ValueError):
        return None
    folder = rel.split("/")[1] if rel.count("/") >= 2 else ""
    pref = rel.startswith("knowledge/preferences/") or page.type == "preference"
    row = (
        page.id,
        page.title,
        page.type,
        " ".join(page.summary.split()),
        page.updated,
        int(pref),
        folder,
    )
    if kind == SUMMARY:
        return Facts(row)
    return Facts(
        row,
        aliases=tuple(dict.fromkeys(a.lower() for a in page.aliases)),
        links=tuple(dict.fromkeys(link.target for link in extract_links(page.body))),
    )
