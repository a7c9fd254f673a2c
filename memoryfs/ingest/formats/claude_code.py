"""``claude-code``: Claude Code session logs, one JSONL file per session as Claude Code
writes them under ``~/.claude/projects/<project>/<session-uuid>.jsonl``.

Each line is an entry with a ``type``. The ``user`` and ``assistant`` entries of the
main conversation become turns, in file order:

- A user entry's ``message.content`` is a string (what the user typed, verbatim,
  slash commands included) or a list of blocks: ``text`` verbatim, ``image`` as
  ``[image]``, ``document`` as ``[file]``. ``tool_result`` blocks (``tool_use_id``,
  ``content``, ``is_error``) are tool traffic, not something the user said:
  ``[tool result] Name: output`` (``[tool error]`` when ``is_error``), the name
  taken from the matching ``tool_use``. A user string that is only the output of a
  local command (``<local-command-stdout>``, ``<bash-stdout>``, ``<bash-stderr>``)
  is a tool result too.
- An assistant entry's ``text`` blocks are kept verbatim; Claude Code writes one
  API message as several entries (one block each, one ``message.id``) and those are
  one turn. ``tool_use`` blocks (``id``, ``name``, ``input``) become
  ``[tool call] Name({...input...})``. A run of calls and results is one ``tool``
  turn; long inputs and outputs are elided (``memoryfs.ingest.formats.tooltext``).

Skipped, and why:

- ``thinking`` and ``redacted_thinking`` blocks: the model's reasoning, not
  something said to the user (and often not shown to them).
- Entries with ``isMeta``: text Claude Code wrote itself (command caveats, skill
  and hook notices), never typed by the user.
- Entries with ``isSidechain``: a subagent's own conversation with its tools. What
  was delegated and what came back are the ``Task`` call and its result, which are
  in the main conversation.
- Compaction summaries (``isCompactSummary``, ``isVisibleInTranscriptOnly``): a
  model's summary of turns the transcript already holds.
- Every other type (``summary``, ``ai-title``, ``system``,
  ``file-history-snapshot``, ...): bookkeeping. The last ``ai-title`` or
  ``summary`` becomes the transcript's ``title``.

Branches abandoned by a rewind stay, in file order: they were said, and Claude Code
only appends to the file, so re-importing a grown log appends to the session. An
unterminated last line is a write in progress and is left for the next import; any
other line that is not a JSON object is an error.

Times are each entry's ``timestamp`` (ISO, UTC). Session id:
``<YYYY-MM-DD>-<first 8 characters of sessionId>``, the date being the UTC date of
the first time in the file; ``sessionId`` is kept as ``source_id`` and the first
``cwd`` as ``project``.
"""

from __future__ import annotations

import re
from typing import Any

from memoryfs.errors import IngestError
from memoryfs.ingest.formats.imported import Imported, Said, build_transcript
from memoryfs.ingest.formats.times import iso_time, parse_time, utc_date
from memoryfs.ingest.formats.tooltext import call_line, json_text, placeholder, result_line
from memoryfs.ingest.source import Source, parse_json

__all__ = ["load", "looks_like_entry"]

_SKIP_FLAGS = ("isSidechain", "isMeta", "isCompactSummary", "isVisibleInTranscriptOnly")
_COMMAND_OUTPUT = {
    "<local-command-stdout>": "command",
    "<bash-stdout>": "bash",
    "<bash-stderr>": "bash",
}
_ENTRY_KEYS = ("sessionId", "parentUuid", "leafUuid", "uuid")
# entry types only Claude Code writes (a log can start with any of them)
_ENTRY_TYPES = ("summary", "file-history-snapshot", "queue-operation", "ai-title", "last-prompt")
_NOT_SLUG_RE = re.compile(r"[^a-z0-9]+")


def looks_like_entry(obj: Any) -> bool:
    """Whether a parsed line reads as a Claude Code log entry."""
    return isinstance(obj, dict) and (
        any(k in obj for k in _ENTRY_KEYS)
        or obj.get("type") in _ENTRY_TYPES
        or (isinstance(obj.get("type"), str) and isinstance(obj.get("message"), dict))
    )


class _Session:
    """What the entries of one log say, gathered line by line."""

    def __init__(self) -> None:
        self.said: list[Said] = []
        self.names: dict[str, str] = {}  # tool_use id -> tool name
        self.session_id = ""
        self.first_time: Any = None
        self.last_ts = ""
        self.title = ""
        self.project = ""


def _entries(src: Source) -> list[tuple[str, dict[str, Any]]]:
    lines = src.text.split("\n")
    unterminated = not src.text.endswith("\n")
    out = []
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{src.label}:{lineno}"
        try:
            obj = parse_json(line, where, line_of_file=True)
        except IngestError:
            if unterminated and lineno == len(lines):
                break  # a write in progress: its line is read by the next import
            raise
        if not isinstance(obj, dict):
            raise IngestError(f"{where}: not a JSON object")
        out.append((where, obj))
    return out


def load(src: Source, scope: dict[str, str]) -> list[Imported]:
    s = _Session()
    for where, entry in _entries(src):
        _entry(where, entry, s)
    if s.first_time is None:
        return []  # no timed entry: nothing was said (a log of snapshots only)
    sid_part = _NOT_SLUG_RE.sub("", (s.session_id or src.stem).lower())[:8]
    if not sid_part:
        raise IngestError(f"{src.label}: no 'sessionId' in any entry")
    meta: dict[str, Any] = {"source_format": "claude-code"}
    if s.title:
        meta["title"] = s.title
    if s.session_id:
        meta["source_id"] = s.session_id
    if s.project:
        meta["project"] = s.project
    t = build_transcript(f"{utc_date(s.first_time)}-{sid_part}", s.said, scope, meta)
    if t is None:
        return []  # a log of sidechains, meta entries and snapshots: nothing said
    return [Imported(t, source_id=s.session_id)]


def _entry(where: str, entry: dict[str, Any], s: _Session) -> None:
    if isinstance(entry.get("sessionId"), str) and not s.session_id:
        s.session_id = entry["sessionId"]
    if isinstance(entry.get("cwd"), str) and not s.project:
        s.project = entry["cwd"]
    stamp = entry.get("timestamp")
    ts = ""
    if stamp is not None:
        when = parse_time(stamp, where, "timestamp")
        s.first_time = s.first_time or when
        ts = iso_time(when)
    kind = entry.get("type")
    if kind == "ai-title" and isinstance(entry.get("aiTitle"), str):
        s.title = entry["aiTitle"]
    elif kind == "summary" and isinstance(entry.get("summary"), str):
        s.title = entry["summary"]
    if kind not in ("user", "assistant") or any(entry.get(f) is True for f in _SKIP_FLAGS):
        return
    s.last_ts = ts or s.last_ts
    if not s.last_ts:
        raise IngestError(f"{where}: the first message needs a 'timestamp'")
    message = entry.get("message")
    if not isinstance(message, dict):
        raise IngestError(f"{where}: 'message' is not an object")
    content = message.get("content")
    key = message.get("id") if kind == "assistant" else entry.get("uuid")
    key = key if isinstance(key, str) else where
    if isinstance(content, str):
        blocks: list[Any] = [{"type": "text", "text": content}]
    elif isinstance(content, list):
        blocks = content
    else:
        raise IngestError(f"{where}: message.content is neither a string nor a list of blocks")
    for j, block in enumerate(blocks, start=1):
        if not isinstance(block, dict):
            raise IngestError(f"{where}: content block {j} is not an object")
        piece = _block(f"{where}, block {j}", str(kind), block, s)
        if piece is not None:
            speaker, text = piece
            s.said.append(Said(speaker, s.last_ts, text, key))


def _block(where: str, kind: str, block: dict[str, Any], s: _Session) -> tuple[str, str] | None:
    """``(speaker, text)`` for one content block, None for one that says nothing."""
    btype = block.get("type")
    btype = btype if isinstance(btype, str) else ""
    if btype in ("thinking", "redacted_thinking"):
        return None
    if btype in ("image", "document"):
        return kind, placeholder("image" if btype == "image" else "file")
    if btype.endswith("tool_use"):  # also server_tool_use
        name = block.get("name")
        name = name if isinstance(name, str) else "tool"
        if isinstance(block.get("id"), str):
            s.names[block["id"]] = name
        return "tool", call_line(name, json_text(block.get("input", {}), where))
    if btype.endswith("tool_result"):  # also web_search_tool_result
        call = block.get("tool_use_id")
        name = s.names.get(call, "") if isinstance(call, str) else ""
        text = _result_text(where, block.get("content"))
        return "tool", result_line(name, text, error=block.get("is_error") is True)
    said = block.get("text")  # a text block, or one of another type that carries text
    if not isinstance(said, str):
        return None
    if kind == "user":
        for tag, name in _COMMAND_OUTPUT.items():
            if said.lstrip().startswith(tag):
                return "tool", result_line(name, said)
    return kind, said


def _result_text(where: str, content: Any) -> str:
    if content is None or isinstance(content, str):
        return content or ""
    if not isinstance(content, list):
        return json_text(content, where)
    out = []
    for item in content:
        if isinstance(item, dict) and isinstance(item.get("text"), str):
            out.append(item["text"])
        elif isinstance(item, dict) and item.get("type") == "image":
            out.append(placeholder("image"))
        else:
            out.append(json_text(item, where))
    return "\n".join(out)
