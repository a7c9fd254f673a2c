"""``locomo``: LoCoMo conversations (one object, or a list of them), one transcript
per session. The reading itself is ``memoryfs.ingest.locomo``: turns, dates and each turn's
``dia_id`` (kept in the ``dia_ids`` frontmatter list); never the dataset's
annotations. A conversation without ``sample_id`` is named after the file
(``locomo`` when read from stdin).
"""

from __future__ import annotations

from memoryfs.ingest.formats.imported import Imported
from memoryfs.ingest.locomo import conversations_from_json
from memoryfs.ingest.source import Source

__all__ = ["load"]


def load(src: Source, scope: dict[str, str]) -> list[Imported]:
    conversations = conversations_from_json(src.json(), src.stem or "locomo", scope, src.label)
    return [Imported(t) for conv in conversations for t in conv.sessions]
