"""The deletion log's rules for validation: what ``deletions.jsonl`` forbids in a tree.

``deletions.jsonl`` lines: ``{"kind": "page"|"session", "id": ...}`` or
``{"kind": "phrase", "hash": H, "words": N}`` with H = ``phrase_hash`` of the N
``normalize_words``. Validation, forget and Dream all hash words the same way
through this module, so they always agree on what a forgotten phrase is. A page
or session entry's ``traces`` (base64 of ``trace_digest`` of ``TRACE_WORDS``-word
windows of its text: ``memoryfs.forget.traces``) are forgotten words too.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
from collections.abc import Iterable
from typing import Any

__all__ = [
    "TRACE_WORDS",
    "decode_traces",
    "normalize_words",
    "phrase_hash",
    "tombstone_findings",
    "trace_digest",
]

TRACE_WORDS = 6  # long enough to be one statement, short enough to survive light rewording
_TRACE_BYTES = 8  # 64-bit digests: no chance collision in any store's text

_WORD_RE = re.compile(r"\w+")
Hit = tuple[str, int, str, str]


def normalize_words(text: str) -> list[str]:
    """Lowercased words of ``text`` (split on non-word characters), as forget hashes them."""
    return _WORD_RE.findall(text.lower())


def phrase_hash(words: list[str]) -> str:
    """sha256 hex of the normalized words joined by single spaces."""
    return hashlib.sha256(" ".join(words).encode("utf-8")).hexdigest()


def trace_digest(words: list[str]) -> str:
    """A window's trace: ``phrase_hash`` truncated to 16 hex digits."""
    return phrase_hash(words)[: _TRACE_BYTES * 2]


def decode_traces(value: object) -> frozenset[str] | None:
    """The digests of an encoded ``traces`` value; None when it is malformed."""
    if not isinstance(value, str):
        return None
    try:
        raw = base64.b64decode(value.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError):
        return None
    if len(raw) % _TRACE_BYTES:
        return None
    return frozenset(raw[i : i + _TRACE_BYTES].hex() for i in range(0, len(raw), _TRACE_BYTES))


def tombstone_findings(
    log: str,
    pages: dict[str, list[str]],
    sessions: dict[str, list[str]],
    texts: Iterable[tuple[str, str]],
) -> list[Hit]:
    """What in the tree the deletion log forbids.

    ``pages``/``sessions`` map ids to the files (relative to memory/) that carry
    them; ``texts`` are the (file, text) of the pages and summaries searched for forgotten
    phrases, read only when the log has phrases.
    Returns (file, line, code, message) tuples.
    """
    out: list[Hit] = []
    phrases: dict[int, dict[str, int]] = {}  # words -> hash -> log line
    traces: dict[str, int] = {}  # trace digest -> log line
    for n, raw in enumerate(log.split("\n"), start=1):
        if not raw.strip():
            continue
        entry = _deletion_entry(raw)
        if isinstance(entry, str):
            out.append(("deletions.jsonl", n, "MF501", entry))
        elif entry["kind"] == "phrase":
            phrases.setdefault(entry["words"], {}).setdefault(entry["hash"], n)
        else:
            kind, did = entry["kind"], entry["id"]
            for rel in sorted(set((pages if kind == "page" else sessions).get(did, []))):
                out.append(
                    (rel, 0, "MF502", f"{kind} {did!r} was forgotten (deletions.jsonl line {n})")
                )
            for digest in decode_traces(entry.get("traces")) or ():
                traces.setdefault(digest, n)
    if traces:  # same search as phrases: truncated digests are keyed apart by their length
        phrases.setdefault(-TRACE_WORDS, {}).update(traces)
    if phrases:
        for rel, text in texts:
            for line, n, trace in _phrase_hits(text, phrases):
                what = "text of a forgotten page or session is" if trace else "forgotten phrase is"
                out.append((rel, line, "MF503", f"{what} back (deletions.jsonl line {n})"))
    return out


def _deletion_entry(raw: str) -> dict[str, Any] | str:
    """The parsed entry, or why it is malformed."""
    try:
        entry = json.loads(raw)
    except ValueError as exc:
        return f"not valid JSON: {exc.args[0] if exc.args else exc}"
    except RecursionError:
        return "not valid JSON: nested too deeply"
    if not isinstance(entry, dict):
        return "not a JSON object"
    kind = entry.get("kind")
    if kind in ("page", "session"):
        if not isinstance(entry.get("id"), str) or not entry["id"]:
            return f"a {kind} entry needs a string 'id'"
    elif kind == "phrase":
        words, digest = entry.get("words"), entry.get("hash")
        if isinstance(words, bool) or not isinstance(words, int) or words < 1:
            return "a phrase entry needs 'words', a positive integer"
        if not isinstance(digest, str) or not re.fullmatch(r"[0-9a-f]{64}", digest):
            return "a phrase entry needs 'hash', 64 lowercase hex digits"
    else:
        return f"unknown kind {kind!r} (use page, session or phrase)"
    return entry


def _phrase_hits(text: str, phrases: dict[int, dict[str, int]]) -> list[tuple[int, int, bool]]:
    """(file line, log line, whether a trace) of the first occurrence of each forgotten
    phrase or trace in ``text``."""
    words: list[str] = []
    lines: list[int] = []
    for i, line in enumerate(text.split("\n"), start=1):
        found = normalize_words(line)
        words += found
        lines += [i] * len(found)
    hits: dict[str, tuple[int, int, bool]] = {}
    for key, wanted in phrases.items():
        size = abs(key)  # a negative size: trace digests of that many words
        for i in range(len(words) - size + 1):
            window = words[i : i + size]
            digest = trace_digest(window) if key < 0 else phrase_hash(window)
            if digest in wanted and digest not in hits:
                hits[digest] = (lines[i], wanted[digest], key < 0)
    return sorted(hits.values())
