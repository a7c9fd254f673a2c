"""What a format loader returns, and how said pieces become numbered turns.

Every loader has the signature ``load(source, scope) -> list[Imported]``. It reads
its input into ``Said`` pieces (who, when, the text), and ``build_transcript``
numbers them into turns ``t1, t2, ...`` in order. Speakers are the store's roles
``user``, ``assistant`` and ``tool`` (LoCoMo and the store's own Markdown keep
their names).

``Imported`` carries what the store needs beyond the transcript: the source's own
id for the conversation (so re-importing an updated export appends to the session
the first import made) and whether the input had no times at all.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from memoryfs.pages.transcript import Transcript, Turn

__all__ = ["Said", "Imported", "build_transcript"]


@dataclass(frozen=True)
class Said:
    """One piece of a session before numbering."""

    speaker: str  # user | assistant | tool
    ts: str  # as the transcript writes it (``memoryfs.ingest.formats.times.iso_time``)
    text: str
    message: str = ""  # pieces of one source message share it (a message split in parts)


@dataclass(frozen=True)
class Imported:
    """One session read from an input."""

    transcript: Transcript
    source_id: str = ""  # the source's own id of the conversation; "" when it has none
    undated: bool = False  # the input has no times: every turn has the fallback time
    # the file name (without extension) the session id was made from; "" when not
    source_name: str = ""


def _joins(prev: Said, cur: Said, merge_tools: bool) -> bool:
    if prev.speaker != cur.speaker:
        return False
    if merge_tools and cur.speaker == "tool":
        return True
    return bool(cur.message) and cur.message == prev.message


def build_transcript(
    sid: str,
    said: Sequence[Said],
    scope: dict[str, str],
    meta: dict[str, Any],
    *,
    started: str = "",
    merge_tools: bool = True,
    keep_empty: bool = False,
) -> Transcript | None:
    """Number ``said`` into turns; None when nothing was said.

    With ``merge_tools`` a run of tool pieces (calls and results with no words of
    the user or the assistant between them) is one ``tool`` turn, one line per call
    or result. Consecutive pieces of one source message (same ``message``) are one
    turn. Anything else is a turn of its own, with the time of its first piece.
    Pieces without text are dropped unless ``keep_empty``.
    """
    groups: list[list[Said]] = []
    for piece in said:
        # the store reads CR and CRLF as LF: written otherwise, a re-import would differ
        text = piece.text.replace("\r\n", "\n").replace("\r", "\n").strip("\n")
        if not text.strip() and not keep_empty:
            continue
        piece = Said(piece.speaker, piece.ts, text, piece.message)
        if groups and _joins(groups[-1][-1], piece, merge_tools):
            groups[-1].append(piece)
        else:
            groups.append([piece])
    if not groups:
        return None
    turns = tuple(
        Turn(
            n=i,
            speaker=group[0].speaker,
            ts=group[0].ts,
            text=("\n" if group[0].speaker == "tool" else "\n\n").join(p.text for p in group),
        )
        for i, group in enumerate(groups, start=1)
    )
    return Transcript(
        id=sid,
        started=started or turns[0].ts,
        participants=tuple(dict.fromkeys(t.speaker for t in turns)),
        scope=dict(scope),
        turns=turns,
        meta=dict(meta),
    )
