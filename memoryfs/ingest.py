"""Ingestion: turn chat logs into transcripts and commit them.

Accepted inputs: transcripts already in the store's Markdown form (``md``),
JSONL chat logs with one ``{"role", "content", "ts"}`` object per line
(``jsonl``), and LoCoMo conversations (``locomo``). Everything is parsed and
checked before anything is written: a session that exists already may only
grow (its file gets the new turns appended, byte for byte); a change to an
earlier turn, or a scope that is not the store's, is refused and nothing is
written. Each new or grown session gets an ``ingested`` receipt
(``memoryfs.receipts``: the transcript's content hash, no content) committed with
the transcripts.
"""

from __future__ import annotations

import datetime as dt
import json
import secrets
from dataclasses import dataclass
from pathlib import Path

import git

from memoryfs.atomic import atomic_write_text, remove_temp_files
from memoryfs.deletions import load_deletions
from memoryfs.errors import IngestError, MemoryFSError, PageError
from memoryfs.hashing import content_hash
from memoryfs.locomo import load_locomo
from memoryfs.receipt_log import record_ingested, store_receipt_dir
from memoryfs.redact import scrub_incoming
from memoryfs.slugs import slugify
from memoryfs.store import Store
from memoryfs.transcript import (
    Transcript,
    Turn,
    parse_transcript,
    render_transcript,
    render_turn,
    valid_session_id,
)

__all__ = ["FORMATS", "SessionChange", "IngestResult", "load_sessions", "plan_ingest", "ingest"]

FORMATS = ("md", "jsonl", "locomo")
_MAX_INPUT_BYTES = 200_000_000


@dataclass(frozen=True)
class SessionChange:
    id: str
    status: str  # "new", "grown", "unchanged" or "forgotten" (skipped: deletions.jsonl)
    turns_added: int
    turns_total: int


@dataclass(frozen=True)
class IngestResult:
    sessions: tuple[SessionChange, ...]
    turns_added: int
    commit: str  # "" when nothing changed

    @property
    def changed(self) -> int:
        return sum(1 for s in self.sessions if s.status != "unchanged")


def _detect(path: Path, fmt: str | None) -> str:
    if fmt:
        if fmt not in FORMATS:
            raise IngestError(f"unknown format {fmt!r} (use one of: {', '.join(FORMATS)})")
        return fmt
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        return "jsonl"
    if suffix == ".json":
        return "locomo"
    if suffix in (".md", ".markdown"):
        return "md"
    raise IngestError(
        f"{path}: cannot tell the format from the name; pass --format md|jsonl|locomo"
    )


def _read_text(path: Path) -> str:
    try:
        if path.stat().st_size > _MAX_INPUT_BYTES:
            raise IngestError(f"{path}: larger than {_MAX_INPUT_BYTES} bytes; split it first")
        data = path.read_bytes()
    except OSError as exc:
        raise IngestError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if b"\x00" in data:
        raise IngestError(f"{path}: contains NUL bytes; not a text transcript")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise IngestError(f"{path}: not UTF-8 (byte {exc.start}); convert it to UTF-8") from None
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _norm_ts(value: object, where: str) -> str:
    if not isinstance(value, str | int | float) or isinstance(value, bool):
        raise IngestError(f"{where}: 'ts' must be an ISO datetime string or a Unix time")
    try:
        if isinstance(value, int | float):
            when = dt.datetime.fromtimestamp(value, tz=dt.UTC)
        else:
            when = dt.datetime.fromisoformat(value.strip())
    except (ValueError, OverflowError, OSError):
        raise IngestError(f"{where}: 'ts' {value!r} is not an ISO datetime") from None
    return when.isoformat(timespec="seconds" if when.second else "minutes")


def _slug(text: str) -> str:
    return slugify(text, 120, empty="session")


def _load_jsonl(path: Path, scope: dict[str, str]) -> Transcript:
    sid = _slug(path.stem)
    if not valid_session_id(sid):
        raise IngestError(f"{path}: cannot make a session id from the file name")
    turns: list[Turn] = []
    last_ts = ""
    for lineno, line in enumerate(_read_text(path).split("\n"), start=1):
        if not line.strip():
            continue
        where = f"{path}:{lineno}"
        try:
            obj = json.loads(line)
        except (ValueError, RecursionError):  # ValueError: also ints over the digit limit
            raise IngestError(f"{where}: not a JSON object") from None
        if not isinstance(obj, dict):
            raise IngestError(f"{where}: expected an object with 'role', 'content', 'ts'")
        role, content = obj.get("role"), obj.get("content")
        if not isinstance(role, str) or not role.strip():
            raise IngestError(f"{where}: missing 'role'")
        if not isinstance(content, str):
            raise IngestError(f"{where}: 'content' must be a string")
        if "ts" in obj and obj["ts"] is not None:
            last_ts = _norm_ts(obj["ts"], where)
        elif not last_ts:
            raise IngestError(f"{where}: the first message needs a 'ts'")
        turns.append(Turn(n=len(turns) + 1, speaker=role.strip(), ts=last_ts, text=content.strip()))
    if not turns:
        raise IngestError(f"{path}: no messages")
    participants = tuple(dict.fromkeys(t.speaker for t in turns))
    return Transcript(
        id=sid,
        started=turns[0].ts,
        participants=participants,
        scope=dict(scope),
        turns=tuple(turns),
        meta={},
    )


def _load_md(path: Path, scope: dict[str, str]) -> Transcript:
    try:
        t = parse_transcript(_read_text(path), str(path))
    except PageError as exc:
        raise IngestError(str(exc)) from None
    if not t.turns:
        raise IngestError(f"{path}: no turns (expected '## t1 · speaker · time' headings)")
    if t.scope and t.scope != scope:
        raise IngestError(
            f"{path}: scope {t.scope} does not match this store's scope {scope}; "
            "ingest it into the store of that user"
        )
    return t


def load_sessions(store: Store, path: Path, fmt: str | None = None) -> list[Transcript]:
    """Parse one input file into transcripts (no writes)."""
    scope = {"user": store.config.user, "assistant": store.config.assistant}
    kind = _detect(path, fmt)
    if kind == "jsonl":
        sessions = [_load_jsonl(path, scope)]
    elif kind == "md":
        sessions = [_load_md(path, scope)]
    else:
        sessions = [s for conv in load_locomo(path, scope) for s in conv.sessions]
    for t in sessions:
        _check_writable(t, path)
    return sessions


def _check_writable(t: Transcript, path: Path) -> None:
    """Refuse what cannot be stored as a UTF-8 text file (JSON escapes can carry it)."""
    if not valid_session_id(t.id):
        raise IngestError(
            f"{path}: session id {t.id[:80]!r} is not a lowercase slug of 1-128 chars"
        )
    try:
        text = render_transcript(t)
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise IngestError(
            f"{path}: session {t.id} holds invalid Unicode (lone surrogates)"
        ) from None
    except PageError as exc:
        raise IngestError(f"{path}: session {t.id}: {exc}") from None
    if "\x00" in text:
        raise IngestError(f"{path}: session {t.id} holds NUL characters; not a text transcript")


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
        if not path.exists():
            text = render_transcript(t)
            plans.append((SessionChange(t.id, "new", len(t.turns), len(t.turns)), text))
            continue
        try:
            old_text = path.read_text(encoding="utf-8")
            old = parse_transcript(old_text, str(path))
        except (OSError, UnicodeDecodeError, PageError) as exc:
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
        plans.append((SessionChange(t.id, "grown", len(new_turns), total), text))
    return plans


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


def ingest(store: Store, paths: list[Path], fmt: str | None = None) -> IngestResult:
    """Ingest ``paths`` into ``store`` and commit ``ingest: N sessions, M turns``.

    Sessions the deletion log forgot are skipped (status ``forgotten``) and
    forgotten phrases in new turns are redacted, so a forget holds when the same
    chat log is ingested again. Transcripts an interrupted ingest wrote but did not
    commit are checked (append-only against HEAD) and committed with this one.
    """
    sessions: list[Transcript] = []
    for path in paths:
        sessions.extend(load_sessions(store, Path(path), fmt))
    with store.lock("write"):
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
        plans = plan_ingest(store, kept)
        written: set[str] = set()
        for change, text in plans:
            if text is not None:
                atomic_write_text(_transcript_file(store, change.id), text)
                written.add(f"memory/sessions/transcripts/{change.id}.md")
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
            written.update(_receipts(store, changes))
            commit = store.commit(f"ingest: {changed} sessions, {added} turns", sorted(written))
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
    return record_ingested(store.root, cfg.user, cfg.assistant, versions, run_id)


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
            disk = parse_transcript(_transcript_file(store, sid).read_text(encoding="utf-8"), rel)
        except (OSError, UnicodeDecodeError, PageError, IngestError):
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
