"""Tool traffic as short, faithful transcript lines.

A tool call or result is machine traffic, not something the user or the assistant
said, and it can be huge (a file read, a web page). Each becomes one line:

    [tool call] search_flights({"from": "HAM", "to": "LIS"})
    [tool result] search_flights: 3 flights found: TP 571 at 06:40, ...
    [tool error] Bash: command not found: foo

Whitespace runs collapse to one space, and control characters and unpaired
surrogates (which a UTF-8 file cannot hold) become U+FFFD, so a line stays a line.
Past ``LIMIT`` characters the text is cut (at a space when one is near) and the
line says how much was left out and the first hex digits of the SHA-256 of the
full original text: ``… (12,345 chars elided, sha256 3f9a2c1e…)``. The hash lets
anyone holding the source check which output the line stands for.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from memoryfs.errors import IngestError

__all__ = ["LIMIT", "elide", "call_line", "result_line", "json_text", "placeholder"]

LIMIT = 300  # characters of a call's arguments or a result kept on its line
_CUT_BACK = 40  # how far back from LIMIT a cut may move to end at a space
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff]")


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:8]


def elide(text: str, limit: int = LIMIT) -> str:
    """``text`` on one line, cut past ``limit`` characters with its size and hash."""
    flat = " ".join(_CONTROL_RE.sub("\ufffd", text).split())
    if len(flat) <= limit:
        return flat
    head = flat[:limit]
    space = head.rfind(" ", limit - _CUT_BACK)
    if space > 0:
        head = head[:space]
    return f"{head} … ({len(flat) - len(head):,} chars elided, sha256 {_hash(text)}…)"


def _name(name: str) -> str:
    return elide(name, 80) or "tool"


def call_line(name: str, arguments: str) -> str:
    """``[tool call] name(arguments)``."""
    return f"[tool call] {_name(name)}({elide(arguments)})"


def result_line(name: str, text: str, *, error: bool = False) -> str:
    """``[tool result] name: text`` (``[tool error]`` for a failed call)."""
    kind = "[tool error]" if error else "[tool result]"
    body = elide(text)
    label = f"{kind} {_name(name)}:" if name else kind
    return f"{label} {body}" if body else label


def json_text(value: Any, where: str) -> str:
    """A tool's structured arguments as compact JSON text (the input's own key order)."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False)
    except (RecursionError, ValueError):
        raise IngestError(f"{where}: tool arguments nested too deeply to write") from None


def placeholder(kind: str) -> str:
    """The short line that stands for content a text transcript cannot hold."""
    return f"[{kind}]"
