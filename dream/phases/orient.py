"""Orient: what a run starts from, derived from the files of the base commit.

A session is pending when its transcript has no summary, or when the summary's
``transcript_hash`` frontmatter key differs from the transcript's content hash
(the session gained turns). Nothing is kept aside: the state is read from the
base commit's tree, so uncommitted edits in the live tree never change a run.

Reading every transcript and summary of a large store on every run would make an
incremental run cost as much as a full one, so the per-file facts (a transcript's
content hash, turn count and start, a summary's ``transcript_hash``) are memoized by
Git blob id in ``.memoryfs/dream-orient.sqlite`` (``dream.landing.blobcache``: a blob id
names exact content, so the cache is never stale; one that cannot be read is rebuilt,
one that cannot be used now is replaced by an in-memory one; deleting it only costs
one slow run; a ``dream-orient.json`` cache older versions wrote is deleted when seen). The
commit's
listing streams from ``git ls-tree`` into a temporary table and the pending sessions
are asked in SQL.

Also here: the stop conditions (``memory.toml`` ``[dream]`` or the command line)
and the deletion log. (The skill check is ``dream.skills``.)
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from dream.errors import DreamError
from dream.landing.blobcache import ls_tree, with_blob_cache
from dream.landing.staging import run_git
from dream.records import PendingSession
from memoryfs.errors import PageError
from memoryfs.pages.page import parse_page
from memoryfs.store.hashing import content_hash
from memoryfs.store.store import Store

__all__ = [
    "Orientation",
    "StopConditions",
    "orient",
    "find_pending",
    "CACHE_NAME",
    "parse_duration",
    "stop_conditions",
    "read_deletions",
    "target_branch",
]

TRANSCRIPTS = "memory/sessions/transcripts/"
SUMMARIES = "memory/sessions/summaries/"
DELETIONS = "memory/deletions.jsonl"
HASH_KEY = "transcript_hash"
CACHE_NAME = "dream-orient.sqlite"
_EARLIER = ("dream-orient.json",)  # the cache file older versions wrote, deleted when seen
_CACHE_VERSION = 1
_CHUNK = 256  # blobs read and learned together
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS transcripts(blob TEXT PRIMARY KEY, hash TEXT NOT NULL,"
    " turns INTEGER NOT NULL, started TEXT NOT NULL) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS summaries(blob TEXT PRIMARY KEY, hash TEXT NOT NULL) WITHOUT ROWID",
)
_TEMP = (
    # the commit's transcripts (kind 0) and summaries (kind 1)
    "CREATE TEMP TABLE tree(kind INTEGER NOT NULL, sid TEXT NOT NULL, blob TEXT NOT NULL,"
    " PRIMARY KEY (kind, sid)) WITHOUT ROWID",
)
# a transcript with no summary (new), or whose summary was written from other content
_PENDING = (
    "SELECT t.sid, c.hash, c.turns, s.blob IS NULL FROM tree t"
    " JOIN transcripts c ON c.blob = t.blob"
    " LEFT JOIN tree s ON s.kind = 1 AND s.sid = t.sid"
    " LEFT JOIN summaries h ON h.blob = s.blob"
    " WHERE t.kind = 0 AND (s.blob IS NULL OR h.hash IS NOT c.hash)"
    " ORDER BY c.started, t.sid"
)
_TURN_RE = re.compile(r"^## t\d{1,7} · ", re.MULTILINE)
_STARTED_RE = re.compile(r"^started:\s*['\"]?([^'\"\n]+)", re.MULTILINE)
_DURATION_RE = re.compile(r"(\d+(?:\.\d+)?)\s*([hms]?)")


@dataclass(frozen=True)
class StopConditions:
    max_sessions: int = 0  # 0: no limit
    deadline_seconds: float | None = None  # None: no deadline


@dataclass(frozen=True)
class Orientation:
    base: str  # the base commit
    target: str  # the branch the run lands on (the one the store root has checked out)
    pending: tuple[PendingSession, ...]  # every pending session, oldest first
    sessions_total: int
    deletions: tuple[dict[str, Any], ...] = field(default=())


def parse_duration(text: str) -> float | None:
    """``"20m"``, ``"1h30m"``, ``"90s"``, ``"45"`` (minutes) -> seconds; "" -> None."""
    raw = text.strip().lower().replace(" ", "")
    if not raw:
        return None
    pos, total = 0, 0.0
    for m in _DURATION_RE.finditer(raw):
        if m.start() != pos:
            break
        total += float(m.group(1)) * {"h": 3600, "m": 60, "s": 1, "": 60}[m.group(2)]
        pos = m.end()
    if pos != len(raw) or total <= 0:
        raise DreamError(f"bad duration {text!r} (use e.g. 20m, 1h30m, 90s)")
    return total


def stop_conditions(
    store: Store, max_sessions: int | None = None, deadline: str | None = None
) -> StopConditions:
    """The command line wins over ``memory.toml`` ``[dream]``."""
    cfg = store.config.dream
    limit = cfg.max_sessions if max_sessions is None else max_sessions
    if limit < 0:
        raise DreamError(f"max sessions must be 0 (no limit) or more, not {limit}")
    return StopConditions(
        max_sessions=limit,
        deadline_seconds=parse_duration(cfg.deadline if deadline is None else deadline),
    )


def target_branch(store: Store) -> str:
    """The branch checked out in the store root: the one Dream moves."""
    out = run_git(store.root, "symbolic-ref", "--quiet", "--short", "HEAD", check=False).strip()
    if not out:
        store.repo  # noqa: B018 - raises StoreNotFoundError when there is no repository at all
        raise DreamError(
            f"{store.root} has a detached HEAD; check out the store's branch (git checkout main)"
        )
    return out


def rev(store: Store, ref: str) -> str:
    return run_git(
        store.root, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", check=False
    ).strip()


def orient(
    store: Store,
    base: str | None = None,
) -> Orientation:
    """Read the base commit (the target branch's tip unless given) and what is pending."""
    target = target_branch(store)
    base = base or rev(store, f"refs/heads/{target}")
    if not base:
        raise DreamError(f"branch {target} has no commit yet; ingest a session first")
    pending, total = find_pending(store, base)
    return Orientation(
        base=base,
        target=target,
        pending=tuple(pending),
        sessions_total=total,
        deletions=tuple(read_deletions(store, base)),
    )


# -- pending sessions ------------------------------------------------------------


def find_pending(store: Store, commit: str) -> tuple[list[PendingSession], int]:
    """Pending sessions at ``commit`` (oldest first) and the number of sessions there."""
    return with_blob_cache(
        store,
        CACHE_NAME,
        _CACHE_VERSION,
        _SCHEMA,
        _TEMP,
        lambda db: _pending(store, db, commit),
        _EARLIER,
    )


def _pending(store: Store, db: sqlite3.Connection, commit: str) -> tuple[list[PendingSession], int]:
    db.executemany("INSERT OR REPLACE INTO tree VALUES (?, ?, ?)", _listing(store, commit))
    _learn(store, db)
    pending = [
        PendingSession(
            id=sid,
            path=f"sessions/transcripts/{sid}.md",
            content_hash=digest,
            turns=turns,
            reason="new" if new else "grown",
        )
        for sid, digest, turns, new in db.execute(_PENDING)
    ]
    (total,) = db.execute("SELECT count(*) FROM tree WHERE kind = 0").fetchone()
    for table, kind in (("transcripts", 0), ("summaries", 1)):
        # Keep what is live now once the rest outgrows it: a few superseded blobs do no
        # harm, but would grow forever.
        (cached,) = db.execute(f"SELECT count(*) FROM {table}").fetchone()
        (live,) = db.execute("SELECT count(*) FROM tree WHERE kind = ?", (kind,)).fetchone()
        if cached > live + live // 4 + 16:
            db.execute(f"DELETE FROM {table} WHERE blob NOT IN (SELECT blob FROM tree)")
    db.commit()
    return pending, int(total)


def _listing(store: Store, commit: str) -> Iterator[tuple[int, str, str]]:
    """(kind, session id, blob id) of the transcripts (kind 0) and summaries (1) at
    ``commit``, as git lists them."""
    for path, blob in ls_tree(store.root, commit, (TRANSCRIPTS, SUMMARIES)):
        kind = 0 if path.startswith(TRANSCRIPTS) else 1
        if sid := _session_id(path, SUMMARIES if kind else TRANSCRIPTS):
            yield kind, sid, blob


def _session_id(path: str, folder: str) -> str | None:
    if not path.startswith(folder):
        return None
    name = path[len(folder) :]
    if "/" in name or not name.endswith(".md") or name.startswith("."):
        return None
    return name[:-3]


def _learn(store: Store, db: sqlite3.Connection) -> None:
    """Read the listed blobs the cache does not know yet, a chunk at a time."""
    odb = store.repo.odb
    for table, kind, facts in (
        ("transcripts", 0, _transcript_facts),
        ("summaries", 1, _summary_facts),
    ):
        marks = ", ".join("?" * (3 if kind == 0 else 1))
        while blobs := [
            blob
            for (blob,) in db.execute(
                f"SELECT DISTINCT blob FROM tree t WHERE kind = ? AND NOT EXISTS"
                f" (SELECT 1 FROM {table} c WHERE c.blob = t.blob) LIMIT {_CHUNK}",
                (kind,),
            )
        ]:
            rows = ((b, *facts(odb.stream(bytes.fromhex(b)).read())) for b in blobs)
            db.executemany(f"INSERT OR REPLACE INTO {table} VALUES (?, {marks})", rows)


def _transcript_facts(data: bytes) -> tuple[str, int, str]:
    """Content hash, turn count, and start (the order of pending sessions)."""
    text = data.decode("utf-8", errors="replace")
    m = _STARTED_RE.search(text[:4000])
    return content_hash(data), len(_TURN_RE.findall(text)), m.group(1).strip() if m else ""


def _summary_facts(data: bytes) -> tuple[str]:
    """The ``transcript_hash`` a summary was written from ("" when it does not parse)."""
    try:
        page = parse_page(data.decode("utf-8"), "summary")
    except (UnicodeDecodeError, PageError):
        return ("",)
    value = page.meta.get(HASH_KEY)
    return (str(value) if value is not None else "",)


def read_deletions(store: Store, commit: str) -> list[dict[str, Any]]:
    """The well-formed entries of ``memory/deletions.jsonl`` at ``commit`` (validation
    reports malformed lines)."""
    text = run_git(store.root, "show", f"{commit}:{DELETIONS}", check=False)
    entries: list[dict[str, Any]] = []
    for line in text.splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict) and entry.get("kind") in ("page", "session", "phrase"):
            entries.append(entry)
    return entries
