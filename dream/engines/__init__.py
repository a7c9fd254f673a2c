"""Engines: one module per way of thinking about sessions, all behind ``dream.engines.base.Engine``.

The one registry of engines: ``load_engine(name)`` returns an engine by the short name that
goes into the ``Dream-Engine`` trailer (``embedded``, ``llm``, ``command``) or by a
``package.module:Class`` spec. An engine's module is imported only when it is asked for, so
importing this package costs nothing; ``embedded`` (no network, no model) is the default.
"""

from __future__ import annotations

import importlib

from dream.engines.base import Engine
from dream.errors import DreamError

__all__ = ["DEFAULT_ENGINE", "ENGINES", "load_engine"]

DEFAULT_ENGINE = "embedded"
ENGINES = {
    "embedded": "dream.engines.embedded.engine:EmbeddedEngine",
    "llm": "dream.engines.llm.engine:LLMEngine",
    "command": "dream.engines.command:CommandEngine",
}


def load_engine(name: str = DEFAULT_ENGINE) -> Engine:
    """An engine by short name (``embedded``) or as ``package.module:Class``; a
    ``DreamError`` naming the known ones otherwise."""
    spec = ENGINES.get(name, name)
    module_name, _, class_name = spec.partition(":")
    if not class_name:
        known = ", ".join(ENGINES)
        raise DreamError(f"unknown engine {name!r} (use {known} or package.module:Class)")
    try:
        cls = getattr(importlib.import_module(module_name), class_name)
    except (ImportError, AttributeError) as exc:
        raise DreamError(f"engine {name!r} is not available: {exc}") from None
    engine = cls()
    if not isinstance(engine, Engine):
        raise DreamError(f"{spec} is not a dream.engines.base.Engine")
    return engine
