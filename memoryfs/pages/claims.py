"""Claims: the lines of a page body that carry evidence (``[cite:N]``).

A claim is one prose line (a list item, a paragraph line or a table row; never a
heading, never code) holding one or more ``[cite:N]``. Dream's semantic gate
checks each claim against the turns it cites, and ``superseded`` tells it which
claims are history rather than current facts. Citations are found with
``memoryfs.pages.links.text_segments`` (so code never counts); the claim's text is the
whole raw line, so markup around the citation is kept.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memoryfs.pages.links import CITE_RE, Heading, parse_body
from memoryfs.pages.page import Page, Source

__all__ = ["Claim", "extract_claims", "resolve_claim_sources"]

# a heading naming a section of history ("## History", "## Superseded facts"), not one that
# only holds the word (a note titled "... a jazz history book ...")
_SUPERSEDED_HEADING_RE = re.compile(r"^\W*(?:history|superseded)\b", re.IGNORECASE)
_STRIKE_RE = re.compile(r"~~[^~\n]+~~")
_MARKER_RE = re.compile(r"\(superseded", re.IGNORECASE)
_CITE_STRIP_RE = re.compile(r"[ \t]*" + CITE_RE.pattern)
_PREFIX_RE = re.compile(r"^\s*(?:>\s?)*\s*(?:(?:[-*+]|\d{1,9}[.)])\s+)?(?:\[[ xX]\]\s+)?")


@dataclass(frozen=True)
class Claim:
    text: str  # the line without list marker and [cite:N] markers, whitespace collapsed
    citations: tuple[int, ...]
    line: int  # 1-based line in the file
    section: str  # text of the nearest heading above ("" when none)
    superseded: bool


def _clean(raw: str) -> str:
    text = _PREFIX_RE.sub("", raw, count=1)
    return " ".join(_CITE_STRIP_RE.sub("", text).split())


def extract_claims(page: Page) -> list[Claim]:
    """Every cited prose line of ``page``'s body, in body order."""
    if not CITE_RE.search(page.body):
        return []
    body = parse_body(page.body)
    cites: dict[int, list[int]] = {}
    for line, text in body.segments:
        for m in CITE_RE.finditer(text):
            ns = cites.setdefault(line, [])
            if int(m.group(1)) not in ns:
                ns.append(int(m.group(1)))
    if not cites:
        return []
    heads = body.headings
    heading_lines = {n for h in heads for n in range(h.start, h.end)}
    raw_lines = page.body.split("\n")
    page_superseded = str(page.meta.get("status", "")).strip().lower() == "superseded"
    out: list[Claim] = []
    stack: list[Heading] = []
    h_iter = iter(heads)
    pending = next(h_iter, None)
    for line in sorted(cites):
        if line in heading_lines:
            continue
        while pending is not None and pending.start < line:
            while stack and stack[-1].level >= pending.level:
                stack.pop()
            stack.append(pending)
            pending = next(h_iter, None)
        raw = raw_lines[line - 1] if line - 1 < len(raw_lines) else ""
        superseded = (
            page_superseded
            or any(_SUPERSEDED_HEADING_RE.search(h.text) for h in stack)
            or bool(_MARKER_RE.search(raw))
            or bool(_STRIKE_RE.search(raw))
        )
        out.append(
            Claim(
                text=_clean(raw),
                citations=tuple(cites[line]),
                line=page.body_line + line - 1,
                section=stack[-1].text if stack else "",
                superseded=superseded,
            )
        )
    return out


def resolve_claim_sources(page: Page, claim: Claim) -> list[Source]:
    """The ``sources`` entries the claim's citations name, in citation order.

    Citations naming no entry are left out (validation reports them as MF106).
    """
    by_id = {s.id: s for s in page.sources}
    return [by_id[n] for n in claim.citations if n in by_id]
