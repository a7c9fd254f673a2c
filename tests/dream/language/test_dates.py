"""Tests for dream.language.dates: finding and resolving relative date phrases."""

from __future__ import annotations

import datetime
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dream.language.calendar_dates import format_date, parse_session_datetime
from dream.language.dates import DateMention, find_relative_dates

BASE = datetime.date(2023, 5, 8)  # a Monday, the first LoCoMo session date


def only(text: str, base: datetime.date = BASE) -> DateMention:
    mentions = find_relative_dates(text, base)
    assert len(mentions) == 1, mentions
    return mentions[0]


# phrase -> (rendered date, granularity), all against BASE (Monday 8 May 2023)
RESOLVED = [
    ("yesterday", "7 May 2023", "day"),
    ("today", "8 May 2023", "day"),
    ("tonight", "8 May 2023", "day"),
    ("this morning", "8 May 2023", "day"),
    ("tomorrow", "9 May 2023", "day"),
    ("last night", "7 May 2023", "day"),
    ("the day before yesterday", "6 May 2023", "day"),
    ("the day after tomorrow", "10 May 2023", "day"),
    ("last Saturday", "6 May 2023", "day"),
    ("last Monday", "1 May 2023", "day"),  # strictly before base, never base itself
    ("this past Saturday", "6 May 2023", "day"),
    ("last Fri", "5 May 2023", "day"),
    ("last Tues", "2 May 2023", "day"),
    ("next Friday", "12 May 2023", "day"),
    ("next Monday", "15 May 2023", "day"),
    ("next fri", "12 May 2023", "day"),
    ("this coming Sunday", "14 May 2023", "day"),
    ("this Saturday", "13 May 2023", "day"),
    ("this Monday", "8 May 2023", "day"),
    ("last weekend", "the weekend of 6 May 2023", "weekend"),
    ("this past weekend", "the weekend of 6 May 2023", "weekend"),
    ("the past weekend", "the weekend of 6 May 2023", "weekend"),
    ("this weekend", "the weekend of 13 May 2023", "weekend"),
    ("next weekend", "the weekend of 13 May 2023", "weekend"),
    ("two weeks ago", "24 April 2023", "day"),
    ("a week ago", "1 May 2023", "day"),
    ("3 days ago", "5 May 2023", "day"),
    ("a couple of days ago", "6 May 2023", "day"),
    ("couple weeks ago", "24 April 2023", "day"),
    ("three months ago", "February 2023", "month"),
    ("ten years ago", "2013", "year"),
    ("a year ago", "2022", "year"),
    ("last week", "the week of 1 May 2023", "week"),
    ("this week", "the week of 8 May 2023", "week"),
    ("earlier this week", "the week of 8 May 2023", "week"),
    ("next week", "the week of 15 May 2023", "week"),
    ("the week before last", "the week of 24 April 2023", "week"),
    ("last month", "April 2023", "month"),
    ("next month", "June 2023", "month"),
    ("this month", "May 2023", "month"),
    ("earlier this month", "May 2023", "month"),
    ("last year", "2022", "year"),
    ("next year", "2024", "year"),
    ("this year", "2023", "year"),
    ("in two weeks", "22 May 2023", "day"),
    ("in 3 days", "11 May 2023", "day"),
    ("in a couple of days", "10 May 2023", "day"),
    ("in six months", "November 2023", "month"),
    ("a week tomorrow", "16 May 2023", "day"),
    ("a week from today", "15 May 2023", "day"),
    ("the Sunday before last", "30 April 2023", "day"),
]


@pytest.mark.parametrize(("phrase", "rendered", "granularity"), RESOLVED)
def test_resolves_phrase(phrase: str, rendered: str, granularity: str) -> None:
    mention = only(f"So, {phrase}, right.")
    assert mention.phrase == phrase
    assert mention.render() == rendered
    assert mention.granularity == granularity


@pytest.mark.parametrize(("phrase", "rendered", "granularity"), RESOLVED)
def test_case_insensitive(phrase: str, rendered: str, granularity: str) -> None:
    mention = only(phrase.upper())
    assert mention.render() == rendered


NO_MENTION = [
    "the last time we met",
    "at last!",
    "the last one standing",
    "the last week of June",  # an ordinal week, not the week before base
    "last Friday of the month",
    "the next Friday we get",
    "yesterday's news",
    "todays special",
    "yesterdays",
    "Rome wasn't built in a day",
    "a few weeks ago",  # vague on purpose
    "several years ago",
    "1,000 days ago",
    "the Sunday before the race",  # anchored on the race, which we cannot date
    "on Saturday",  # no modifier: could be either direction
    "this sun is hot",
    "I last sat there",
    "Never saw this coming.",
    "notyesterday, tomorrowland, lastweek",
]


@pytest.mark.parametrize("text", NO_MENTION)
def test_no_false_positive(text: str) -> None:
    assert find_relative_dates(text, BASE) == []


def test_charity_race_offsets() -> None:
    text = "I ran a charity race last Saturday"
    mention = only(text)
    assert (mention.start, mention.end) == (21, 34)
    assert text[mention.start : mention.end] == "last Saturday"
    assert mention.date == datetime.date(2023, 5, 6)


def test_possessive_still_dates() -> None:
    mention = only("yesterday's game was great")
    assert mention.phrase == "yesterday"
    assert mention.render() == "7 May 2023"


def test_longest_match_wins_and_sorted() -> None:
    text = "Not yesterday but the day before yesterday; see you a week tomorrow."
    phrases = [m.phrase for m in find_relative_dates(text, BASE)]
    assert phrases == ["yesterday", "the day before yesterday", "a week tomorrow"]


def test_before_is_anchored_on_previous_mention() -> None:
    text = "We went to the gallery last Friday. The Sunday before, I painted."
    first, second = find_relative_dates(text, BASE)
    assert first.date == datetime.date(2023, 5, 5)
    assert second.phrase == "The Sunday before"
    assert second.date == datetime.date(2023, 4, 30)


def test_before_without_previous_mention_uses_base() -> None:
    assert only("I saw her the day before.").date == datetime.date(2023, 5, 7)
    assert only("It was the week before.").render() == "the week of 1 May 2023"


@pytest.mark.parametrize(
    ("base", "phrase", "expected"),
    [
        # On a weekend, "last weekend" is the one before; "this weekend" is the current one.
        (datetime.date(2023, 5, 13), "last weekend", datetime.date(2023, 5, 6)),
        (datetime.date(2023, 5, 14), "last weekend", datetime.date(2023, 5, 6)),
        (datetime.date(2023, 5, 14), "this weekend", datetime.date(2023, 5, 13)),
        (datetime.date(2023, 5, 13), "next weekend", datetime.date(2023, 5, 20)),
        # On the named weekday itself, last/next skip a whole week.
        (datetime.date(2023, 5, 12), "last Friday", datetime.date(2023, 5, 5)),
        (datetime.date(2023, 5, 12), "next Friday", datetime.date(2023, 5, 19)),
        # Month arithmetic across a year boundary.
        (datetime.date(2023, 1, 31), "last month", datetime.date(2022, 12, 1)),
        (datetime.date(2023, 12, 15), "next month", datetime.date(2024, 1, 1)),
        (datetime.date(2023, 3, 31), "one month ago", datetime.date(2023, 2, 1)),
    ],
)
def test_edge_bases(base: datetime.date, phrase: str, expected: datetime.date) -> None:
    assert only(phrase, base).date == expected


def test_accepts_datetime_base() -> None:
    assert only("yesterday", datetime.datetime(2023, 5, 8, 13, 56)).date == datetime.date(
        2023, 5, 7
    )


def test_out_of_calendar_is_skipped_not_raised() -> None:
    assert find_relative_dates("yesterday", datetime.date.min) == []
    assert find_relative_dates("next year", datetime.date.max) == []


def test_format_date_has_no_leading_zero() -> None:
    assert format_date(datetime.date(2023, 5, 7)) == "7 May 2023"
    assert format_date(datetime.date(2022, 12, 25)) == "25 December 2022"


def test_bad_granularity_rejected() -> None:
    with pytest.raises(ValueError, match="granularity"):
        DateMention("x", 0, 1, BASE, "fortnight")


# Phrases dateparser resolves to a single day: our arithmetic must agree with it.
DATEPARSER_AGREES = [
    ("yesterday", "past"),
    ("tomorrow", "future"),
    ("the day before yesterday", "past"),
    ("last saturday", "past"),
    ("last monday", "past"),
    ("last fri", "past"),
    ("next friday", "future"),
    ("next monday", "future"),
    ("two weeks ago", "past"),
    ("a week ago", "past"),
    ("3 days ago", "past"),
    ("in two weeks", "future"),
    ("in 3 days", "future"),
    ("a week tomorrow", "future"),
]


@pytest.mark.parametrize(("phrase", "prefer"), DATEPARSER_AGREES)
@pytest.mark.parametrize(
    "base",
    [BASE, datetime.date(2023, 5, 12), datetime.date(2023, 5, 14), datetime.date(2024, 1, 1)],
)
def test_agrees_with_dateparser(phrase: str, prefer: str, base: datetime.date) -> None:
    dateparser = pytest.importorskip("dateparser")
    relative_base = datetime.datetime.combine(base, datetime.time(12))
    expected = dateparser.parse(
        phrase, settings={"RELATIVE_BASE": relative_base, "PREFER_DATES_FROM": prefer}
    )
    assert only(phrase, base).date == expected.date()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1:56 pm on 8 May, 2023", datetime.datetime(2023, 5, 8, 13, 56)),
        ("10:37 am on 27 June, 2023", datetime.datetime(2023, 6, 27, 10, 37)),
        ("12:05 am on 1 January, 2024", datetime.datetime(2024, 1, 1, 0, 5)),
        ("12:30 pm on 3 Sept, 2022", datetime.datetime(2022, 9, 3, 12, 30)),
        ("2023-05-08T13:56", datetime.datetime(2023, 5, 8, 13, 56)),
        ("2023-05-08", datetime.datetime(2023, 5, 8)),
    ],
)
def test_parse_session_datetime(text: str, expected: datetime.datetime) -> None:
    assert parse_session_datetime(text) == expected


@pytest.mark.parametrize(
    "text",
    ["", "yesterday", "13:56 pm on 8 May, 2023", "1:56 pm on 31 February, 2023", "8 Mai 2023"],
)
def test_parse_session_datetime_rejects(text: str) -> None:
    with pytest.raises(ValueError, match="expected ISO 8601"):
        parse_session_datetime(text)


_FRAGMENTS = [p for p, _, _ in RESOLVED] + ["the", "last", "in", "a", "ago", "'s", ",", "1,0"]
_texts = st.one_of(
    st.text(max_size=200),
    st.lists(
        st.one_of(st.sampled_from(_FRAGMENTS), st.text(max_size=5)),
        max_size=20,
    ).map(" ".join),
)


@settings(max_examples=300, deadline=None)
@given(text=_texts, base=st.dates())
def test_never_raises_and_offsets_slice(text: str, base: datetime.date) -> None:
    mentions = find_relative_dates(text, base)
    previous_end = 0
    for m in mentions:
        assert text[m.start : m.end] == m.phrase
        assert previous_end <= m.start < m.end
        previous_end = m.end
        assert m.render()
        if m.granularity == "weekend":
            assert m.date.weekday() == 5
        elif m.granularity == "week":
            assert m.date.weekday() == 0
        elif m.granularity == "month":
            assert m.date.day == 1
        elif m.granularity == "year":
            assert (m.date.month, m.date.day) == (1, 1)


@pytest.mark.slow
def test_linear_time_on_huge_input() -> None:
    chunks = [
        "last " * 20_000,
        "a " * 20_000 + "days",
        "the " + " " * 100_000 + "Sunday before",
        "in 1 " * 20_000,
        "yesterday " * 20_000,
    ]
    for chunk in chunks:
        started = time.perf_counter()
        find_relative_dates(chunk, BASE)
        assert time.perf_counter() - started < 2.0, chunk[:30]


# "on <weekday>" told in the past: the latest such day before base.
ON_WEEKDAY = [
    ("I won my fourth video game tournament on Friday!", "5 May 2023"),
    ("On Saturday, I got great news.", "6 May 2023"),
    ("We went hiking on Monday and it rained.", "1 May 2023"),  # never base itself
]
ON_WEEKDAY_SKIPPED = [
    "See you on Friday.",  # no tense: it could point either way
    "see you friday",
    "I work on Fridays.",
    "every monday I swim",
    "a weekend in Ghent, the Saturday and Sunday of the 16th, instead of the trip we cancelled",
    "We work from Monday to Friday.",
    "It happened on a Saturday.",
    "Friday was hard.",
]
ON_WEEKDAY_PAST = [
    ("He reminded me on Friday.", "5 May 2023"),
    ("I swam Saturday and it was great.", "6 May 2023"),
]
# pointing ahead (a word that points ahead, "is on"), or a deadline / a booking: the first
# such day after base; told in the past, a deadline is gone
ON_WEEKDAY_AHEAD = [
    ("I'm going to the concert on Friday.", "12 May 2023"),
    ("We will meet on Friday.", "12 May 2023"),
    ("Can't wait for the party on Saturday, it was planned for ages.", "13 May 2023"),
    ("The appointment is on Thursday.", "11 May 2023"),
    ("My manager wants the report by Friday.", "12 May 2023"),
    ("I booked a table for Saturday.", "13 May 2023"),
    ("I finished the report by Friday.", "5 May 2023"),
    ("can you remind me on wednesday to chase the vendor?", "10 May 2023"),
    ("I've got to finish the budget by Thursday.", "11 May 2023"),
    ("our new manager is coming over from payments and starts monday", "15 May 2023"),
    ("the dentist is thursday", "11 May 2023"),
    ("We fly out four weeks from tomorrow.", "6 June 2023"),
    ("Nadia starts monday.", "15 May 2023"),
    ("Ana asked to be reminded on Wednesday to call.", "10 May 2023"),
    ("The marathon is on the last Sunday of May.", "28 May 2023"),
    ("The fair was on the first Monday in May.", "1 May 2023"),
    ("I signed up, it's on the last Sunday of April.", "30 April 2023"),  # nearest to base
    ("We go every year on the first Monday in January.", "2 January 2023"),
]


@pytest.mark.parametrize(("text", "rendered"), ON_WEEKDAY + ON_WEEKDAY_PAST)
def test_on_weekday_in_the_past(text: str, rendered: str) -> None:
    mention = only(text)
    assert mention.render() == rendered and mention.granularity == "day"


@pytest.mark.parametrize(("text", "rendered"), ON_WEEKDAY_AHEAD)
def test_on_by_for_weekday_ahead(text: str, rendered: str) -> None:
    mention = only(text)
    assert mention.render() == rendered and mention.granularity == "day"


@pytest.mark.parametrize("text", ON_WEEKDAY_SKIPPED)
def test_on_weekday_not_in_the_past_is_left_alone(text: str) -> None:
    assert find_relative_dates(text, BASE) == []


# a duration that runs up to the session ("have ... for N years") says when it started
SINCE = [
    ("I have known these friends for 4 years.", "2019", "year"),
    ("I've been painting for seven years now.", "2016", "year"),
    ("We've lived here for the past 3 months.", "February 2023", "month"),
    ("She has been training for two weeks.", "the week of 24 April 2023", "week"),
    ("Seven years now, and I've finally found my muses.", "2016", "year"),
    ("I've lived here two months now.", "March 2023", "month"),
]
SINCE_SKIPPED = [
    "I will be away for 2 weeks.",
    "We worked there for 3 years in college.",
    "I have a 5 year old.",
    "I've had it for 3 years old",  # "years old" is an age
    "My 3 months now feel long.",  # "now" is not the end of the phrase
]


@pytest.mark.parametrize(("text", "rendered", "granularity"), SINCE)
def test_duration_up_to_now_gives_its_start(text: str, rendered: str, granularity: str) -> None:
    mention = only(text)
    assert mention.since and mention.render() == rendered and mention.granularity == granularity


@pytest.mark.parametrize("text", SINCE_SKIPPED)
def test_other_durations_are_left_alone(text: str) -> None:
    assert not [m for m in find_relative_dates(text, BASE) if m.since]


# a season resolves to its year: the last one that is over, this one, or the next to come
SEASONS = [
    ("We went camping last summer.", datetime.date(2023, 5, 8), "2022"),
    ("We went camping last summer.", datetime.date(2023, 10, 2), "2023"),
    ("It was this past spring.", datetime.date(2023, 10, 2), "2023"),
    ("I'll travel next summer.", datetime.date(2023, 3, 1), "2023"),
    ("I'll travel next summer.", datetime.date(2023, 7, 1), "2024"),
    ("This fall I start school.", datetime.date(2023, 5, 8), "2023"),
]


@pytest.mark.parametrize(("text", "base", "year"), SEASONS)
def test_season_resolves_to_its_year(text: str, base: datetime.date, year: str) -> None:
    [mention] = find_relative_dates(text, base)
    assert mention.granularity == "year" and mention.render() == year


@pytest.mark.parametrize("text", ["last winter was cold", "the last summer of my youth"])
def test_winter_and_ordinal_seasons_are_left_alone(text: str) -> None:
    assert find_relative_dates(text, BASE) == []


def test_weekends_ago_count_back_from_last_weekend() -> None:
    monday = datetime.date(2023, 7, 17)
    [two] = find_relative_dates("we went camping two weekends ago", monday)
    assert two.granularity == "weekend" and two.render() == "the weekend of 8 July 2023"
    [one] = find_relative_dates("a weekend ago", monday)
    assert one.render() == "the weekend of 15 July 2023"


DAY_OF_MONTH = [
    ("We met up with the team on the 15th after our trip.", "15 August 2023"),
    ("We moved in on the 20th.", "20 July 2023"),  # told in the past, past the session's day
    ("I'll see you on the 3rd.", "3 September 2023"),
    ("I got there on the 31st.", "31 July 2023"),  # August 31st is still ahead
    ("I will fly out on the 31st.", "31 August 2023"),
]


@pytest.mark.parametrize(("text", "rendered"), DAY_OF_MONTH)
def test_day_of_month_by_the_clauses_tense(text: str, rendered: str) -> None:
    [m] = find_relative_dates(text, datetime.date(2023, 8, 17))
    assert m.render() == rendered and m.granularity == "day" and m.phrase.startswith("on the")


@pytest.mark.parametrize(
    "text", ["I live on the 5th floor.", "We met on the 10th of May.", "Only on the 20th."]
)
def test_day_of_month_ordinals_of_things_or_untold_tense_are_left_alone(text: str) -> None:
    assert find_relative_dates(text, datetime.date(2023, 8, 17)) == []


# A day of the month with the weekday said too: that day, checked by its weekday, in the
# month the clause's tense implies, or nothing (never another day). Session: Tuesday 10
# March 2026; 20 February and 20 March 2026 are both Fridays, 19 February a Thursday.
TUESDAY = datetime.date(2026, 3, 10)
WEEKDAY_AND_DAY = [
    ("We threw the farewell party on Friday the 20th.", "20 February 2026"),
    ("The launch party will be on Friday the 20th.", "20 March 2026"),
    ("The launch party is on Friday, the 20th.", "20 March 2026"),
    ("Lena invited me to give a talk at the meetup on Friday the 20th.", "20 March 2026"),
    ("My sister moved out on Thursday the 19th.", "19 February 2026"),
    ("The quarterly review is Thursday 19th and I am not ready.", "19 March 2026"),
]


@pytest.mark.parametrize(("text", "rendered"), WEEKDAY_AND_DAY)
def test_a_weekday_with_its_day_of_the_month_is_that_day(text: str, rendered: str) -> None:
    [m] = find_relative_dates(text, TUESDAY)
    assert m.render() == rendered and m.granularity == "day"
    assert m.date.strftime("%A") in m.phrase and m.phrase.endswith(("20th", "19th"))


@pytest.mark.parametrize(
    "text",
    [
        "We threw the farewell party on Thursday the 20th.",  # no 20th that is a Thursday
        "The launch party will be on Monday the 20th.",
    ],
)
def test_a_weekday_that_does_not_fit_its_day_of_the_month_resolves_to_nothing(
    text: str,
) -> None:
    assert find_relative_dates(text, TUESDAY) == []


def test_a_weekday_with_its_day_picks_the_month_by_the_weekday_when_the_tense_says_none() -> None:
    # Thursday 17 August 2023: Saturday the 19th is this month's, not July's (a Wednesday)
    [m] = find_relative_dates("Dinner at Omar's: Saturday the 19th.", datetime.date(2023, 8, 17))
    assert m.render() == "19 August 2023"


# A bare day of the month said with "is"/"was": the month the tense implies. Session: 10
# March 2026.
BARE_DAY = [
    ("Sam's birthday is on the 14th.", "14 March 2026"),  # upcoming
    ("Her birthday is the 3rd, so I should order the cake.", "3 April 2026"),
    ("The deadline was the 2nd and we missed it.", "2 March 2026"),
    ("The meetup is on the 10th.", "10 March 2026"),  # today is on or after the session
]


@pytest.mark.parametrize(("text", "rendered"), BARE_DAY)
def test_a_bare_day_of_the_month_resolves_by_the_tense(text: str, rendered: str) -> None:
    [m] = find_relative_dates(text, TUESDAY)
    assert m.render() == rendered and m.granularity == "day"


@pytest.mark.parametrize(
    "text",
    [
        "Henry the 8th had six wives.",
        "She finished the 5th race first.",
        "He was the 3rd in line.",
        "That is the 2nd time this week.",
    ],
)
def test_a_bare_ordinal_that_is_no_date_is_left_alone(text: str) -> None:
    assert [m for m in find_relative_dates(text, TUESDAY) if m.granularity == "day"] == []


NAMED_MONTH = [
    ("Last August I told you about the charity event.", "August 2023"),
    ("It was last December.", "December 2022"),  # the session's own month is not "last"
    ("I'm off to Paris next March.", "March 2024"),
    ("We got married this June.", "June 2023"),
    ("last May was great", "May 2023"),
]


@pytest.mark.parametrize(("text", "rendered"), NAMED_MONTH)
def test_named_month_resolves_to_its_year(text: str, rendered: str) -> None:
    [m] = find_relative_dates(text, datetime.date(2023, 12, 8))
    assert m.render() == rendered and m.granularity == "month"


@pytest.mark.parametrize("text", ["I may go. Last may be best.", "the last May of the war"])
def test_may_the_verb_and_ordinal_months_are_left_alone(text: str) -> None:
    assert find_relative_dates(text, datetime.date(2023, 12, 8)) == []
