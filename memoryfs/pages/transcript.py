"""Transcripts: the raw, append-only history of one session.

Form (DESIGN.md section 1): YAML frontmatter (``id``, ``type: session``,
``started``, ``participants``, ``scope``), then one ``## tN · speaker · ISO-time``
heading per turn followed by its text. ``#tN`` is the anchor citations use.

A turn's text is kept verbatim. A text line that would itself read as a turn
heading is escaped with one leading backslash when rendered and unescaped when
parsed, so any text round-trips exactly.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from memoryfs.errors import PageError
from memoryfs.pages.bounded_yaml import DEFAULT_YAML_LIMITS, YamlLimits
from memoryfs.pages.page import parse_page, render_meta
from memoryfs.pages.speakers import Roster
from memoryfs.store.hashing import turn_hash

__all__ = [
    "Turn",
    "Transcript",
    "parse_transcript",
    "render_transcript",
    "render_turn",
    "HEADING_RE",
]

SEP = " · "
HEADING_RE = re.compile(r"^## t(\d{1,7}) · (.+?) · (\S+)[ \t]*\r?$")
_ESCAPED_RE = re.compile(r"^(\\*)(## t\d{1,7} · )")
_TRANSCRIPT_ORDER = ("id", "type", "started", "participants", "scope")
_SLUG_RE = re.compile(r"^[a-z0-9][a-z0-9._-]{0,127}$")


@dataclass(frozen=True)
class Turn:
    n: int
    speaker: str
    ts: str
    text: str
    line: int = 0  # 1-based line of the heading in the file (0 when not parsed from a file)

    @property
    def anchor(self) -> str:
        return f"t{self.n}"

    @property
    def hash(self) -> str:
        return turn_hash(self.text)

    def same_as(self, other: Turn) -> bool:
        return (self.n, self.speaker, self.ts, self.text.strip()) == (
            other.n,
            other.speaker,
            other.ts,
            other.text.strip(),
        )


@dataclass(frozen=True)
class Transcript:
    id: str
    started: str
    participants: tuple[str, ...]
    scope: dict[str, str]
    turns: tuple[Turn, ...]
    meta: dict[str, Any] = field(default_factory=dict)  # the full frontmatter
    # who the roles are, as the store that holds the transcript names them (not in the file)
    roster: Roster | None = field(default=None, compare=False, repr=False)

    @property
    def speakers(self) -> Roster:
        """The store's roster when known, else one derived from the transcript's scope."""
        if self.roster is not None:
            return self.roster
        return Roster(self.scope.get("user", ""), self.scope.get("assistant", ""))

    @property
    def date(self) -> str:
        return self.started[:10]

    def turn(self, anchor: str) -> Turn | None:
        if not anchor.startswith("t") or not anchor[1:].isdigit():
            return None
        n = int(anchor[1:])
        if 1 <= n <= len(self.turns) and self.turns[n - 1].n == n:
            return self.turns[n - 1]
        for t in self.turns:
            if t.n == n:
                return t
        return None


def valid_session_id(value: str) -> bool:
    return bool(_SLUG_RE.match(value)) and ".." not in value


def parse_transcript(
    text: str,
    path: str = "",
    roster: Roster | None = None,
    *,
    id_required: bool = True,
    limits: YamlLimits = DEFAULT_YAML_LIMITS,
) -> Transcript:
    """Parse a transcript; raises ``PageError`` naming the line on malformed input.
    ``roster``: the store's names for the user and the assistant (``StoreConfig.roster``).
    ``id_required=False`` (an input to ingest): no ``id`` at all gives ``id == ""``, for
    the caller to name; an ``id`` that is there must still be a slug. ``limits``: what
    the frontmatter may hold (``memoryfs.pages.bounded_yaml``)."""
    where = path or "transcript"
    page = parse_page(text, path, limits=limits)
    meta = page.meta
    sid = meta.get("id")
    if sid is None and not id_required:
        sid = ""
    elif not isinstance(sid, str) or not valid_session_id(sid):
        raise PageError(f"{where}: frontmatter 'id' must be a lowercase slug, got {sid!r}")
    started = meta.get("started")
    started_s = _iso(started)
    if not started_s:
        raise PageError(f"{where}: frontmatter 'started' must be an ISO date or datetime")
    participants = meta.get("participants") or []
    if not isinstance(participants, list):
        participants = [participants]
    scope_raw = meta.get("scope") or {}
    scope = {str(k): str(v) for k, v in scope_raw.items()} if isinstance(scope_raw, dict) else {}
    turns: list[Turn] = []
    cur: tuple[int, str, str, int] | None = None
    buf: list[str] = []
    lines = page.body.split("\n")
    for i, raw_line in enumerate(lines):
        lineno = page.body_line + i
        m = HEADING_RE.match(raw_line)
        if m:
            if cur is not None:
                turns.append(_turn(cur, buf))
            n = int(m.group(1))
            expected = len(turns) + 1
            if n != expected:
                raise PageError(f"{where}:{lineno}: turn t{n} out of order (expected t{expected})")
            cur = (n, m.group(2), m.group(3), lineno)
            buf = []
            continue
        if cur is None:
            if raw_line.strip():
                raise PageError(f"{where}:{lineno}: text before the first turn heading")
            continue
        esc = _ESCAPED_RE.match(raw_line)
        buf.append(raw_line[1:] if esc and esc.group(1) else raw_line)
    if cur is not None:
        turns.append(_turn(cur, buf))
    return Transcript(
        id=sid,
        started=started_s,
        participants=tuple(str(p) for p in participants),
        scope=scope,
        turns=tuple(turns),
        meta=meta,
        roster=roster,
    )


def _turn(cur: tuple[int, str, str, int], buf: list[str]) -> Turn:
    n, speaker, ts, line = cur
    text = "\n".join(buf).replace("\r\n", "\n").replace("\r", "\n").strip("\n")
    return Turn(n=n, speaker=speaker, ts=ts, text=text, line=line)


def _iso(value: Any) -> str:
    import datetime as dt

    if isinstance(value, dt.datetime):
        return value.isoformat(timespec="minutes" if not value.second else "seconds")
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, str):
        try:
            dt.datetime.fromisoformat(value)
        except ValueError:
            return ""
        return value
    return ""


def render_turn(turn: Turn) -> str:
    """One turn as it appears in the file: blank line, heading, blank line, text.

    Appending ``render_turn`` output to a rendered transcript gives the same bytes
    as rendering the longer transcript, which is what makes growth append-only.
    """
    speaker = " ".join(turn.speaker.replace("·", "-").split()) or "unknown"
    lines = []
    for line in turn.text.split("\n"):
        esc = _ESCAPED_RE.match(line)
        lines.append("\\" + line if esc else line)
    text = "\n".join(lines)
    return f"\n## t{turn.n}{SEP}{speaker}{SEP}{turn.ts}\n\n{text}\n"


def render_transcript(t: Transcript) -> str:
    meta: dict[str, Any] = {
        "id": t.id,
        "type": "session",
        "started": t.started,
        "participants": list(t.participants),
        "scope": dict(t.scope),
    }
    for k, v in t.meta.items():
        if k not in meta:
            meta[k] = v
    head = "---\n" + render_meta(meta, _TRANSCRIPT_ORDER) + "---\n"
    return head + "".join(render_turn(turn) for turn in t.turns)
