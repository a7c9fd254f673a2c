"""Links in page bodies: ``[[target]]``, ``[[target|label]]`` and ``[cite:N]``.

Extraction walks markdown-it-py's inline tokens, so text inside code spans and
fenced or indented code never counts. Line numbers are 1-based in the body; add
``Page.body_line - 1`` for file line numbers.

A body in the shape Dream writes (headings, list items, plain lines) is read line by
line; any other goes through markdown-it-py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from markdown_it import MarkdownIt
from markdown_it.rules_inline import StateInline
from markdown_it.rules_inline.backticks import backtick
from markdown_it.token import Token

__all__ = [
    "Body",
    "Link",
    "Citation",
    "Heading",
    "extract",
    "extract_links",
    "extract_citations",
    "headings",
    "parse_body",
    "text_segments",
]

WIKILINK_RE = re.compile(r"\[\[([^\[\]|\n]{1,300}?)(?:\|([^\[\]\n]{1,300}?))?\]\]")
CITE_RE = re.compile(r"\[cite:\s*(\d{1,6})\]")


@dataclass(frozen=True)
class Link:
    target: str
    label: str
    line: int


@dataclass(frozen=True)
class Citation:
    n: int
    line: int


@dataclass(frozen=True)
class Heading:
    start: int  # 1-based body line of the heading's first line
    end: int  # 1-based body line after the heading (setext headings span two lines)
    level: int
    text: str


@dataclass(frozen=True)
class Body:
    """What one parse of a body yields: prose segments (line, text), headings, links and
    citations, each in body order."""

    segments: tuple[tuple[int, str], ...]
    headings: tuple[Heading, ...]
    links: tuple[Link, ...]
    cites: tuple[Citation, ...]


@lru_cache(maxsize=1)
def _md() -> MarkdownIt:
    md = MarkdownIt("commonmark").enable("table")
    md.inline.ruler.at("backticks", _backtick_counting_newlines)
    return md


def _backtick_counting_newlines(state: StateInline, silent: bool) -> bool:
    # markdown-it turns newlines inside a code span into spaces; keep their count
    # so text after a multi-line code span gets the right line number.
    start, before = state.pos, len(state.tokens)
    matched = backtick(state, silent)
    if matched and not silent and len(state.tokens) > before:
        token = state.tokens[-1]
        if token.type == "code_inline":
            token.meta = {"newlines": state.src.count("\n", start, state.pos)}
    return matched


def text_segments(body: str) -> list[tuple[int, str]]:
    """Runs of prose text (not code) with the 1-based body line each starts on."""
    return list(parse_body(body).segments)


def headings(body: str) -> list[Heading]:
    """The body's headings (ATX and setext), in order."""
    return list(parse_body(body).headings)


def parse_body(body: str) -> Body:
    """The body parsed once, for a reader that needs more than one of its parts."""
    simple = _line_parse(body)
    return _with_links(*simple) if simple is not None else _markdown_parse(body)


def _markdown_parse(body: str) -> Body:
    try:
        tokens = _md().parse(body)
    except Exception:  # noqa: BLE001 - the parser must never take a page down with it
        return Body((), (), (), ())
    segments: list[tuple[int, str]] = []
    heads: list[Heading] = []
    for i, tok in enumerate(tokens):
        if tok.type == "heading_open" and tok.map is not None:
            inline = tokens[i + 1] if i + 1 < len(tokens) else None
            text = inline.content.strip() if inline is not None and inline.type == "inline" else ""
            heads.append(Heading(tok.map[0] + 1, tok.map[1] + 1, int(tok.tag[1:] or 1), text))
        if tok.type != "inline" or tok.map is None or not tok.children:
            continue
        segments.extend(_inline_segments(tok.children, tok.map[0] + 1))
    return _with_links(segments, heads)


# The line reading below gives markdown-it's answer for bodies made only of lines it
# cannot misread, the shape Dream writes: blank lines, ATX headings, "- " list items and
# paragraph lines starting with a letter or digit, with no character that starts inline
# markup other than plain brackets and a lone "&" (no code, emphasis, escapes, entities, HTML or
# autolinks; no "](" so no bracket pair becomes a link: without "[x]:" lines there are
# no reference links either), no tab, CR or NUL, and no leading or trailing spaces. Any
# other body goes through markdown-it. tests/memoryfs/pages/test_links.py checks both agree.
_NOT_SIMPLE_RE = re.compile(r"[\\`*_<\t\r\x00]|\]\(|&(?=[#A-Za-z0-9])")
_ATX_RE = re.compile(r"^(#{1,6}) +(\S.*)$")
_ORDERED_RE = re.compile(r"^\d{1,9}[.)](?: |$)")


def _plain_start(text: str) -> bool:
    """``text`` starts as a paragraph would (not a list, quote, heading, fence, HTML or
    reference definition)."""
    first = text[:1]
    if first.isalnum():
        return _ORDERED_RE.match(text) is None
    return text.startswith("[[") or first in "\"'("


def _line_parse(body: str) -> tuple[list[tuple[int, str]], list[Heading]] | None:
    if _NOT_SIMPLE_RE.search(body):
        return None
    segments: list[tuple[int, str]] = []
    heads: list[Heading] = []
    for n, line in enumerate(body.split("\n"), start=1):
        if not line:
            continue
        if line != line.strip():
            return None
        if line.startswith("#"):
            m = _ATX_RE.match(line)
            if m is None or line.endswith("#"):
                return None
            text = m.group(2).strip()
            heads.append(Heading(n, n + 1, len(m.group(1)), text))
            segments.append((n, text))
        elif line.startswith("- ") and _plain_start(line[2:]):
            segments.append((n, line[2:]))
        elif _plain_start(line) and line[0] not in "\"'(":
            segments.append((n, line))
        else:
            return None
    return segments, heads


def _with_links(segments: list[tuple[int, str]], heads: list[Heading]) -> Body:
    links: list[Link] = []
    cites: list[Citation] = []
    for line, text in segments:
        if "[" not in text:
            continue
        for m in WIKILINK_RE.finditer(text):
            target = m.group(1).strip()
            label = (m.group(2) or "").strip() or target
            if target:
                links.append(Link(target=target, label=label, line=line))
        for m in CITE_RE.finditer(text):
            cites.append(Citation(n=int(m.group(1)), line=line))
    return Body(tuple(segments), tuple(heads), tuple(links), tuple(cites))


def _inline_segments(children: list[Token], first_line: int) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    line = first_line
    start_line = line
    buf: list[str] = []
    for child in children:
        if child.type in ("text", "text_special"):
            if not buf:
                start_line = line
            buf.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            if buf:
                out.append((start_line, "".join(buf)))
                buf = []
            line += 1
        else:
            if buf:
                out.append((start_line, "".join(buf)))
                buf = []
            if child.type == "code_inline":
                line += (child.meta or {}).get("newlines", 0)
            elif child.children:  # an image: its alt text may span lines
                line += sum(1 for c in child.children if c.type in ("softbreak", "hardbreak"))
    if buf:
        out.append((start_line, "".join(buf)))
    return out


def extract(body: str) -> tuple[list[Link], list[Citation]]:
    found = parse_body(body)
    return list(found.links), list(found.cites)


def extract_links(body: str) -> list[Link]:
    return list(parse_body(body).links)


def extract_citations(body: str) -> list[Citation]:
    return list(parse_body(body).cites)
