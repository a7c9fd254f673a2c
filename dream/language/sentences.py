"""Split a turn's text into sentences: the unit every claim and key point is made of.

Job: prose, list items and table rows become sentences; code (fenced or indented) and
blank lines do not. A shared photo (``[shared a photo: ...]``, as the LoCoMo importer writes
it) becomes one sentence of its own. Boundary: no grammar, no model; a regex over sentence
punctuation that knows common abbreviations. Never raises on any text.
"""

from __future__ import annotations

import re

__all__ = ["split_sentences", "PHOTO_RE"]

PHOTO_RE = re.compile(r"\[shared a photo:\s*(?P<caption>[^\]\n]{1,400})\]")
_FENCE_RE = re.compile(r"^\s{0,3}(```|~~~)")
_LIST_RE = re.compile(r"^\s{0,6}(?:[-*+•]|\d{1,3}[.)])\s+")
_HEADING_RE = re.compile(r"^\s{0,3}#{1,6}\s+")
# A sentence ends at . ! ? (optionally closed by a quote or bracket) before a space and a
# capital, digit or opening quote; the look-behinds keep "e.g. Foo" and "Dr. Aalto" whole.
_ABBREVIATIONS = (
    "e.g",
    "i.e",
    "Dr",
    "Mr",
    "Ms",
    "Mrs",
    "Prof",
    "St",
    "vs",
    "etc",
    "Fig",
    "No",
    "approx",
    "ca",
)
# Chat often starts a sentence in lower case ("the lease is signed. what should I pack?"):
# after "!" or "?", or after a full stop that ends a word of two letters or more (not
# "a.m.", "e.g." or "approx."), a lower-case word starts one too.
_SPLIT_RE = re.compile(
    "".join(rf"(?<!\b{re.escape(a)}\.)" for a in _ABBREVIATIONS)
    + r"(?:(?:(?<=[.!?…])|(?<=[.!?…][\"'”’)\]]))\s+(?=[\"“'(]?[A-Z0-9])"
    + r"|(?:(?<=[!?])|(?<=(?<![\w.])[A-Za-z]{2}\.)|(?<=[A-Za-z]{3}\.))\s+(?=[a-z]))"
)
_MAX_SENTENCE = 600


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text`` in order, whitespace collapsed, code left out."""
    if not isinstance(text, str) or not text.strip():
        return []
    out: list[str] = []
    for block in _blocks(text):
        for part in _SPLIT_RE.split(block):
            sentence = " ".join(part.split())
            if sentence:
                out.append(sentence[:_MAX_SENTENCE])
    return out


def _blocks(text: str) -> list[str]:
    """Paragraphs and list items, with code blocks and headings' markup removed."""
    text = PHOTO_RE.sub(lambda m: "\n\n" + m.group(0) + "\n\n", text)
    blocks: list[str] = []
    buf: list[str] = []
    in_fence = False

    def flush() -> None:
        if buf:
            blocks.append(" ".join(buf))
            buf.clear()

    for line in text.split("\n"):
        if _FENCE_RE.match(line):
            flush()
            in_fence = not in_fence
            continue
        if in_fence or line.startswith(("    ", "\t")) and not _LIST_RE.match(line):
            continue
        stripped = line.strip()
        if not stripped:
            flush()
            continue
        if stripped.startswith("|"):
            flush()
            cells = [c.strip() for c in stripped.strip("|").split("|")]
            if cells and not all(set(c) <= set("-: ") for c in cells):
                blocks.append(", ".join(c for c in cells if c))
            continue
        if _LIST_RE.match(line) or _HEADING_RE.match(line):
            flush()
            stripped = _HEADING_RE.sub("", _LIST_RE.sub("", line)).strip()
        if stripped.startswith("> "):
            stripped = stripped[2:]
        buf.append(stripped)
        # a line that does not run on (no comma, no lower-case end) ends its block:
        # "Dana Reyes" / "Tidewater Analytics" in a signature are two lines, not one name
        if (
            PHOTO_RE.fullmatch(stripped)
            or not re.search(r"[,;\w]$", stripped)
            or re.search(r"(?:^|\s)[A-Z][\w-]*$", stripped)
        ):
            flush()
    flush()
    return blocks
