"""Committing ingested sessions: plan, write, commit.

Everything is parsed and checked before anything is written (``memoryfs.ingest.
load``): a session that exists already may only grow (its file gets the new turns
appended, byte for byte); a change to an earlier turn, or a scope that is not the
store's, is refused and nothing is written. Each new or grown session gets an
``ingested`` receipt (``memoryfs.receipts.records``: the transcript's content hash, no
content) committed with the transcripts.
"""

from __future__ import annotations

import dataclasses
import os
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import git

from memoryfs.errors import IngestError, MemoryFSError, PageError
from memoryfs.forget.deletions import load_deletions
from memoryfs.forget.redact import scrub_incoming
from memoryfs.ingest.load import (
    Input,
    Progress,
    check_size,
    read_inputs,
    settle,
    transcript_limit,
)
from memoryfs.pages.transcript import (
    Transcript,
    Turn,
    parse_transcript,
    render_transcript,
    render_turn,
    valid_session_id,
)
from memoryfs.receipts.log import appends_undone_on_error, record_ingested, store_receipt_dir
from memoryfs.store.atomic import atomic_write_text, remove_temp_files
from memoryfs.store.hashing import content_hash
from memoryfs.store.moving import recover_moves
from memoryfs.store.scan import read_file
from memoryfs.store.store import Store

__all__ = ["SessionChange", "IngestResult", "plan_ingest", "ingest"]


@dataclass(frozen=True)
class SessionChange:
    id: str
    status: str  # "new", "grown", "unchanged" or "forgotten" (skipped: deletions.jsonl)
    turns_added: int
    turns_total: int

    def to_json(self) -> dict[str, object]:
        return {
            "id": self.id,
            "status": self.status,
            "turnsAdded": self.turns_added,
            "turnsTotal": self.turns_total,
        }


@dataclass(frozen=True)
class IngestResult:
    sessions: tuple[SessionChange, ...]
    turns_added: int
    commit: str  # "" when nothing changed

    @property
    def changed(self) -> int:
        return sum(1 for s in self.sessions if s.status != "unchanged")

    def to_json(self) -> dict[str, object]:
        """The result as ``memoryfs ingest --json`` prints it."""
        return {
            "sessions": [s.to_json() for s in self.sessions],
            "changed": self.changed,
            "turnsAdded": self.turns_added,
            "commit": self.commit,
        }


def plan_ingest(store: Store, sessions: list[Transcript]) -> list[tuple[SessionChange, str | None]]:
    """For each session: its change and the new file text (None when unchanged).

    Raises ``IngestError`` if any session would change an existing turn.
    """
    plans: list[tuple[SessionChange, str | None]] = []
    seen: set[str] = set()
    for t in sessions:
        if t.id in seen:
            raise IngestError(f"session {t.id} appears twice in this ingest")
        seen.add(t.id)
        path = _transcript_file(store, t.id)
        if not os.path.lexists(path):
            text = render_transcript(t)
            plans.append((SessionChange(t.id, "new", len(t.turns), len(t.turns)), text))
            continue
        try:
            old_text = _stored_text(store, t.id)
            old = parse_transcript(old_text, str(path), limits=store.config.limits.yaml)
        except (UnicodeDecodeError, PageError) as exc:
            raise IngestError(
                f"session {t.id}: the stored transcript is unreadable: {exc}"
            ) from None
        for mine, theirs in zip(old.turns, t.turns, strict=False):
            if not mine.same_as(theirs):
                raise IngestError(
                    f"session {t.id}: turn t{mine.n} differs from the stored one; "
                    "transcripts are append-only (use a new session id for new content)"
                )
        new_turns = t.turns[len(old.turns) :]
        if not new_turns:
            plans.append((SessionChange(t.id, "unchanged", 0, len(old.turns)), None))
            continue
        if not old_text.endswith("\n"):
            old_text += "\n"
        text = old_text + "".join(render_turn(turn) for turn in new_turns)
        total = len(old.turns) + len(new_turns)
        check_size(replace(old, turns=old.turns + new_turns), text, f"session {t.id}", store)
        plans.append((SessionChange(t.id, "grown", len(new_turns), total), text))
    return plans


def _stored_text(store: Store, session_id: str) -> str:
    """The stored transcript of ``session_id``, read only when it is a regular file (not a
    FIFO, a device or a link) within the transcript limit."""
    rel = f"sessions/transcripts/{session_id}.md"
    limit = transcript_limit(store)
    got = read_file(store.memory, rel, limit)
    if got is None:
        raise IngestError(
            f"session {session_id}: memory/{rel} is not a regular file; "
            "remove it or restore it from Git"
        )
    if got.oversize:
        raise IngestError(
            f"session {session_id}: memory/{rel} is {got.size} bytes, over the {limit}-byte "
            "limit (limits.transcript_bytes in memory.toml); nothing can be appended to it"
        )
    return got.data.decode("utf-8")


def _transcript_file(store: Store, session_id: str) -> Path:
    """The transcript's path, refusing one that a symlink would take outside the store."""
    rel = f"sessions/transcripts/{session_id}.md"
    try:
        path = store.resolve(rel)
    except MemoryFSError as exc:
        raise IngestError(f"session {session_id}: {exc}") from None
    if path != store.memory.resolve() / rel:
        raise IngestError(
            f"session {session_id}: memory/{rel} is a symlink; replace it with a file"
        )
    return path


def ingest(
    store: Store,
    paths: Sequence[Input],
    fmt: str | None = None,
    session_id: str | None = None,
    progress: Progress | None = None,
) -> IngestResult:
    """Ingest ``paths`` (files, or ``Source``s such as stdin's) into ``store`` and commit
    ``ingest: N sessions, M turns``.

    ``fmt`` is one of ``FORMATS`` (default: detected per input); ``session_id`` names
    the one session the inputs hold. Sessions the deletion log forgot are skipped
    (status ``forgotten``) and forgotten phrases in new turns are redacted, so a
    forget holds when the same chat log is ingested again. Transcripts an
    interrupted ingest wrote but did not commit are checked (append-only against
    HEAD) and committed with this one. ``progress(phase, done, total)`` reports the
    inputs read (``read``) and the transcripts written (``write``).
    """
    imported = read_inputs(store, list(paths), fmt, session_id, progress)
    with store.lock("write"):
        # ids and times against the store as it is under the lock
        sessions = settle(store, imported, renamed=session_id is not None)
        for t in sessions:
            if not valid_session_id(t.id):  # a numbered id past the length limit
                raise IngestError(f"session id {t.id[:80]!r} is too long")
        deletions = load_deletions(store)
        kept: list[Transcript] = []
        forgotten: list[SessionChange] = []
        for t in sessions:
            try:
                scrubbed = scrub_incoming(t, deletions)
            except MemoryFSError as exc:
                raise IngestError(str(exc)) from None
            if scrubbed is None:
                forgotten.append(SessionChange(t.id, "forgotten", 0, 0))
            else:
                kept.append(scrubbed)
        remove_temp_files(store.memory)  # left by a killed write: we hold the lock
        recover_moves(store.root)  # a Dream sync the disk stopped half way: its files go
        plans = plan_ingest(store, kept)
        written: set[str] = set()
        for done, (change, text) in enumerate(plans, 1):
            if text is not None:
                atomic_write_text(_transcript_file(store, change.id), text)
                written.add(f"memory/sessions/transcripts/{change.id}.md")
            if progress is not None:
                progress("write", done, len(plans))
        # what differs from HEAD now: this ingest's files and any an interrupted one left
        dirty = _uncommitted_transcripts(store)
        written.update(dirty)
        changes: list[SessionChange] = []
        for change, _ in plans:
            changes.append(dirty.pop(f"memory/sessions/transcripts/{change.id}.md", change))
        changes.extend(dirty.values())
        added = sum(c.turns_added for c in changes)
        changed = sum(1 for c in changes if c.status in ("new", "grown"))
        commit = ""
        if written:
            # a receipt says committed only once the commit is made (a full disk can refuse it)
            with appends_undone_on_error(store_receipt_dir(store.root)):
                written.update(_receipts(store, changes))
                message = f"ingest: {changed} sessions, {added} turns"
                commit = store.commit(message, sorted(written))
    return IngestResult(sessions=(*changes, *forgotten), turns_added=added, commit=commit)


def _receipts(store: Store, changes: list[SessionChange]) -> list[str]:
    """``ingested`` receipts for the new and grown sessions; the paths to commit."""
    versions = {
        c.id: content_hash(_transcript_file(store, c.id).read_bytes())
        for c in changes
        if c.status in ("new", "grown")
    }
    if not versions and not store_receipt_dir(store.root).is_dir():
        return []  # nothing to record, nothing a killed ingest left to commit
    cfg = store.config
    run_id = f"ingest-{secrets.token_hex(4)}"
    config = {"budgets": dataclasses.asdict(cfg.budgets)}
    return record_ingested(store.root, cfg.user, cfg.assistant, versions, run_id, config)


def _uncommitted_transcripts(store: Store) -> dict[str, SessionChange]:
    """Transcripts that differ from HEAD as valid growth of HEAD's version, with
    their change counted against HEAD.

    Besides this ingest's own files, these are the ones an ingest killed between
    writing and committing left; each was written atomically, so it is whole. One
    that is not append-only against HEAD (or not a valid transcript of this store)
    is left alone for validation to report.
    """
    out = store.repo.git.status(
        "--porcelain", "-z", "--untracked-files=all", "--", "memory/sessions/transcripts"
    )
    found: dict[str, SessionChange] = {}
    scope = {"user": store.config.user, "assistant": store.config.assistant}
    for item in out.split("\0"):
        code, rel = item[:2], item[3:]
        if code not in ("??", " M", "M ", "MM", "A ", "AM") or rel.count("/") != 3:
            continue
        sid = rel.rsplit("/", 1)[-1].removesuffix(".md")
        if not rel.endswith(".md") or not valid_session_id(sid):
            continue
        try:
            disk = parse_transcript(_stored_text(store, sid), rel, limits=store.config.limits.yaml)
        except (UnicodeDecodeError, PageError, IngestError):
            continue
        if disk.id != sid or disk.scope != scope or not disk.turns:
            continue
        head_turns: tuple[Turn, ...] = ()
        if code != "??" and not code.startswith("A"):
            try:
                head_turns = parse_transcript(store.repo.git.show(f"HEAD:{rel}"), rel).turns
            except (git.GitCommandError, PageError, ValueError):
                continue
        if len(head_turns) > len(disk.turns) or not all(
            a.same_as(b) for a, b in zip(head_turns, disk.turns, strict=False)
        ):
            continue
        status = "grown" if head_turns else "new"
        added = len(disk.turns) - len(head_turns)
        found[rel] = SessionChange(sid, status, added, len(disk.turns))
    return found
