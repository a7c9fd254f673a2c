"""Transcripts: exact round trips, escaped heading look-alikes, append-only growth."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memoryfs.errors import PageError
from memoryfs.pages.transcript import (
    Transcript,
    Turn,
    parse_transcript,
    render_transcript,
    render_turn,
)
from memoryfs.store.hashing import turn_hash

SCOPE = {"user": "dana", "assistant": "atlas"}


def _transcript(texts: list[str], speakers: list[str] | None = None) -> Transcript:
    speakers = speakers or ["user", "assistant"]
    return Transcript(
        id="2026-01-12-lisbon",
        started="2026-01-12T09:00",
        participants=("dana", "atlas"),
        scope=SCOPE,
        turns=tuple(
            Turn(
                n=i,
                speaker=speakers[(i - 1) % len(speakers)],
                ts=f"2026-01-12T09:{i % 60:02d}",
                text=t,
            )
            for i, t in enumerate(texts, 1)
        ),
    )


def _texts(t: Transcript) -> list[str]:
    return [turn.text for turn in t.turns]


LOOKALIKES = [
    "## t2 · user · 2026-01-12T09:05",  # an exact heading inside a turn's text
    "\\## t2 · user · 2026-01-12T09:05",  # one that was already escaped by its author
    "\\\\## t9 · x · y",
    "## t01 · user · soon later",
    "## t3 · a · b\n## t4 · c · d",
    "text\n\n## t1 · user · 2026-01-12T09:00\n\nmore",
]


@pytest.mark.parametrize("text", LOOKALIKES)
def test_heading_lookalikes_round_trip(text: str) -> None:
    t = _transcript(["Hi.", text, "Bye."])
    rendered = render_transcript(t)
    parsed = parse_transcript(rendered)
    assert _texts(parsed) == _texts(t)
    assert [turn.n for turn in parsed.turns] == [1, 2, 3]
    assert render_transcript(parsed) == rendered


def test_round_trip_keeps_fields_and_line_numbers() -> None:
    t = _transcript(["Olá, São Paulo — 東京 🎉", "- a list\n\n```\ncode\n```", "---"])
    rendered = render_transcript(t)
    parsed = parse_transcript(rendered, "sessions/transcripts/2026-01-12-lisbon.md")
    assert (parsed.id, parsed.started, parsed.participants, parsed.scope) == (
        t.id,
        t.started,
        t.participants,
        t.scope,
    )
    assert [(x.n, x.speaker, x.ts, x.text) for x in parsed.turns] == [
        (x.n, x.speaker, x.ts, x.text) for x in t.turns
    ]
    lines = rendered.split("\n")
    for turn in parsed.turns:
        assert lines[turn.line - 1].startswith(f"## t{turn.n} · ")
    assert parsed.turn("t2") == parsed.turns[1] and parsed.turn("t9") is None
    assert parsed.date == "2026-01-12"


def test_crlf_input_parses_like_lf() -> None:
    t = _transcript(["first line\nsecond line", "## t1 · user · x"])
    lf = render_transcript(t)
    parsed = parse_transcript(lf.replace("\n", "\r\n"))
    assert _texts(parsed) == _texts(t)
    assert [x.hash for x in parsed.turns] == [turn_hash(x) for x in _texts(t)]
    assert render_transcript(parsed) == lf


def test_malformed_transcripts_raise_page_error() -> None:
    good = render_transcript(_transcript(["a", "b"]))
    for old, new in (
        ("## t2", "## t3"),
        ("---\n\n## t1", "---\nstray text\n## t1"),
        ("id: 2026-01-12-lisbon", "id: Not A Slug"),
        ("started: 2026-01-12T09:00", "started: tomorrow"),
        ("---\nid:", "id:"),
    ):
        assert old in good
        with pytest.raises(PageError):
            parse_transcript(good.replace(old, new, 1))


_line = st.text(
    st.characters(codec="utf-8", exclude_categories=["Cs"], exclude_characters="\r\n"), max_size=30
)
_turn_text = st.lists(
    st.one_of(_line, st.sampled_from(LOOKALIKES + ["", "## t5 · u · x", "\\", "---"])), max_size=6
).map("\n".join)


def _normalized(text: str) -> str:
    return text.strip("\n")  # a turn's text is read without surrounding blank lines


@settings(max_examples=200)
@given(
    st.lists(_turn_text, max_size=6),
    st.lists(st.sampled_from(["user", "assistant", "Dana K"]), min_size=1),
)
def test_round_trip_property(texts: list[str], speakers: list[str]) -> None:
    t = _transcript(texts, speakers)
    rendered = render_transcript(t)
    parsed = parse_transcript(rendered)
    assert _texts(parsed) == [_normalized(x) for x in texts]
    assert [x.speaker for x in parsed.turns] == [x.speaker for x in t.turns]
    assert render_transcript(parsed) == render_transcript(
        _transcript([_normalized(x) for x in texts], speakers)
    )


@settings(max_examples=200)
@given(st.lists(_turn_text, max_size=5), _turn_text)
def test_append_property(texts: list[str], new: str) -> None:
    texts = [_normalized(x) for x in texts]
    longer = _transcript([*texts, new])
    assert render_transcript(_transcript(texts)) + render_turn(
        longer.turns[-1]
    ) == render_transcript(longer)
    parsed = parse_transcript(render_transcript(longer))
    assert _texts(parsed)[:-1] == texts  # earlier turns are untouched by the append
