"""``StoreFacts`` read from a store's files: what health checks receipts against.

Reads the live tree (what a reader gets now): every transcript (content hash,
scope, turn hashes), every page under ``knowledge/``, ``notes/`` and
``sessions/summaries/`` (content hash, scope, ``sources`` hashes against the
current turn hashes), each summary's outcome (``summary_outcome``), ``deletions.jsonl``,
the HEAD commit, the dream skill's approval, the runs whose branch is kept, and the
transcripts a person edited after ingest (``memoryfs.store.transcript_edits``). It never
raises on a malformed file: an unparsable page simply proves nothing (the validator
reports it).

Item ids follow ``memoryfs.receipts.records``: ``session_item(session id)`` and
``page_item(path relative to memory/)``, scopes are ``scope_id`` hashes; versions
are ``content_hash`` of the file's bytes, the same hash Dream's orient phase records
for transcripts.
"""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path

from dream.errors import DreamError
from dream.health.lineage import CitationRisk, StoreFacts
from dream.landing.staging import kept_runs
from dream.skills import skill_status
from memoryfs.errors import MemoryFSError
from memoryfs.pages.page import Page, parse_page
from memoryfs.pages.transcript import parse_transcript
from memoryfs.receipts.records import page_item, scope_ids, session_item
from memoryfs.store.hashing import content_hash
from memoryfs.store.scan import READ_MAX_BYTES
from memoryfs.store.store import KNOWLEDGE_FOLDERS, Store
from memoryfs.store.transcript_edits import transcript_edits

__all__ = ["gather_store_facts", "summary_outcome"]

TRANSCRIPTS = "sessions/transcripts"
SUMMARIES = "sessions/summaries"
PAGE_ROOTS = ("knowledge", "notes", SUMMARIES)
_OUTCOME_RE = re.compile(
    r"^\s*(?:[-*]\s+)?(?:\*\*|__)?outcome(?:\*\*|__)?\s*:(?:\*\*|__)?\s*(.*)$", re.IGNORECASE
)
_OUTCOME_HEADING_RE = re.compile(r"^#{1,6}\s+outcome\s*$", re.IGNORECASE)
_NO_OUTCOME = {"", "none", "none recorded", "n/a", "-", "—", "unknown", "tbd"}


def summary_outcome(page: Page) -> str:
    """The summary's outcome text ("" when it records none).

    Accepts an ``outcome`` frontmatter key, an ``Outcome:`` line (plain, bold or
    a list item) or an ``## Outcome`` heading followed by text, which may itself be
    an ``Outcome:`` line (as Dream writes it: ``## Outcome`` then ``Outcome: none
    recorded``). "none recorded" and the like, or an empty section, are no outcome.
    """
    meta = page.meta.get("outcome")
    if isinstance(meta, str) and meta.strip():
        return _clean(meta)
    lines = page.body.split("\n")
    for i, line in enumerate(lines):
        m = _OUTCOME_RE.match(line)
        if m:
            return _clean(m.group(1))
        if _OUTCOME_HEADING_RE.match(line):
            for nxt in lines[i + 1 :]:
                if nxt.lstrip().startswith("#"):
                    return ""
                if nxt.strip():
                    said = _OUTCOME_RE.match(nxt)
                    return _clean(said.group(1) if said else nxt)
            return ""
    return ""


def _clean(text: str) -> str:
    value = re.sub(r"\[cite:\d+\]", "", text).strip().strip("*_").strip().rstrip(".").strip()
    return "" if value.lower().strip("()") in _NO_OUTCOME else value


def _scope_differs(meta: object, user: str, assistant: str) -> bool:
    if not isinstance(meta, dict):
        return False
    scope = meta.get("scope")
    if not isinstance(scope, dict):
        return False
    return (str(scope.get("user")), str(scope.get("assistant"))) != (user, assistant)


def gather_store_facts(
    store: Store, key: bytes = b"", skill_path: Path | None = None
) -> StoreFacts:
    """Everything health needs from ``store``'s files (``key``: see ``opaque_item``)."""
    user, assistant = store.config.user, store.config.assistant
    versions: dict[str, str] = {}
    transcripts: set[str] = set()
    foreign: set[str] = set()
    turn_hashes: dict[str, dict[str, str]] = {}  # transcript path -> anchor -> turn hash
    for rel in store.files(TRANSCRIPTS):
        if "/" in rel[len(TRANSCRIPTS) + 1 :]:
            continue
        sid = Path(rel).stem
        item = session_item(sid, key)
        data = _read(store.memory / rel)
        if data is None:
            continue
        versions[item] = content_hash(data)
        transcripts.add(item)
        try:
            t = parse_transcript(data.decode("utf-8"), rel)
        except (MemoryFSError, UnicodeDecodeError):
            continue
        if _scope_differs(t.meta, user, assistant):
            foreign.add(item)
        turn_hashes[rel] = {turn.anchor: turn.hash for turn in t.turns}

    summarized: set[str] = set()
    outcomeless: set[str] = set()
    risks: list[CitationRisk] = []
    for root in PAGE_ROOTS:
        for rel in store.files(root):
            data = _read(store.memory / rel)
            if data is None:
                continue
            item = page_item(rel, key)
            versions[item] = content_hash(data)
            is_summary = rel.startswith(SUMMARIES + "/")
            if is_summary:
                summarized.add(session_item(Path(rel).stem, key))
            try:
                page = parse_page(data.decode("utf-8"), rel)
            except (MemoryFSError, UnicodeDecodeError):
                continue
            if _scope_differs(page.meta, user, assistant):
                foreign.add(item)
            if is_summary and not summary_outcome(page):
                outcomeless.add(session_item(Path(rel).stem, key))
            risks.extend(_citation_risks(item, rel, page, turn_hashes))

    status = skill_status(store, skill_path)
    user_scope, assistant_scope = scope_ids(user, assistant, key)
    return StoreFacts(
        user_scope=user_scope,
        assistant_scope=assistant_scope,
        head=store.head(),
        versions=versions,
        transcripts=frozenset(transcripts),
        summarized=frozenset(summarized),
        outcomeless=frozenset(outcomeless),
        foreign=frozenset(foreign),
        forgotten=frozenset(_forgotten(store, key)),
        hand_edited=frozenset(
            session_item(Path(edit.path).stem, key)
            for edit in transcript_edits(store.root, "HEAD", worktree=True)
        ),
        citations_at_risk=tuple(risks),
        approved_skill=status.approved,
        active_skill=status.active,
        kept_runs=frozenset(_kept_runs(store)),
    )


def _kept_runs(store: Store) -> list[str]:
    """The runs whose branch is kept (for review: what a run left out waits there)."""
    try:
        return kept_runs(store)
    except DreamError:  # no Git to ask: no branch is kept
        return []


def _citation_risks(
    item: str, rel: str, page: Page, turn_hashes: dict[str, dict[str, str]]
) -> list[CitationRisk]:
    out: list[CitationRisk] = []
    for src in page.sources:
        if not src.path.startswith(TRANSCRIPTS + "/"):
            continue  # the validator owns citations of anything else
        turns = turn_hashes.get(src.path)
        if turns is None:
            out.append(CitationRisk(item, rel, src.id, "transcript gone"))
        elif src.anchor not in turns:
            out.append(CitationRisk(item, rel, src.id, "turn gone"))
        elif src.hash and src.hash != turns[src.anchor]:
            out.append(CitationRisk(item, rel, src.id, "hash changed"))
    return out


def _forgotten(store: Store, key: bytes) -> set[str]:
    """Items of ``deletions.jsonl`` entries ``{"kind": "page"|"session", "id": ...}``.

    A page is forgotten by id, so every path it may have lived at is listed.
    """
    data = _read(store.memory / "deletions.jsonl") or b""
    out: set[str] = set()
    note_dirs = [p.name for p in (store.memory / "notes").glob("*") if p.is_dir()]
    for line in data.decode("utf-8", "replace").splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
            continue
        ident = entry["id"]
        if entry.get("kind") == "session":
            out.add(session_item(ident, key))
            out.add(page_item(f"{SUMMARIES}/{ident}.md", key))
        elif entry.get("kind") == "page":
            paths = [f"knowledge/{f}/{ident}.md" for f in KNOWLEDGE_FOLDERS]
            paths += [f"notes/{d}/{ident}.md" for d in note_dirs]
            out.update(page_item(p, key) for p in paths)
    return out


def _read(path: Path) -> bytes | None:
    """The bytes of the regular file ``path``; None when missing, not a regular file (a
    link to /dev/zero, a FIFO: never read nor waited on) or larger than a store file can be."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as fh:
            st = os.fstat(fh.fileno())
            if not stat.S_ISREG(st.st_mode) or st.st_size > READ_MAX_BYTES:
                return None
            data = fh.read(READ_MAX_BYTES + 1)
    except OSError:
        return None
    return data if len(data) <= READ_MAX_BYTES else None
