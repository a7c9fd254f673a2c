"""Claims as written: sentences, absolute dates with the phrase kept, third person."""

from __future__ import annotations

import datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dream.engines.embedded.phrasing import dated, third_person, tidy
from dream.language.sentences import split_sentences

MAY_8 = datetime.date(2023, 5, 8)  # a Monday
FEB_11 = datetime.date(2026, 2, 11)  # a Wednesday


@pytest.mark.parametrize(
    ("said", "claim"),
    [
        (
            "I ran a charity race last Saturday.",
            'I ran a charity race on 6 May 2023 ("last Saturday").',
        ),
        (
            "I went to a support group yesterday",
            'I went to a support group on 7 May 2023 ("yesterday")',
        ),
        ("We moved here two weeks ago.", 'We moved here on 24 April 2023 ("two weeks ago").'),
        ("I'll see them in two weeks.", 'I\'ll see them on 22 May 2023 ("in two weeks").'),
        ("Busy since last year.", 'Busy since 2022 ("last year").'),
        ("The trip is next month.", 'The trip is in June 2023 ("next month").'),
        ("Camping last week was fun.", 'Camping in the week of 1 May 2023 ("last week") was fun.'),
        ("I start on Monday.", "I start on Monday."),  # either direction: left as said
        (
            "Jonas ran last week's release.",
            "Jonas ran the week of 1 May 2023's (\"last week's\") release.",
        ),
        ("Loved yesterday’s talk.", 'Loved 7 May 2023’s ("yesterday’s") talk.'),
    ],
)
def test_relative_dates_become_absolute(said: str, claim: str) -> None:
    assert dated(said, MAY_8)[0] == claim


@pytest.mark.parametrize(
    ("said", "claim"),
    [
        (
            "We threw the farewell party on Friday the 20th.",
            'We threw the farewell party on 20 February 2026 ("on Friday the 20th").',
        ),
        (
            "The launch party will be on Friday the 20th, at noon.",
            'The launch party will be on 20 March 2026 ("on Friday the 20th"), at noon.',
        ),
        ("Sam's birthday is on the 14th.", 'Sam\'s birthday is on 14 March 2026 ("on the 14th").'),
        ("Her birthday is the 3rd.", 'Her birthday is on 3 April 2026 ("the 3rd").'),
        ("We met on Thursday the 20th.", "We met on Thursday the 20th."),  # no such day
    ],
)
def test_a_day_of_the_month_is_written_as_one_date_with_its_phrase(said: str, claim: str) -> None:
    assert dated(said, datetime.date(2026, 3, 10))[0] == claim


@pytest.mark.parametrize(
    ("said", "claim"),
    [
        ("I'm Dana, a postdoc in Hamburg.", "Dana is a postdoc in Hamburg."),
        ("My main project is Reefsong.", "Dana's main project is Reefsong."),
        ("I need to redo the figures.", "Dana needs to redo the figures."),
        ("I really love my cat.", "Dana really loves their cat."),  # named once
        ("My cat and I went home.", "Dana's cat and Dana went home."),
        ("I got help and I want to pass it on.", "Dana got help and Dana wants to pass it on."),
        ("I was tired but I stayed.", "Dana was tired but they stayed."),
        ("We were there, I was glad.", "Dana and others were there, they were glad."),
        ("I don't eat meat.", "Dana doesn't eat meat."),
        ("I'd report to Priya.", "Dana would report to Priya."),
        ("I'd never been there.", "Dana had never been there."),
        ("I went there and they gave me a map.", "Dana went there and they gave Dana a map."),
        (
            "They said I was late, I was not.",
            "They said Dana was late, Dana was not.",
        ),  # no 2nd they
        ("I'll do it myself.", "Dana will do it."),
        ('Sign off with "Best, I guess".', 'Sign off with "Best, I guess".'),  # quotes stay
        ("Some me-time helps.", "Some me-time helps."),
    ],
)
def test_first_person_becomes_the_speaker(said: str, claim: str) -> None:
    assert third_person(said, "Dana") == claim


def test_object_you_becomes_the_other_person() -> None:
    out = third_person("I'm so proud of you and your work.", "Melanie", "Caroline")
    assert out == "Melanie is so proud of Caroline and Caroline's work."
    assert third_person("Proud of you.", "Melanie") == "Proud of you."  # assistant: left alone


def test_tidy_drops_openers_but_keeps_context() -> None:
    assert tidy("Status update for your notes: I started today!") == "I started today."
    assert tidy("So, I moved.") == "I moved."
    assert tidy("For my emails: keep them short.") == "For my emails: keep them short."
    assert tidy("No meetings before 10:00.") == "No meetings before 10:00."
    assert "[[" not in tidy("see [[page]] and [cite:3]") and "[cite:" not in tidy("[cite:3] x")


def test_sentences_skip_code_and_keep_lists_and_photos() -> None:
    text = (
        "Morning. Dr. Aalto said 1.0 is out! Really?\n\n"
        "1. Freeze the bucket.\n2. Run `validate`.\n"
        "```python\nx = 1\n```\n"
        "Look [shared a photo: a bowl with a flower design] nice.\n"
        "Dana Reyes\nTidewater Analytics"
    )
    assert split_sentences(text) == [
        "Morning.", "Dr. Aalto said 1.0 is out!", "Really?", "Freeze the bucket.",
        "Run `validate`.", "Look", "[shared a photo: a bowl with a flower design]", "nice.",
        "Dana Reyes", "Tidewater Analytics",
    ]  # fmt: skip


@given(st.text(max_size=300))
def test_never_raises(text: str) -> None:
    for s in split_sentences(text):
        third_person(dated(tidy(s), FEB_11)[0], "Dana", "Sam")


def test_wanna_and_gonna_stay_as_said() -> None:
    assert third_person("I wanna start a dance studio.", "Jon") == "Jon wanna start a dance studio."
    assert third_person("I gonna try.", "Jon") == "Jon gonna try."
    assert third_person("I want to start.", "Jon") == "Jon wants to start."
