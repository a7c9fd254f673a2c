"""Claim text as the semantic gate reads it: markup stripped, dates found.

``plain`` drops link and emphasis markup and superseded markers from a claim line;
``claim_dates`` finds the dates written in a text ("7 May 2023", "May 7", "2023-05-07",
"May 2023", "the week of 1 May 2023", a year) and blanks them out, so what remains can
be checked for names and numbers. Shared by the support check (``verification``) and
the slot table (``slots``).
"""

from __future__ import annotations

import datetime as dt
import re

__all__ = ["DateRef", "DAY", "MONTH_NUM", "WEEKDAYS", "claim_dates", "plain"]

_MONTHS = (
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
)  # fmt: skip
_MONTH_ABBR = {m[:3]: i + 1 for i, m in enumerate(_MONTHS)} | {"Sept": 9}
MONTH_NUM = {m: i + 1 for i, m in enumerate(_MONTHS)} | _MONTH_ABBR
_MONTH = "(?P<mon>" + "|".join(sorted(MONTH_NUM, key=len, reverse=True)) + r")\.?"
WEEKDAYS = {"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"}
_ORD = r"(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>\d{4})"
_DAY_FORMS = (
    re.compile(
        r"\b(?P<day>\d{1,2})" + _ORD + r"\s+(?:of\s+)?" + _MONTH + r"(?:,?\s+" + _YEAR + r")?\b"
    ),
    re.compile(r"\b" + _MONTH + r"\s+(?P<day>\d{1,2})" + _ORD + r"(?:,?\s+" + _YEAR + r")?\b"),
    re.compile(r"\b(?P<year>\d{4})-(?P<mnum>\d{2})-(?P<day>\d{2})\b"),
)
_SPAN_RE = re.compile(r"\b(?:the\s+)?(?P<span>week|weekend)\s+of\s+$", re.IGNORECASE)
_MONTH_YEAR_RE = re.compile(r"\b" + _MONTH + r"\s+" + _YEAR + r"\b")
_YEAR_RE = re.compile(r"\b(?P<year>1[89]\d{2}|20\d{2})\b")

_LINK_RE = re.compile(r"\[\[([^\[\]|\n]+?)(?:\|([^\[\]\n]+?))?\]\]")
_MD_LINK_RE = re.compile(r"\[([^\[\]\n]+)\]\([^)\n]*\)")
_SUPERSEDED_RE = re.compile(r"\((?:superseded|replaced)[^)]*\)", re.IGNORECASE)
_STRIKE_RE = re.compile(r"~~([^~\n]+)~~")

DAY = dt.timedelta(days=1)

DateRef = tuple[dt.date, str, bool]  # (first day, granularity, year given)


_MARKUP = ("[", "~", "*", "_", "`")  # what the rewrites of ``plain`` need, but for markers


def plain(text: str) -> str:
    """Claim text without link and emphasis markup or superseded markers."""
    if not any(c in text for c in _MARKUP) and ("(" not in text or not _SUPERSEDED_RE.search(text)):
        return " ".join(text.split())  # most claims: whitespace is all there is to do
    return _plain_markup(text)


def _plain_markup(text: str) -> str:
    text = _LINK_RE.sub(lambda m: m.group(2) or m.group(1), text)
    text = _MD_LINK_RE.sub(r"\1", text)
    text = _SUPERSEDED_RE.sub(" ", text)
    text = _STRIKE_RE.sub(r"\1", text)
    text = text.replace("**", "").replace("__", "").replace("`", "")
    return " ".join(text.split())


def _first_day(year: int, month: int, day: int) -> dt.date | None:
    try:
        return dt.date(year, month, day)
    except ValueError:
        return None


def claim_dates(
    text: str, default_year: int | None = None
) -> tuple[list[tuple[DateRef, str]], str]:
    """The dates written in ``text`` (each with its raw string) and the text with
    them blanked out.

    A date without a year takes ``default_year`` (or 1 when None; ``year given`` is
    False either way).
    """
    taken = bytearray(len(text))
    found: list[tuple[int, int, DateRef]] = []

    def free(m: re.Match[str]) -> bool:
        return not any(taken[m.start() : m.end()])

    def take(start: int, end: int) -> None:
        taken[start:end] = b"\x01" * (end - start)

    for regex in _DAY_FORMS:
        for m in regex.finditer(text):
            if not free(m):
                continue
            month = MONTH_NUM[m["mon"]] if "mon" in m.groupdict() and m["mon"] else int(m["mnum"])
            year = int(m["year"]) if m["year"] else (default_year or 1)
            day = _first_day(year, month, int(m["day"]))
            if day is None:
                continue
            start, gran = m.start(), "day"
            span = _SPAN_RE.search(text[: m.start()])
            if span:
                start, gran = span.start(), span["span"].lower()
                day = day - day.weekday() * DAY if gran == "week" else day
            take(start, m.end())
            found.append((start, m.end(), (day, gran, bool(m["year"]))))
    for m in _MONTH_YEAR_RE.finditer(text):
        if free(m):
            take(m.start(), m.end())
            first = dt.date(int(m["year"]), MONTH_NUM[m["mon"]], 1)
            found.append((m.start(), m.end(), (first, "month", True)))
    for m in _YEAR_RE.finditer(text):
        if free(m):
            take(m.start(), m.end())
            found.append((m.start(), m.end(), (dt.date(int(m["year"]), 1, 1), "year", True)))
    blanked = text
    if found:
        blanked = "".join(" " if taken[i] else ch for i, ch in enumerate(text))
    found.sort(key=lambda f: f[0])
    return [(ref, text[start:end]) for start, end, ref in found], blanked
