"""Find relative date phrases in conversational text and resolve them against a session date.

Job: turn "I ran a charity race last Saturday" (said in a session on 8 May 2023) into a
`DateMention` for "last Saturday" -> 6 May 2023, keeping the phrase and its offsets so callers can
write dated claims the way people read them ("7 May 2023"). Boundary: phrases relative to the
session date only; absolute dates ("on 5 May") and vague ones ("a few weeks ago", "the other day",
"last winter") are left alone. Never raises on any text.

Phrases are found with one small linear regex per rule (no nested quantifiers) and resolved by
calendar arithmetic. `tests/dream/language/test_dates.py` cross-checks them against
`dateparser`, but every phrase matched here has a fixed shape, and arithmetic is faster
(dateparser takes about 1 ms per call, 170 ms on the first call and 2 s on "a couple of days
ago", which it cannot resolve). It is also deterministic, and it can return spans, where
dateparser returns one point ("last month" -> 8 April, not April).

Conventions (each one a choice; the tests pin them):
- Weeks run Monday to Sunday. "last week" is the week before the base's week, rendered
  "the week of <Monday>".
- Spans are stored by their first day: week -> Monday, weekend -> Saturday,
  month -> the 1st, year -> 1 January.
- "last <weekday>" is the latest such day strictly before base. "next <weekday>" is the first
  strictly after it. "this <weekday>" is that day in the base's own week, so it can be in the past.
- "last weekend" is the latest weekend that ended before base's day. If base falls on a weekend,
  that is the one before. "this weekend" is the weekend of base's week. "next weekend" is the first
  Saturday strictly after base. All three use granularity "weekend", rendered as
  "the weekend of <Saturday>". "N weekends ago" counts back from last weekend.
- "N weeks ago" / "in N weeks" are exact days, as people count them. "N months ago" is a month and
  "N years ago" is a year: the count is rarely exact.
- "N years now" ("Seven years now, and ...") is a duration up to the session, like "have ...
  for N years": its start is written after it ("(since 2016)").
- "last/this/next summer" (spring, fall, autumn) resolve to a year: "last summer" is this
  year's once the season is over, else last year's; winter spans two years and is left alone.
- "last August" is the latest August before the session's month, "next August" the first
  after it, "this August" the session year's (a month, like "last month").
- "on Friday" is the latest Friday before the session in a clause told in the past, the
  first one after it in a clause that points ahead or after "is"; with neither it is left
  as said. "by Friday" (a deadline) and "for Friday" (a booking) point ahead unless told in
  the past. "the last Sunday of April", "the first Monday in May" are that day in the year
  that puts it nearest the session.
- "on the 15th" is the latest 15th up to the session in a clause told in the past, the first
  one from the session's day on in a clause that points ahead (``dream.language.tense``: "is on the
  15th" points ahead too); "the 5th floor", "the 10th of May" are skipped. A bare "the 15th"
  is read the same way after "is" or "was" ("Her birthday is the 3rd."), when nothing
  follows it that it could be the ordinal of ("He was the 3rd in line").
- "on Friday the 20th" (also "Friday, the 20th", "Friday 20th") is the 20th the tense picks,
  and only if it is a Friday; with no tense, the one of the 20ths either side of the session
  that is a Friday, if just one is. Never another day: no such 20th, no date.
- "the Sunday before", "the day before", "the week before" are only read when nothing follows
  that could be their anchor ("the Sunday before the race" is skipped). They are anchored on the
  previous mention in the same text, or on base if there is none. "... before last" is
  always anchored on base.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable
from dataclasses import dataclass

from dream.language.calendar_dates import (
    DAY,
    MONTH_NAMES,
    add_months,
    after,
    before,
    format_date,
    last_weekend,
    monday,
)
from dream.language.tense import HAVE_RE, be_before, clause_start, pointing, told_in_past

__all__ = ["DateMention", "find_relative_dates"]

_GRANULARITIES = ("day", "weekend", "week", "month", "year")


@dataclass(frozen=True)
class DateMention:
    """A relative date phrase found in a text, resolved against the session date.

    `date` is the day itself for granularity "day", else the first day of the span (Saturday for
    "weekend", Monday for "week", the 1st for "month", 1 January for "year").
    """

    phrase: str
    start: int
    end: int
    date: datetime.date
    granularity: str
    since: bool = False  # a duration up to the session ("for 10 years"): `date` is its start

    def __post_init__(self) -> None:
        if self.granularity not in _GRANULARITIES:
            raise ValueError(
                f"granularity must be one of {_GRANULARITIES}, not {self.granularity!r}"
            )

    def render(self) -> str:
        """The resolved date the way people read it: "7 May 2023", "the week of 1 May 2023"."""
        if self.granularity == "weekend":
            return f"the weekend of {format_date(self.date)}"
        if self.granularity == "week":
            return f"the week of {format_date(self.date)}"
        if self.granularity == "month":
            return f"{MONTH_NAMES[self.date.month - 1]} {self.date.year}"
        if self.granularity == "year":
            return str(self.date.year)
        return format_date(self.date)


# --- phrase vocabulary -------------------------------------------------------------------------

_NUMBER_WORDS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
}  # fmt: skip

# "sun" and "sat" are left out: "this sun", "I last sat" are ordinary words.
_WEEKDAYS = {
    "monday": 0, "mon": 0, "tuesday": 1, "tues": 1, "tue": 1, "wednesday": 2, "weds": 2,
    "wed": 2, "thursday": 3, "thurs": 3, "thur": 3, "thu": 3, "friday": 4, "fri": 4,
    "saturday": 5, "sunday": 6,
}  # fmt: skip

_WEEKDAY_WORDS = "|".join(sorted(_WEEKDAYS, key=len, reverse=True))
_WD = f"(?P<wd>{_WEEKDAY_WORDS})"
_N = (
    r"(?P<n>(?<![\d.,])\d{1,3}|a\s+couple(?:\s+of)?|couple(?:\s+of)?|"
    + "|".join(sorted(_NUMBER_WORDS, key=len, reverse=True))
    + ")"
)
_UNIT = r"(?P<unit>day|week|month|year)s?"
_PAST = r"(?P<mod>(?<!the\s)last|this\s+past|(?:the\s+)?past)"
_NEXT = r"(?P<mod>(?<!the\s)next|this\s+coming|coming)"
# "the last week of June", "the next Friday we meet": an ordinal, not a date relative to today.
_NOT_ORDINAL = r"(?<!the\s)"
_NOT_OF = r"(?!\s+of\b)"
_NOT_POSSESSIVE = r"(?!['\u2019]s\b)"
# "the Sunday before." is read; "the Sunday before the race" (anchored elsewhere) is not.
_BARE_END = r"(?=\s*(?:[^\w\s]|$|(?:and|but|so|too|then)\b))"


# "on the 15th after our trip", "on the 3rd." -- not "on the 5th floor", "the 10th of May"
_BARE_OR_VERB = (
    r"(?=\s*(?:[^\w\s]|$|(?:and|but|so|too|then|after|before|when|at|with|for|in|we|i|"
    r"he|she|they|it)\b))"
)


_DAY = r"(?P<day>[1-9]|[12]\d|3[01])(?:st|nd|rd|th)"  # "the 15th": the day of a month


def _count(raw: str) -> int:
    raw = raw.lower()
    if raw.isdigit():
        return int(raw)
    if "couple" in raw:
        return 2
    return _NUMBER_WORDS[raw]


Resolved = tuple[datetime.date, str]
_Resolver = Callable[[re.Match[str], datetime.date, datetime.date], Resolved | None]


def _fixed(offset_days: int) -> _Resolver:
    return lambda m, base, anchor: (base + offset_days * DAY, "day")


def _weekday_past(m: re.Match[str], base: datetime.date, anchor: datetime.date) -> Resolved:
    return before(base, _WEEKDAYS[m["wd"].lower()]), "day"


def _weekday_next(m: re.Match[str], base: datetime.date, anchor: datetime.date) -> Resolved:
    return after(base, _WEEKDAYS[m["wd"].lower()]), "day"


def _weekday_this(m: re.Match[str], base: datetime.date, anchor: datetime.date) -> Resolved:
    return monday(base) + _WEEKDAYS[m["wd"].lower()] * DAY, "day"


def _weekday_before(m: re.Match[str], base: datetime.date, anchor: datetime.date) -> Resolved:
    wd = _WEEKDAYS[m["wd"].lower()]
    if m["last"]:  # "the Sunday before last": the one before last Sunday
        return before(base, wd) - 7 * DAY, "day"
    return before(anchor, wd), "day"


def _weekend(m: re.Match[str], base: datetime.date, anchor: datetime.date) -> Resolved:
    mod = m["mod"].lower()
    if mod == "last" or "past" in mod:
        return last_weekend(base), "weekend"
    if mod == "this":
        return monday(base) + 5 * DAY, "weekend"
    return after(base, 5), "weekend"


def _span(m: re.Match[str], base: datetime.date, anchor: datetime.date) -> Resolved:
    """last/this/next/earlier this/later this + week/month/year."""
    mod, unit = m["mod"].lower(), m["unit"].lower()
    step = -1 if mod == "last" else 1 if mod == "next" else 0
    if unit == "week":
        return monday(base) + 7 * step * DAY, "week"
    if unit == "month":
        return add_months(base, step), "month"
    return datetime.date(base.year + step, 1, 1), "year"


def _week_before(m: re.Match[str], base: datetime.date, anchor: datetime.date) -> Resolved:
    if m["last"]:  # "the week before last"
        return monday(base) - 14 * DAY, "week"
    return monday(anchor) - 7 * DAY, "week"


def _shift(sign: int) -> _Resolver:
    def resolve(m: re.Match[str], base: datetime.date, anchor: datetime.date) -> Resolved | None:
        n, unit = sign * _count(m["n"]), m["unit"].lower()
        if sign > 0 and unit == "day" and m["n"].lower() in ("a", "an", "one"):
            return None  # "built in a day", "read it in one day": a duration, not a date
        if unit == "day":
            return base + n * DAY, "day"
        if unit == "week":
            return base + 7 * n * DAY, "day"
        if unit == "month":
            return add_months(base, n), "month"
        return datetime.date(base.year + n, 1, 1), "year"

    return resolve


def _weekends_ago(m: re.Match[str], base: datetime.date, anchor: datetime.date) -> Resolved:
    """ "two weekends ago": the weekend before last weekend (one weekend ago is last weekend)."""
    return last_weekend(base) - 7 * (_count(m["n"]) - 1) * DAY, "weekend"


def _week_from(m: re.Match[str], base: datetime.date, anchor: datetime.date) -> Resolved:
    """ "a week from tomorrow", "four weeks from today", "two weeks tomorrow": exact days."""
    weeks = _count(m["n"]) if m["n"] else 1
    return base + (7 * weeks + (m["when"].lower() == "tomorrow")) * DAY, "day"


def _on_weekday(m: re.Match[str], base: datetime.date, anchor: datetime.date) -> Resolved | None:
    """ "on Friday" in a clause told in the past: the latest Friday before the session; in
    one that points ahead (or after "is": "the appointment is on Thursday"), the first
    Friday after it; else left as said. "by Friday" is a deadline and "for Friday" what is
    booked or planned for that day: both point ahead unless the clause is told in the past
    ("finished it by Friday") or says "was" ("it was for Friday")."""
    weekday = _WEEKDAYS[m["wd"].lower()]
    prep = m["prep"].lower()
    be = be_before(m.string, m.start())
    if prep in ("on", ""):
        step = be or pointing(m.string, m.start(), m.end())
    elif be == -1:
        step = -1
    elif prep == "for":
        step = 1  # "booked a physio for Tuesday": when it is, not when it was booked
    else:
        step = -1 if told_in_past(m.string, m.start(), m.end()) else 1
    if step == 0:
        return None
    return (before(base, weekday) if step < 0 else after(base, weekday)), "day"


def _nth_weekday(m: re.Match[str], base: datetime.date, anchor: datetime.date) -> Resolved:
    """ "the last Sunday of April", "the first Monday in May": that day of the month in the
    year that puts it nearest the session ("the first Monday of January", said in
    December, is next January's)."""
    weekday, month = _WEEKDAYS[m["wd"].lower()], _MONTHS[m["month"].lower()]
    years = (base.year - 1, base.year, base.year + 1)
    days = [_weekday_of_month(y, month, weekday, m["ord"].lower()) for y in years]
    return min(days, key=lambda d: abs((d - base).days)), "day"


_ORDINALS = {"first": 0, "second": 1, "third": 2, "fourth": 3}


def _weekday_of_month(year: int, month: int, weekday: int, ordinal: str) -> datetime.date:
    if ordinal == "last":
        end = add_months(datetime.date(year, month, 1), 1) - DAY
        return end - ((end.weekday() - weekday) % 7) * DAY
    first = datetime.date(year, month, 1)
    return first + ((weekday - first.weekday()) % 7 + 7 * _ORDINALS[ordinal]) * DAY


def _nth(day: int, base: datetime.date, step: int) -> datetime.date | None:
    """The latest ``day`` of a month up to ``base`` (``step`` -1), or the first from
    ``base`` on (1)."""
    month = base.replace(day=1)
    for _ in range(3):  # "the 31st" skips months that have no 31st
        try:
            found = month.replace(day=day)
        except ValueError:
            found = None
        if found is not None and (found <= base if step < 0 else found >= base):
            return found
        month = add_months(month, step)
    return None


def _step(m: re.Match[str]) -> int:
    """Which way a date phrase points: the tense of a "be" right before it ("is on the 14th"
    is to come, "was on the 2nd" gone), else its clause's (``dream.language.tense``)."""
    return be_before(m.string, m.start()) or pointing(m.string, m.start(), m.end())


def _day_of_month(m: re.Match[str], base: datetime.date, anchor: datetime.date) -> Resolved | None:
    """ "on the 15th": the latest 15th up to the session in a clause told in the past, the
    first one from it on in a clause that points ahead; left alone otherwise."""
    step = _step(m)
    found = _nth(int(m["day"]), base, step) if step else None
    return (found, "day") if found is not None else None


def _bare_day_of_month(
    m: re.Match[str], base: datetime.date, anchor: datetime.date
) -> Resolved | None:
    """ "Her birthday is the 3rd.": a day of the month said right after "is" or "was", read
    as "on the 3rd" is."""
    if be_before(m.string, m.start()) is None:
        return None
    return _day_of_month(m, base, anchor)


def _weekday_day_of_month(
    m: re.Match[str], base: datetime.date, anchor: datetime.date
) -> Resolved | None:
    """ "on Friday the 20th": the 20th the tense picks, if it is a Friday; with no tense,
    the 20th either side of the session that is a Friday, if only one is. None otherwise:
    the weekday checks the day, it never moves it."""
    day, weekday = int(m["day"]), _WEEKDAYS[m["wd"].lower()]
    step = _step(m)
    around = [_nth(day, base, step)] if step else [_nth(day, base, -1), _nth(day, base, 1)]
    fits = {d for d in around if d is not None and d.weekday() == weekday}
    return (fits.pop(), "day") if len(fits) == 1 else None


def _since(m: re.Match[str], base: datetime.date, anchor: datetime.date) -> Resolved | None:
    """ "have known them for 4 years": a duration running up to the session, so it started
    that long before it (a year for years, a month for months, a week for weeks)."""
    if not HAVE_RE.search(m.string[clause_start(m.string, m.start()) : m.start()]):
        return None
    return _since_now(m, base, anchor)


def _since_now(m: re.Match[str], base: datetime.date, anchor: datetime.date) -> Resolved:
    """ "Seven years now, and I've finally found my muses": a duration up to the session."""
    n, unit = _count(m["n"]), m["unit"].lower()
    if unit == "year":
        return datetime.date(base.year - n, 1, 1), "year"
    if unit == "month":
        return add_months(base, -n), "month"
    return monday(base - 7 * n * DAY), "week"


# season -> (first month, last month); winter spans two years, so it is left alone
_SEASONS = {"spring": (3, 5), "summer": (6, 8), "fall": (9, 11), "autumn": (9, 11)}


def _season(m: re.Match[str], base: datetime.date, anchor: datetime.date) -> Resolved:
    """ "last summer" in May 2023 is 2022, in October 2023 the summer just gone; the year
    is what is certain, so the year is the resolution."""
    first, last = _SEASONS[m["season"].lower()]
    mod = m["mod"].lower()
    if mod == "last" or "past" in mod:
        year = base.year if base.month > last else base.year - 1
    elif mod == "next":
        year = base.year + 1 if base.month >= first else base.year
    else:
        year = base.year
    return datetime.date(year, 1, 1), "year"


_MONTHS = {name.lower(): i for i, name in enumerate(MONTH_NAMES, start=1)}
# "may" is a verb far more often than a month: only "May" counts
_MONTH_WORDS = "(?-i:May)|" + "|".join(m for m in _MONTHS if m != "may")


def _named_month(m: re.Match[str], base: datetime.date, anchor: datetime.date) -> Resolved:
    """ "last August" is the latest August before the session's month, "next August" the
    first after it, "this August" the session's year's."""
    month, mod = _MONTHS[m["month"].lower()], m["mod"].lower()
    year = base.year
    if mod == "last" or "past" in mod:
        year -= month >= base.month
    elif mod == "next":
        year += month <= base.month
    return datetime.date(year, month, 1), "month"


def _rule(pattern: str, resolve: _Resolver) -> tuple[re.Pattern[str], _Resolver]:
    return re.compile(r"\b" + pattern + r"\b", re.IGNORECASE), resolve


# Each rule: a regex over the text and how to resolve one of its matches. Overlaps between
# rules are settled afterwards (longest wins), so a rule need not know about the others.
_NOT_BEFORE_BARE_WEEKDAY = (
    "last", "next", "this", "every", "each", "past", "coming", "on", "by", "for", "the", "a",
    "and", "or", "of", "from", "to", "until", "till", "that", "any", "one", "some",
)  # fmt: skip
_RULES = [
    _rule(r"the\s+day\s+before\s+yesterday", _fixed(-2)),
    _rule(r"the\s+day\s+after\s+tomorrow", _fixed(2)),
    _rule(r"yesterday(?!['\u2019]s\s+news)", _fixed(-1)),
    _rule(_NOT_ORDINAL + r"last\s+night" + _NOT_OF, _fixed(-1)),
    _rule(r"(?:today|tonight|this\s+(?:morning|afternoon|evening))", _fixed(0)),
    _rule(r"tomorrow", _fixed(1)),
    _rule(r"the\s+day\s+before" + _BARE_END, lambda m, b, a: (a - DAY, "day")),
    _rule(_PAST + r"\s+" + _WD + _NOT_OF, _weekday_past),
    _rule(_NEXT + r"\s+" + _WD + _NOT_OF, _weekday_next),
    _rule(_NOT_ORDINAL + r"this\s+" + _WD + _NOT_OF, _weekday_this),
    _rule(r"the\s+" + _WD + r"\s+before(?:\s+(?P<last>last)\b|" + _BARE_END + ")", _weekday_before),
    _rule(
        r"(?P<mod>(?<!the\s)(?:last|next|this)|this\s+past|(?:the\s+)?past|(?:this\s+)?coming)"
        + r"\s+weekend",
        _weekend,
    ),
    _rule(
        _NOT_ORDINAL
        + r"(?P<mod>last|next|this|earlier\s+this|later\s+this)\s+(?P<unit>week|month|year)"
        + _NOT_OF,
        _span,
    ),
    _rule(r"the\s+week\s+before(?:\s+(?P<last>last)\b|" + _BARE_END + ")", _week_before),
    _rule(_N + r"\s+" + _UNIT + r"\s+ago", _shift(-1)),
    _rule(_N + r"\s+weekends?\s+ago", _weekends_ago),
    _rule(r"in\s+" + _N + r"\s+" + _UNIT + _NOT_POSSESSIVE, _shift(1)),
    _rule(
        r"(?:a|(?P<n>[1-9]|one|two|three|four|five|six|seven|eight|nine|ten))\s+weeks?\s+"
        r"(?:from\s+)?(?P<when>today|tomorrow)",
        _week_from,
    ),
    _rule(r"(?P<prep>on|by|for)\s+" + _WD + r"(?![s\u2019'])", _on_weekday),
    # chat drops the "on": "starts monday", "the dentist is thursday", "flying out friday";
    # not a weekday named as a thing ("the Saturday of the 16th", "Saturday and Sunday",
    # "a Friday", "from Monday to Friday")
    _rule(
        r"(?<=\w\s)(?P<prep>)"
        + "".join(rf"(?<!\b{w}\s)" for w in _NOT_BEFORE_BARE_WEEKDAY)
        + _WD
        + r"(?![s\u2019'])(?!\s*,?\s+(?:the\s+)?\d)"
        + r"(?!\s+(?:of|to|through|until|till|morning|afternoon|evening|night)\b)"
        + rf"(?!\s*(?:and|or|&)\s+(?:{_WEEKDAY_WORDS})\b)"
        + r"(?!\s*[/–-])",
        _on_weekday,
    ),
    _rule(
        r"(?:the\s+)?(?P<ord>first|second|third|fourth|last)\s+"
        + _WD
        + r"\s+(?:of|in)\s+(?P<month>"
        + _MONTH_WORDS
        + ")",
        _nth_weekday,
    ),
    _rule(r"on\s+the\s+" + _DAY + _BARE_OR_VERB, _day_of_month),
    _rule(r"the\s+" + _DAY + _BARE_END, _bare_day_of_month),
    _rule(r"(?:on\s+)?" + _WD + r",?\s+(?:the\s+)?" + _DAY + _BARE_OR_VERB, _weekday_day_of_month),
    _rule(
        r"for\s+(?:(?:about|almost|nearly|over|around|roughly|the\s+(?:past|last))\s+)?"
        + _N
        + r"\s+"
        + r"(?P<unit>week|month|year)s?(?!\s+(?:ago|old|from|later|before|after|in\s+a\s+row)\b)",
        _since,
    ),
    _rule(
        r"(?:for\s+)?(?:(?:about|almost|nearly|over|around|roughly)\s+)?"
        + _N
        + r"\s+(?P<unit>week|month|year)s?\s+now"
        + _BARE_END,
        _since_now,
    ),
    _rule(
        r"(?P<mod>(?<!the\s)(?:last|next|this)|this\s+past|(?:the\s+)?past)\s+"
        r"(?P<season>spring|summer|fall|autumn)" + _NOT_OF,
        _season,
    ),
    _rule(
        r"(?P<mod>(?<!the\s)(?:last|next|this)|this\s+past)\s+(?P<month>" + _MONTH_WORDS + ")",
        _named_month,
    ),
]


# Every rule above contains one of these words; one search for them lets the ~90% of turns that
# hold no date skip the per-rule scans.
_TRIGGER = re.compile(
    r"\b(?:yesterday|today|tonight|tomorrow|night|morning|afternoon|evening|weekends?"
    r"|(?:day|week|month|year)s?|spring|summer|fall|autumn|\d{1,2}(?:st|nd|rd|th)|"
    + _MONTH_WORDS
    + "|"
    + _WEEKDAY_WORDS
    + r")\b",
    re.IGNORECASE,
)


def find_relative_dates(text: str, base: datetime.date) -> list[DateMention]:
    """All relative date phrases in `text`, resolved against `base`, sorted by start.

    Mentions never overlap: where matches overlap, the longest wins. A phrase whose date would
    fall outside the calendar (year < 1 or > 9999) is skipped. `base` may be a datetime.
    """
    if isinstance(base, datetime.datetime):
        base = base.date()
    if not isinstance(text, str) or not _TRIGGER.search(text):
        return []
    candidates: list[tuple[int, int, re.Match[str], _Resolver]] = []
    for regex, resolve in _RULES:
        for m in regex.finditer(text):
            candidates.append((m.start(), m.end(), m, resolve))
    # Longest first (earliest on ties), then keep each one that overlaps nothing kept.
    candidates.sort(key=lambda c: (c[0] - c[1], c[0]))
    taken = bytearray(len(text))
    chosen: list[tuple[int, int, re.Match[str], _Resolver]] = []
    for start, end, m, resolve in candidates:
        if not any(taken[start:end]):
            taken[start:end] = b"\x01" * (end - start)
            chosen.append((start, end, m, resolve))
    chosen.sort(key=lambda c: c[0])

    mentions: list[DateMention] = []
    anchor = base
    for start, end, m, resolve in chosen:
        try:
            resolved = resolve(m, base, anchor)
        except (OverflowError, ValueError):
            continue
        if resolved is None:
            continue
        day, granularity = resolved
        since = resolve in (_since, _since_now)
        mentions.append(DateMention(text[start:end], start, end, day, granularity, since))
        if not since:
            anchor = day
    return mentions
