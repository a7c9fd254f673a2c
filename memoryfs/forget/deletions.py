"""The deletion log (``memory/deletions.jsonl``) and finding forgotten phrases in text.

A tombstone never keeps what it forgets: a page or session by its id, a phrase by
``phrase_hash`` of its normalized words plus their count (``memoryfs.validate.tombstones``
owns those two functions, so validation and deletion always agree). A phrase is
therefore found by hashing every window of that many words, which lets the same
code redact a phrase whose text is known (``memoryfs forget --phrase``) and one
known only from the log (ingest of new turns, the history purge).

Words are ``normalize_words``' words; ``word_spans`` gives each one's position in
the original text so a match can be replaced there by ``[forgotten]``.

A page or session tombstone also keeps ``traces``: the truncated hashes of every
``TRACE_WORDS``-word window of the forgotten text that no surviving transcript
holds (``memoryfs.forget.traces`` makes them). Derived text (a note's title, a
page's ``summary``, an INDEX.md line) that repeats the forgotten words is found
by them, and ``memoryfs forget --verify`` proves with them that nothing remains.
Transcripts are redacted by phrases only: a trace is evidence of derivation,
never a reason to change what someone said.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from memoryfs.store.store import Store
from memoryfs.validate.tombstones import TRACE_WORDS, decode_traces, phrase_hash, trace_digest

__all__ = [
    "DELETIONS_REL",
    "REDACTED",
    "TRACE_WORDS",
    "decode_traces",
    "encode_traces",
    "trace_digest",
    "Deletions",
    "parse_entries",
    "parse_deletions",
    "load_deletions",
    "word_spans",
    "find_phrases",
    "has_phrase",
    "redact",
    "redact_values",
]

REDACTED = "[forgotten]"
DELETIONS_REL = "deletions.jsonl"
_WORD_RE = re.compile(r"\w+")
_HEX64_RE = re.compile(r"^[0-9a-f]{64}$")
_MAX_PASSES = 8  # a redaction pass can join words into a new match; a few passes settle it


def encode_traces(digests: Iterable[str]) -> str:
    """Trace digests as one base64 string (sorted, so equal sets encode equally)."""
    return base64.b64encode(b"".join(bytes.fromhex(d) for d in sorted(set(digests)))).decode()


@dataclass(frozen=True)
class Deletions:
    """What the log says must never come back."""

    pages: frozenset[str] = frozenset()
    sessions: frozenset[str] = frozenset()
    phrases: frozenset[tuple[int, str]] = frozenset()  # (word count, phrase_hash)
    traces: frozenset[str] = frozenset()  # trace_digest of TRACE_WORDS-word windows
    entries: tuple[dict[str, Any], ...] = field(default=(), compare=False, repr=False)

    @cached_property
    def by_size(self) -> dict[int, frozenset[str]]:
        """Phrase hashes grouped by word count, longest first."""
        sizes: dict[int, set[str]] = {}
        for n, digest in self.phrases:
            sizes.setdefault(n, set()).add(digest)
        return {n: frozenset(sizes[n]) for n in sorted(sizes, reverse=True)}

    def __bool__(self) -> bool:
        return bool(self.pages or self.sessions or self.phrases)

    def has(self, entry: dict[str, Any]) -> bool:
        """Whether an equivalent tombstone is in this log."""
        kind = entry.get("kind")
        if kind == "page":
            return entry.get("id") in self.pages
        if kind == "session":
            return entry.get("id") in self.sessions
        return (entry.get("words"), entry.get("hash")) in self.phrases

    def plus(self, entry: dict[str, Any]) -> Deletions:
        return parse_entries([*self.entries, entry])


def parse_entries(entries: Iterable[dict[str, Any]]) -> Deletions:
    pages: set[str] = set()
    sessions: set[str] = set()
    phrases: set[tuple[int, str]] = set()
    traces: set[str] = set()
    kept: list[dict[str, Any]] = []
    for entry in entries:
        kind, ident = entry.get("kind"), entry.get("id")
        if kind in ("page", "session") and isinstance(ident, str) and ident:
            (pages if kind == "page" else sessions).add(ident)
            if "traces" in entry:  # malformed traces forget nothing more (the id still holds)
                traces |= decode_traces(entry["traces"]) or frozenset()
        elif kind == "phrase":
            words, digest = entry.get("words"), entry.get("hash")
            if (
                isinstance(words, int)
                and not isinstance(words, bool)
                and words >= 1
                and isinstance(digest, str)
                and _HEX64_RE.match(digest)
            ):
                phrases.add((words, digest))
            else:
                continue
        else:
            continue
        kept.append(entry)
    return Deletions(
        frozenset(pages), frozenset(sessions), frozenset(phrases), frozenset(traces), tuple(kept)
    )


def parse_deletions(text: str) -> Deletions:
    """The well-formed entries of a log (malformed lines are validation's MF501)."""
    entries: list[dict[str, Any]] = []
    for raw in text.splitlines():
        if not raw.strip():
            continue
        try:
            entry = json.loads(raw)
        except (ValueError, RecursionError):
            continue
        if isinstance(entry, dict):
            entries.append(entry)
    return parse_entries(entries)


def load_deletions(store: Store) -> Deletions:
    """The store's log; an absent or unreadable log forgets nothing."""
    try:
        path = store.resolve(DELETIONS_REL)
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError, ValueError):
        return Deletions()
    return parse_deletions(text)


def word_spans(text: str) -> list[tuple[str, int, int]]:
    """``(word, start, end)`` for each of ``normalize_words(text)``, positions in ``text``.

    Lowercasing can change a string's length ("İ" becomes two characters), so the
    words are found in the lowercased text and mapped back to original offsets.
    """
    lowered = text.lower()
    if len(lowered) == len(text):
        return [(m.group(), m.start(), m.end()) for m in _WORD_RE.finditer(lowered)]
    origin: list[int] = []
    parts: list[str] = []
    for i, ch in enumerate(text):
        low = ch.lower()
        parts.append(low)
        origin.extend([i] * len(low))
    lowered = "".join(parts)
    return [
        (m.group(), origin[m.start()], origin[m.end() - 1] + 1) for m in _WORD_RE.finditer(lowered)
    ]


def find_phrases(text: str, deletions: Deletions, traces: bool = False) -> list[tuple[int, int]]:
    """Non-overlapping ``(start, end)`` spans of forgotten phrases, left to right.

    At each word the longest forgotten phrase starting there wins. With
    ``traces``, windows whose trace the log keeps count as forgotten too.
    """
    use_traces = traces and bool(deletions.traces)
    if not (deletions.phrases or use_traces) or not text:
        return []
    words = word_spans(text)
    sizes = deletions.by_size
    spans: list[tuple[int, int]] = []
    i = 0
    while i < len(words):
        for n, digests in sizes.items():
            if i + n <= len(words) and phrase_hash([w for w, _, _ in words[i : i + n]]) in digests:
                spans.append((words[i][1], words[i + n - 1][2]))
                i += n
                break
        else:
            n = TRACE_WORDS
            if (
                use_traces
                and i + n <= len(words)
                and trace_digest([w for w, _, _ in words[i : i + n]]) in deletions.traces
            ):
                spans.append((words[i][1], words[i + n - 1][2]))
                i += n
            else:
                i += 1
    return spans


def has_phrase(text: str, deletions: Deletions, traces: bool = False) -> bool:
    return bool(find_phrases(text, deletions, traces))


def redact(text: str, deletions: Deletions, traces: bool = False) -> str:
    """``text`` with every forgotten phrase (and, with ``traces``, trace) replaced
    by ``[forgotten]``."""
    for _ in range(_MAX_PASSES):
        spans = find_phrases(text, deletions, traces)
        if not spans:
            return text
        for start, end in reversed(spans):
            text = text[:start] + REDACTED + text[end:]
    return text


def redact_values(value: Any, deletions: Deletions, skip: frozenset[str] = frozenset()) -> Any:
    """A copy of a YAML/JSON value with forgotten phrases redacted in every string.

    Mapping keys are structure, never redacted; top-level keys in ``skip`` are kept as is.
    """
    if isinstance(value, str):
        return redact(value, deletions)
    if isinstance(value, list):
        return [redact_values(v, deletions) for v in value]
    if isinstance(value, dict):
        return {k: v if k in skip else redact_values(v, deletions) for k, v in value.items()}
    return value
