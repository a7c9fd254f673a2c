"""Read receipts: materialize, recall and use record the version each reader got."""

from __future__ import annotations

from pathlib import Path

import pytest
from read_fixtures import build_store

from memoryfs.errors import MemoryFSError
from memoryfs.read.materialize import materialize
from memoryfs.read.recall import recall
from memoryfs.receipts.log import (
    ReceiptLog,
    local_receipt_dir,
    sandbox_receipt_dir,
    store_receipt_dir,
)
from memoryfs.receipts.reads import record_use
from memoryfs.receipts.records import page_item
from memoryfs.store.hashing import content_hash

PAGE = "knowledge/people/melanie.md"


def test_materialize_records_what_it_copies_and_only_pages(tmp_path: Path) -> None:
    store = build_store(tmp_path / "store")
    sandbox = tmp_path / "sandbox"
    result = materialize(store, sandbox)
    log = ReceiptLog(sandbox_receipt_dir(sandbox))
    got = {r.item: r.version for r in log.read() if r.tier == "materialized"}
    pages = [e.path.removeprefix("memory/") for e in result.files if "/" in e.path[7:]]
    expected = {
        page_item(p): content_hash((store.memory / p).read_bytes())
        for p in pages
        if not p.startswith("sessions/index")
    }
    assert got == expected and page_item(PAGE) in got  # INDEX.md and transcripts: none
    materialize(store, sandbox)  # nothing copied again: nothing recorded again
    assert len(log.read()) == len(got)
    assert not store_receipt_dir(store.root).exists()  # reading never writes the store's log


def test_recall_records_the_version_the_index_served(tmp_path: Path) -> None:
    store = build_store(tmp_path / "store")
    result = recall(store, "What does Melanie do to destress?")
    receipts = ReceiptLog(local_receipt_dir(store.root)).read()
    assert receipts and {r.tier for r in receipts} == {"recalled"}
    by_item = {r.item: r.version for r in receipts}
    for rel in result.files:
        if rel.startswith("knowledge/"):
            assert by_item[page_item(rel)] == content_hash((store.memory / rel).read_bytes())
    into = recall(store, "What does Melanie do to destress?", into=tmp_path / "sandbox")
    tiers = {r.tier for r in ReceiptLog(sandbox_receipt_dir(tmp_path / "sandbox")).read()}
    assert into.files and tiers == {"recalled", "materialized"}


def test_record_use_names_the_sandbox_copy_it_relied_on(tmp_path: Path) -> None:
    store = build_store(tmp_path / "store")
    sandbox = tmp_path / "sandbox"
    materialize(store, sandbox)
    [used] = record_use(store, sandbox, [f"memory/{PAGE}"], outcome="test:pass")
    copy = (sandbox / "memory" / PAGE).read_bytes()
    assert (used.tier, used.depends_on_version, used.outcome_receipt) == (
        "used",
        content_hash(copy),
        "test:pass",
    )
    with pytest.raises(MemoryFSError, match="not a page"):
        record_use(store, sandbox, ["sessions/transcripts/x.md"])
    with pytest.raises(MemoryFSError, match="materialize it first"):
        record_use(store, sandbox, ["knowledge/people/nobody.md"])


def test_record_use_without_a_sandbox_names_the_store_file_a_read_served(tmp_path: Path) -> None:
    """An agent that reads the store itself (over MCP) has no sandbox: its ``used``
    receipt names the store file's version, in the log ``read`` and ``recall`` write."""
    store = build_store(tmp_path / "store")
    served = store.read(PAGE)
    [used] = store.record_use([PAGE], outcome="test:pass")
    assert (
        used.depends_on_version
        == served.version
        == content_hash((store.memory / PAGE).read_bytes())
    )
    log = ReceiptLog(local_receipt_dir(store.root)).read()
    assert [(r.tier, r.version or r.depends_on_version) for r in log] == [
        ("recalled", served.version),
        ("used", served.version),
    ]
    assert not store_receipt_dir(store.root).exists()  # the committed log stays untouched
    with pytest.raises(MemoryFSError, match="not in the store"):
        store.record_use(["knowledge/people/nobody.md"])
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "mel.md").write_text("---\nid: mel\n---\n", encoding="utf-8")
    (store.memory / "knowledge" / "people" / "linked").symlink_to(outside)
    with pytest.raises(MemoryFSError, match="not a page"):
        store.record_use(["knowledge/people/linked/mel.md"])


def test_a_bad_outcome_names_the_valid_forms_and_writes_nothing(tmp_path: Path) -> None:
    store = build_store(tmp_path / "store")
    store.read(PAGE)
    before = ReceiptLog(local_receipt_dir(store.root)).read()
    with pytest.raises(MemoryFSError) as caught:
        store.record_use([PAGE], outcome="passed")
    message = str(caught.value)
    assert "'passed'" in message
    assert all(form in message for form in ("file:<hex>", "commit:<hex>", "test:pass", "test:fail"))
    assert ReceiptLog(local_receipt_dir(store.root)).read() == before
