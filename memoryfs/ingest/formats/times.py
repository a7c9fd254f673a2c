"""Message times as the transcript writes them.

A time is an ISO datetime string or a Unix time in seconds (ChatGPT's ``create_time``
is a float). A Unix time is UTC; an ISO string keeps the offset it was written with
(none, ``Z`` or ``+02:00``). Seconds are kept when they are not zero, fractions are
dropped: ``2025-06-03T09:41`` or ``2025-06-03T09:41:12+00:00``.
"""

from __future__ import annotations

import datetime as dt

from memoryfs.errors import IngestError

__all__ = ["parse_time", "iso_time", "utc_date"]

# the Unix times datetime can hold (years 1 to 9999); NaN and infinities fall outside
_MIN_UNIX, _MAX_UNIX = -62_135_596_800, 253_402_300_799


def parse_time(value: object, where: str, field: str = "ts") -> dt.datetime:
    """``value`` as a datetime; raises ``IngestError`` naming ``where`` and ``field``."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise IngestError(f"{where}: '{field}' must be an ISO datetime string or a Unix time")
    try:
        if isinstance(value, int | float):
            if not _MIN_UNIX <= value <= _MAX_UNIX:
                raise ValueError(value)
            return dt.datetime.fromtimestamp(value, tz=dt.UTC)
        return dt.datetime.fromisoformat(value.strip())
    except (ValueError, OverflowError, OSError):
        raise IngestError(f"{where}: '{field}' {value!r} is not an ISO datetime") from None


def iso_time(when: dt.datetime) -> str:
    return when.isoformat(timespec="seconds" if when.second else "minutes")


def utc_date(when: dt.datetime) -> str:
    """The calendar date in UTC (a naive time is taken as written)."""
    if when.tzinfo is not None:
        when = when.astimezone(dt.UTC)
    return when.date().isoformat()
