"""Content hashes used across the store: turn hashes for citations, file hashes.

A turn hash pins the exact evidence a citation points to; it is computed on the
turn text with surrounding whitespace stripped and line endings normalized, so
re-rendering a transcript never changes it.
"""

from __future__ import annotations

import hashlib

__all__ = ["turn_hash", "content_hash", "short_hash"]


def short_hash(data: bytes, length: int = 8) -> str:
    return hashlib.sha256(data).hexdigest()[:length]


def turn_hash(text: str) -> str:
    """Eight hex digits identifying a turn's text."""
    normalized = text.replace("\r\n", "\n").strip()
    return short_hash(normalized.encode("utf-8"))


def content_hash(text: str | bytes) -> str:
    """Sixteen hex digits identifying a whole file's content."""
    data = text.encode("utf-8") if isinstance(text, str) else text
    return short_hash(data, 16)
