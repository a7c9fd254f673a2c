"""``md``: transcripts already in the store's Markdown form.

Accepts what ``memoryfs.pages.transcript`` writes: YAML frontmatter (``id``, ``type:
session``, ``started``, ``participants``, ``scope``) and ``## tN · speaker · time``
headings. The session id is the frontmatter ``id``; without one, the file's name
(stdin: ``--session-id``). A ``scope`` other than the store's is refused (ingest it
into the store of that user).
"""

from __future__ import annotations

from memoryfs.errors import IngestError, PageError
from memoryfs.ingest.formats.imported import Imported
from memoryfs.ingest.formats.naming import named_after_file
from memoryfs.ingest.source import Source
from memoryfs.pages.transcript import parse_transcript

__all__ = ["load"]


def load(src: Source, scope: dict[str, str]) -> list[Imported]:
    try:
        t = parse_transcript(src.text, src.label, id_required=False)
    except PageError as exc:
        raise IngestError(str(exc)) from None
    if not t.turns:
        raise IngestError(f"{src.label}: no turns (expected '## t1 · speaker · time' headings)")
    if t.scope and t.scope != scope:
        raise IngestError(
            f"{src.label}: scope {t.scope} does not match this store's scope {scope}; "
            "ingest it into the store of that user"
        )
    if not t.id and not src.is_stdin:
        return [named_after_file(src, t)]
    return [Imported(t)]
