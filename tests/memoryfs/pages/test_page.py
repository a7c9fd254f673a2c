"""Pages: byte-exact round trips, canonical rewrites, and hostile frontmatter."""

from __future__ import annotations

import contextlib
import datetime as dt
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memoryfs.errors import PageError
from memoryfs.pages.page import Page, Source, parse_page, render_page, split_frontmatter

# -- generated pages -------------------------------------------------------------

_text = st.text(
    st.characters(codec="utf-8", exclude_categories=["Cs"]),
    max_size=40,
)
_tricky = st.sampled_from(
    [
        "",
        "a: b",
        "#hash",
        "- dash",
        "'quoted'",
        '"dq"',
        "yes",
        "null",
        "2026-01-12",
        "1e3",
        "007",
        "---",
        "a\n---\nb",
        "x\r\ny",
        " lead",
        "trail ",
        "\t",
        "…é中",
        "line\u2028sep",
        "\x85",
    ]
)
_scalar = st.one_of(
    _text,
    _tricky,
    st.integers(-(10**12), 10**12),
    st.booleans(),
    st.none(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.dates(),
    st.datetimes(timezones=st.none() | st.just(dt.UTC)),
)
_key = st.one_of(
    st.sampled_from(["id", "title", "type", "aliases", "summary", "updated", "x"]), _text
)
_value = st.recursive(
    _scalar,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_text, inner, max_size=4),
    max_leaves=12,
)
_source = st.fixed_dictionaries(
    {"id": st.integers(1, 99), "ref": _text},
    optional={
        "at": st.dates() | _text,
        "hash": st.text("0123456789abcdef", min_size=8, max_size=8),
    },
)
_meta = st.dictionaries(_key, _value, max_size=8).flatmap(
    lambda m: st.lists(_source, max_size=3).map(lambda s: {**m, "sources": s} if s else m)
)
_body = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=200)


@settings(max_examples=300)
@given(meta=_meta, body=_body)
def test_render_parse_render_is_stable(meta: dict[str, Any], body: str) -> None:
    page = Page(meta=meta, body=body)
    text = render_page(page)
    parsed = parse_page(text)
    assert parsed.meta == meta
    assert parsed.body == body
    assert render_page(parsed) == text
    # a change re-dumps the metadata; dumping what was read gives the same bytes
    assert render_page(parsed.with_meta()) == text


@settings(max_examples=200)
@given(meta=_meta, body=_body, extra=_text)
def test_parse_render_of_rendered_text_is_identical(
    meta: dict[str, Any], body: str, extra: str
) -> None:
    text = render_page(Page(meta=meta, body=body)) + extra
    assert render_page(parse_page(text)) == text


# -- hand-written frontmatter --------------------------------------------------------

HAND_WRITTEN = """---
# a comment the author wants to keep
title: "Dana: postdoc"   # quoted because of the colon
id: dana
aliases: [Dana K., 'D. K.']
type: person
updated: 2026-01-12
sources: [{id: 1, ref: "sessions/transcripts/2026-01-05-figures.md#t1", hash: 'bc1f626a'}]
---
# Dana

Body with [[links]] [cite:1].
"""


def test_hand_written_yaml_rerenders_byte_identically() -> None:
    page = parse_page(HAND_WRITTEN)
    assert render_page(page) == HAND_WRITTEN
    assert render_page(page.with_body(page.body)) == HAND_WRITTEN
    assert page.aliases == ["Dana K.", "D. K."]
    assert page.sources == [
        Source(id=1, ref="sessions/transcripts/2026-01-05-figures.md#t1", hash="bc1f626a")
    ]


def test_with_meta_gives_canonical_output() -> None:
    page = parse_page(HAND_WRITTEN).with_meta(updated="2026-01-19", status="current")
    assert render_page(page) == (
        "---\n"
        "id: dana\n"
        "title: 'Dana: postdoc'\n"
        "type: person\n"
        "aliases:\n"
        "- Dana K.\n"
        "- D. K.\n"
        "status: current\n"
        "updated: '2026-01-19'\n"
        "sources:\n"
        "- id: 1\n"
        "  ref: sessions/transcripts/2026-01-05-figures.md#t1\n"
        "  hash: bc1f626a\n"
        "---\n"
        "# Dana\n\nBody with [[links]] [cite:1].\n"
    )
    again = parse_page(render_page(page))
    assert render_page(again.with_meta()) == render_page(page)


def test_crlf_and_bom_are_read() -> None:
    page = parse_page("\ufeff---\r\nid: a\r\ntitle: A\r\n---\r\nbody\r\n")
    assert page.id == "a" and page.body == "body\r\n" and page.body_line == 5


def test_unknown_keys_sort_after_known_ones_and_mixed_key_types_render() -> None:
    page = parse_page("---\nzeta: 1\n2024: year\nid: a\nalpha: 2\n---\n").with_meta(title="A")
    assert render_page(page) == "---\nid: a\ntitle: A\n2024: year\nalpha: 2\nzeta: 1\n---\n"


# -- hostile input ---------------------------------------------------------------------


def test_python_tags_raise_and_execute_nothing(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    for text in (
        f"---\n!!python/object/apply:os.system ['touch {marker}']\n---\n",
        f"---\nid: !!python/object/apply:os.system ['touch {marker}']\n---\n",
        "---\nid: !!python/name:os.system\n---\n",
        "---\nid: !!python/object/new:subprocess.Popen [['true']]\n---\n",
    ):
        with pytest.raises(PageError):
            parse_page(text)
    assert not marker.exists()


@pytest.mark.parametrize(
    "text",
    [
        "no frontmatter\n",
        "---\nid: a\n",  # never closed
        "---\nid: [unclosed\n---\n",
        "---\n\tid: tab\n---\n",
        "---\nid: a\x00b\n---\n",
        "---\n- a list\n---\n",
        "---\njust a string\n---\n",
        "---\nid: " + "[" * 5_000 + "]" * 5_000 + "\n---\n",
        "---\nid: " + "{a: " * 2_000 + "1" + "}" * 2_000 + "\n---\n",
        "---\n" + "".join(" " * i + "k:\n" for i in range(2_000)) + "---\n",
        "---\nid: " + "a" * 300_000 + "\n---\n",
        "---\nid: " + "9" * 5_000 + "\n---\n",
        "---\nupdated: 2026-13-45\n---\n",
        "---\n? [a, b]\n: c\n---\n",
        "---\n<<: 5\n---\n",
        '---\nid: "\\ud800"\n---\n',
    ],
    ids=lambda t: repr(t[:24]),
)
def test_malformed_input_raises_page_error_only(text: str) -> None:
    with pytest.raises(PageError):
        parse_page(text, "knowledge/x.md")


@pytest.mark.parametrize("depth", [50, 200, 900])
def test_deep_but_parseable_metadata_never_escapes_as_another_error(depth: int) -> None:
    text = "---\nid: a\nx: " + "[" * depth + "]" * depth + "\n---\n"
    try:
        page = parse_page(text)
    except PageError:
        return
    with contextlib.suppress(PageError):
        render_page(page.with_meta(title="T"))


@settings(max_examples=300)
@given(st.text(max_size=300))
def test_any_text_parses_or_raises_page_error(text: str) -> None:
    with contextlib.suppress(PageError):
        parse_page("---\n" + text)


def test_regression_nel_in_a_value_survives_a_rewrite() -> None:
    # PyYAML wrote U+0085 raw inside single quotes; reading it back gave a space.
    page = Page(meta={"id": "a", "title": "caf\x85e"}, body="")
    assert parse_page(render_page(page)).meta["title"] == "caf\x85e"


def _split_line_by_line(text: str) -> tuple[str, str, int] | None:
    """``split_frontmatter`` as it was written before (a line at a time): the reference."""
    if text.startswith("\ufeff"):
        text = text[1:]
    if not (text.startswith("---\n") or text.startswith("---\r\n")):
        return None
    pos = text.index("\n") + 1
    line = 2
    while True:
        end = text.find("\n", pos)
        current = text[pos:] if end == -1 else text[pos:end]
        if current.rstrip("\r") == "---":
            body_start = len(text) if end == -1 else end + 1
            return text[4 if text[3] == "\n" else 5 : pos], text[body_start:], line + 1
        if end == -1:
            return None
        pos = end + 1
        line += 1


_PIECES = st.sampled_from(["---", "--", "-", "\n", "\r", "\r\n", "a: 1", " ", "\ufeff", "x"])


@settings(max_examples=400, deadline=None)
@given(st.lists(_PIECES, max_size=14))
def test_split_frontmatter_agrees_with_reading_a_line_at_a_time(pieces: list[str]) -> None:
    for text in ("".join(pieces), "---\n" + "".join(pieces), "---\r\n" + "".join(pieces)):
        assert split_frontmatter(text) == _split_line_by_line(text), repr(text)


def test_a_page_parsed_without_the_memo_takes_no_room_in_it() -> None:
    """A page Dream edits and parses again from its own staged text is parsed with
    ``memo=False``: the same result, but the memo (shared with the gates) keeps nothing."""
    import memoryfs.pages.page as page_mod

    text = "---\nid: kept\ntitle: Kept\ntype: topic\nupdated: 2026-01-01\n---\n# Kept\n\nBody.\n"
    page_mod.clear_parse_cache()
    once = page_mod.parse_page(text, "knowledge/topics/kept.md", memo=False)
    assert len(page_mod._memo) == 0
    again = page_mod.parse_page(text, "knowledge/topics/kept.md")
    assert len(page_mod._memo) == 1
    assert (once.meta, once.body, once.body_line) == (again.meta, again.body, again.body_line)
    assert once is not again
    assert page_mod.parse_page(text, "knowledge/topics/kept.md") is again
    page_mod.clear_parse_cache()
