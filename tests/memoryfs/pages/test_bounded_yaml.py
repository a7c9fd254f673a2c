"""Frontmatter bombs: every YAML parser of pages and transcripts refuses an alias bomb or
an oversized frontmatter with one ``PageError`` line, in bounded time and memory, and
still reads the anchors and aliases PyYAML itself writes."""

from __future__ import annotations

import datetime as dt

import pytest
from bounded import call_bounded

from memoryfs.errors import PageError
from memoryfs.pages.bounded_yaml import YamlLimits, load_yaml
from memoryfs.pages.page import parse_page, render_meta
from memoryfs.pages.transcript import parse_transcript
from memoryfs.store.config import Limits, load_config


def laughs(levels: int = 9, key: str = "participants") -> str:
    """The "billion laughs": 9 aliases per level, 9**levels strings once expanded."""
    lines = ["l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for i in range(1, levels):
        lines.append(f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]")
    lines.append(f"{key}: *l{levels - 1}")
    return "\n".join(lines) + "\n"


def wide(copies: int = 5_000) -> str:
    """One big list named thousands of times: few levels, a quadratic blow-up."""
    big = ", ".join(["word"] * 2_000)
    return f"big: &big [{big}]\n" + "".join(f"k{i}: *big\n" for i in range(copies))


TRANSCRIPT_HEAD = (
    "id: bomb\ntype: session\nstarted: 2026-01-01T10:00\nscope: {user: dana, assistant: atlas}\n"
)
TURN = "\n## t1 · user · 2026-01-01T10:00\n\nhello\n"
PAGE_HEAD = "id: bomb\ntitle: Bomb\ntype: topic\nupdated: 2026-01-01\n"


def _page(meta: str, body: str = "Body.\n") -> str:
    return f"---\n{meta}---\n{body}"


def _transcript_text(text: str) -> str:
    """What a caller of the parsed transcript does with it: everything in it as text."""
    t = parse_transcript(text, "sessions/transcripts/bomb.md")
    return " ".join(t.participants) + str(t.scope)


def _page_text(text: str) -> str:
    page = parse_page(text, "knowledge/topics/bomb.md", memo=False)
    return str(page.meta)


@pytest.mark.parametrize(
    "meta", [laughs(), laughs(key="aliases"), wide()], ids=["laughs", "laughs-aliases", "wide"]
)
def test_alias_bomb_in_a_page_is_refused(meta: str) -> None:
    outcome = call_bounded(_page_text, _page(PAGE_HEAD + meta))
    assert outcome.error == "PageError", outcome
    assert "knowledge/topics/bomb.md: frontmatter YAML" in outcome.message
    assert "\n" not in outcome.message


def test_alias_bomb_in_a_transcript_is_refused() -> None:
    outcome = call_bounded(_transcript_text, _page(TRANSCRIPT_HEAD + laughs(), TURN))
    assert outcome.error == "PageError", outcome
    assert "expands to more than 100000 values" in outcome.message


def test_frontmatter_over_the_size_limit_is_refused_before_it_is_parsed() -> None:
    # unparseable YAML past the limit: the size is what is reported, not a YAML error
    meta = PAGE_HEAD + "junk: [" + "x, " * 100_000 + "\n"
    with pytest.raises(PageError, match="frontmatter is larger than 200000 bytes"):
        parse_page(_page(meta), "p.md", memo=False)
    with pytest.raises(PageError, match="larger than 1000 bytes"):
        parse_page(_page(PAGE_HEAD + "x: " + "é" * 600 + "\n"), limits=YamlLimits(max_bytes=1000))


def test_a_recursive_alias_is_refused() -> None:
    with pytest.raises(PageError, match="alias inside the node it names"):
        parse_page(_page(PAGE_HEAD + "loop: &a [1, *a]\n"), memo=False)
    with pytest.raises(PageError, match="alias inside the node it names"):
        parse_page(_page(PAGE_HEAD + "loop: &a {k: *a}\n"), memo=False)


def test_alias_count_is_bounded() -> None:
    many = "x: &x 1\n" + "".join(f"y{i}: *x\n" for i in range(101))
    with pytest.raises(PageError, match="more than 100 aliases"):
        parse_page(_page(PAGE_HEAD + many), memo=False)
    fewer = "x: &x 1\n" + "".join(f"y{i}: *x\n" for i in range(100))
    assert parse_page(_page(PAGE_HEAD + fewer), memo=False).meta["y99"] == 1


def test_the_anchors_pyyaml_writes_still_read() -> None:
    day = dt.date(2026, 1, 1)
    raw = render_meta({"id": "p", "title": "P", "type": "topic", "created": day, "updated": day})
    assert "&id001" in raw and "*id001" in raw
    page = parse_page(_page(raw), memo=False)
    assert page.meta["created"] == page.meta["updated"] == day


def test_store_limits_are_lower_only(tmp_path: object) -> None:
    from pathlib import Path

    path = Path(str(tmp_path)) / "memory.toml"
    base = '[scope]\nuser = "dana"\nassistant = "atlas"\n'
    path.write_text(base + "[limits]\nyaml_aliases = 3\nturns = 50\n", encoding="utf-8")
    limits = load_config(path).limits
    assert (limits.yaml_aliases, limits.turns, limits.query_chars) == (3, 50, Limits.query_chars)
    assert limits.yaml == YamlLimits(200_000, 100_000, 3)
    for bad, message in (
        ("yaml_nodes = 100001", "yaml_nodes may be at most 100000"),
        ("turns = 0", "turns must be a whole number above 0"),
        ("turn_byte = 5", "unknown key 'turn_byte'"),
    ):
        path.write_text(base + f"[limits]\n{bad}\n", encoding="utf-8")
        with pytest.raises(Exception, match=message):
            load_config(path)


def test_load_yaml_reads_plain_documents() -> None:
    assert load_yaml("a: &x [1, 2]\nb: *x\n") == {"a": [1, 2], "b": [1, 2]}
    assert load_yaml("") is None
