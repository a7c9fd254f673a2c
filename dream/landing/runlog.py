"""A run's bookkeeping: its record and its lineage receipts.

Run records: one JSON file per run in ``.dream/runs/<run-id>.json`` (git-ignored):
what a run did, when, with which outcome; memory content never goes there beyond
paths and session ids. Written atomically.

Receipts (``memoryfs.receipts.records``, content-free, in ``.dream/receipts/``) are written
into the staged tree and committed with the run's commit, so ``main`` holds them
exactly when it holds what they describe: for each session a run summarized,
``summarized``, ``validated`` and ``committed`` at the transcript's content hash; for
each page it wrote, ``validated`` and ``committed`` at the page's content hash. A
run stopped by a gate records ``validated`` as ``failed`` on its kept branch. A run
that left parts out (``dream.landing.leaveout``) records, for each, ``validated`` as
``failed`` with the finding's code as ``reason``: the page left out whole, or the
line (a claim, a link) left out of its page as a ``claim`` item named by the line's
hash, never its text.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import itertools
import json
import re
import secrets
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memoryfs.receipts.log import ReceiptLog, store_receipt_dir
from memoryfs.receipts.records import (
    Receipt,
    ReceiptError,
    format_utc,
    page_item,
    session_item,
    source_version,
)
from memoryfs.store.atomic import atomic_write_chunks
from memoryfs.store.config import Budgets
from memoryfs.store.store import Store

if TYPE_CHECKING:
    from dream.engines.base import Engine
    from dream.gates.judge import Judge

__all__ = [
    "new_run_id",
    "valid_run_id",
    "write_record",
    "read_record",
    "recent_records",
    "write_receipts",
    "run_config",
    "run_source",
]

_RUN_ID_RE = re.compile(r"^\d{8}T\d{4,6}-[0-9a-f]{6}$")


def new_run_id(now: dt.datetime | None = None) -> str:
    """UTC minute plus a short random part, e.g. ``20261129T0102-3fa9c1``."""
    when = now or dt.datetime.now(dt.UTC)
    return f"{when:%Y%m%dT%H%M}-{secrets.token_hex(3)}"


def valid_run_id(run_id: str) -> bool:
    return bool(_RUN_ID_RE.match(run_id))


def _path(store: Store, run_id: str) -> Path:
    return store.dream_dir / "runs" / f"{run_id}.json"


def write_record(store: Store, record: Mapping[str, Any]) -> None:
    """Write ``record`` as ``json.dumps(record, indent=2)`` gives it, a piece at a time (a
    full run's record names every file of the store)."""
    pieces = json.JSONEncoder(indent=2).iterencode(record)
    atomic_write_chunks(_path(store, record["run_id"]), itertools.chain(pieces, ["\n"]))


def read_record(store: Store, run_id: str) -> dict[str, Any] | None:
    if not valid_run_id(run_id):
        return None
    try:
        data = json.loads(_path(store, run_id).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def recent_records(store: Store, limit: int = 5) -> list[dict[str, Any]]:
    """The last ``limit`` run records, newest first (run ids sort by time)."""
    folder = store.dream_dir / "runs"
    if not folder.is_dir():
        return []
    ids = sorted((p.stem for p in folder.glob("*.json") if valid_run_id(p.stem)), reverse=True)
    out: list[dict[str, Any]] = []
    for run_id in ids:
        record = read_record(store, run_id)
        if record is not None:
            out.append(record)
        if len(out) >= limit:
            break
    return out


def write_receipts(
    root: Path,
    run_id: str,
    scope: tuple[str, str],
    source: str,
    sessions: dict[str, str],
    pages: Iterable[tuple[str, str]],
    passed: bool,
    left_out: Iterable[tuple[str, str, str]] = (),
) -> list[Path]:
    """Append a run's receipts to ``root``'s ``.dream/receipts/`` (the staged tree, so they
    are committed with the run's commit); returns the files written.

    ``sessions``: session id -> transcript hash; ``pages``: (path relative to ``memory/``,
    content hash), in the order to write them (read as they are written: a full run has
    one for every file of the store); ``scope``: ``scope_ids``; ``source``:
    ``source_version``. When ``passed`` (both gates), sessions get ``summarized``,
    ``validated`` and ``committed``, pages ``validated`` and ``committed`` (and
    ``attached`` under ``knowledge/`` and ``notes/``: claims were attached there);
    otherwise ``validated`` fails for all. ``left_out``: (item, version, finding code) of
    each part the run left out, whose ``validated`` fails with that code as ``reason``.
    """
    at = format_utc()

    def receipt(item: str, tier: str, version: str, status: str, reason: str = "") -> Receipt:
        return Receipt(run_id, *scope, item, tier, version, source, status, at, reason=reason)

    def receipts() -> Iterator[Receipt]:
        for sid, version in sorted(sessions.items()):
            item = session_item(sid)
            yield receipt(item, "summarized", version, "verified")
            yield receipt(item, "validated", version, "verified" if passed else "failed")
            if passed:
                yield receipt(item, "committed", version, "committed")
        for rel, version in pages:
            item = page_item(rel)
            if rel.startswith(("knowledge/", "notes/")):
                yield receipt(item, "attached", version, "verified")
            yield receipt(item, "validated", version, "verified" if passed else "failed")
            if passed:
                yield receipt(item, "committed", version, "committed")
        for item, version, code in left_out:
            yield receipt(item, "validated", version, "failed", code)

    return ReceiptLog(store_receipt_dir(root)).append(receipts())


def run_config(
    engine: Engine, budgets: Budgets, judge: Judge | None, full_validation: bool
) -> dict[str, Any]:
    """What a run's output depends on besides the code, the skill and the sessions: the
    engine and its settings, the store's budgets, the model judge (which claims land) and
    how much the validation gate reads. Stop conditions (max sessions, deadline) decide
    how much a run does, not how, and are left out."""
    return {
        "engine": engine.label,
        "engineSettings": engine.configuration(),
        "budgets": dataclasses.asdict(budgets),
        "judge": None
        if judge is None
        else {
            "model": judge.settings.model,
            "baseUrl": judge.settings.base_url,
            "batch": judge.batch,
        },
        "fullValidation": full_validation,
    }


def run_source(skill: str, engine: str, config: Mapping[str, Any] | None = None) -> str:
    """The ``sourceVersion`` of a run. An engine label receipts cannot carry (a model's name
    after ``llm/1:``) is cut to its ``name/version``, or left out; ``config`` (``run_config``)
    still tells such runs apart."""
    for label in (engine, engine.split(":", 1)[0], "none"):
        try:
            return source_version(skill=skill, engine=label, config=config)
        except ReceiptError:
            continue
    return source_version(skill=skill, config=config)
