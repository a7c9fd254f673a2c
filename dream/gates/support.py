"""What the turns a claim cites let it say: names, numbers, dates and meaning.

``check_claim`` is the deterministic floor every claim of Dream meets, in the
verification gate (``dream.gates.verification``), in the engines before they write a claim
(``dream.engines``), in summaries and in frontmatter checks. A ``Support`` is what the
cited turns (with their transcripts) allow; ``support_for`` builds it, with the subject's
names only where the turns name the subject (``with_subject``). The rules, code by code,
are in ``dream.gates.verification``'s docstring.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from functools import lru_cache

from dream.gates.claimtext import DAY as _DAY
from dream.gates.claimtext import MONTH_NUM as _MONTH_NUM
from dream.gates.claimtext import WEEKDAYS as _WEEKDAYS
from dream.gates.claimtext import DateRef, claim_dates
from dream.gates.claimtext import plain as _plain
from dream.gates.doers import actor_problem
from dream.gates.entailment import (
    Evidence,
    TurnView,
    content_words,
    entailment_problems,
    evidence,
    key,
)
from dream.language.calendar_dates import parse_session_datetime
from dream.language.dates import find_relative_dates
from memoryfs.pages.transcript import Transcript, Turn

__all__ = ["Support", "check_claim", "support_for", "turns_support", "with_subject"]

_NUMBER_RE = re.compile(r"(?<![\w.,])(\d+(?:[.,]\d+)*)(st|nd|rd|th)?")
# A name starts a word: the letters of "5K", "10km", "3PM" or "2nd" are a unit of the
# number before them, not a name.
_NAME_RE = re.compile(r"(?<![\w'’-])[^\W\d_][\w'’-]*")
_SENTENCE_BREAK_RE = re.compile(r"(?:^|[.!?:;(\"“‘]|\s[-–—]|\n)\s*$")
_NOT_NAMES = {"I", "I'm", "I’m", "I've", "I’ve", "I'd", "I’d", "I'll", "I’ll", "OK", "Ok"}
_NUMBER_WORDS = (
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
    "nineteen", "twenty",
)  # fmt: skip
# number words a claim may state a count with ("one" and "a" say too little to check)
_WORD_VALUE = {w: n for n, w in enumerate(_NUMBER_WORDS) if n >= 2} | {
    "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80,
    "ninety": 90,
}  # fmt: skip
_NUMBER_WORD_RE = re.compile(r"\b(?:" + "|".join(_WORD_VALUE) + r")\b", re.IGNORECASE)
_GRAN_RANK = {"day": 0, "weekend": 1, "week": 2, "month": 3, "year": 4}


@dataclass(frozen=True)
class Support:
    """What the cited turns allow a claim to say."""

    text: str  # the cited turns' texts, lower-cased, joined
    names: frozenset[str]  # lower-cased participant, speaker and subject words
    dates: tuple[tuple[dt.date, str], ...]  # (first day, granularity)
    evidence: Evidence = evidence(())  # the turns as the entailment rules read them
    bases: tuple[tuple[str, tuple[dt.date, ...]], ...] = ()  # (turn text, its session dates)
    undated: str = ""  # the turns' texts as written, their dates taken out


def _span_end(first: dt.date, gran: str) -> dt.date:
    if gran == "day":
        return first
    if gran == "weekend":
        return first + _DAY
    if gran == "week":
        return first + 6 * _DAY
    if gran == "month":
        nxt = dt.date(first.year + (first.month == 12), first.month % 12 + 1, 1)
        return nxt - _DAY
    return dt.date(first.year, 12, 31)


def _date_supported(ref: DateRef, allowed: Iterable[tuple[dt.date, str]]) -> bool:
    first, gran, has_year = ref
    for a_first, a_gran in allowed:
        if _GRAN_RANK[a_gran] > _GRAN_RANK[gran]:
            continue
        if not has_year:  # "7 May": any year of the allowed dates will do
            try:
                first_y = first.replace(year=a_first.year)
            except ValueError:
                continue
        else:
            first_y = first
        if first_y <= a_first <= _span_end(first_y, gran):
            return True
    return False


def _sentence_initial(text: str, start: int) -> bool:
    return bool(_SENTENCE_BREAK_RE.search(text[:start]))


def _number_supported(raw: str, text: str) -> bool:
    """``raw`` is in ``text`` as a number ("40" in "40x" or "40 km", not in "140" or
    "4.40"), with or without thousands separators, or (0-20) as a word."""
    digits = raw.replace(",", "")
    for number, haystack in ((raw, text), (digits, text.replace(",", ""))):
        pattern = r"(?<![\d.,])" + re.escape(number) + r"(?![\d]|[.,]\d)"
        if re.search(pattern, haystack):
            return True
    return digits.isdigit() and int(digits) <= 20 and _word_in(_NUMBER_WORDS[int(digits)], text)


def _word_in(word: str, haystack: str) -> bool:
    return re.search(r"(?<![\w])" + re.escape(word) + r"(?![\w])", haystack) is not None


def check_claim(text: str, support: Support, meaning: bool = True) -> list[tuple[str, str]]:
    """(code, reason) for each part of ``text`` its cited turns do not support: names,
    numbers, dates and, with ``meaning``, what it says (``dream.gates.entailment``)."""
    plain = _plain(text)
    year = support.dates[0][0].year if support.dates else None
    dates, rest = claim_dates(plain, year)
    problems: list[tuple[str, str]] = []
    for ref, raw in dates:
        if not _date_supported(ref, support.dates):
            problems.append(
                (
                    "DV103",
                    f"date {raw!r} is neither in the cited turn nor derived from its session date",
                )
            )
        elif (other := _dated_otherwise(plain, raw, ref, support)) is not None:
            problems.append(
                ("DV103", f"date {raw!r}: the cited turn dates what the claim says {other}")
            )
    # "the 13th" next to "13 March 2026": a day of a date the claim may state.
    days = {first.day for first, gran in support.dates if gran == "day"}
    days |= {first.day for (first, gran, _), _raw in dates if gran == "day"}
    for m in _NUMBER_RE.finditer(rest):
        raw = m.group(1).rstrip(".,")
        if not _number_supported(raw, support.text) and not (m.group(2) and int(raw) in days):
            problems.append(("DV102", f"number {raw!r} is not in the cited turn"))
    # the turn's dates are taken out as the claim's are: "9 to 19 April" counts no "April"
    said = support.undated
    problems.extend(("DV102", why) for why in _numbers_bound_otherwise(rest, said))
    if not problems:
        people = frozenset(_stem(w) for w in support.names)
        problems.extend(("DV102", why) for why in _numbers_placed_otherwise(rest, said, people))
    # a number written as a word ("twelve sites"): in the turn as a word or in digits
    for m in _NUMBER_WORD_RE.finditer(rest):
        word = m.group(0).lower()
        if not _word_in(word, support.text) and not _number_supported(
            str(_WORD_VALUE[word]), support.text
        ):
            problems.append(("DV102", f"number {word!r} is not in the cited turn"))
    seen: set[str] = set()
    named: list[str] = []
    for m in _NAME_RE.finditer(rest):
        word = m.group(0).rstrip("'’-")
        if not word[:1].isupper() or word in _NOT_NAMES or _sentence_initial(rest, m.start()):
            continue
        word = re.sub(r"['’]s$", "", word)
        key = word.lower()
        if key in seen or re.sub(r"s$", "", word) in _WEEKDAYS or word.rstrip(".") in _MONTH_NUM:
            continue
        seen.add(key)
        named.append(word)
        if key in support.names or _word_in(key, support.text):
            continue
        parts = [p for p in re.split(r"[-'’]", key) if p]
        if len(parts) > 1 and all(_word_in(p, support.text) or p in support.names for p in parts):
            continue
        problems.append(("DV101", f"name {word!r} is not in the cited turn"))
    if meaning and not problems:  # a claim with a wrong name or date is wrong already
        names = [*named, *support.names]
        problems.extend(entailment_problems(rest, support.evidence, names))
        if not any(code == "DV105" for code, _ in problems):  # what is not said, no one does
            known = {n.lower() for n in names}
            actor = actor_problem(rest, support.evidence, known | _people(support))
            if actor:
                problems.append(("DV107", actor))
    return problems


_COUNT_TOKEN_RE = re.compile(r"\d+(?:[.,]\d+)*|[^\W\d_][\w'’-]*|[^\w\s]")


@lru_cache(maxsize=2048)
def _counts(text: str) -> tuple[tuple[str, frozenset[str]], ...]:
    """Each number of ``text`` (digits, or a word for 2-90) and the stems of the words that
    follow it in its clause, up to three ("2,880 new clips" -> ("2880", {new, clip}))."""
    tokens = _COUNT_TOKEN_RE.findall(text)
    out = []
    for i, t in enumerate(tokens):
        low = t.lower()
        value = t.replace(",", "") if t[:1].isdigit() else str(_WORD_VALUE.get(low, ""))
        if not value:
            continue
        things: set[str] = set()
        for nxt in tokens[i + 1 : i + 5]:
            if not nxt[:1].isalpha():
                break
            if content_words(nxt):
                things.add(key(nxt))
                if len(things) == 2:
                    break
        out.append((value, frozenset(things)))
    return tuple(out)


def _numbers_bound_otherwise(rest: str, said: str) -> list[str]:
    """Numbers the claim gives to a thing the cited turn counts with another number only
    ("12 new clips" where the turn says "2,880 new clips, 12 failed")."""
    theirs = _counts(said)
    out = []
    for value, things in _counts(rest):
        own = [t for v, t in theirs if v == value]
        if not own or any(t & things or not t for t in own):
            continue  # not in the turn (DV102 says so), or the turn counts the same with it
        bound = {v for v, t in theirs if t & things}
        if things and bound and value not in bound:
            shown = ", ".join(sorted(bound))
            out.append(
                f"number {value!r}: the cited turn counts {' '.join(sorted(things))} as {shown}"
            )
    return out


_stem = key  # ``check_claim`` has a local of that name


def _people(support: Support) -> set[str]:
    """The words naming whoever speaks in the cited turns or is spoken to."""
    return {w for t in support.evidence.turns for w in t.speaker | t.listener}


_CLAUSE_START_RE = re.compile(r"[.!?;:,(]\s|\s[-–—]\s|^")


@lru_cache(maxsize=1024)
def _sentences(
    said: str,
) -> tuple[tuple[tuple[frozenset[str], frozenset[str]], ...], frozenset[str]]:
    """Each sentence of the turns as (its numbers, the keys of its words), and the keys of
    all their words."""
    out = []
    for x in re.split(r"(?<=[.!?])\s+|\n+", said):
        if x.strip():
            values = frozenset(v for v, _ in _counts(x))
            out.append((values, frozenset(key(w) for w in content_words(x))))
    return tuple(out), frozenset(k for _, keys in out for k in keys)


def _numbers_placed_otherwise(rest: str, said: str, people: frozenset[str]) -> list[str]:
    """Numbers the claim says of something the cited turn says them of nowhere: the words
    leading to the number in its clause ("The Ocean Signals team has about 60") are in the
    turn, but no sentence of the turn holding the number, nor the one before it, holds any
    of them ("About 60 people." after a sentence about the company)."""
    sentences, spoken = _sentences(said)
    rest = re.sub(r"\([^()]*\)", ", ", rest)  # an aside leads to nothing: "(re: rock)"
    out = []
    for m in _COUNT_TOKEN_RE.finditer(rest):
        t = m.group(0)
        value = t.replace(",", "") if t[:1].isdigit() else str(_WORD_VALUE.get(t.lower(), ""))
        if not value:
            continue
        start = max(c.end() for c in _CLAUSE_START_RE.finditer(rest[: m.start()]))
        # its words, not its names: "Tiago has about 80 hours" is said as "He has ..."
        lowered = " ".join(w for w in rest[start : m.start()].split() if not w[:1].isupper())
        lead = {key(w) for w in content_words(lowered)} - people
        lead &= spoken  # words of its own (the turn lacks them) are coverage's
        if not lead:
            continue
        # the sentence holding it, or the one before (a fragment goes on from it: "My talk
        # is on Wednesday. Twenty minutes including questions.")
        holding = [
            sentences[i][1] | (sentences[i - 1][1] if i else frozenset())
            for i, (values, _) in enumerate(sentences)
            if value in values
        ]
        if holding and not any(lead & keys for keys in holding):
            words = " ".join(sorted(lead))
            out.append(f"number {t!r}: the cited turn says it in no sentence about {words}")
    return out


def _dated_otherwise(plain: str, raw: str, ref: DateRef, support: Support) -> str | None:
    """How the turn dates the sentence it says the claim's sentence in ("yesterday", when
    the claim says the day of the session), when none of those dates is the claim's; None
    when it agrees, dates it not at all, or says it nowhere in one sentence."""
    at = plain.find(raw)
    start = max(plain.rfind(". ", 0, at), plain.rfind("? ", 0, at), plain.rfind("! ", 0, at))
    end = min((i for i in (plain.find(". ", at), len(plain)) if i >= 0), default=len(plain))
    wanted = {key(w) for w in content_words(plain[start + 1 : end].replace(raw, " "))}
    if len(wanted) < 2:
        return None
    best: tuple[int, tuple[tuple[dt.date, str, str], ...]] | None = None
    for text, bases in support.bases:
        for stems, said in _dated_sentences(text, bases):
            hits = len(wanted & stems)
            if hits >= max(2, (len(wanted) + 1) // 2) and (best is None or hits > best[0]):
                best = (hits, said)
    if best is None or not best[1]:
        return None
    if _date_supported(ref, [(first, gran) for first, gran, _ in best[1]]):
        return None
    return "as " + ", ".join(f"{phrase!r} ({first.isoformat()})" for first, _, phrase in best[1])


@lru_cache(maxsize=1024)
def _dated_sentences(
    text: str, bases: tuple[dt.date, ...]
) -> tuple[tuple[frozenset[str], tuple[tuple[dt.date, str, str], ...]], ...]:
    """Each sentence of a turn: the stems of its words and the dates it says (resolved
    against the session's dates)."""
    out = []
    year = min(bases).year if bases else None
    for sentence in re.split(r"(?<=[.!?])\s+|\n+", text):
        said: list[tuple[dt.date, str, str]] = []
        for base in bases:
            said.extend(
                (m.date, m.granularity, m.phrase) for m in find_relative_dates(sentence, base)
            )
        written, _ = claim_dates(sentence, year)
        said.extend((first, gran, raw) for (first, gran, _), raw in written)
        out.append(
            (frozenset(key(w) for w in re.findall(r"[^\W\d_][\w'’-]*", sentence)), tuple(said))
        )
    return tuple(out)


def _session_date(value: str) -> dt.date | None:
    try:
        return parse_session_datetime(value).date()
    except (ValueError, TypeError):
        try:
            return dt.date.fromisoformat(value[:10])
        except ValueError:
            return None


# A session's participants recur on every claim, a page's title and aliases on each of its
# claims (pages are checked one after another): a few hundred entries serve them, where
# an unbounded cache would keep a subject per page of a full run.
@lru_cache(maxsize=256)
def _words(names: tuple[str, ...]) -> frozenset[str]:
    return frozenset(w.lower() for name in names for w in re.findall(r"[\w'’-]+", name))


def support_for(turns: list[tuple[Transcript, Turn]], subject: Iterable[str] = ()) -> Support:
    """What the cited ``turns`` (with their transcripts) let a claim about ``subject`` say:
    the subject's name only where the turns name it (``with_subject``)."""
    return with_subject(turns_support(turns), tuple(subject))


def with_subject(support: Support, subject: tuple[str, ...]) -> Support:
    """``support`` with the words of ``subject`` (a page's title and aliases) as names,
    when the turns name the subject (``_present``)."""
    if not subject or not _present(subject, support):
        return support
    return replace(support, names=support.names | _words(subject))


def turns_support(turns: list[tuple[Transcript, Turn]]) -> Support:
    dated: list[tuple[str, tuple[dt.date, ...]]] = []
    undated_texts: list[str] = []
    names: set[str] = set()
    dates: list[tuple[dt.date, str]] = []
    texts: list[str] = []
    views: list[TurnView] = []
    for t, turn in turns:
        texts.append(turn.text)
        names.update(_words((*t.participants, turn.speaker)))
        # the roles are people the store names: "I moved" by the user is "<user_name> moved"
        roster = t.speakers
        names.update(_words((roster.user_name, roster.assistant_name, roster.name(turn.speaker))))
        speaker = _words((turn.speaker, roster.name(turn.speaker)))
        others = [p for p in {*t.participants, *(x.speaker for x in t.turns)} if p != turn.speaker]
        listener = _words((*others, *(roster.name(p) for p in others))) - speaker
        views.append(TurnView(turn.text, speaker, listener))
        bases = {d for d in (_session_date(t.started), _session_date(turn.ts)) if d is not None}
        for base in sorted(bases):
            dates.append((base, "day"))
            dates.extend((m.date, m.granularity) for m in find_relative_dates(turn.text, base))
        year = min(bases).year if bases else None
        written, undated = claim_dates(turn.text, year)
        dates.extend((first, gran) for (first, gran, _), _raw in written)
        dated.append((turn.text, tuple(sorted(bases))))
        undated_texts.append(undated)
    return Support(
        text="\n".join(texts).lower(),
        names=frozenset(names),
        dates=tuple(dates),
        evidence=evidence(views),
        bases=tuple(dated),
        undated="\n".join(undated_texts),
    )


def _present(subject: tuple[str, ...], support: Support) -> bool:
    """The turns name the subject: its title or an alias, or a word of its title written
    as a name ("Jonas" of "Jonas Weber"), or it spoke. The page a claim is on is no
    evidence: a claim on the page of Google that names Google needs a turn that does."""
    for name in subject:
        low = name.lower()
        if low in support.names or _word_in(low, support.text):
            return True
    for word in re.findall(r"[^\W\d_][\w'’-]*", subject[0] if subject else ""):
        word = re.sub(r"['’]s$", "", word)
        if len(word) < 3 or not word[:1].isupper():
            continue
        if word.lower() in support.names or any(
            re.search(r"(?<![\w])" + re.escape(word) + r"(?![\w])", t.text)
            for t in support.evidence.turns
        ):
            return True
    return False
