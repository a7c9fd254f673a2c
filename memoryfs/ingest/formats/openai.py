"""``openai``: OpenAI Chat Completions message lists.

Accepts a JSON list of messages, an object with a ``messages`` list (a Chat
Completions request body; its other keys are ignored), or JSONL with one message
per line. A message has a ``role``:

- ``user`` and ``assistant``: their text is kept verbatim as a turn. ``content`` is
  a string, null, or a list of content parts: ``text`` (also ``input_text``,
  ``output_text``) and ``refusal`` parts give their text; an image, audio or file
  part becomes a short line (``[image]``, ``[audio]``, ``[file: report.pdf]``), any
  other part its type in brackets. An assistant's ``refusal`` is its text when it
  has no content.
- An assistant's ``tool_calls`` (``{"id", "type": "function", "function": {"name",
  "arguments"}}``, also ``custom`` tools and the legacy ``function_call``) become
  ``[tool call] name(arguments)`` lines of a ``tool`` turn after the assistant's
  words; ``tool`` messages (``tool_call_id``, optional ``name``) and legacy
  ``function`` messages become ``[tool result] name: output`` lines, the name found
  through ``tool_call_id``. A run of calls and results is one ``tool`` turn.
  Long arguments and outputs are elided (``memoryfs.ingest.formats.tooltext``).
- ``system`` and ``developer``: instructions to the model, not something the user
  said nor memory about them; left out.

Times: ``ts``, ``timestamp`` or ``created_at`` (ISO or Unix seconds). A message
without one takes the time of the message before (the first ones: of the first
message that has one). When no message has a time, every turn gets the file's
modification time (stdin: the time of the import) and the transcript says
``undated: true``. The session id is the file name (as for ``jsonl``); read from
stdin, it comes from the first time, and undated input needs ``--session-id``.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from memoryfs.errors import IngestError
from memoryfs.ingest.formats.imported import Imported, Said, build_transcript
from memoryfs.ingest.formats.naming import named_after_file, named_after_time
from memoryfs.ingest.formats.times import iso_time, parse_time
from memoryfs.ingest.formats.tooltext import call_line, json_text, placeholder, result_line
from memoryfs.ingest.source import Source

__all__ = ["load", "message_list"]

_ROLES = ("system", "developer", "user", "assistant", "tool", "function")
_TIME_KEYS = ("ts", "timestamp", "created_at")
_TEXT_PARTS = ("text", "input_text", "output_text")
_MEDIA_PARTS = {
    "image_url": "image",
    "input_image": "image",
    "image": "image",
    "input_audio": "audio",
    "audio": "audio",
}


def message_list(src: Source) -> list[tuple[str, Any]]:
    """``(where, message)`` for each message of the input, in order."""
    text = src.text.strip()
    if text.startswith("{") and _parses(text.split("\n", 1)[0]):
        records = list(src.json_lines())
        if len(records) == 1 and isinstance(records[0][1], dict) and "role" not in records[0][1]:
            return _body_messages(records[0][1], src.label)  # a request body on one line
        for lineno, record in records:
            if isinstance(record, dict) and "messages" in record:
                raise IngestError(
                    f"{src.label}:{lineno}: a whole conversation ('messages') on one line; "
                    "expected one message per line"
                )
        return [(f"{src.label}:{lineno}", m) for lineno, m in records]
    data = src.json()
    if isinstance(data, dict):
        return _body_messages(data, src.label)
    if not isinstance(data, list):
        raise IngestError(f"{src.label}: expected a list of messages")
    return [(f"{src.label}: message {i}", m) for i, m in enumerate(data, start=1)]


def _body_messages(body: dict[str, Any], label: str) -> list[tuple[str, Any]]:
    messages = body.get("messages")
    if not isinstance(messages, list):
        raise IngestError(
            f"{label}: expected a list of messages or an object with a 'messages' list"
        )
    return [(f"{label}: message {i}", m) for i, m in enumerate(messages, start=1)]


def _parses(line: str) -> bool:
    try:
        json.loads(line)
    except (ValueError, RecursionError):
        return False
    return True


def load(src: Source, scope: dict[str, str]) -> list[Imported]:
    messages = message_list(src)
    if not messages:
        raise IngestError(f"{src.label}: no messages")
    times = _times(messages)
    undated = all(t is None for t in times)
    said: list[Said] = []
    names: dict[str, str] = {}  # tool_call_id -> the tool's name
    for i, ((where, msg), ts) in enumerate(zip(messages, _filled(times, src), strict=True)):
        said.extend(_message(where, msg, ts, str(i), names))
    meta: dict[str, Any] = {"source_format": "openai"}
    if undated:
        meta["undated"] = True
    t = build_transcript("", said, scope, meta)
    if t is None:
        raise IngestError(f"{src.label}: no message of the user, the assistant or a tool")
    # undated input from stdin has nothing to name it by: load_sessions asks for --session-id
    if not src.is_stdin:
        return [named_after_file(src, t, undated=undated)]
    sid = "" if undated else named_after_time(t.started)
    return [Imported(replace(t, id=sid), undated=undated)]


def _times(messages: list[tuple[str, Any]]) -> list[str | None]:
    out: list[str | None] = []
    for where, msg in messages:
        if not isinstance(msg, dict):
            raise IngestError(f"{where}: not an object with 'role' and 'content'")
        key = next((k for k in _TIME_KEYS if msg.get(k) is not None), None)
        out.append(iso_time(parse_time(msg[key], where, key)) if key else None)
    return out


def _filled(times: list[str | None], src: Source) -> list[str]:
    known = [t for t in times if t is not None]
    last = known[0] if known else iso_time(src.modified)
    out = []
    for t in times:
        last = t or last
        out.append(last)
    return out


def _message(
    where: str, msg: dict[str, Any], ts: str, key: str, names: dict[str, str]
) -> list[Said]:
    role = msg.get("role")
    if role not in _ROLES:
        raise IngestError(
            f"{where}: unknown role {str(role)[:40]!r} "
            "(expected system, developer, user, assistant or tool)"
        )
    if role in ("system", "developer"):
        return []
    text = content_text(msg.get("content"), where)
    if role == "user":
        return [Said("user", ts, text, key)]
    if role == "assistant":
        refusal = msg.get("refusal")
        if not text.strip() and isinstance(refusal, str):
            text = refusal
        out = [Said("assistant", ts, text, key)]
        out.extend(Said("tool", ts, line, key) for line in _calls(where, msg, names))
        return out
    call_id = msg.get("tool_call_id")
    name = msg.get("name")
    if isinstance(call_id, str) and call_id in names:
        name = names[call_id]
    return [Said("tool", ts, result_line(name if isinstance(name, str) else "", text), key)]


def _calls(where: str, msg: dict[str, Any], names: dict[str, str]) -> list[str]:
    calls = msg.get("tool_calls")
    if calls is None:
        calls = []
    if not isinstance(calls, list):
        raise IngestError(f"{where}: 'tool_calls' is not a list")
    legacy = msg.get("function_call")
    if isinstance(legacy, dict):
        calls = [*calls, {"type": "function", "function": legacy}]
    lines = []
    for j, call in enumerate(calls, start=1):
        here = f"{where}, tool call {j}"
        if not isinstance(call, dict):
            raise IngestError(f"{here}: not an object")
        kind = call.get("type") if isinstance(call.get("type"), str) else "function"
        body = call.get(kind)
        if not isinstance(body, dict):
            raise IngestError(f"{here}: '{kind}' is not an object with the call's name")
        name = body.get("name")
        if not isinstance(name, str):
            raise IngestError(f"{here}: '{kind}.name' is not a string")
        args = body.get("arguments", body.get("input", ""))
        if isinstance(call.get("id"), str):
            names[call["id"]] = name
        lines.append(call_line(name, json_text(args, here)))
    return lines


def content_text(content: Any, where: str) -> str:
    """A message's ``content`` as text: parts joined by newlines, media as short lines."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise IngestError(f"{where}: 'content' must be a string, a list of content parts or null")
    out = []
    for j, part in enumerate(content, start=1):
        if isinstance(part, str):
            out.append(part)
            continue
        if not isinstance(part, dict) or not isinstance(part.get("type"), str):
            raise IngestError(f"{where}: content part {j} is not an object with a 'type'")
        kind = part["type"]
        if kind in _TEXT_PARTS or kind == "refusal":
            value = part.get("refusal" if kind == "refusal" else "text")
            if not isinstance(value, str):
                raise IngestError(f"{where}: content part {j} ({kind}) has no string text")
            out.append(value)
        elif kind in _MEDIA_PARTS:
            out.append(placeholder(_MEDIA_PARTS[kind]))
        elif kind in ("file", "input_file"):
            info = part.get("file")
            filename = (info if isinstance(info, dict) else part).get("filename")
            out.append(placeholder(f"file: {filename}" if isinstance(filename, str) else "file"))
        elif isinstance(part.get("text"), str):
            out.append(part["text"])
        else:
            out.append(placeholder(kind[:40]))
    return "\n".join(out)
