"""Which format an input is in, when ``--format`` does not say.

By name first: ``.md``/``.markdown`` is ``md``. Then by content, where it is
unambiguous:

- JSON (``.json``, or another input that parses as one JSON document): a ``mapping`` in
  the conversations is ``chatgpt``; a list of objects with ``role``, or an object
  with a ``messages`` list, is ``openai``; an object (or a list of them) whose
  ``conversation`` is an object, or that names ``speaker_a``, is ``locomo``. A
  document of none of these shapes, or of several, is not guessed at: the name
  ``.json`` says nothing of which of these it is. A ``.json`` file that is not one
  JSON document but whose first line is a JSON object is read as JSONL (below).
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
        try:
            data = src.json()
        except IngestError:
            found = _lines_format(src) if src.text.lstrip().startswith("{") else None
            if found:
                return found
            raise
        return _json_format(src, data)
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
    shapes = _json_shapes(data)
    if len(shapes) > 1:
        raise _ask(src, f"this JSON has the shape of several formats ({', '.join(shapes)})")
    if not shapes:
        raise _ask(
            src,
            "cannot tell what this JSON holds (not a ChatGPT export, OpenAI messages or LoCoMo)",
        )
    return shapes[0]


def _json_shapes(data: Any) -> list[str]:
    """Every format whose shape the parsed document ``data`` has, in ``FORMATS`` order."""
    first = data[0] if isinstance(data, list) and data else data
    shapes = []
    if isinstance(first, dict) and (
        isinstance(first.get("conversation"), dict) or "speaker_a" in first
    ):
        shapes.append("locomo")
    if (isinstance(data, dict) and isinstance(data.get("messages"), list)) or (
        isinstance(data, list) and isinstance(first, dict) and "role" in first
    ):
        shapes.append("openai")
    if conversation_list(data) is not None:
        shapes.append("chatgpt")
    return shapes


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
