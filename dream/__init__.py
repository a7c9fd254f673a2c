"""Dream: nightly consolidation of a memoryfs store.

``dream.run(store)`` runs it once (``dream.run.run``; the embedded engine by default).
The module loads on first use, so that ``import dream`` stays light.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["run"]


def __getattr__(name: str) -> Any:
    if name == "run":  # importing the module binds it here: later lookups do not come back
        return importlib.import_module("dream.run")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
