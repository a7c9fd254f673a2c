"""Importer for LoCoMo conversations (Maharana et al., ACL 2024).

Reads the turns and session dates only. The dataset's ``session_N_summary``,
``session_N_observation``, ``events_session_N`` and the ``query`` of photo turns
are annotations, not memory: this module never reads them. A shared photo
becomes its caption, which is what the other speaker saw.

Every turn keeps its ``dia_id`` in the transcript frontmatter (``dia_ids``,
aligned with the turns), so an evaluation can map gold evidence to anchors.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memoryfs.errors import IngestError
from memoryfs.pages.transcript import Transcript, Turn
from memoryfs.store.slugs import slugify

__all__ = [
    "Conversation",
    "load_locomo",
    "normalize_dia_id",
    "parse_locomo_datetime",
    "conversation_from_dict",
    "conversations_from_json",
]

_DIA_RE = re.compile(r"^\s*D\s*:?\s*(\d{1,4})\s*:\s*0*(\d{1,4})\s*$", re.IGNORECASE)
_SESSION_RE = re.compile(r"^session_(\d{1,6})$")


@dataclass(frozen=True)
class Conversation:
    id: str
    speakers: tuple[str, str]
    sessions: tuple[Transcript, ...]
    dia_map: dict[str, str]  # normalized dia_id -> "sessions/transcripts/<id>.md#tN"
    qa: tuple[dict[str, Any], ...] = ()
    problems: tuple[str, ...] = field(default=())


def normalize_dia_id(raw: object) -> str | None:
    """``D3:5`` form, or None if ambiguous ("D:11:26" -> "D11:26", "D30:05" -> "D30:5")."""
    if not isinstance(raw, str):
        return None
    m = _DIA_RE.match(raw)
    if not m:
        return None
    session, turn = int(m.group(1)), int(m.group(2))
    if session == 0 or turn == 0:
        return None
    return f"D{session}:{turn}"


def parse_locomo_datetime(value: str) -> dt.datetime:
    """``"1:56 pm on 8 May, 2023"`` -> datetime; raises ValueError otherwise."""
    text = " ".join(str(value).replace(",", ", ").split()).replace(" ,", ",")
    for fmt in ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y", "%H:%M on %d %B, %Y"):
        try:
            return dt.datetime.strptime(text, fmt)
        except ValueError:
            continue
    raise ValueError(f"unrecognized LoCoMo date {value!r} (expected like '1:56 pm on 8 May, 2023')")


def _slug(text: str) -> str:
    return slugify(text, 120, empty="conversation")


def conversation_from_dict(
    data: dict[str, Any], default_id: str, scope: dict[str, str]
) -> Conversation:
    conv = data.get("conversation", data)
    if not isinstance(conv, dict):
        raise IngestError(f"{default_id}: 'conversation' is not an object")
    cid = _slug(str(data.get("sample_id") or default_id))
    a, b = conv.get("speaker_a"), conv.get("speaker_b")
    if not isinstance(a, str) or not isinstance(b, str):
        raise IngestError(f"{cid}: LoCoMo conversation needs string 'speaker_a' and 'speaker_b'")
    problems: list[str] = []
    numbers = sorted(  # (n, key): "session_01" and "session_1" are both session 1
        (int(m.group(1)), k)
        for k in conv
        if (m := _SESSION_RE.match(k)) and isinstance(conv[k], list)
    )
    sessions: list[Transcript] = []
    dia_map: dict[str, str] = {}
    taken: dict[int, str] = {}
    for n, key in numbers:
        turns_raw = conv[key]
        if not turns_raw:
            continue
        if n in taken:  # one transcript id per session number: neither is dropped silently
            raise IngestError(f"{cid}: '{taken[n]}' and '{key}' are both session {n}")
        taken[n] = key
        when_raw = conv.get(f"session_{n}_date_time")
        if not isinstance(when_raw, str):
            raise IngestError(f"{cid}: session_{n} has no session_{n}_date_time")
        try:
            when = parse_locomo_datetime(when_raw)
        except ValueError as exc:
            raise IngestError(f"{cid}: session_{n}: {exc}") from None
        ts = when.isoformat(timespec="minutes")
        sid = f"{when.date().isoformat()}-{cid}-s{n:02d}"
        turns: list[Turn] = []
        dia_ids: list[str] = []
        for i, raw in enumerate(turns_raw, start=1):
            if not isinstance(raw, dict):
                problems.append(f"{cid}: session_{n} turn {i} is not an object; skipped")
                continue
            text = raw.get("text")
            text = text if isinstance(text, str) else ""
            caption = raw.get("blip_caption")
            if isinstance(caption, str) and caption.strip():
                text = (
                    f"{text}\n\n[shared a photo: {caption.strip()}]"
                    if text
                    else f"[shared a photo: {caption.strip()}]"
                )
            speaker = raw.get("speaker")
            turn_no = len(turns) + 1
            turns.append(
                Turn(
                    n=turn_no,
                    speaker=str(speaker)
                    if isinstance(speaker, str) and speaker.strip()
                    else "unknown",
                    ts=ts,
                    text=text.replace("\r\n", "\n").strip(),
                )
            )
            raw_id = raw.get("dia_id")
            dia = normalize_dia_id(raw_id)
            if dia is None:
                problems.append(f"{cid}: session_{n} turn {i}: malformed dia_id {raw_id!r}")
                dia_ids.append(str(raw_id))
                continue
            dia_ids.append(dia)
            anchor = f"sessions/transcripts/{sid}.md#t{turn_no}"
            if dia in dia_map:
                problems.append(f"{cid}: duplicate dia_id {dia}; first kept")
            else:
                dia_map[dia] = anchor
        if not turns:
            problems.append(f"{cid}: session_{n} has no turn that is an object; skipped")
            continue
        sessions.append(
            Transcript(
                id=sid,
                started=ts,
                participants=(a, b),
                scope=dict(scope),
                turns=tuple(turns),
                meta={
                    "title": f"{a} and {b}, session {n}",
                    "source": {"format": "locomo", "conversation": cid, "session": n},
                    "dia_ids": dia_ids,
                },
            )
        )
    qa = data.get("qa", [])
    return Conversation(
        id=cid,
        speakers=(a, b),
        sessions=tuple(sessions),
        dia_map=dia_map,
        qa=tuple(q for q in qa if isinstance(q, dict)) if isinstance(qa, list) else (),
        problems=tuple(problems),
    )


def load_locomo(path: Path, scope: dict[str, str]) -> list[Conversation]:
    """All conversations in a LoCoMo file (one conversation object, or a list of them)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:  # ValueError: bad JSON or UTF-8
        raise IngestError(f"{path}: not a readable LoCoMo JSON file: {exc}") from None
    return conversations_from_json(data, Path(path).stem, scope, str(path))


def conversations_from_json(
    data: Any, stem: str, scope: dict[str, str], where: str
) -> list[Conversation]:
    """The conversations of a parsed LoCoMo document; ``stem`` names one without a
    ``sample_id``, ``where`` names the input in errors."""
    items = data if isinstance(data, list) else [data]
    out = []
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise IngestError(f"{where}: item {i} is not a LoCoMo conversation object")
        default = stem if len(items) == 1 else f"{stem}-{i + 1}"
        out.append(conversation_from_dict(item, default, scope))
    return out
