"""The shapes Dream writes: claim lines, dated sections, sources, summaries and notes.

Job: edit a page body line by line without disturbing what Dream did not write (a human's
paragraph, another engine's section), and render the pages Dream creates. A claim is one
list line ``- <text> [cite:1][cite:4]`` optionally followed by a tail such as
`` (superseded on 2026-02-11)``; claims live under dated sections (the session date,
``## 2023-06-03 (3 June 2023)``; plain ``## 2023-06-03`` is read as the same section),
superseded ones under ``## History``, context edges under ``## Related``.

Boundary: text in, text out; no file access, no decisions about what to write.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import yaml

from dream.language.calendar_dates import as_date, format_date
from dream.records import Evidence, KeyPoint, SummaryDraft
from dream.wiki.sources import Sources
from memoryfs.errors import PageError
from memoryfs.pages import sources_yaml
from memoryfs.pages.bounded_yaml import limits_for_text, load_yaml
from memoryfs.pages.page import KEY_ORDER, Page, parse_page, render_page, split_frontmatter

__all__ = [
    "HISTORY",
    "RELATED",
    "Claim",
    "Outline",
    "Section",
    "parse_claim",
    "render_claim",
    "render_summary",
    "render_note",
    "new_subject_body",
    "as_date",
    "day_of",
    "day_title",
    "dump_meta",
    "load_page_text",
    "page_text",
]

HISTORY = "History"
RELATED = "Related"
_CLAIM_RE = re.compile(r"^- (?P<text>.*?)\s?(?P<cites>(?:\[cite:\d+\])+)(?P<tail>[^\[\]]*)$")
_CITE_RE = re.compile(r"\[cite:(\d+)\]")
_HEADING_RE = re.compile(r"^## (?P<title>.+?)\s*$")
# a dated section: "## 2023-06-03 (3 June 2023)"; the plain ISO form of older pages is read too
_DAY_RE = re.compile(r"^(\d{4}-\d{2}-\d{2})(?:\s+\([^()\n]*\))?$")
_FENCE_RE = re.compile(r"^\s{0,3}(```|~~~)")


_DUMPER: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
_SOURCE_ORDER = ("id", "ref", "at", "hash")


def dump_meta(meta: dict[str, Any]) -> str:
    """Frontmatter YAML in ``memoryfs.pages.page.render_meta``'s key order and style, through
    libyaml's emitter when it is there (the pure-Python one dominated a full run)."""
    ordered = {k: meta[k] for k in KEY_ORDER if k in meta}
    ordered.update((k, meta[k]) for k in sorted(meta) if k not in ordered)
    if isinstance(ordered.get("sources"), list):
        ordered["sources"] = [
            {k: e[k] for k in (*_SOURCE_ORDER, *sorted(set(e) - set(_SOURCE_ORDER))) if k in e}
            if isinstance(e, dict)
            else e
            for e in ordered["sources"]
        ]
    return sources_yaml.dump_meta(ordered, _dump) or _dump(ordered)


def _dump(data: dict[str, Any]) -> str:
    return str(
        yaml.dump(
            data,
            Dumper=_DUMPER,
            sort_keys=False,
            allow_unicode=True,
            default_flow_style=False,
            width=10_000,
        )
    )


def load_page_text(text: str, path: str, memo: bool = True) -> Page:
    """``memoryfs.pages.page.parse_page`` (memoized unless ``memo`` is False: the gates read the
    same base pages), else through libyaml directly for a frontmatter over ``parse_page``'s
    size limit. Raises ``PageError`` like it."""
    try:
        return parse_page(text, path, memo=memo)
    except PageError:
        pass
    parts = split_frontmatter(text)
    if parts is None:
        raise PageError(f"{path}: no YAML frontmatter")
    raw, body, body_line = parts
    try:
        meta = load_yaml(raw, limits_for_text(raw), path) if raw.strip() else {}
    except (yaml.YAMLError, RecursionError, ValueError, TypeError) as exc:
        raise PageError(f"{path}: unreadable frontmatter: {type(exc).__name__}") from None
    if not isinstance(meta, dict):
        raise PageError(f"{path}: frontmatter must be a mapping")
    return Page(meta=meta, body=body, path=path, raw_meta=raw, body_line=body_line)


def page_text(page: Page | None, meta: dict[str, Any], body: str, sources: Sources) -> str:
    """``page`` with ``meta`` and ``body``, ``sources`` held apart from both metas and
    written when it has entries; frontmatter that did not change keeps its bytes."""
    if page is not None and page.raw_meta is not None and not sources.changed and meta == page.meta:
        return render_page(page.with_body(body))
    if len(sources):
        meta = {**meta, "sources": sources.as_meta()}
    return "---\n" + dump_meta(meta) + "---\n" + body


def day_of(title: str) -> str:
    """The ISO day of a dated section title ("" for any other section)."""
    m = _DAY_RE.match(title)
    return m.group(1) if m else ""


def day_title(iso: str) -> str:
    """The title of the dated section for ``iso``: the ISO day, then the day as people
    write it, so a question that says "on 3 June 2023" finds what was said that day."""
    day = as_date(iso)
    return f"{iso} ({format_date(day)})" if isinstance(day, datetime.date) else iso


@dataclass(frozen=True, slots=True)
class Claim:
    text: str
    cites: tuple[int, ...]
    tail: str = ""


def parse_claim(line: str) -> Claim | None:
    m = _CLAIM_RE.match(line)
    if not m:
        return None
    cites = tuple(int(n) for n in _CITE_RE.findall(m.group("cites")))
    return Claim(m.group("text").strip(), cites, m.group("tail"))


def render_claim(c: Claim) -> str:
    return f"- {c.text} " + "".join(f"[cite:{n}]" for n in c.cites) + c.tail


class Section:
    """A ``## title`` section: its raw lines after the heading (blank lines included)."""

    __slots__ = ("title", "lines")

    def __init__(self, title: str, lines: list[str] | None = None) -> None:
        self.title = title
        self.lines = lines if lines is not None else []

    def append(self, line: str) -> None:
        """Add ``line`` after the section's last text line."""
        last = len(self.lines) - 1
        while last >= 0 and not self.lines[last].strip():
            last -= 1
        if last < 0:
            self.lines[:] = ["", line, ""]
        else:
            self.lines.insert(last + 1, line)


class Outline:
    """A page body as its head (before the first ``## ``) and its sections, in order.

    Lines are kept raw, so a section Dream does not touch renders exactly as it was read.
    """

    def __init__(self, body: str) -> None:
        self.head = Section("")
        self.sections: list[Section] = []
        current = self.head
        fence = False
        for line in body.split("\n"):
            if _FENCE_RE.match(line):
                fence = not fence
            elif not fence and (m := _HEADING_RE.match(line)):
                current = Section(m.group("title"))
                self.sections.append(current)
                continue
            current.lines.append(line)
        self._by_title = {}
        for sec in reversed(self.sections):
            self._by_title[_key(sec.title)] = sec
        self.changed = False

    def render(self) -> str:
        out = list(self.head.lines)
        for sec in self.sections:
            out.append(f"## {sec.title}")
            out.extend(sec.lines)
        while out and not out[-1].strip():
            out.pop()
        return "\n".join(out) + "\n"

    def get(self, title: str) -> Section | None:
        return self._by_title.get(_key(title))

    def claims(self) -> Iterator[tuple[Section, str, Claim]]:
        """(section, raw line, claim) of every claim line under a ``## `` heading."""
        for sec in self.sections:
            for line in sec.lines:
                c = parse_claim(line)
                if c is not None:
                    yield sec, line, c

    def _position(self, title: str) -> int:
        """Where a new section goes: dated ones in date order before History and Related,
        History before Related, anything else at the end."""
        day = day_of(title)
        for i, sec in enumerate(self.sections):
            t = sec.title
            if day and (day_of(t) > day or t in (HISTORY, RELATED)):
                return i
            if title == HISTORY and t == RELATED:
                return i
        return len(self.sections)

    def ensure(self, title: str) -> Section:
        sec = self._by_title.get(_key(title))
        if sec is not None:
            return sec
        at = self._position(title)
        before = self.sections[at - 1] if at > 0 else self.head
        if before.lines and before.lines[-1].strip():
            before.lines.append("")
        if not before.lines and before is self.head:
            before.lines.append("")
        sec = Section(title)
        self.sections.insert(at, sec)
        self._by_title[_key(title)] = sec
        self.changed = True
        return sec

    def append(self, title: str, line: str) -> Section:
        """Add ``line`` at the end of section ``title`` (created if missing)."""
        sec = self.ensure(title)
        sec.append(line)
        self.changed = True
        return sec

    def put_first(self, title: str, lines: list[str]) -> None:
        """Section ``title`` as the first one, holding just ``lines`` (none: no section)."""
        sec = self.get(title)
        body = ["", *lines, ""] if lines else []
        if sec is not None and body and sec.lines == body and self.sections[0] is sec:
            return
        if sec is not None:
            self.sections.remove(sec)
            del self._by_title[_key(title)]
            self.changed = True
        if body:
            if self.head.lines and self.head.lines[-1].strip():
                self.head.lines.append("")
            sec = Section(title, body)
            self.sections.insert(0, sec)
            self._by_title[_key(title)] = sec
            self.changed = True

    def replace(self, sec: Section, old: str, new: str) -> None:
        if old != new:
            sec.lines[sec.lines.index(old)] = new
            self.changed = True

    def remove(self, sec: Section, line: str) -> None:
        self.remove_at(sec, sec.lines.index(line))

    def remove_at(self, sec: Section, at: int) -> None:
        """Drop line ``at`` of ``sec``; a dated section left without text goes too."""
        del sec.lines[at]
        self.changed = True
        if day_of(sec.title) and not any(x.strip() for x in sec.lines):
            self.sections.remove(sec)
            del self._by_title[_key(sec.title)]

    def locate(self, index: int) -> tuple[Section, int] | None:
        """The section holding line ``index`` (0-based) of the body as it was read, and
        the line's place in it; None for a ``## `` heading or past the end. Ask before
        changing the outline: positions move as lines go."""
        at = index
        for sec in (self.head, *self.sections):
            if sec is not self.head:
                if at == 0:
                    return None  # the heading line itself
                at -= 1
            if at < len(sec.lines):
                return sec, at
            at -= len(sec.lines)
        return None


def _key(title: str) -> str:
    """Sections are found by their day when dated, so both title forms name one section."""
    return day_of(title) or title


def new_subject_body(title: str) -> str:
    return f"# {title}\n"


def _cited(points: tuple[KeyPoint, ...], sources: Sources) -> list[str]:
    return [f"- {p.text} [cite:{sources.cite(p.evidence)}]" for p in points]


def render_summary(draft: SummaryDraft, names: list[str], transcript_hash: str, turns: int) -> str:
    """The summary page of one session (``sessions/summaries/<id>.md``)."""
    sources = Sources([])
    points = _cited(draft.key_points, sources)
    if draft.outcome and draft.outcome_evidence:
        outcome = f"Outcome: {draft.outcome} [cite:{sources.cite(draft.outcome_evidence)}]"
    else:
        outcome = "Outcome: none recorded"
    threads = _cited(draft.open_threads, sources) or ["- none recorded"]
    when = as_date(draft.date)
    # date and participants live in the frontmatter: as body lines they would be indexed as
    # key points of their own ("Date: 9 November 2022") and match every question of that day
    body = [
        f"# {draft.title}",
        "",
        "## Key points",
        "",
        *(points or ["- none recorded"]),
        "",
        "## Outcome",
        "",
        outcome,
        "",
        "## Open threads",
        "",
        *threads,
    ]
    meta: dict[str, Any] = {
        "id": draft.session_id,
        "title": draft.title,
        "type": "summary",
        "updated": when,
        "date": when,
        "participants": list(draft.participants) or list(names),
        "transcript_hash": transcript_hash,
        "turns": turns,
    }
    if len(sources):
        meta["sources"] = sources.as_meta()
    return "---\n" + dump_meta(meta) + "---\n" + "\n".join(body) + "\n"


def render_note(
    note_id: str, title: str, claim: str, evidence: tuple[Evidence, ...], about: tuple[str, str]
) -> str:
    """A one-hop note: one cited claim and a link to the subject page it is about."""
    sources = Sources([])
    cites = "".join(f"[cite:{sources.cite(ev)}]" for ev in evidence)
    dates = sorted(ev.date for ev in evidence)
    meta: dict[str, Any] = {
        "id": note_id,
        "title": title,
        "type": "note",
        "summary": title,
        "created": as_date(dates[0]),
        "updated": as_date(dates[-1]),
        "sources": sources.as_meta(),
    }
    body = f"# {title}\n\n- {claim} {cites}\n\nAbout: [[{about[0]}|{about[1]}]]\n"
    return "---\n" + dump_meta(meta) + "---\n" + body
