"""Fact lines: the lines of a page body that state something, and those no citation backs.

Job: the rule behind validation code MF110. A page under ``knowledge/``, ``notes/`` or
``sessions/summaries/`` says things only as claims (``memoryfs.pages.claims``: one prose line
holding a ``[cite:N]``, which Dream's verification gate checks against the turns it
cites); every other line of its body must be structure, recognised here:

- blank lines, headings (ATX and setext), thematic breaks (``---``, ``* * *``);
- tables' delimiter rows (``|---|:--:|``) and header rows (the row above one);
- code, fenced, indented or a line of code spans, and HTML comments: quoted material
  that no claim is ever read from and recall never serves (``memoryfs.index.units`` skips
  them the same way);
- lines of only ``[[links]]`` (a list item, separators such as ``,`` ``·`` ``|``, a
  short label from ``LINK_LABELS`` such as "See also:", "Related:", "About:"), each link's
  shown label at most ``MAX_LABEL_WORDS`` words (a title, not a sentence); after such a
  label, or under a heading such as "## Related", a page's name stands for its link
  (a link to a page forgotten or left out keeps its label: ``memoryfs.forget.scrub``);
- placeholders saying that nothing was recorded ("none recorded", "Outcome: none
  recorded", "- none"): Dream's summaries write them for an empty section;
- a bare label ending in a colon ("Open threads:", "**Decisions:**");
- lines marked ``(unsupported)`` at their end: ``dream.phases.recheck`` marks so a claim whose
  cited turn changed or went away; the line says it is unproven, and recall does not
  serve it (``memoryfs.index.units``).

Any other line with a word in it states something: without a citation it is an
uncited factual line. That includes a line wrapped from a cited one: a claim is read as
one line (``memoryfs.pages.claims``), so the rest of a wrapped paragraph or list item is text
no gate checks; ``FactLine.claim_line`` names the cited line of its block, so the
finding can say to join them.

Lines are scanned as ``memoryfs.index.units`` scans them for search and recall (what is served
is what must be backed); citations and headings are the ones ``memoryfs.pages.links`` parses
(what the claims are read from). Boundary: a parsed page in, lines out; no file access.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memoryfs.pages.links import WIKILINK_RE, parse_body
from memoryfs.pages.page import Page

__all__ = [
    "FACT_LAYERS",
    "LINK_LABELS",
    "MAX_LABEL_WORDS",
    "UNSUPPORTED",
    "FactLine",
    "holds_facts",
    "listing_heading",
    "marked_unsupported",
    "structural",
    "uncited_lines",
]

# where a page's lines are memory that recall serves and the gates must be able to check
FACT_LAYERS = ("knowledge/", "notes/", "sessions/summaries/")
UNSUPPORTED = "(unsupported)"  # the marker ``dream.phases.recheck`` ends an unproven claim with
MAX_LABEL_WORDS = 8  # a link's shown label: Dream writes page titles (at most 5 words)
# Labels a line of links may start with: they name the relation of the page to the
# pages linked, never something about the world ("Lives in: [[Paris]]" is a claim).
LINK_LABELS = frozenset(
    {
        "about",
        "also",
        "archive",
        "archived",
        "archives",
        "back",
        "back to",
        "cf",
        "compare",
        "contents",
        "index",
        "link",
        "links",
        "next",
        "pages",
        "parent",
        "part of",
        "previous",
        "related",
        "related pages",
        "see",
        "see also",
        "up",
    }
)

_FENCE_RE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_ATX_RE = re.compile(r"^\s{0,3}#{1,6}(?:\s|$)")
_INDENTED_RE = re.compile(r"^(?: {4}|\t)")
_LIST_RE = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])(?:\s+|$)(?:\[[ xX]\]\s+)?")
_QUOTE_RE = re.compile(r"^\s{0,3}(?:>\s?)+")
_BREAK_RE = re.compile(r"^\s{0,3}([-*_])(?:\s*\1){2,}\s*$")
_TABLE_RULE_RE = re.compile(r"^\s*\|?\s*:?-+:?\s*(?:\|\s*:?-+:?\s*)*\|?\s*$")
_WORD_RE = re.compile(r"\w+")
_EMPHASIS_RE = re.compile(r"[*_~`]+")
_CODE_SPAN_RE = re.compile(r"(`+)(?!`).*?(?<!`)\1(?!`)")  # as ``memoryfs.index.units`` reads it
_UNSUPPORTED_RE = re.compile(r"\(unsupported\)[\s.]*$", re.IGNORECASE)
_RELATION_RE = re.compile(
    r"^\s*(?:" + "|".join(sorted(map(re.escape, LINK_LABELS), key=len, reverse=True)) + r")"
    r"(?:\s*:\s*|\s+(?=\S)|\s*$)",
    re.IGNORECASE,
)
_ITEM_SPLIT_RE = re.compile(r"[,;·•|/]|\s[–—-]\s|\band\b|\bor\b|\x00")
# small words a title keeps in lower case ("Marlow Institute for Ocean Research")
_NAME_JOINERS = frozenset(
    {"a", "an", "and", "at", "da", "de", "del", "der", "di", "for", "in", "la", "le", "of"}
    | {"on", "the", "to", "van", "von", "&"}
)
_NOTHING_RE = re.compile(r"^(?:none recorded|nothing recorded|none|n/a)\.?$", re.IGNORECASE)
_LABELLED_NOTHING_RE = re.compile(
    r"^[A-Za-z][\w' ]{0,40}:\s*(?:none recorded|nothing recorded)\.?$", re.IGNORECASE
)
_BARE_LABEL_RE = re.compile(r"^[^\W\d_][\w'’ ,&/-]{0,40}:$")
_BARE_LABEL_WORDS = 4


@dataclass(frozen=True)
class FactLine:
    """An uncited line that states something."""

    line: int  # 1-based in the body (add ``Page.body_line - 1`` for the file line)
    text: str  # the line, stripped
    claim_line: int = 0  # body line of a cited line of the same paragraph or list item


def holds_facts(rel: str) -> bool:
    """Whether the file at ``rel`` (relative to ``memory/``) is a page whose every line
    must be a claim or structure."""
    return rel.startswith(FACT_LAYERS) and rel.endswith(".md")


def marked_unsupported(line: str) -> bool:
    """Whether ``line`` ends with the ``(unsupported)`` marker of ``dream.phases.recheck``."""
    return UNSUPPORTED in line.lower() and _UNSUPPORTED_RE.search(line) is not None


def structural(line: str, listing: bool = False) -> bool:
    """Whether a prose line (not a heading, not code) says nothing that needs evidence:
    see the module docstring. ``line`` is the raw line; citations are not looked at.
    ``listing``: the line is under a heading that lists pages ("## Related", "## See
    also": ``LINK_LABELS``), where a bare name is an edge too (a link whose page was
    forgotten or left out keeps its label: ``memoryfs.forget.scrub.unlink_pages``)."""
    text = _QUOTE_RE.sub("", line.strip(), count=1)
    text = _CODE_SPAN_RE.sub(" ", _LIST_RE.sub("", text, count=1)).strip()
    if not _WORD_RE.search(text) or _BREAK_RE.match(text) or _TABLE_RULE_RE.match(text):
        return True
    if marked_unsupported(text):
        return True
    plain = _EMPHASIS_RE.sub("", text).strip()
    if _NOTHING_RE.match(plain) or _LABELLED_NOTHING_RE.match(plain):
        return True
    if _BARE_LABEL_RE.match(plain) and len(plain.split()) <= _BARE_LABEL_WORDS:
        return True
    return _edges(plain, listing)


def listing_heading(text: str) -> bool:
    """Whether a heading's text names a list of pages ("Related", "See also")."""
    return " ".join(_WORD_RE.findall(text.lower())) in LINK_LABELS


def _edges(text: str, listing: bool) -> bool:
    """Only context edges: ``[[links]]`` with short labels, separated by "," "·" "|" "and"
    ..., after at most one relation label ("See also:", ``LINK_LABELS``); after such a
    label or under a listing heading, a name stands for a link too."""
    links = list(WIKILINK_RE.finditer(text))
    for m in links:
        if len((m.group(2) or m.group(1)).split()) > MAX_LABEL_WORDS:
            return False
    rest = WIKILINK_RE.sub("\x00", text)
    label = _RELATION_RE.match(rest)
    if label is not None:  # "See also:", "About" (its colon may be left out)
        rest = rest[label.end() :]
    labelled = label is not None
    if not links and not (labelled or listing):
        return False
    for item in _ITEM_SPLIT_RE.split(rest):
        item = item.strip().rstrip(".").strip()
        if item.replace("\x00", "").strip() == "":
            continue  # links, or nothing between two separators
        if not (labelled or listing) or not _name_like(item):
            return False
    return True


def _name_like(item: str) -> bool:
    """A page's name as a label shows it: one token (an id such as ``bad-page``) or a
    title of capitalised words ("Marlow Institute for Ocean Research")."""
    words = item.split()
    if len(words) == 1:
        return "\x00" not in item
    if len(words) > MAX_LABEL_WORDS or not words[0][:1].isupper():
        return False
    return all(w[:1].isupper() or w[:1].isdigit() or w.lower() in _NAME_JOINERS for w in words)


def uncited_lines(page: Page) -> list[FactLine]:
    """The lines of ``page``'s body that state something and hold no citation, in order."""
    body = page.body
    if not _WORD_RE.search(body):
        return []
    lines = body.split("\n")
    parsed = parse_body(body)
    cited = {c.line for c in parsed.cites}
    heads = parsed.headings
    heading_lines = {n for h in heads for n in range(h.start, h.end)}
    heading_text = {h.start: h.text for h in heads}
    listing = False  # under a heading that lists pages
    found: list[tuple[int, str, int]] = []  # (line, text, block)
    cited_in_block: dict[int, int] = {}  # block -> its first cited line
    block = 0
    fence = ""
    prev_blank = True
    in_list = False
    for n, raw in enumerate(lines, start=1):
        line = raw.rstrip()
        m = _FENCE_RE.match(line)
        if fence:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = ""
            continue
        if m:
            fence, block = m.group(1), block + 1
            continue
        stripped = line.strip()
        if not stripped:
            prev_blank, block = True, block + 1
            continue
        if prev_blank and not in_list and _INDENTED_RE.match(line):
            continue  # an indented code block
        prev_blank = False
        if n in heading_lines or _ATX_RE.match(line):
            in_list, block = False, block + 1
            if n in heading_text or n not in heading_lines:
                listing = listing_heading(heading_text.get(n, stripped.lstrip("#")))
            continue
        is_item = bool(_LIST_RE.match(line))
        if is_item:
            block += 1
        in_list = is_item or (in_list and line[:1] in (" ", "\t"))
        if stripped.startswith("<!--"):
            continue
        if n in cited:
            cited_in_block.setdefault(block, n)
            continue
        if _is_table_header(lines, n, stripped) or structural(line, listing):
            continue
        found.append((n, stripped, block))
    return [FactLine(n, text, cited_in_block.get(b, 0)) for n, text, b in found]


def _is_table_header(lines: list[str], n: int, stripped: str) -> bool:
    """A ``|`` row whose next line (``lines[n]``: ``n`` is 1-based) is a delimiter row."""
    if "|" not in stripped:
        return False
    return n < len(lines) and "-" in lines[n] and _TABLE_RULE_RE.match(lines[n]) is not None
