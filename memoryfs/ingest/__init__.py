"""Ingestion: turn chat logs into transcripts and commit them.

The pipeline, one module per stage: ``source`` (an input's bytes: a file or
stdin), ``detect`` (which format, when ``--format`` does not say), ``formats/``
(one loader per format: ``md``, ``jsonl``, ``locomo``, ``openai``, ``chatgpt``,
``claude-code``), ``load`` (ids and times against the store; checks) and
``commit`` (append-only planning, atomic writes, one commit with receipts).
"""

from __future__ import annotations

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
