"""``chatgpt``: the ``conversations.json`` of a ChatGPT data export.

The file is a list of conversations (also accepted: an object with a
``conversations`` list, or one conversation object). A conversation has ``title``,
``create_time`` (Unix seconds), ``mapping`` (node id -> ``{id, message, parent,
children}``) and ``current_node``. One session per conversation:

- **The current branch only.** The message tree keeps every regenerated answer and
  every edited question; what the user last saw is the path from ``current_node``
  up through ``parent`` to the root, reversed. A parent that is not in the mapping
  ends the path (exports point the root at a placeholder); a cycle is an error.
  Without ``current_node``, the leaf with the latest message is the current one.
- **Kept messages**, one turn each, numbered in path order (the first kept message
  is ``t1``): ``user`` and ``assistant`` messages with text, verbatim; ``tool``
  messages as ``[tool result] name: output`` (``author.name``, e.g. ``python``,
  ``browser``), elided when long; an assistant message addressed to a tool
  (``recipient`` other than ``all``) as ``[tool call] recipient(input)``.
- **Skipped**: null messages (the root); ``system`` messages (the model's
  instructions; custom instructions too); messages with
  ``metadata.is_visually_hidden_from_conversation`` (context the user never saw);
  reasoning (``thoughts``, ``reasoning_recap``, the ``analysis`` channel: the model
  thinking, not something said); ``user_editable_context`` and
  ``model_editable_context`` (profile and memory context, not conversation); and
  messages left with no text (e.g. an empty browsing placeholder).
- **Content types**: ``text`` and ``multimodal_text`` join their ``parts``; a part
  that is not a string is ``[image]`` (``[audio]``, ``[video]``, ``[file]``) or, for
  a voice message, its transcription. ``code`` is the code (a fenced block when
  said to the user); ``execution_output``, ``tether_browsing_display``,
  ``tether_quote`` and ``system_error`` are tool results; any other type gives
  its ``text`` or ``parts``, or nothing. Uploaded files (``metadata.attachments``)
  add ``[file: name]``.

Times: a message's ``create_time``, else the conversation's. Session id:
``<YYYY-MM-DD>-<slug>`` with the conversation's ``create_time`` as a UTC date and
the title's slug (``memoryfs.ingest.formats.naming.title_slug``); two conversations
of one file with the same id get ``-2``, ``-3`` in file order. The conversation's
``id`` (or ``conversation_id``) is kept as ``source_id`` in the frontmatter, so an
updated export appends to the session its first import made, even after a rename.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from typing import Any

from memoryfs.errors import IngestError
from memoryfs.ingest.formats.imported import Imported, Said, build_transcript
from memoryfs.ingest.formats.naming import title_slug
from memoryfs.ingest.formats.times import iso_time, parse_time, utc_date
from memoryfs.ingest.formats.tooltext import call_line, placeholder, result_line
from memoryfs.ingest.source import Source

__all__ = ["load", "conversation_list"]

_SKIPPED_TYPES = frozenset(
    {"thoughts", "reasoning_recap", "user_editable_context", "model_editable_context"}
)
_TOOL_RESULT_TYPES = frozenset(
    {"execution_output", "tether_browsing_display", "tether_quote", "system_error"}
)
_ROLES = ("user", "assistant", "tool", "system")


def conversation_list(data: Any) -> list[Any] | None:
    """The conversations of a parsed export; None when it does not look like one."""
    if isinstance(data, dict) and isinstance(data.get("conversations"), list):
        data = data["conversations"]
    if isinstance(data, dict) and "mapping" in data:
        return [data]
    if isinstance(data, list) and all(isinstance(c, dict) and "mapping" in c for c in data[:1]):
        return data
    return None


def load(src: Source, scope: dict[str, str]) -> list[Imported]:
    conversations = conversation_list(src.json())
    if conversations is None:
        raise IngestError(
            f"{src.label}: not a ChatGPT export (expected a list of conversations with "
            "a 'mapping' each)"
        )
    out: list[Imported] = []
    assigned: set[str] = set()
    for i, conv in enumerate(conversations, start=1):
        imported = _conversation(src.label, i, conv, scope)
        if imported is None:
            continue
        base = sid = imported.transcript.id
        n = 1
        while sid in assigned:  # the same date and title again: -2, -3 in file order
            n += 1
            sid = f"{base}-{n}"
        assigned.add(sid)
        if sid != base:
            imported = replace(imported, transcript=replace(imported.transcript, id=sid))
        out.append(imported)
    return out


def _conversation(label: str, i: int, conv: Any, scope: dict[str, str]) -> Imported | None:
    if not isinstance(conv, dict):
        raise IngestError(f"{label}: conversation {i} is not an object")
    title = conv.get("title")
    title = title if isinstance(title, str) else ""
    where = f"{label}: conversation {i} ({title[:60]!r})"
    mapping = conv.get("mapping")
    if not isinstance(mapping, dict):
        raise IngestError(f"{where}: 'mapping' is not an object")
    path = _current_path(where, mapping, conv.get("current_node"))
    created = _conversation_time(where, conv, path)
    if created is None:
        return None  # nothing in it has a time: an empty conversation
    said: list[Said] = []
    for node_id, node in path:
        here = f"{where}, node {_short(node_id)}"
        piece = _message(here, node.get("message"), created)
        if piece is not None:
            said.append(piece)
    sid = f"{utc_date(created)}-{title_slug(title)}"
    source_id = conv.get("id") or conv.get("conversation_id")
    source_id = source_id if isinstance(source_id, str) else ""
    meta: dict[str, Any] = {"title": title} if title else {}
    meta["source_format"] = "chatgpt"
    if source_id:
        meta["source_id"] = source_id
    t = build_transcript(sid, said, scope, meta, started=iso_time(created), merge_tools=False)
    if t is None:
        return None  # nothing kept: a conversation of hidden or empty messages
    return Imported(t, source_id=source_id)


def _short(node_id: str) -> str:
    return node_id if len(node_id) <= 8 else node_id[:8] + "…"


def _current_path(where: str, mapping: dict[str, Any], current: Any) -> list[tuple[str, Any]]:
    """The nodes from the root to ``current``, each checked to be an object."""
    if current is None:
        current = _latest_leaf(mapping)
        if current is None:
            return []
    if not isinstance(current, str) or current not in mapping:
        raise IngestError(f"{where}: current_node {str(current)[:40]!r} is not in the mapping")
    path: list[tuple[str, Any]] = []
    seen: set[str] = set()
    node_id: Any = current
    while isinstance(node_id, str) and node_id in mapping:
        if node_id in seen:
            raise IngestError(f"{where}, node {_short(node_id)}: the parent chain is a cycle")
        seen.add(node_id)
        node = mapping[node_id]
        if not isinstance(node, dict):
            raise IngestError(f"{where}, node {_short(node_id)}: not an object")
        path.append((node_id, node))
        node_id = node.get("parent")
    if node_id is not None and not isinstance(node_id, str):
        raise IngestError(f"{where}, node {_short(path[-1][0])}: 'parent' is not a string")
    path.reverse()
    return path


def _latest_leaf(mapping: dict[str, Any]) -> str | None:
    best: tuple[float, int] | None = None
    found = None
    for k, (node_id, node) in enumerate(mapping.items()):
        if not isinstance(node, dict) or node.get("children"):
            continue
        msg = node.get("message")
        when = msg.get("create_time") if isinstance(msg, dict) else None
        key = (float(when) if isinstance(when, int | float) else 0.0, k)
        if best is None or key > best:
            best, found = key, node_id
    return found


def _conversation_time(
    where: str, conv: dict[str, Any], path: list[tuple[str, Any]]
) -> dt.datetime | None:
    if conv.get("create_time") is not None:
        return parse_time(conv["create_time"], where, "create_time")
    for node_id, node in path:
        msg = node.get("message")
        if isinstance(msg, dict) and msg.get("create_time") is not None:
            return parse_time(msg["create_time"], f"{where}, node {_short(node_id)}", "create_time")
    return None


def _message(here: str, msg: Any, created: dt.datetime) -> Said | None:
    if msg is None:
        return None
    if not isinstance(msg, dict):
        raise IngestError(f"{here}: 'message' is not an object")
    author = msg.get("author")
    if not isinstance(author, dict):
        raise IngestError(f"{here}: message.author is not an object")
    role = author.get("role")
    if role not in _ROLES:
        raise IngestError(f"{here}: unknown author role {str(role)[:40]!r}")
    metadata = msg.get("metadata")
    metadata = metadata if isinstance(metadata, dict) else {}
    if role == "system" or metadata.get("is_visually_hidden_from_conversation") is True:
        return None
    if msg.get("channel") == "analysis":
        return None
    content = msg.get("content")
    if not isinstance(content, dict):
        raise IngestError(f"{here}: message.content is not an object")
    kind = content.get("content_type")
    if not isinstance(kind, str):
        raise IngestError(f"{here}: message.content.content_type is not a string")
    if kind in _SKIPPED_TYPES:
        return None
    when = created
    if msg.get("create_time") is not None:
        when = parse_time(msg["create_time"], here, "create_time")
    ts = iso_time(when)
    text = _content_text(here, kind, content)
    name = author.get("name")
    name = name if isinstance(name, str) else ""
    recipient = msg.get("recipient")
    if role == "tool" or kind in _TOOL_RESULT_TYPES:
        if not text.strip():
            return None
        return Said("tool", ts, result_line(name, text, error=kind == "system_error"))
    if role == "assistant" and isinstance(recipient, str) and recipient not in ("all", ""):
        return Said("tool", ts, call_line(recipient, text))
    if kind == "code" and text.strip():
        language = content.get("language")
        fence = language if isinstance(language, str) and language != "unknown" else ""
        text = f"```{fence}\n{text}\n```"
    text = "\n".join(filter(None, [text, *_attachments(metadata)]))
    return Said(role, ts, text)


def _content_text(here: str, kind: str, content: dict[str, Any]) -> str:
    if kind == "tether_quote":
        source = " ".join(
            str(content[k]) for k in ("title", "url") if isinstance(content.get(k), str)
        )
        text = content.get("text")
        quoted = text if isinstance(text, str) else ""
        return f"quote from {source}: {quoted}" if source else quoted
    if kind == "tether_browsing_display":
        parts = [content.get(k) for k in ("result", "summary")]
        return "\n".join(p for p in parts if isinstance(p, str) and p)
    if kind == "system_error":
        name, text = content.get("name"), content.get("text")
        return ": ".join(p for p in (name, text) if isinstance(p, str) and p)
    if "parts" in content:
        parts = content["parts"]
        if not isinstance(parts, list):
            raise IngestError(f"{here}: message.content.parts is not a list")
        return "\n".join(filter(None, (_part(p) for p in parts)))
    text = content.get("text")
    return text if isinstance(text, str) else ""


def _part(part: Any) -> str:
    if isinstance(part, str):
        return part
    if not isinstance(part, dict):
        return ""
    kind = part.get("content_type")
    kind = kind if isinstance(kind, str) else ""
    if isinstance(part.get("text"), str):  # audio_transcription: what was said aloud
        return str(part["text"])
    for media in ("image", "audio", "video"):
        if media in kind:
            return placeholder(media)
    return placeholder("file")


def _attachments(metadata: dict[str, Any]) -> list[str]:
    found = metadata.get("attachments")
    if not isinstance(found, list):
        return []
    names = [a.get("name") for a in found if isinstance(a, dict)]
    return [placeholder(f"file: {n}") for n in names if isinstance(n, str) and n]
