"""Ingestion: turn chat logs into transcripts and commit them.

Accepted inputs: transcripts already in the store's Markdown form (``md``),
JSONL chat logs with one ``{"role", "content", "ts"}`` object per line
(``jsonl``), and LoCoMo conversations (``locomo``). Everything is parsed and
checked before anything is written: a session that exists already may only
grow (its file gets the new turns appended, byte for byte); a change to an
earlier turn, or a scope that is not the store's, is refused and nothing is
written.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import dataclass
from pathlib import Path

from memoryfs.atomic import atomic_write_text
from memoryfs.errors import IngestError, PageError
from memoryfs.locomo import load_locomo
from memoryfs.store import Store
from memoryfs.transcript import (
    Transcript,
    Turn,
    parse_transcript,
    render_transcript,
    render_turn,
    valid_session_id,
)

__all__ = ["FORMATS", "SessionChange", "IngestResult", "load_sessions", "plan_ingest", "ingest"]

FORMATS = ("md", "jsonl", "locomo")
_MAX_INPUT_BYTES = 200_000_000


@dataclass(frozen=True)
class SessionChange:
    id: str
    status: str  # "new", "grown" or "unchanged"
    turns_added: int
    turns_total: int


@dataclass(frozen=True)
class IngestResult:
    sessions: tuple[SessionChange, ...]
    turns_added: int
    commit: str  # "" when nothing changed

    @property
    def changed(self) -> int:
        return sum(1 for s in self.sessions if s.status != "unchanged")


def _detect(path: Path, fmt: str | None) -> str:
    if fmt:
        if fmt not in FORMATS:
            raise IngestError(f"unknown format {fmt!r} (use one of: {', '.join(FORMATS)})")
        return fmt
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        return "jsonl"
    if suffix == ".json":
        return "locomo"
    if suffix in (".md", ".markdown"):
        return "md"
    raise IngestError(f"{path}: cannot tell the format from the name; pass --format md|jsonl|locomo")


def _read_text(path: Path) -> str:
    try:
        if path.stat().st_size > _MAX_INPUT_BYTES:
            raise IngestError(f"{path}: larger than {_MAX_INPUT_BYTES} bytes; split it first")
        data = path.read_bytes()
    except OSError as exc:
        raise IngestError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if b"\x00" in data:
        raise IngestError(f"{path}: contains NUL bytes; not a text transcript")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise IngestError(f"{path}: not UTF-8 (byte {exc.start}); convert it to UTF-8") from None
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _norm_ts(value: object, where: str) -> str:
    if not isinstance(value, str | int | float) or isinstance(value, bool):
        raise IngestError(f"{where}: 'ts' must be an ISO datetime string or a Unix time")
    try:
        if isinstance(value, int | float):
            when = dt.datetime.fromtimestamp(value, tz=dt.UTC)
        else:
            when = dt.datetime.fromisoformat(value.strip())
    except (ValueError, OverflowError, OSError):
        raise IngestError(f"{where}: 'ts' {value!r} is not an ISO datetime") from None
    return when.isoformat(timespec="seconds" if when.second else "minutes")


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:120]


def _load_jsonl(path: Path, scope: dict[str, str]) -> Transcript:
    sid = _slug(path.stem)
    if not valid_session_id(sid):
        raise IngestError(f"{path}: cannot make a session id from the file name")
    turns: list[Turn] = []
    last_ts = ""
    for lineno, line in enumerate(_read_text(path).split("\n"), start=1):
        if not line.strip():
            continue
        where = f"{path}:{lineno}"
        try:
            obj = json.loads(line)
        except (json.JSONDecodeError, RecursionError):
            raise IngestError(f"{where}: not a JSON object") from None
        if not isinstance(obj, dict):
            raise IngestError(f"{where}: expected an object with 'role', 'content', 'ts'")
        role, content = obj.get("role"), obj.get("content")
        if not isinstance(role, str) or not role.strip():
            raise IngestError(f"{where}: missing 'role'")
        if not isinstance(content, str):
            raise IngestError(f"{where}: 'content' must be a string")
        if "ts" in obj and obj["ts"] is not None:
            last_ts = _norm_ts(obj["ts"], where)
        elif not last_ts:
            raise IngestError(f"{where}: the first message needs a 'ts'")
        turns.append(Turn(n=len(turns) + 1, speaker=role.strip(), ts=last_ts, text=content.strip()))
    if not turns:
        raise IngestError(f"{path}: no messages")
    participants = tuple(dict.fromkeys(t.speaker for t in turns))
    return Transcript(
        id=sid,
        started=turns[0].ts,
        participants=participants,
        scope=dict(scope),
        turns=tuple(turns),
        meta={},
    )


def _load_md(path: Path, scope: dict[str, str]) -> Transcript:
    try:
        t = parse_transcript(_read_text(path), str(path))
    except PageError as exc:
        raise IngestError(str(exc)) from None
    if not t.turns:
        raise IngestError(f"{path}: no turns (expected '## t1 · speaker · time' headings)")
    if t.scope and t.scope != scope:
        raise IngestError(
            f"{path}: scope {t.scope} does not match this store's scope {scope}; "
            "ingest it into the store of that user"
        )
    return t


def load_sessions(store: Store, path: Path, fmt: str | None = None) -> list[Transcript]:
    """Parse one input file into transcripts (no writes)."""
    scope = {"user": store.config.user, "assistant": store.config.assistant}
    kind = _detect(path, fmt)
    if kind == "jsonl":
        return [_load_jsonl(path, scope)]
    if kind == "md":
        return [_load_md(path, scope)]
    return [s for conv in load_locomo(path, scope) for s in conv.sessions]


def plan_ingest(store: Store, sessions: list[Transcript]) -> list[tuple[SessionChange, str | None]]:
    """For each session: its change and the new file text (None when unchanged).

    Raises ``IngestError`` if any session would change an existing turn.
    """
    plans: list[tuple[SessionChange, str | None]] = []
    seen: set[str] = set()
    for t in sessions:
        if t.id in seen:
            raise IngestError(f"session {t.id} appears twice in this ingest")
        seen.add(t.id)
        path = store.transcript_path(t.id)
        if not path.exists():
            text = render_transcript(t)
            plans.append((SessionChange(t.id, "new", len(t.turns), len(t.turns)), text))
            continue
        try:
            old_text = path.read_text(encoding="utf-8")
            old = parse_transcript(old_text, str(path))
        except (OSError, UnicodeDecodeError, PageError) as exc:
            raise IngestError(f"session {t.id}: the stored transcript is unreadable: {exc}") from None
        for mine, theirs in zip(old.turns, t.turns, strict=False):
            if not mine.same_as(theirs):
                raise IngestError(
                    f"session {t.id}: turn t{mine.n} differs from the stored one; "
                    "transcripts are append-only (use a new session id for new content)"
                )
        new_turns = t.turns[len(old.turns) :]
        if not new_turns:
            plans.append((SessionChange(t.id, "unchanged", 0, len(old.turns)), None))
            continue
        if not old_text.endswith("\n"):
            old_text += "\n"
        text = old_text + "".join(render_turn(turn) for turn in new_turns)
        total = len(old.turns) + len(new_turns)
        plans.append((SessionChange(t.id, "grown", len(new_turns), total), text))
    return plans


def ingest(store: Store, paths: list[Path], fmt: str | None = None) -> IngestResult:
    """Ingest ``paths`` into ``store`` and commit ``ingest: N sessions, M turns``."""
    sessions: list[Transcript] = []
    for path in paths:
        sessions.extend(load_sessions(store, Path(path), fmt))
    with store.lock("write"):
        plans = plan_ingest(store, sessions)
        written: list[str] = []
        for change, text in plans:
            if text is None:
                continue
            path = store.transcript_path(change.id)
            atomic_write_text(path, text)
            written.append(path.relative_to(store.root).as_posix())
        added = sum(c.turns_added for c, _ in plans)
        changed = sum(1 for c, text in plans if text is not None)
        commit = ""
        if written:
            commit = store.commit(f"ingest: {changed} sessions, {added} turns", written)
    return IngestResult(sessions=tuple(c for c, _ in plans), turns_added=added, commit=commit)
