"""``jsonl``: chat logs with one ``{"role", "content", "ts"}`` object per line.

``role`` is any non-empty string and becomes the turn's speaker as written;
``content`` is the turn's text (a string); ``ts`` is an ISO datetime or a Unix time.
A message without ``ts`` takes the time of the one before; the first needs one. The
session id is the file name, lower-cased with other characters than letters and
digits turned into ``-`` (``Chat Log 7.jsonl`` -> ``chat-log-7``; the name is kept as
``source_name``, so another name with the same id gets ``-2``); read from stdin,
it comes from the first time (``named_after_time``) unless ``--session-id`` names it.
"""

from __future__ import annotations

from memoryfs.errors import IngestError
from memoryfs.ingest.formats.imported import Imported, Said, build_transcript
from memoryfs.ingest.formats.naming import named_after_file, named_after_time
from memoryfs.ingest.formats.times import iso_time, parse_time
from memoryfs.ingest.source import Source

__all__ = ["load"]


def load(src: Source, scope: dict[str, str]) -> list[Imported]:
    said: list[Said] = []
    last_ts = ""
    for lineno, obj in src.json_lines():
        where = f"{src.label}:{lineno}"
        if not isinstance(obj, dict):
            raise IngestError(f"{where}: expected an object with 'role', 'content', 'ts'")
        role, content = obj.get("role"), obj.get("content")
        if not isinstance(role, str) or not role.strip():
            raise IngestError(f"{where}: missing 'role'")
        if not isinstance(content, str):
            raise IngestError(
                f"{where}: 'content' must be a string "
                "(OpenAI-style content parts or tool calls: pass --format openai)"
            )
        if obj.get("ts") is not None:
            last_ts = iso_time(parse_time(obj["ts"], where))
        elif not last_ts:
            raise IngestError(
                f"{where}: the first message needs a 'ts' "
                "(OpenAI-style messages without times: pass --format openai)"
            )
        said.append(Said(role.strip(), last_ts, content.strip(), message=str(lineno)))
    if not said:
        raise IngestError(f"{src.label}: no messages")
    # an empty message is a turn too: turn numbers follow the log's messages
    t = build_transcript(
        named_after_time(said[0].ts), said, scope, {}, merge_tools=False, keep_empty=True
    )
    if t is None:
        raise IngestError(f"{src.label}: no messages")
    return [Imported(t) if src.is_stdin else named_after_file(src, t)]
