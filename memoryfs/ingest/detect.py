"""Which format an input is in, when ``--format`` does not say.

By name first: ``.md``/``.markdown`` is ``md``. Then by content, where it is
unambiguous:

- JSON (``.json``, or another input that parses as one JSON document): a ``mapping`` in
  the conversations is ``chatgpt``; a list of objects with ``role``, or an object
  with a ``messages`` list, is ``openai``; an object (or a list of them) with
  ``conversation``, ``speaker_a`` or ``sample_id`` is ``locomo``.
- JSONL (``.jsonl``/``.ndjson``, or another input whose first line is a JSON object): a
  first entry with Claude Code's keys (``sessionId``, ``uuid``, ``parentUuid``, or
  a ``type`` with a ``message``) is ``claude-code``; a first message with OpenAI's
  marks (a ``system``/``developer``/``tool`` role, content parts, ``tool_calls``,
  ``tool_call_id``) is ``openai``; any other is ``jsonl``.
- Text that starts with ``---`` is ``md``.

Anything else is an error asking for ``--format``.
"""

from __future__ import annotations

from typing import Any

from memoryfs.errors import IngestError
from memoryfs.ingest.formats import FORMATS
from memoryfs.ingest.formats.chatgpt import conversation_list
from memoryfs.ingest.formats.claude_code import looks_like_entry
from memoryfs.ingest.source import Source, parse_json

__all__ = ["detect"]

_OPENAI_ROLES = ("system", "developer", "tool", "function")
_OPENAI_KEYS = ("tool_calls", "tool_call_id", "function_call", "refusal")
_LOCOMO_KEYS = ("conversation", "speaker_a", "sample_id")


def _ask(src: Source, what: str) -> IngestError:
    return IngestError(f"{src.label}: {what}; pass --format {'|'.join(FORMATS)}")


def detect(src: Source, fmt: str | None) -> str:
    if fmt:
        if fmt not in FORMATS:
            raise IngestError(f"unknown format {fmt!r} (use one of: {', '.join(FORMATS)})")
        return fmt
    if src.suffix in (".md", ".markdown"):
        return "md"
    if src.suffix == ".json":
        return _json_format(src, src.json())
    if src.suffix in (".jsonl", ".ndjson"):
        return _lines_format(src) or "jsonl"
    text = src.text.lstrip()
    if text.startswith("---"):
        return "md"
    found = _lines_format(src) if text.startswith("{") else None
    if found:
        return found
    if text.startswith(("{", "[")):
        return _json_format(src, src.json())
    raise _ask(src, "cannot tell the format (not Markdown, JSON or JSONL)")


def _json_format(src: Source, data: Any) -> str:
    if isinstance(data, list) and not data:
        raise IngestError(f"{src.label}: an empty list; nothing to ingest")
    if conversation_list(data) is not None:
        return "chatgpt"
    first = data[0] if isinstance(data, list) and data else data
    if isinstance(data, dict) and isinstance(data.get("messages"), list):
        return "openai"
    if isinstance(data, list) and isinstance(first, dict) and "role" in first:
        return "openai"
    if isinstance(first, dict) and any(k in first for k in _LOCOMO_KEYS):
        return "locomo"
    raise _ask(
        src, "cannot tell what this JSON holds (not a ChatGPT export, OpenAI messages or LoCoMo)"
    )


def _lines_format(src: Source) -> str | None:
    """The format a JSONL input's first line shows; None when it shows none."""
    first = next((line for line in src.text.split("\n") if line.strip()), "")
    try:
        obj = parse_json(first, src.label, line_of_file=True)
    except IngestError:
        return None
    if looks_like_entry(obj):
        return "claude-code"
    if not isinstance(obj, dict) or "role" not in obj:
        return None
    content = obj.get("content")
    if (
        obj.get("role") in _OPENAI_ROLES
        or any(k in obj for k in _OPENAI_KEYS)
        or isinstance(content, list)
    ):
        return "openai"
    return "jsonl"
