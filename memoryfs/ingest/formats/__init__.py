"""The input formats ingest reads, one module each, all with one signature:
``load(source, scope) -> list[Imported]`` (``memoryfs.ingest.formats.imported``).

A loader parses and checks; it never touches the store. Each module's docstring
states what it accepts, what it keeps, what it skips and why.
"""

from __future__ import annotations

from collections.abc import Callable

from memoryfs.ingest.formats import chatgpt, claude_code, jsonl, locomo, markdown, openai
from memoryfs.ingest.formats.imported import Imported
from memoryfs.ingest.source import Source

__all__ = ["FORMATS", "LOADERS", "Loader"]

Loader = Callable[[Source, dict[str, str]], list[Imported]]

LOADERS: dict[str, Loader] = {
    "md": markdown.load,
    "jsonl": jsonl.load,
    "locomo": locomo.load,
    "openai": openai.load,
    "chatgpt": chatgpt.load,
    "claude-code": claude_code.load,
}
FORMATS = tuple(LOADERS)
