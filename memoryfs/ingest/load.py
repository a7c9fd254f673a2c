"""From inputs to the transcripts ingest will write; reads the store, never writes it.

``read_inputs`` parses every input with its format's loader (``memoryfs.ingest.
formats``) and applies ``--session-id``. ``settle`` then gives each session its
place in this store:

- **Same conversation, same session.** A session whose source has its own id
  (``source_id``: a ChatGPT conversation, a Claude Code session) goes to the stored
  transcript with that ``source_format`` and ``source_id``, whatever id its title
  would give now; a new one whose id a stored transcript of another conversation
  holds takes the next free ``-2``, ``-3``.
- **Two file names, two sessions.** A session named after its file keeps the file's
  name (``source_name``); when another name gives the same id ("café.jsonl" and
  "cafe.jsonl" both give ``cafe``), it takes the first free ``-2``, ``-3`` (or the one
  holding its own name: a grown file still appends).
- **Undated input keeps its times.** Turns of an input without times have the
  fallback time (the file's modification time); the turns the store already holds
  keep the times they were written with, so a grown file appends.

``load_sessions`` does both and checks that every transcript can be written.
"""

from __future__ import annotations

import os
import unicodedata
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

import yaml

from memoryfs.errors import IngestError, PageError
from memoryfs.ingest.detect import detect
from memoryfs.ingest.formats import loader
from memoryfs.ingest.formats.imported import Imported
from memoryfs.ingest.source import MAX_INPUT_BYTES, Source
from memoryfs.pages.bounded_yaml import load_yaml
from memoryfs.pages.page import parse_page, split_frontmatter
from memoryfs.pages.transcript import (
    Transcript,
    parse_transcript,
    render_transcript,
    valid_session_id,
)
from memoryfs.store.scan import is_file, read_file
from memoryfs.store.store import Store

__all__ = [
    "Input",
    "as_source",
    "read_inputs",
    "settle",
    "load_sessions",
    "check_size",
    "check_writable",
    "transcript_limit",
]

Input = Path | str | Source
_HEAD_BYTES = 256 * 1024  # where a stored transcript's frontmatter must end to be read


def as_source(item: Input, max_bytes: int = MAX_INPUT_BYTES) -> Source:
    """``item`` as a ``Source``: a file is read when it is a regular file of at most
    ``max_bytes``; a ``Source`` already read is held to the same size."""
    if not isinstance(item, Source):
        return Source.from_path(Path(item), max_bytes)
    if len(item.data) > max_bytes:
        raise IngestError(
            f"{item.label}: {len(item.data)} bytes, over the {max_bytes}-byte limit "
            "(limits.input_bytes in memory.toml); split it first"
        )
    return item


Progress = Callable[[str, int, int], None]  # (phase, done, total), as dream.runner's


def read_inputs(
    store: Store,
    inputs: Sequence[Input],
    fmt: str | None = None,
    session_id: str | None = None,
    progress: Progress | None = None,
) -> list[Imported]:
    """Every session of ``inputs``, parsed and checked; nothing read from the store
    but its scope. ``session_id`` names the one session the inputs must hold;
    ``progress("read", done, total)`` is called after each input."""
    scope = {"user": store.config.user, "assistant": store.config.assistant}
    limits = store.config.limits
    found: list[tuple[str, Imported]] = []
    for done, item in enumerate(inputs, 1):
        src = as_source(item, limits.input_bytes)
        src_fmt = detect(src, fmt)
        if src_fmt == "md":
            _check_markdown(store, src)
        for imp in loader(src_fmt)(src, scope):
            if not imp.transcript.id and session_id is None:
                raise IngestError(
                    f"{src.label}: nothing names the session (no id, file name or message "
                    "times); pass --session-id ID"
                )
            found.append((src.label, imp))
        if progress is not None:
            progress("read", done, len(inputs))
    if session_id is not None:
        if not valid_session_id(session_id):
            raise IngestError(
                f"--session-id {session_id[:80]!r} is not a lowercase slug of 1-128 "
                "characters (a-z, 0-9, '.', '_', '-')"
            )
        if len(found) != 1:
            raise IngestError(f"--session-id names one session, but the input holds {len(found)}")
        label, imp = found[0]
        found = [(label, replace(imp, transcript=replace(imp.transcript, id=session_id)))]
    for label, imp in found:
        check_writable(imp.transcript, label, store)
    return [imp for _, imp in found]


def _check_markdown(store: Store, src: Source) -> None:
    """A transcript in the store's own form, held to the store's limits before its turns
    are parsed: its size is the transcript's, its frontmatter within the YAML limits."""
    if len(src.data) > transcript_limit(store):
        raise IngestError(
            f"{src.label}: {len(src.data)} bytes, over the {transcript_limit(store)}-byte "
            "limit of one transcript (limits.transcript_bytes in memory.toml); split it"
        )
    parts = split_frontmatter(src.text)
    if parts is not None:
        try:
            load_yaml(parts[0], store.config.limits.yaml, src.label)
        except PageError as exc:
            raise IngestError(str(exc)) from None
        except (yaml.YAMLError, RecursionError, ValueError, TypeError, OverflowError):
            pass  # malformed: the loader says where


def transcript_limit(store: Store) -> int:
    """The most bytes a transcript of ``store`` may have: ``limits.transcript_bytes``, and
    no more than validation accepts of any file (``budgets.max_file_bytes``)."""
    return min(store.config.limits.transcript_bytes, store.config.budgets.max_file_bytes)


def check_size(t: Transcript, text: str, label: str, store: Store) -> None:
    """Refuse the session ``t`` (``text`` rendered) when it is over one of ``store``'s
    limits: turns, bytes of a turn, bytes of the transcript."""
    limits = store.config.limits
    if len(t.turns) > limits.turns:
        raise IngestError(
            f"{label}: session {t.id} has {len(t.turns)} turns, over the limit of "
            f"{limits.turns} (limits.turns in memory.toml); split it"
        )
    for turn in t.turns:
        size = len(turn.text) if len(turn.text) * 4 <= limits.turn_bytes else _utf8_len(turn.text)
        if size > limits.turn_bytes:
            raise IngestError(
                f"{label}: session {t.id} turn t{turn.n} is {size} bytes, over the "
                f"{limits.turn_bytes}-byte limit of one turn (limits.turn_bytes in memory.toml)"
            )
    size = _utf8_len(text)
    if size > transcript_limit(store):
        raise IngestError(
            f"{label}: session {t.id} is {size} bytes as a transcript, over the "
            f"{transcript_limit(store)}-byte limit (limits.transcript_bytes in memory.toml); "
            "split it"
        )


def _utf8_len(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def settle(
    store: Store, imported: Sequence[Imported], *, renamed: bool = False
) -> list[Transcript]:
    """Each session as this store will keep it (see the module docstring).

    ``renamed``: the ids were named by the user (``--session-id``) and stay."""
    stored = {} if renamed or not any(i.source_id for i in imported) else _stored_sources(store)
    by_source = {key: sid for sid, key in stored.items()}
    ids = [_known_id(imp, by_source) or imp.transcript.id for imp in imported]
    counts = Counter(ids)
    assigned: dict[tuple[str, str], str] = {}
    for k, imp in enumerate(imported):
        key = _source_key(imp)
        if renamed or not imp.source_id or key in by_source:
            continue
        if key in assigned:  # the same conversation twice in this ingest: planning refuses
            counts[ids[k]] -= 1
            ids[k] = assigned[key]
            counts[ids[k]] += 1
            continue
        base = sid = ids[k]
        n = 1
        # taken: by a stored transcript (of another conversation: this one is not stored),
        # or by another session of this ingest
        while store.transcript_path(sid).exists() or counts[sid] > (sid == base):
            n += 1
            sid = f"{base}-{n}"
        counts[base] -= 1
        counts[sid] += 1
        ids[k] = assigned[key] = sid
    if not renamed:
        _name_apart(store, imported, ids)
    out = []
    for imp, sid in zip(imported, ids, strict=True):
        t = replace(imp.transcript, id=sid)
        out.append(_restamped(store, t) if imp.undated else t)
    return out


def _name_apart(store: Store, imported: Sequence[Imported], ids: list[str]) -> None:
    """Give each session named after a file (``source_name``) the first of ``id``,
    ``id-2``, ``id-3``, ... that is free or holds the session of that very name, so two
    names that give one id ("café.jsonl", "cafe.jsonl") never become one session. A stored
    transcript without a ``source_name`` (written before it was kept) counts as that
    name's at its own id, as it did then. ``ids`` is updated in place."""
    claimed: dict[str, str] = {}  # id -> the name that took it in this ingest
    for k, imp in enumerate(imported):
        if not imp.source_name or imp.source_id:
            claimed.setdefault(ids[k], "")
            continue
        base = sid = ids[k]
        n = 1
        while True:
            taker = claimed.get(sid)
            stored = _stored_name(store, sid) if taker is None else taker
            if stored is None or stored == imp.source_name or (stored == "" and sid == base):
                break
            n += 1
            sid = f"{base}-{n}"
        claimed[sid] = imp.source_name
        ids[k] = sid


def _stored_name(store: Store, sid: str) -> str | None:
    """The ``source_name`` of the stored transcript ``sid``; "" when it has none (or
    cannot be read: planning reports that), None when there is no such transcript."""
    rel = f"sessions/transcripts/{sid}.md"
    if not os.path.lexists(store.memory / rel):
        return None
    head = _head(store, rel)
    if head is None or b"source_name:" not in head:
        return ""
    try:
        name = parse_page(head.decode("utf-8", "replace"), rel, memo=False).meta.get("source_name")
    except PageError:
        return ""
    return unicodedata.normalize("NFC", name) if isinstance(name, str) else ""


def _head(store: Store, rel: str) -> bytes | None:
    """The first ``_HEAD_BYTES`` of a stored file, where its frontmatter must end; None
    when it is not a regular file (a FIFO, a device or a link is never opened)."""
    if not is_file(store.memory, rel):
        return None
    try:
        fd = os.open(store.memory / rel, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as fh:
            return fh.read(_HEAD_BYTES)
    except OSError:
        return None


def _source_key(imp: Imported) -> tuple[str, str]:
    return (str(imp.transcript.meta.get("source_format", "")), imp.source_id)


def _known_id(imp: Imported, by_source: dict[tuple[str, str], str]) -> str:
    return by_source.get(_source_key(imp), "") if imp.source_id else ""


def _stored_sources(store: Store) -> dict[str, tuple[str, str]]:
    """Stored session id -> (source_format, source_id), for transcripts that have one."""
    out: dict[str, tuple[str, str]] = {}
    for rel in store.files("sessions/transcripts"):
        if rel.count("/") != 2:
            continue
        head = _head(store, rel)
        if head is None or b"source_id:" not in head:
            continue
        try:
            meta = parse_page(head.decode("utf-8", "replace"), rel, memo=False).meta
        except PageError:
            continue
        sid, source_id = meta.get("id"), meta.get("source_id")
        if isinstance(sid, str) and isinstance(source_id, str) and source_id:
            out[sid] = (str(meta.get("source_format", "")), source_id)
    return out


def _restamped(store: Store, t: Transcript) -> Transcript:
    """An undated session's turns with the times the store already gave them."""
    path = store.transcript_path(t.id)
    got = read_file(store.memory, f"sessions/transcripts/{t.id}.md", transcript_limit(store))
    if got is None or got.oversize:
        return t  # missing, or not a file ingest reads: planning reports it
    try:
        old = parse_transcript(got.data.decode("utf-8"), str(path))
    except (UnicodeDecodeError, PageError):
        return t  # unreadable: planning reports it
    turns = tuple(
        replace(turn, ts=old.turns[i].ts) if i < len(old.turns) else turn
        for i, turn in enumerate(t.turns)
    )
    return replace(t, started=old.started, turns=turns)


def check_writable(t: Transcript, label: str, store: Store) -> None:
    """Refuse what cannot be stored as a UTF-8 text file of ``store`` (within its
    ``[limits]``), or would read back otherwise."""
    if not valid_session_id(t.id):
        raise IngestError(
            f"{label}: session id {t.id[:80]!r} is not a lowercase slug of 1-128 chars"
        )
    try:
        text = render_transcript(t)
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise IngestError(
            f"{label}: session {t.id} holds invalid Unicode (lone surrogates)"
        ) from None
    except PageError as exc:
        raise IngestError(f"{label}: session {t.id}: {exc}") from None
    if "\x00" in text:
        raise IngestError(f"{label}: session {t.id} holds NUL characters; not a text transcript")
    check_size(t, text, label, store)
    try:
        back = parse_transcript(text, label, limits=store.config.limits.yaml)
    except PageError as exc:
        raise IngestError(f"{label}: session {t.id} would not read back: {exc}") from None
    for mine, theirs in zip(t.turns, back.turns, strict=False):
        if not mine.same_as(theirs):
            raise IngestError(
                f"{label}: session {t.id}: turn t{mine.n} would not read back as written"
            )
    if len(back.turns) != len(t.turns):
        raise IngestError(f"{label}: session {t.id} would not read back with {len(t.turns)} turns")


def load_sessions(
    store: Store, path: Input, fmt: str | None = None, session_id: str | None = None
) -> list[Transcript]:
    """Parse one input into the transcripts this store would get (no writes)."""
    src = as_source(path, store.config.limits.input_bytes)
    imported = read_inputs(store, [src], fmt, session_id)
    sessions = settle(store, imported, renamed=session_id is not None)
    for t in sessions:
        if not valid_session_id(t.id):  # a numbered id past the length limit
            raise IngestError(f"{src.label}: session id {t.id[:80]!r} is too long")
    return sessions
