"""Orient: what a run starts from, derived from the files of the base commit.

A session is pending when its transcript has no summary, or when the summary's
``transcript_hash`` frontmatter key differs from the transcript's content hash
(the session gained turns). Nothing is kept aside: the state is read from the
base commit's tree, so uncommitted edits in the live tree never change a run.

Reading every transcript and summary of a large store on every run would make an
incremental run cost as much as a full one, so the per-file facts (a transcript's
content hash and turn count, a summary's ``transcript_hash``) are memoized by Git
blob id in ``.memoryfs/dream-orient.json``. A blob id names exact content, so the
cache can never be stale; deleting it only costs one slow run.

Also here: the stop conditions (``memory.toml`` ``[dream]`` or the command line)
and the deletion log. (The skill check is ``dream.skills``.)
"""

from __future__ import annotations

import contextlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dream.errors import DreamError
from dream.records import PendingSession
from dream.staging import run_git
from memoryfs.atomic import atomic_write_text
from memoryfs.errors import PageError
from memoryfs.hashing import content_hash
from memoryfs.page import parse_page
from memoryfs.store import Store

__all__ = [
    "Orientation",
    "StopConditions",
    "orient",
    "find_pending",
    "parse_duration",
    "stop_conditions",
    "read_deletions",
    "target_branch",
]

TRANSCRIPTS = "memory/sessions/transcripts/"
SUMMARIES = "memory/sessions/summaries/"
DELETIONS = "memory/deletions.jsonl"
HASH_KEY = "transcript_hash"
_CACHE_NAME = "dream-orient.json"
_CACHE_VERSION = 1
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


def _ls_tree(store: Store, commit: str) -> dict[str, str]:
    """path -> blob id for the transcripts, summaries and the deletion log at ``commit``."""
    out = run_git(
        store.root,
        "ls-tree",
        "-r",
        "-z",
        "--full-tree",
        commit,
        "--",
        TRANSCRIPTS,
        SUMMARIES,
        DELETIONS,
    )
    blobs: dict[str, str] = {}
    for entry in out.split("\0"):
        if not entry:
            continue
        meta, _, path = entry.partition("\t")
        parts = meta.split()
        if len(parts) == 3 and parts[1] == "blob":
            blobs[path] = parts[2]
    return blobs


def _session_id(path: str, folder: str) -> str | None:
    if not path.startswith(folder):
        return None
    name = path[len(folder) :]
    if "/" in name or not name.endswith(".md") or name.startswith("."):
        return None
    return name[:-3]


def _read_blobs(store: Store, blob_ids: list[str]) -> dict[str, bytes]:
    """Contents of ``blob_ids`` through one ``git cat-file --batch`` process."""
    out: dict[str, bytes] = {}
    odb = store.repo.odb
    for blob in blob_ids:
        out[blob] = odb.stream(bytes.fromhex(blob)).read()
    return out


def _transcript_facts(data: bytes) -> list[Any]:
    text = data.decode("utf-8", errors="replace")
    m = _STARTED_RE.search(text[:4000])
    return [content_hash(data), len(_TURN_RE.findall(text)), m.group(1).strip() if m else ""]


def _summary_hash(data: bytes) -> str:
    try:
        page = parse_page(data.decode("utf-8"), "summary")
    except (UnicodeDecodeError, PageError):
        return ""
    value = page.meta.get(HASH_KEY)
    return str(value) if value is not None else ""


def _load_cache(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("version") != _CACHE_VERSION:
        return {}
    return data


def find_pending(store: Store, commit: str) -> tuple[list[PendingSession], int]:
    """Pending sessions at ``commit`` (oldest first) and the number of sessions there."""
    blobs = _ls_tree(store, commit)
    transcripts = {sid: blob for p, blob in blobs.items() if (sid := _session_id(p, TRANSCRIPTS))}
    summaries = {sid: blob for p, blob in blobs.items() if (sid := _session_id(p, SUMMARIES))}
    cache_path = store.cache_dir / _CACHE_NAME
    cache = _load_cache(cache_path)
    t_cache: dict[str, list[Any]] = cache.get("transcripts", {})
    s_cache: dict[str, str] = cache.get("summaries", {})
    missing = [b for b in transcripts.values() if b not in t_cache]
    missing += [b for b in summaries.values() if b not in s_cache]
    if missing:
        contents = _read_blobs(store, sorted(set(missing)))
        for blob in transcripts.values():
            if blob not in t_cache:
                t_cache[blob] = _transcript_facts(contents[blob])
        for blob in summaries.values():
            if blob not in s_cache:
                s_cache[blob] = _summary_hash(contents[blob])
    pending: list[tuple[str, PendingSession]] = []
    for sid, blob in transcripts.items():
        digest, turns, started = t_cache[blob]
        summary_blob = summaries.get(sid)
        if summary_blob is None:
            reason = "new"
        elif s_cache[summary_blob] != digest:
            reason = "grown"
        else:
            continue
        session = PendingSession(
            id=sid,
            path=f"sessions/transcripts/{sid}.md",
            content_hash=digest,
            turns=turns,
            reason=reason,
        )
        pending.append((started, session))
    pending.sort(key=lambda item: (item[0], item[1].id))
    if missing or len(t_cache) > len(transcripts) or len(s_cache) > len(summaries):
        live_t = set(transcripts.values())
        live_s = set(summaries.values())
        # Keep what is live now; a few superseded blobs would do no harm but grow forever.
        fresh = {
            "version": _CACHE_VERSION,
            "transcripts": {b: v for b, v in t_cache.items() if b in live_t},
            "summaries": {b: v for b, v in s_cache.items() if b in live_s},
        }
        with contextlib.suppress(OSError):  # a cache that cannot be written only costs time
            atomic_write_text(cache_path, json.dumps(fresh, separators=(",", ":")))
    return [p for _, p in pending], len(transcripts)


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
