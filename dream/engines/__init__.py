"""Engines: one module per way of thinking about sessions, all behind ``dream.engines.base.Engine``.

``get_engine(name)`` returns an engine by the name that goes into the ``Dream-Engine``
trailer; ``embedded`` (no network, no model) is the default.
"""

from __future__ import annotations

from dream.engines.base import Engine
from dream.engines.embedded.engine import EmbeddedEngine
from dream.errors import DreamError

__all__ = ["DEFAULT_ENGINE", "ENGINES", "EmbeddedEngine", "get_engine"]

DEFAULT_ENGINE = "embedded"
ENGINES: dict[str, type[Engine]] = {EmbeddedEngine.name: EmbeddedEngine}


def get_engine(name: str = DEFAULT_ENGINE) -> Engine:
    """The engine called ``name``; a ``DreamError`` naming the known ones otherwise."""
    try:
        return ENGINES[name]()
    except KeyError:
        known = ", ".join(sorted(ENGINES))
        raise DreamError(f"unknown engine {name!r} (known engines: {known})") from None
