"""Ingestion: turn chat logs into transcripts and commit them.

The pipeline, one module per stage: ``source`` (an input's bytes: a file or
stdin), ``detect`` (which format, when ``--format`` does not say), ``formats/``
(one loader per format: ``md``, ``jsonl``, ``locomo``, ``openai``, ``chatgpt``,
``claude-code``), ``load`` (ids and times against the store; checks) and
``commit`` (append-only planning, atomic writes, one commit with receipts).

The names below load their module on first use, so that reading ``FORMATS`` (the
``memoryfs`` command's help does) does not import the writer and GitPython.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memoryfs.ingest.commit import IngestResult, SessionChange, ingest, plan_ingest
    from memoryfs.ingest.formats import FORMATS
    from memoryfs.ingest.load import load_sessions
    from memoryfs.ingest.source import Source

__all__ = [
    "FORMATS",
    "SessionChange",
    "IngestResult",
    "Source",
    "load_sessions",
    "plan_ingest",
    "ingest",
]

_HOMES = {
    "FORMATS": "memoryfs.ingest.formats",
    "SessionChange": "memoryfs.ingest.commit",
    "IngestResult": "memoryfs.ingest.commit",
    "Source": "memoryfs.ingest.source",
    "load_sessions": "memoryfs.ingest.load",
    "plan_ingest": "memoryfs.ingest.commit",
    "ingest": "memoryfs.ingest.commit",
}


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_HOMES[name]), name)
