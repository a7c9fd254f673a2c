"""``memoryfs forget``: remove a page, a session or a phrase from the live tree for good.

One forget is one normal commit ``forget: <kind> (<reason>)`` made under the
store's write lock. It appends a tombstone to ``memory/deletions.jsonl`` that keeps
no forgotten content (a page or session by its id; a phrase as ``phrase_hash`` of
its normalized words and their count, plus the user's reason, which may not
repeat the phrase), scrubs every file the tombstone touches (see
``memoryfs.forget.scrub``: pages, notes and summaries lose the lines, transcripts get
``[forgotten]`` in place of the phrase, or are removed with their session),
regenerates INDEX.md and sessions/index.md, then scrubs what lies beside the
tracked files (``memoryfs.forget.derived``: Dream's worktrees, kept runs, run logs,
the caches) and proves the result (``memoryfs.forget.verify`` on the live places).
A page or session tombstone also keeps the ``traces`` of its text
(``memoryfs.forget.traces``). Git history still holds the old content until
``memoryfs.forget.purge.purge_history`` rewrites it.

A redacted transcript gets an ``ingested`` receipt at its new version (committed
with the forget), so its lineage stays proven; a page it removed a ``forgotten``
receipt, a page it edited a ``committed`` one. A forget that was interrupted
(killed before its commit) is finished by running it again: the files it already
changed are found by comparing with HEAD.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as _dt
import json
import os
import re
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import git

from memoryfs.errors import DiskError, MemoryFSError, PageError
from memoryfs.forget.deletions import (
    DELETIONS_REL,
    Deletions,
    decode_traces,
    encode_traces,
    has_phrase,
    load_deletions,
    parse_deletions,
    parse_entries,
)
from memoryfs.forget.derived import DerivedCleanup, clean_derived
from memoryfs.forget.redact import scrub_transcript
from memoryfs.forget.scrub import scrub_page, spoken, unlink_pages
from memoryfs.forget.traces import page_lines, traces_of, transcript_lines
from memoryfs.forget.verify import VerifyReport, verify_forgotten
from memoryfs.index.index_md import write_indexes
from memoryfs.pages.page import parse_page
from memoryfs.pages.transcript import valid_session_id
from memoryfs.receipts.log import (
    ReceiptLog,
    appends_undone_on_error,
    record_ingested,
    store_receipt_dir,
)
from memoryfs.receipts.records import Receipt, format_utc, page_item, scope_ids, source_version
from memoryfs.store.atomic import atomic_write_text, remove_temp_files
from memoryfs.store.hashing import content_hash
from memoryfs.store.moving import disk_error, disk_reason, recover_moves
from memoryfs.store.store import Store
from memoryfs.validate.rules import normalize_words, phrase_hash

__all__ = ["KINDS", "AlreadyForgotten", "ForgetResult", "make_entry", "forget"]

KINDS = ("page", "session", "phrase")
MAX_REASON = 200
MAX_PHRASE_WORDS = 64
_PAGE_ID_RE = re.compile(r"^[^/\\\x00-\x1f.][^/\\\x00-\x1f]{0,199}$")
_PAGE_LAYERS = ("knowledge/", "notes/")
_SUMMARIES = "sessions/summaries/"
_TRANSCRIPTS = "sessions/transcripts/"
_GENERATED = ("INDEX.md", "sessions/index.md")


@dataclass(frozen=True)
class ForgetResult:
    kind: str
    entry: dict[str, Any]  # the tombstone (content-free)
    logged: bool  # False when an equal tombstone was already in the log
    removed: tuple[str, ...]  # files removed, relative to memory/
    edited: tuple[str, ...]  # pages, notes and summaries changed
    redacted: tuple[str, ...]  # transcripts redacted
    lines_removed: int
    turns_redacted: int
    citations_rehashed: int
    commit: str
    derived: DerivedCleanup = DerivedCleanup((), (), ())
    verify: VerifyReport = VerifyReport(history=False, entries=0)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "entry": _shown(self.entry),
            "logged": self.logged,
            "removed": list(self.removed),
            "edited": list(self.edited),
            "redacted": list(self.redacted),
            "linesRemoved": self.lines_removed,
            "turnsRedacted": self.turns_redacted,
            "citationsRehashed": self.citations_rehashed,
            "commit": self.commit,
            "derived": self.derived.to_dict(),
            "verify": self.verify.to_dict(),
        }


def _shown(entry: dict[str, Any]) -> dict[str, Any]:
    """The tombstone as printed: its traces counted, not listed."""
    if "traces" not in entry:
        return entry
    return {**entry, "traces": len(decode_traces(entry["traces"]) or ())}


class AlreadyForgotten(MemoryFSError):
    """The log already holds this tombstone and nothing in the tree is left to change.
    ``finished``: what the earlier forget left outside the tree was done now."""

    def __init__(self, message: str, finished: bool = False) -> None:
        super().__init__(message)
        self.finished = finished


def make_entry(
    kind: str, target: str, reason: str, today: _dt.date | None = None
) -> dict[str, Any]:
    """The tombstone for a request; raises ``MemoryFSError`` on a bad request."""
    reason = reason.strip()
    if not reason:
        raise MemoryFSError("give a --reason (it is kept in the log and the commit message)")
    if len(reason) > MAX_REASON or any(ch < " " or ch == "\x7f" for ch in reason):
        raise MemoryFSError(f"the reason must be one line of at most {MAX_REASON} characters")
    at = (today or _dt.date.today()).isoformat()
    if kind == "page":
        if not _PAGE_ID_RE.match(target) or target.endswith(".md"):
            raise MemoryFSError(f"{target!r} is not a page id (the file name without .md)")
        return {"kind": "page", "id": target, "reason": reason, "at": at}
    if kind == "session":
        if not valid_session_id(target):
            raise MemoryFSError(f"{target!r} is not a session id (the transcript's file name)")
        return {"kind": "session", "id": target, "reason": reason, "at": at}
    if kind != "phrase":
        raise MemoryFSError(f"unknown kind {kind!r} (use one of: {', '.join(KINDS)})")
    words = normalize_words(target)
    if not words:
        raise MemoryFSError("the phrase has no words to forget")
    if len(words) > MAX_PHRASE_WORDS:
        raise MemoryFSError(f"the phrase is longer than {MAX_PHRASE_WORDS} words; forget a part")
    if set(words) == {"forgotten"}:
        raise MemoryFSError("'forgotten' is the redaction marker itself and cannot be forgotten")
    entry = {"kind": "phrase", "hash": phrase_hash(words), "words": len(words)}
    if has_phrase(reason, parse_entries([entry])):
        raise MemoryFSError(
            "the reason repeats the phrase; the log must not keep what it forgets "
            "(describe why, not what)"
        )
    return {**entry, "reason": reason, "at": at}


@dataclass
class _Plan:
    writes: dict[str, str]  # memory/-relative path -> new text
    removes: set[str]
    edited: set[str]
    redacted: set[str]
    lines: int = 0
    turns: int = 0
    rehashed: int = 0


def forget(
    store: Store, kind: str, target: str, reason: str, today: _dt.date | None = None
) -> ForgetResult:
    """Forget a page, session or phrase in one commit; see the module docstring."""
    entry = make_entry(kind, target, reason, today)
    with store.lock("write"):
        remove_temp_files(store.memory)  # left by a killed write: we hold the lock
        recover_moves(store.root)  # a Dream sync the disk stopped half way: its files go
        log = load_deletions(store)
        if kind != "phrase":
            traces = _traces(store, kind, target)
            if traces:
                entry = {**entry, "traces": encode_traces(traces)}
        # a re-run keeps what the first run logged (the text may be gone from the tree)
        new = parse_entries([entry, *(e for e in log.entries if _same(e, entry))])
        interrupted, rehash = _interrupted(store, new)
        plan = _plan(store, new, rehash)
        logged = not log.has(entry)
        if kind != "phrase" and not plan.removes and not interrupted:
            if not logged:
                done = _finish_earlier(store, new)
                raise AlreadyForgotten(
                    f"{kind} {target!r} is already forgotten; {done}", done != _NOTHING
                )
            where = "knowledge/ or notes/" if kind == "page" else "sessions/"
            raise MemoryFSError(
                f"no {kind} {target!r} in {where} (check the id with 'memoryfs index --prompt')"
            )
        if kind == "phrase" and not logged and not (plan.writes or plan.removes or interrupted):
            done = _finish_earlier(store, new)
            raise AlreadyForgotten(f"this phrase is already forgotten; {done}", done != _NOTHING)
        touched = {*plan.writes, *plan.removes, DELETIONS_REL, *_GENERATED, *interrupted}
        with _put_back_when_disk_refuses(store, touched):
            paths = _apply(store, plan)
            if logged:
                _append(store, entry)
            paths.add(DELETIONS_REL)
            write_indexes(store)
            paths.update(_GENERATED)  # also when a killed run of this forget wrote them
            paths.update(interrupted)
            committable = _committable(store, paths) + _receipts(store, plan)
            commit = store.commit(f"forget: {kind} ({entry['reason']})", committable)
        derived = clean_derived(store, new, plan.removes | _removed_in(store, interrupted))
        proof = verify_forgotten(store, history=False)
    return ForgetResult(
        kind=kind,
        entry=entry,
        logged=logged,
        removed=tuple(sorted(plan.removes)),
        edited=tuple(sorted(plan.edited)),
        redacted=tuple(sorted(plan.redacted)),
        lines_removed=plan.lines,
        turns_redacted=plan.turns,
        citations_rehashed=plan.rehashed,
        commit=commit,
        derived=derived,
        verify=proof,
    )


_NOTHING = "nothing to do"


def _finish_earlier(store: Store, deletions: Deletions) -> str:
    """An earlier forget of this target committed, but what it does after its commit
    (Dream's worktrees and kept branches, run logs, caches, the check) may have been
    stopped by a full disk or a kill: that is done again here, and checked. What to say
    after "already forgotten"; a trace still found is an error naming where."""
    derived = clean_derived(store, deletions, set())
    proof = verify_forgotten(store, history=False)
    if not proof.ok:
        raise MemoryFSError(
            "already forgotten, but forgotten content remains: "
            + "; ".join(r.line() for r in proof.remains)
        )
    finished = [
        f"{len(found)} {what}"
        for found, what in (
            (derived.worktrees, "Dream worktrees removed"),
            (derived.branches, "kept Dream branches deleted"),
            (derived.run_logs, "run logs scrubbed"),
        )
        if found
    ]
    if finished:
        return "finished what the earlier forget left: " + ", ".join(finished)
    return _NOTHING


@contextlib.contextmanager
def _put_back_when_disk_refuses(store: Store, touched: set[str]) -> Iterator[None]:
    """A forget the disk stopped (full, read-only) leaves the live tree as HEAD has it
    when it can, and never receipts of a commit that was not made; running it again
    once there is space finishes it (as after a kill)."""
    try:
        with appends_undone_on_error(store_receipt_dir(store.root)):
            yield
    except (OSError, DiskError) as exc:
        reason = disk_reason(exc) if isinstance(exc, OSError) else None
        if reason is None and not isinstance(exc, DiskError):
            raise
        rels = _committable(store, touched)
        known = set(store.repo.git.ls_files("-z", "--", *rels).split("\0")) if rels else set()
        with contextlib.suppress(OSError, git.GitCommandError):  # the rerun finishes it
            for i in range(0, len(rels), 500):
                chunk = [p for p in rels[i : i + 500] if p in known]
                if chunk:
                    store.repo.git.checkout("HEAD", "--", *chunk)
        if isinstance(exc, DiskError):
            raise
        raise disk_error(store.root, "the forget could not be written", str(reason)) from None


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return a.get("kind") == b.get("kind") and a.get("id") == b.get("id")


def _traces(store: Store, kind: str, target: str) -> set[str]:
    """The traces a page or session tombstone keeps (``memoryfs.forget.traces``)."""
    forgotten: list[str] = []
    kept: list[str] = []
    for rel in store.files(_TRANSCRIPTS):
        text = _read(store, rel) or _head_text(store, rel) or ""
        lines = transcript_lines(text, rel)
        (forgotten if kind == "session" and _stem(rel) == target else kept).extend(lines)
    if kind == "session" and not forgotten:  # removed by a killed run of this forget
        rel = f"{_TRANSCRIPTS}{target}.md"
        forgotten = transcript_lines(_head_text(store, rel) or "", rel)
    if kind == "page":
        for page_rel in [*store.files("knowledge"), *store.files("notes")]:
            page_text = _read(store, page_rel)
            if page_text is None:
                continue
            lines = page_lines(page_text, page_rel)
            (forgotten if target in _ids(page_rel, page_text) else kept).extend(lines)
    return traces_of(forgotten, kept)


def _stem(rel: str) -> str:
    return rel.rsplit("/", 1)[-1].removesuffix(".md")


def _ids(rel: str, text: str) -> set[str]:
    """The ids a page is forgotten by: its file name and its ``id``."""
    try:
        return {_stem(rel), parse_page(text, rel).id}
    except PageError:
        return {_stem(rel)}


def _head_text(store: Store, rel: str) -> str | None:
    try:
        return str(store.repo.git.show(f"HEAD:memory/{rel}", strip_newline_in_stdout=False))
    except git.GitCommandError:
        return None


def _inside(store: Store, rel: str) -> Path | None:
    """``memory/rel`` when it is a regular file of the store reached without symlinks.

    (Not ``Store.resolve``: that refuses odd names such as ones holding a newline,
    and a forget must reach every file that may hold what it forgets.)
    """
    path = store.memory / rel
    real = os.path.realpath(path)
    if path.is_symlink() or not real.startswith(os.path.realpath(store.root) + os.sep):
        return None
    return path


def _read(store: Store, rel: str) -> str | None:
    """A file's text, or None for symlinks and unreadable files (never followed)."""
    path = _inside(store, rel)
    if path is None:
        return None
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _plan(store: Store, d: Deletions, rehash: dict[str, tuple[str, str]]) -> _Plan:
    """Every change the tombstone asks for, computed before anything is written."""
    plan = _Plan(writes={}, removes=set(), edited=set(), redacted=set())
    rehash = dict(rehash)  # turns a killed run of this forget redacted already, and ours
    turns: list[str] = []  # what the surviving sessions say
    for rel in store.files(_TRANSCRIPTS):
        text = _read(store, rel)
        if text is None or rel.count("/") != 2:
            continue
        result = scrub_transcript(text, rel, d)
        if result.text is not None:
            turns.extend(transcript_lines(result.text, rel))
        if result.text is None:
            plan.removes.add(rel)
        elif result.text != text:
            plan.writes[rel] = result.text
            plan.redacted.add(rel)
            plan.turns += result.turns
            rehash.update(result.rehash)
    texts: dict[str, str] = {}
    keys: set[str] = set()
    said = spoken(turns)
    for rel in [*store.files("knowledge"), *store.files("notes"), *store.files(_SUMMARIES)]:
        text = _read(store, rel)
        if text is None:
            continue
        page = scrub_page(text, rel, d, rehash, said=said)
        if page.text is None:
            plan.removes.add(rel)
            if rel.startswith(_PAGE_LAYERS):
                keys |= page.keys
            continue
        texts[rel] = page.text
        if page.text != text:
            plan.edited.add(rel)
            plan.lines += page.lines_removed
            plan.rehashed += page.rehashed
    # a key another surviving page still answers to keeps its links
    surviving: set[str] = set()
    for rel, text in texts.items():
        if rel.startswith(_PAGE_LAYERS):
            surviving |= _keys(rel, text)
    gone = frozenset(k for k in keys if k.lower() not in surviving)
    for rel, text in texts.items():
        new_text, changed = unlink_pages(text, rel, gone, drop_items=True)
        if changed:
            plan.edited.add(rel)
        if rel in plan.edited:
            plan.writes[rel] = new_text
    return plan


def _keys(rel: str, text: str) -> set[str]:
    """Lower-cased names a page answers to in ``[[links]]``: file name, id, aliases."""
    keys = {rel.rsplit("/", 1)[-1].removesuffix(".md").lower()}
    try:
        page = parse_page(text, rel)
    except PageError:
        return keys
    return keys | {page.id.lower(), *(a.lower() for a in page.aliases)}


def _apply(store: Store, plan: _Plan) -> set[str]:
    for rel, text in plan.writes.items():
        path = _inside(store, rel)
        if path is None:
            raise MemoryFSError(f"memory/{rel} changed into a symlink during the forget")
        atomic_write_text(path, text)
    for rel in plan.removes:
        path = _inside(store, rel)
        if path is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
    return set(plan.writes) | plan.removes


def _receipts(store: Store, plan: _Plan) -> list[str]:
    """The forget's receipts; the root-relative paths to commit.

    An ``ingested`` receipt per redacted transcript (its new version enters the store
    here, not through ingest); per page, note or summary the forget removed, a
    ``committed`` receipt with status ``forgotten`` (the page is gone on purpose:
    health's verdict is "forgotten", never "source at risk"), its version the
    deletion log's; per page it edited, a ``committed`` receipt of its new version.
    """
    versions: dict[str, str] = {}
    for rel in plan.redacted:
        with contextlib.suppress(OSError):
            versions[Path(rel).stem] = content_hash((store.memory / rel).read_bytes())
    pages = sorted(r for r in plan.removes | plan.edited if not r.startswith(_TRANSCRIPTS))
    if not versions and not pages and not store_receipt_dir(store.root).is_dir():
        return []
    run_id = f"forget-{secrets.token_hex(4)}"
    cfg = store.config
    config = {"budgets": dataclasses.asdict(cfg.budgets)}
    log_version = content_hash(store.resolve(DELETIONS_REL).read_bytes())
    at, source = format_utc(), source_version(config=config)
    scope = scope_ids(cfg.user, cfg.assistant)
    receipts: list[Receipt] = []
    for rel in pages:
        if rel in plan.removes:
            version, status = log_version, "forgotten"
        else:
            version, status = content_hash((store.memory / rel).read_bytes()), "committed"
        receipts.append(
            Receipt(run_id, *scope, page_item(rel), "committed", version, source, status, at)
        )
    ReceiptLog(store_receipt_dir(store.root)).append(receipts)
    return record_ingested(store.root, cfg.user, cfg.assistant, versions, run_id, config)


def _committable(store: Store, paths: set[str]) -> list[str]:
    """The paths (root-relative) Git can commit: on disk, or known to it (a removal).

    A file never committed and now removed (say, the transcript of a killed
    ingest, then forgotten) is neither, and ``git add`` would refuse it.
    """
    rels = sorted(f"memory/{p}" for p in paths)
    known = set(store.repo.git.ls_files("-z", "--", *rels).split("\0")) if rels else set()
    return [p for p in rels if p in known or (store.root / p).exists()]


def _append(store: Store, entry: dict[str, Any]) -> None:
    path = store.resolve(DELETIONS_REL)
    try:
        old = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        old = ""
    if old and not old.endswith("\n"):
        old += "\n"
    atomic_write_text(path, old + json.dumps(entry, ensure_ascii=False) + "\n")


def _removed_in(store: Store, paths: set[str]) -> set[str]:
    """Those of ``paths`` no longer in the tree (removed by a killed run of this forget)."""
    return {p for p in paths if not (store.memory / p).exists()}


def _interrupted(store: Store, d: Deletions) -> tuple[set[str], dict[str, tuple[str, str]]]:
    """Files a killed run of this forget already changed: dirty, and this forget changes
    HEAD's version of them (the commit must take them along); and the turn hashes
    that run changed (so surviving citations still get the new ones)."""
    out = store.repo.git.status("--porcelain", "-z", "--untracked-files=no", "--", "memory")
    heads: dict[str, str] = {}
    for item in out.split("\0"):
        if len(item) < 4 or not item[3:].startswith("memory/"):
            continue
        try:
            heads[item[3 + len("memory/") :]] = store.repo.git.show(
                f"HEAD:{item[3:]}", strip_newline_in_stdout=False
            )
        except git.GitCommandError:  # not in HEAD: not this forget's doing
            continue
    paths: set[str] = set()
    keys: set[str] = set()
    pages: dict[str, str] = {}
    rehash: dict[str, tuple[str, str]] = {}
    for rel, text in heads.items():
        if rel == DELETIONS_REL:  # killed after logging, before committing
            if not all(parse_deletions(text).has(e) for e in d.entries):
                paths.add(rel)
        elif rel.startswith(_TRANSCRIPTS):
            try:
                result = scrub_transcript(text, rel, d)
            except MemoryFSError:
                continue  # the plan refuses it with the same message
            if result.text != text:
                paths.add(rel)
                rehash.update(result.rehash)
        elif rel.startswith((*_PAGE_LAYERS, _SUMMARIES)):
            page = scrub_page(text, rel, d)
            if page.text is None:
                keys |= page.keys
            if page.text != text:
                paths.add(rel)
            elif page.text is not None:
                pages[rel] = text
    for rel, text in pages.items():  # links to a page the killed run removed
        if unlink_pages(text, rel, frozenset(keys), drop_items=True)[1]:
            paths.add(rel)
    return paths, rehash
