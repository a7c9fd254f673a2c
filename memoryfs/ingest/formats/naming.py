"""Session ids an importer makes: from a file name, a time, or a title.

``title_slug`` is the fixed scheme of titled conversations (ChatGPT): lower-cased,
ASCII-folded (NFKD with the combining marks dropped; ``ß`` -> ``ss``), every run of
other characters than ``a-z0-9`` one ``-``, trimmed, at most 40 characters cut at
a hyphen; an empty result is ``chat``.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import replace

from memoryfs.errors import IngestError
from memoryfs.ingest.formats.imported import Imported
from memoryfs.ingest.source import Source
from memoryfs.pages.transcript import Transcript, valid_session_id
from memoryfs.store.slugs import slugify

__all__ = [
    "file_session_id",
    "named_after_file",
    "named_after_time",
    "title_slug",
    "TITLE_SLUG_MAX",
]

TITLE_SLUG_MAX = 40
_NOT_SLUG_RE = re.compile(r"[^a-z0-9]+")


def file_session_id(src: Source) -> str:
    """The session id a file's name gives (``Chat Log 7.jsonl`` -> ``chat-log-7``);
    "" for stdin."""
    if src.is_stdin:
        return ""
    sid = slugify(src.stem, 120, empty="session")
    if not valid_session_id(sid):
        raise IngestError(f"{src.label}: cannot make a session id from the file name")
    return sid


def named_after_file(src: Source, t: Transcript, *, undated: bool = False) -> Imported:
    """``t`` as a session named after the file ``src``: its id ``file_session_id(src)``
    and the file's name (without extension, NFC) kept as ``source_name``, in the
    frontmatter too, so that two names that give one id ("café", "cafe") stay two
    sessions (``memoryfs.ingest.load.settle``)."""
    name = unicodedata.normalize("NFC", src.stem)
    name = name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    t = replace(t, id=file_session_id(src), meta={**t.meta, "source_name": name})
    return Imported(t, undated=undated, source_name=name)


def named_after_time(ts: str) -> str:
    """``2026-02-02T10:00:00+00:00`` -> ``2026-02-02-chat-1000``: the id of a session
    read from stdin, after the wall time of its first message as written."""
    return f"{ts[:10]}-chat-{ts[11:13]}{ts[14:16]}"


def title_slug(title: str) -> str:
    folded = unicodedata.normalize("NFKD", title)
    folded = "".join(c for c in folded if not unicodedata.combining(c))
    folded = folded.lower().replace("ß", "ss")
    slug = _NOT_SLUG_RE.sub("-", folded).strip("-")
    if len(slug) > TITLE_SLUG_MAX:
        if slug[TITLE_SLUG_MAX] == "-":
            slug = slug[:TITLE_SLUG_MAX]
        else:
            cut = slug.rfind("-", 0, TITLE_SLUG_MAX)
            slug = slug[:cut] if cut > 0 else slug[:TITLE_SLUG_MAX]
        slug = slug.strip("-")
    return slug or "chat"
