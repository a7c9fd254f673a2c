"""Links in page bodies: ``[[target]]``, ``[[target|label]]`` and ``[cite:N]``.

Extraction walks markdown-it-py's inline tokens, so text inside code spans and
fenced or indented code never counts. Line numbers are 1-based in the body; add
``Page.body_line - 1`` for file line numbers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from markdown_it import MarkdownIt
from markdown_it.rules_inline import StateInline
from markdown_it.rules_inline.backticks import backtick
from markdown_it.token import Token

__all__ = ["Link", "Citation", "extract", "extract_links", "extract_citations", "text_segments"]

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
    try:
        tokens = _md().parse(body)
    except Exception:  # noqa: BLE001 - the parser must never take a page down with it
        return []
    out: list[tuple[int, str]] = []
    for tok in tokens:
        if tok.type != "inline" or tok.map is None or not tok.children:
            continue
        out.extend(_inline_segments(tok.children, tok.map[0] + 1))
    return out


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
    links: list[Link] = []
    cites: list[Citation] = []
    for line, text in text_segments(body):
        if "[" not in text:
            continue
        for m in WIKILINK_RE.finditer(text):
            target = m.group(1).strip()
            label = (m.group(2) or "").strip() or target
            if target:
                links.append(Link(target=target, label=label, line=line))
        for m in CITE_RE.finditer(text):
            cites.append(Citation(n=int(m.group(1)), line=line))
    return links, cites


def extract_links(body: str) -> list[Link]:
    return extract(body)[0]


def extract_citations(body: str) -> list[Citation]:
    return extract(body)[1]
