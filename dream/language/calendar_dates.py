"""Dates themselves: a session's timestamp, how a date is written, calendar arithmetic.

``dream.language.dates`` finds relative phrases in text and resolves them with the arithmetic
here; the page writer and the verification gate write and read dates through it.
"""

from __future__ import annotations

import datetime
import re

__all__ = [
    "DAY",
    "MONTH_NAMES",
    "add_months",
    "after",
    "as_date",
    "before",
    "format_date",
    "last_weekend",
    "monday",
    "parse_session_datetime",
]

MONTH_NAMES = (
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
)  # fmt: skip


def as_date(iso: str) -> datetime.date | str:
    """An ISO date as a ``date`` (YAML writes it bare: ``at: 2026-01-05``)."""
    try:
        return datetime.date.fromisoformat(iso[:10])
    except ValueError:
        return iso


def format_date(d: datetime.date) -> str:
    """Render a date as "7 May 2023" (no leading zero, English month, locale independent)."""
    return f"{d.day} {MONTH_NAMES[d.month - 1]} {d.year}"


# --- session datetimes -------------------------------------------------------------------------

_LOCOMO_DT = re.compile(
    r"\s*(\d{1,2}):(\d{2})\s*([ap])\.?\s*m\.?\s+on\s+(\d{1,2})\s+([a-z]+)\.?,?\s+(\d{4})\s*",
    re.IGNORECASE,
)


def _month_number(name: str) -> int | None:
    name = name.lower()
    for i, full in enumerate(MONTH_NAMES, start=1):
        if name == full.lower() or (len(name) >= 3 and full.lower().startswith(name)):
            return i
    return None


def parse_session_datetime(s: str) -> datetime.datetime:
    """Parse a session timestamp: ISO ("2023-05-08T13:56", "2023-05-08") or LoCoMo's
    "1:56 pm on 8 May, 2023". Raises ValueError naming the accepted forms otherwise."""
    problem = f"unrecognised session date {s!r}"
    if isinstance(s, str):
        m = _LOCOMO_DT.fullmatch(s)
        if m:
            hour, minute, ampm, day, month_name, year = m.groups()
            month = _month_number(month_name)
            h = int(hour)
            if month is not None and 1 <= h <= 12:
                h = h % 12 + (12 if ampm.lower() == "p" else 0)
                try:
                    return datetime.datetime(int(year), month, int(day), h, int(minute))
                except ValueError as e:
                    problem = f"invalid session date {s!r} ({e})"
            else:
                problem = f"invalid session date {s!r} (bad month name or hour)"
        else:
            try:
                return datetime.datetime.fromisoformat(s.strip())
            except ValueError:
                pass
    raise ValueError(
        f"{problem}: expected ISO 8601 like '2023-05-08T13:56' or '2023-05-08', "
        "or LoCoMo form like '1:56 pm on 8 May, 2023'"
    )


# --- calendar arithmetic -----------------------------------------------------------------------

DAY = datetime.timedelta(days=1)


def monday(d: datetime.date) -> datetime.date:
    return d - d.weekday() * DAY


def add_months(d: datetime.date, n: int) -> datetime.date:
    """First day of the month n months from d's month."""
    index = d.year * 12 + d.month - 1 + n
    return datetime.date(index // 12, index % 12 + 1, 1)


def before(d: datetime.date, weekday: int) -> datetime.date:
    """Latest `weekday` strictly before d."""
    return d - ((d.weekday() - weekday - 1) % 7 + 1) * DAY


def after(d: datetime.date, weekday: int) -> datetime.date:
    """First `weekday` strictly after d."""
    return d + ((weekday - d.weekday() - 1) % 7 + 1) * DAY


def last_weekend(d: datetime.date) -> datetime.date:
    """Saturday of the weekend before d's week (so never d's own weekend)."""
    return monday(d) - 2 * DAY
