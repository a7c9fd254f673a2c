"""The input formats ingest reads, one module each, all with one signature:
``load(source, scope) -> list[Imported]`` (``memoryfs.ingest.formats.imported``).

A loader parses and checks; it never touches the store. Each module's docstring
states what it accepts, what it keeps, what it skips and why. A format's module is
imported when an input of that format is read (``loader``), so listing ``FORMATS``
(the ``memoryfs`` command's help does) loads no parser.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeAlias, cast

if TYPE_CHECKING:
    from memoryfs.ingest.formats.imported import Imported
    from memoryfs.ingest.source import Source

__all__ = ["FORMATS", "Loader", "loader"]

Loader: TypeAlias = "Callable[[Source, dict[str, str]], list[Imported]]"

# format name -> the module of this package that reads it
_MODULES = {
    "md": "markdown",
    "jsonl": "jsonl",
    "locomo": "locomo",
    "openai": "openai",
    "chatgpt": "chatgpt",
    "claude-code": "claude_code",
}
FORMATS = tuple(_MODULES)


def loader(fmt: str) -> Loader:
    """The ``load`` function of format ``fmt`` (one of ``FORMATS``)."""
    return cast("Loader", importlib.import_module(f"{__name__}.{_MODULES[fmt]}").load)
