"""Links and citations in page bodies: golden cases, never inside code."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memoryfs.pages.links import (
    Citation,
    Link,
    extract,
    extract_citations,
    extract_links,
    text_segments,
)

L = Link
C = Citation

# (name, body, links, citations); line numbers are 1-based in the body
GOLDEN: list[tuple[str, str, list[Link], list[Citation]]] = [
    ("plain", "See [[ana]].\n", [L("ana", "ana", 1)], []),
    (
        "label",
        "See [[ana|Ana Lima]] and [[ bob | Bob ]].\n",
        [L("ana", "Ana Lima", 1), L("bob", "Bob", 1)],
        [],
    ),
    ("empty target is no link", "[[ ]] [[|x]]\n", [], []),
    ("code span", "Use `[[ana]]` and `[cite:1]`, not [[bob]].\n", [L("bob", "bob", 1)], []),
    ("double backtick span", "``a [[ana]] ` b`` [[bob]]\n", [L("bob", "bob", 1)], []),
    (
        "fenced code",
        "```md\n[[ana]] [cite:1]\n```\n~~~\n[[x]]\n~~~\nafter [[bob]] [cite:2]\n",
        [L("bob", "bob", 7)],
        [C(2, 7)],
    ),
    ("indented code", "Para.\n\n    [[ana]] [cite:1]\n\n[[bob]]\n", [L("bob", "bob", 5)], []),
    (
        "line numbers across soft breaks",
        "# Title\n\nfirst line\nsecond [[a]]\nthird [cite:3]\n\n- item [[b]]\n  cont [[c]]\n",
        [L("a", "a", 4), L("b", "b", 7), L("c", "c", 8)],
        [C(3, 5)],
    ),
    (
        "table",
        "| who | ref |\n|---|---|\n| [[ana]] | [cite:1] |\n| [[bob\\|Bob]] | `[[no]]` [cite:2] |\n",
        [L("ana", "ana", 3), L("bob", "Bob", 4)],
        [C(1, 3), C(2, 4)],
    ),
    (
        "multiple cites on a line",
        "- Moved to Lisbon [cite:1][cite:2] in May [cite: 3].\n",
        [],
        [C(1, 1), C(2, 1), C(3, 1)],
    ),
    (
        "heading and blockquote",
        "## About [[ana]]\n\n> said [[bob]] [cite:4]\n",
        [L("ana", "ana", 1), L("bob", "bob", 3)],
        [C(4, 3)],
    ),
    ("emphasis inside", "*see [[ana]]* and **[cite:5]**\n", [L("ana", "ana", 1)], [C(5, 1)]),
    ("not a citation", "[cite:] [cite:x] [cite:1234567] [Cite:1] cite:2\n", [], []),
    ("nested brackets", "[[[ana]]] [[a[b]]]\n", [L("ana", "ana", 1)], []),
    (
        "inline html is not text",
        "<span>[[ana]]</span> [[bob]]\n",
        [L("ana", "ana", 1), L("bob", "bob", 1)],
        [],
    ),
    ("code span spanning lines keeps numbering", "a `x\ny` b\nc [[z]]\n", [L("z", "z", 3)], []),
    (
        "image alt spanning lines",
        "![a\nb](x.png) [[y]]\n[[z]]\n",
        [L("y", "y", 2), L("z", "z", 3)],
        [],
    ),
]


@pytest.mark.parametrize(("name", "body", "links", "cites"), GOLDEN, ids=[g[0] for g in GOLDEN])
def test_golden(name: str, body: str, links: list[Link], cites: list[Citation]) -> None:
    assert extract(body) == (links, cites)
    assert extract_links(body) == links
    assert extract_citations(body) == cites


def test_segments_skip_code() -> None:
    assert text_segments("a `b` c\n\n```\nd\n```\n") == [(1, "a "), (1, " c")]


@given(st.text(max_size=400))
def test_never_raises(body: str) -> None:
    links, cites = extract(body)
    assert all(link.line >= 1 and link.target for link in links)
    assert all(c.line >= 1 for c in cites)


# -- the line reading of Dream-shaped bodies gives markdown-it's answer ------------------

_LINES = [
    "",
    "# Dana",
    "## 2023-05-09 (9 May 2023)",
    "## History",
    "###### six",
    "####### seven",
    "# closing #",
    "#no space",
    "- Dana moved to Lyon [cite:1][cite:12] (superseded on 2023-06-20)",
    "- [[dana-archive-2023-01-02|Dana (2023-01-02 archive)]]",
    "- [[a]] and [[b|B]]",
    "Outcome: decided [cite:3]",
    "About: [[dana|Dana]]",
    "1. ordered",
    "- 2. nested ordered",
    "- - nested",
    "- # heading in item",
    "- > quote",
    "> quote [[q]]",
    "---",
    "===",
    "    indented [[code]]",
    "  two spaces [[x]]",
    "trailing  ",
    "```",
    "~~~",
    "| a | [[t]] |",
    "|---|---|",
    "[ref]: /url",
    "[[ref]]: /url",
    "- [x] done [cite:2]",
    "see [link](x) [[y]]",
    "a *b* [[c]] _d_",
    "`[[code]]` [cite:4]",
    "<span>[[h]]</span>",
    "&amp; [cite:5]",
    "Kelp & Co [cite:5] &#35; &x",
    "esc \\[[x]]",
    "2023-05-09 a dated line [cite:6]",
    "(paren) [[p]]",
    '"quoted" [cite:7]',
    "- (x) [[z]]",
    "tab\there",
    "x\u00a0",
    "![img] [[i]]",
]


@given(st.lists(st.sampled_from(_LINES) | st.text(alphabet="ab [](#-:|!>`*1.&;\n", max_size=12)))
def test_line_reading_agrees_with_markdown_it(lines: list[str]) -> None:
    from memoryfs.pages import links

    body = "\n".join(lines) + "\n"
    simple = links._line_parse(body)
    if simple is not None:
        assert links._with_links(*simple) == links._markdown_parse(body)


def test_line_reading_covers_dream_pages() -> None:
    from memoryfs.pages import links

    body = "\n".join(_LINES[:4] + _LINES[8:12] + [""] + _LINES[12:13]) + "\n"
    simple = links._line_parse(body)
    assert simple is not None  # the shape Dream writes never needs markdown-it
    assert links._with_links(*simple) == links._markdown_parse(body)
