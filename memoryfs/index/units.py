"""Index units: the precise pieces of a file that search and recall return.

A file becomes several units so a hit points at one line, not a whole page: a page
*head* (title, aliases, summary), one unit per *claim* or *passage* line of a knowledge
or notes page, one per key-point line of a session summary (*summary*), and one per
transcript *turn*, prefixed with its speaker and the session date; never one for a line
marked ``(unsupported)``, whose evidence went (``memoryfs.pages.factlines``). Claim units
carry their ``[cite:N]`` citations resolved through the page's ``sources`` to transcript
refs, and the date they are about. A cited line under a ``## Profile`` heading is a
*profile* unit: an aggregate across sessions ("Arts, crafts and music (hobbies,
activities): painting [cite:2][cite:90], pottery [cite:26]", ``dream.wiki.profile``), which
recall weighs as context rather than as one dated fact; its citations are listed each
thing's first mention first, then each thing's second, so the first few read name as
many things, and sessions, as they can (LoCoMo tuning, wiki, 1,000 tokens: session
recall@5 .895 -> .896, one question up, none down).

This module only reads text; the search index (``memoryfs.read.search``) stores the
units. It never raises on malformed input: a file it cannot parse yields no units.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

import yaml

from memoryfs.errors import PageError
from memoryfs.pages.archives import page_title
from memoryfs.pages.bounded_yaml import load_yaml
from memoryfs.pages.factlines import marked_unsupported
from memoryfs.pages.links import CITE_RE, WIKILINK_RE
from memoryfs.pages.page import Page, split_frontmatter
from memoryfs.pages.transcript import parse_transcript

__all__ = [
    "PROFILE_SECTION",
    "Unit",
    "FileInfo",
    "layer_of",
    "units_of",
    "human_date",
    "clean_text",
]

_MONTHS = (  # not calendar.month_name: that follows the process locale
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
_FENCE_RE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_HEADING_RE = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_LIST_RE = re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)])\s+(?:\[[ xX]\]\s+)?")
PROFILE_SECTION = "Profile"  # a page's aggregate claims: what a subject does across sessions
_CITE_RUN_RE = re.compile(r"(?:\s*" + CITE_RE.pattern + r")+")
_CITE_NUM_RE = re.compile(r"\d+")
_CITE_GAP_RE = re.compile(r"\s*" + CITE_RE.pattern)
_ISO_IN_TEXT_RE = re.compile(r"\b(\d{4}-\d{2}-\d{2})\b")
# The signs memoryfs.pages.claims reads as "superseded": a marker or strike-through on
# the line, or a History / Superseded heading above it.
_SUPERSEDED_RE = re.compile(r"\(superseded|~~[^~\n]+~~", re.I)
_SUPERSEDED_SECTION_RE = re.compile(r"^\W*(?:history|superseded)\b", re.I)  # as claims reads it
_TRANSCRIPT_DIR = "sessions/transcripts/"
_SUMMARY_DIR = "sessions/summaries/"
_MAX_UNIT_CHARS = 8000
_TABLE_RULE = set("|-: ")
_WORD_RE = re.compile(r"\w+")
_INDENTED_RE = re.compile(r"^(?: {4}|\t)")
_CODE_SPAN_RE = re.compile(r"(`+)(?!`).*?(?<!`)\1(?!`)")
_NEXT_WORDS = 30  # ...and of the next one (a reply often names what a turn is about)
_CONTEXT_WORDS = 60  # words of the previous turn a turn is also found by


@dataclass(frozen=True)
class Unit:
    """One indexed piece of a file. ``line`` is 1-based in the file."""

    kind: str  # head | claim | profile | passage | summary | turn
    line: int
    title: str = ""  # heads only: the page title
    aliases: str = ""  # heads only: aliases and the id, space separated
    summary: str = ""  # heads only: the page's one-line summary
    body: str = ""  # the unit's text (citation markers removed, links as labels)
    context: str = (
        ""  # low-weight words that situate it: page title and section, or speaker and date
    )
    date: str = ""  # ISO date the unit is about, when known
    citations: tuple[str, ...] = ()  # transcript refs "sessions/transcripts/<id>.md#tN"
    anchor: str = ""  # turns: "tN"
    speaker: str = ""  # turns: who spoke
    superseded: bool = False


@dataclass(frozen=True)
class FileInfo:
    """What the materializer and recall need to know about a file without reading it."""

    layer: str
    kind: str  # page | summary | transcript | other
    id: str
    title: str
    type: str
    updated: str
    date: str  # summaries and transcripts: the session date; pages: updated
    preference: bool
    keys: tuple[str, ...]  # lower-cased id and aliases, what [[links]] resolve against
    links: tuple[str, ...]  # lower-cased [[link]] targets of the body


def layer_of(rel: str) -> str:
    """``knowledge``, ``notes`` or ``sessions`` for an indexable path, else ""."""
    if rel.startswith(("knowledge/", "notes/")):
        return rel.split("/", 1)[0]
    if rel.startswith((_TRANSCRIPT_DIR, _SUMMARY_DIR)):
        return "sessions"
    return ""


def human_date(iso: str) -> str:
    """``2023-05-08`` (or a datetime) as people read it: ``8 May 2023``; "" if unparseable."""
    try:
        day = dt.date.fromisoformat(iso[:10])
    except (ValueError, TypeError):
        return ""
    return f"{day.day} {_MONTHS[day.month - 1]} {day.year}"


def clean_text(text: str) -> str:
    """A line as a reader wants it: no list marker, no ``[cite:N]``, links as their labels."""
    text = _LIST_RE.sub("", text.lstrip(" >"), count=1)
    text = _CITE_GAP_RE.sub("", text)  # "painting [cite:3], pottery": no gap before the comma
    text = WIKILINK_RE.sub(lambda m: (m.group(2) or m.group(1)).strip(), text)
    return " ".join(text.split())


def _iso_date(value: str) -> str:
    try:
        return dt.date.fromisoformat(value[:10]).isoformat()
    except (ValueError, TypeError):
        return ""


def units_of(rel: str, text: str) -> tuple[FileInfo | None, list[Unit]]:
    """The file info and units of the file at ``rel`` (relative to ``memory/``)."""
    layer = layer_of(rel)
    if not layer:
        return None, []
    try:
        if rel.startswith(_TRANSCRIPT_DIR):
            return _transcript_units(rel, text)
        return _page_units(rel, text, layer)
    except (PageError, ValueError, TypeError, RecursionError):
        return None, []


def _transcript_units(rel: str, text: str) -> tuple[FileInfo, list[Unit]]:
    t = parse_transcript(text, rel)
    title = str(t.meta.get("title") or t.id)
    info = FileInfo(
        layer="sessions",
        kind="transcript",
        id=t.id,
        title=title,
        type="session",
        updated=t.date,
        date=t.date,
        preference=False,
        keys=(),
        links=(),
    )
    units: list[Unit] = []
    turns = [turn for turn in t.turns if turn.text.strip()]
    for i, turn in enumerate(turns):
        date = _iso_date(turn.ts) or t.date
        body = turn.text[:_MAX_UNIT_CHARS]
        prev = _words(turns[i - 1].text, _CONTEXT_WORDS) if i else ""
        nxt = _words(turns[i + 1].text, _NEXT_WORDS) if i + 1 < len(turns) else ""
        units.append(
            Unit(
                kind="turn",
                line=turn.line,
                body=body,
                context=f"{turn.speaker} {human_date(date)} {prev} {nxt}".rstrip(),
                date=date,
                citations=(f"{rel}#{turn.anchor}",),
                anchor=turn.anchor,
                speaker=turn.speaker,
            )
        )
    return info, units


def _words(text: str, n: int) -> str:
    return " ".join(text.split()[:n])


def _parse_page(text: str, rel: str) -> Page:
    """Like ``memoryfs.pages.page.parse_page`` without its memo and its sources fast path
    (``memoryfs.pages.bounded_yaml`` either way: safe, within the default limits)."""
    parts = split_frontmatter(text)
    if parts is None:
        raise PageError(f"{rel}: no frontmatter")
    raw, body, body_line = parts
    try:
        meta = load_yaml(raw, where=rel) if raw.strip() else {}
    except (yaml.YAMLError, RecursionError, ValueError, TypeError, OverflowError):
        raise PageError(f"{rel}: malformed YAML") from None
    if not isinstance(meta, dict):
        raise PageError(f"{rel}: frontmatter is not a mapping")
    return Page(meta=meta, body=body, path=rel, raw_meta=raw, body_line=body_line)


def _page_units(rel: str, text: str, layer: str) -> tuple[FileInfo, list[Unit]]:
    page = _parse_page(text, rel)
    is_summary = rel.startswith(_SUMMARY_DIR)
    title = page.title or page.id or rel.rsplit("/", 1)[-1].removesuffix(".md")
    updated = _iso_date(page.updated)
    session_date = ""
    if is_summary:
        session_date = _iso_date(str(page.meta.get("date") or "")) or _date_from_id(page.id)
    status = str(page.meta.get("status") or "")
    lines, links = _scan(page)
    info = FileInfo(
        layer=layer,
        kind="summary" if is_summary else "page",
        id=page.id,
        title=title,
        type=page.type,
        updated=updated,
        date=session_date or updated,
        preference=rel.startswith("knowledge/preferences/") or page.type == "preference",
        keys=tuple(dict.fromkeys(k.lower() for k in (page.id, *page.aliases) if k)),
        links=tuple(dict.fromkeys(links)),
    )
    head = Unit(
        kind="head",
        line=1,
        title=title,
        aliases=" ".join([*page.aliases, page.id.replace("-", " ")]),
        summary=" ".join(page.summary.split()),
        context=page.type,
        date=info.date,
        superseded=status == "superseded",
    )
    units = [head]
    units.extend(_body_units(page, lines, title, is_summary, info.date, status == "superseded"))
    return info, units


def _date_from_id(page_id: str) -> str:
    m = _ISO_IN_TEXT_RE.match(page_id)
    return _iso_date(m.group(1)) if m else ""


@dataclass(frozen=True)
class _Line:
    line: int  # 1-based in the file
    raw: str  # as written
    text: str  # code spans removed
    section: str  # nearest heading above
    history: bool  # under a "History" / "Superseded" heading at any level


def _scan(page: Page) -> tuple[list[_Line], list[str]]:
    """Prose lines of the body (not headings, not code) and the [[link]] targets.

    A line scanner rather than markdown-it: a whole store is indexed at once and
    this is ~30x faster. It skips fenced and indented code and inline code spans,
    so a link or citation in code never counts, as for the validator
    (``memoryfs.pages.links``, ``memoryfs.pages.claims``).
    """
    out: list[_Line] = []
    links: list[str] = []
    stack: list[tuple[int, str]] = []
    fence = ""
    prev_blank = True
    in_list = False
    for i, raw in enumerate(page.body.split("\n")):
        line = raw.rstrip()
        m = _FENCE_RE.match(line)
        if fence:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = ""
            continue
        if m:
            fence = m.group(1)
            continue
        stripped = line.strip()
        if not stripped:
            prev_blank = True
            continue
        if prev_blank and not in_list and _INDENTED_RE.match(line):
            continue  # an indented code block
        prev_blank = False
        h = _HEADING_RE.match(line)
        if h:
            level = len(h.group(1))
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, clean_text(h.group(2))))
            in_list = False
            continue
        in_list = bool(_LIST_RE.match(line)) or (in_list and line[:1] in (" ", "\t"))
        if stripped.startswith("<!--") or set(stripped) <= _TABLE_RULE:
            continue
        text = _CODE_SPAN_RE.sub(" ", line)
        links.extend(m.group(1).strip().lower() for m in WIKILINK_RE.finditer(text))
        out.append(
            _Line(
                line=page.body_line + i,
                raw=line,
                text=text,
                section=stack[-1][1] if stack else "",
                history=any(_SUPERSEDED_SECTION_RE.search(t) for _, t in stack),
            )
        )
    return out, [t for t in links if t]


def _round_robin(text: str) -> list[int]:
    """A profile line's citations, each thing's first, then each thing's second, ...

    A thing is the words before a run of markers ("pottery [cite:26][cite:45]"); read
    left to right, the first few citations then show as many things as they can.
    """
    runs = [[int(n) for n in _CITE_NUM_RE.findall(m[0])] for m in _CITE_RUN_RE.finditer(text)]
    out: list[int] = []
    for i in range(max((len(r) for r in runs), default=0)):
        out += [r[i] for r in runs if i < len(r)]
    return list(dict.fromkeys(out))


def _body_units(
    page: Page,
    lines: list[_Line],
    title: str,
    is_summary: bool,
    page_date: str,
    page_superseded: bool,
) -> list[Unit]:
    sources = {s.id: s for s in page.sources}
    units: list[Unit] = []
    for ln in lines:
        body = clean_text(ln.text)
        if len(body) < 2:
            continue
        if "[[" in ln.text and len(_WORD_RE.findall(WIKILINK_RE.sub(" ", ln.text))) < 2:
            continue  # "About: [[melanie]]", "See also [[x]]": an edge, not a fact
        cites = list(dict.fromkeys(int(c.group(1)) for c in CITE_RE.finditer(ln.text)))
        if marked_unsupported(ln.raw):
            continue  # evidence gone (``dream.phases.recheck``): the claim says it is unproven
        if cites and ln.section == PROFILE_SECTION and not is_summary:
            cites = _round_robin(ln.text)
        refs = tuple(dict.fromkeys(sources[n].ref for n in cites if n in sources))
        dates = sorted({_iso_date(sources[n].at) for n in cites if n in sources} - {""})
        if is_summary:
            kind = "summary"
        elif cites and ln.section == PROFILE_SECTION:
            kind = "profile"  # one aggregate claim citing many sessions (dream.wiki.profile)
        elif cites or _LIST_RE.match(ln.raw):
            kind = "claim"
        else:
            kind = "passage"
        superseded = page_superseded or ln.history or bool(_SUPERSEDED_RE.search(ln.raw))
        units.append(
            Unit(
                kind=kind,
                line=ln.line,
                body=body[:_MAX_UNIT_CHARS],
                # "Dana (2023-01-02 archive)": the qualifier says where the claim is
                # kept, not what it is about (an archive's claims match as its page's).
                context=f"{page_title(page.path, title)} {ln.section}".strip(),
                date=dates[-1] if dates else page_date,
                citations=refs,
                superseded=superseded,
            )
        )
    return units
