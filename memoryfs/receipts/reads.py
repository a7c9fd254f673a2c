"""Read receipts: which version of each page a reader got, and what it relied on.

The generation side proves what was committed; this module proves what readers
got, so health can tell "returned v21 while v22 was committed" (a stale read):

- ``materialized``: a page copied into a sandbox (``memoryfs.read.materialize``), at the
  content hash of the bytes written;
- ``recalled``: a page ``memoryfs recall`` drew on, at the content hash the search
  index served it from (not re-read afterwards: an index behind the files is
  exactly the fault to catch);
- ``used``: an agent relied on a sandbox copy (``record_use``): ``dependsOnVersion``
  is the hash of that copy, ``outcomeReceipt`` an optional deterministic check.

Only pages get read receipts (``knowledge/``, ``notes/``, ``sessions/summaries/``):
they are what Dream commits with receipts. Transcripts only grow, so a newer one
than Dream last committed is not stale; the generated indexes carry no lineage.

Where: ``<sandbox>/.receipts/`` beside the manifest, or the store's git-ignored
``.memoryfs/receipts/`` for a recall without a sandbox; never the store's
committed log (reading must not dirty a store). A read never fails because its
receipt could not be written: the gap shows in health as missing evidence.
"""

from __future__ import annotations

import contextlib
import dataclasses
import secrets
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from memoryfs.errors import MemoryFSError
from memoryfs.receipts.log import ReceiptLog, local_receipt_dir, sandbox_receipt_dir
from memoryfs.receipts.records import (
    Receipt,
    check_outcome,
    format_utc,
    page_item,
    scope_ids,
    source_version,
)
from memoryfs.store.config import StoreConfig
from memoryfs.store.hashing import content_hash
from memoryfs.store.store import Store

__all__ = ["PAGE_ROOTS", "is_page", "record_reads", "record_use"]

PAGE_ROOTS = ("knowledge/", "notes/", "sessions/summaries/")
_RUN_PREFIX = {"materialized": "materialize", "recalled": "recall", "used": "agent"}


def is_page(rel: str) -> bool:
    """A page with a lineage (path relative to ``memory/``)."""
    return rel.startswith(PAGE_ROOTS) and rel.endswith(".md")


def _receipts(
    config: StoreConfig,
    tier: str,
    versions: Mapping[str, str],
    depends: bool,
    outcome: str = "",
    settings: Mapping[str, Any] | None = None,
) -> list[Receipt]:
    run_id = f"{_RUN_PREFIX[tier]}-{secrets.token_hex(4)}"
    scope = scope_ids(config.user, config.assistant)
    # what the read ran with: the store's budgets and the call's own (a recall's tokens)
    effective = {"budgets": dataclasses.asdict(config.budgets), **(settings or {})}
    at, source = format_utc(), source_version(config=effective)
    return [
        Receipt(
            run_id, *scope, page_item(rel), tier, version, source,
            "verified" if outcome != "test:fail" else "failed", at,
            version if depends else "", outcome,
        )
        for rel, version in sorted(versions.items())
        if is_page(rel)
    ]  # fmt: skip


def record_reads(
    store: Store | StoreConfig,
    folder: Path,
    tier: str,
    versions: Mapping[str, str],
    config: Mapping[str, Any] | None = None,
) -> int:
    """Append a ``tier`` receipt (``materialized`` or ``recalled``) per page of ``versions``
    (path relative to ``memory/`` -> content hash) to ``folder``; the number written.
    ``config``: the read's own settings (its budget), pinned with the store's budgets
    in the receipts' ``sourceVersion``. ``store``: the store read, or its config alone
    (a sandbox filled from a Git server has no local store).

    Never raises on I/O: the read already happened.
    """
    scope = store if isinstance(store, StoreConfig) else store.config
    receipts = _receipts(scope, tier, versions, depends=False, settings=config)
    with contextlib.suppress(OSError, MemoryFSError):
        ReceiptLog(folder).append(receipts)
        return len(receipts)
    return 0


def record_use(
    store: Store, sandbox: Path | None, paths: Sequence[str], outcome: str = ""
) -> list[Receipt]:
    """``used`` receipts for pages an agent relied on (paths relative to ``memory/``);
    ``outcome`` is ``file:<hex>``, ``commit:<hex>``, ``test:pass|fail`` or "".

    With a ``sandbox``: the sandbox copies, receipts beside its manifest. Without
    (an agent that read the store itself, as over MCP): the store's files, receipts in
    the store's ``.memoryfs/receipts/``, where ``recall`` and ``read`` record theirs.
    Raises ``MemoryFSError`` for a path that is not a page there.
    """
    check_outcome(outcome)
    if sandbox is None:
        root, where, log = store.root, f"the store {store.root}", local_receipt_dir(store.root)
    else:
        root = Path(sandbox).expanduser().resolve()
        where, log = f"the sandbox {root}", sandbox_receipt_dir(root)
    versions: dict[str, str] = {}
    for rel in paths:
        rel = rel.removeprefix("memory/")
        path = root / "memory" / rel
        inside = path.resolve().is_relative_to((root / "memory").resolve())
        if not is_page(rel) or ".." in rel.split("/") or path.is_symlink() or not inside:
            raise MemoryFSError(f"{rel} is not a page (knowledge/, notes/ or sessions/summaries/)")
        try:
            versions[rel] = content_hash(path.read_bytes())
        except OSError:
            hint = "materialize it first" if sandbox is not None else "check the path"
            raise MemoryFSError(f"{rel} is not in {where}; {hint}") from None
    receipts = _receipts(store.config, "used", versions, depends=True, outcome=outcome)
    ReceiptLog(log).append(receipts)
    return receipts
