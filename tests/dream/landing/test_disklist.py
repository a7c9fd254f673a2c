"""``DiskList``: what a run lists one entry per session, page or changed file is kept on
disk in order (issue 3), and reads back equal."""

from __future__ import annotations

import gc

import pytest

from dream.landing.disklist import DiskList
from dream.records import PendingSession


def _pending(i: int) -> PendingSession:
    return PendingSession(f"s{i:05d}", f"sessions/transcripts/s{i:05d}.md", f"h{i}", i, "new")


def test_items_keep_their_order_and_content_on_disk() -> None:
    items = DiskList(_pending(i) for i in range(1_000))
    items.append(_pending(1_000))
    items.extend(_pending(i) for i in range(1_001, 1_300))
    assert len(items) == 1_300 and items
    got = list(items)
    assert got == [_pending(i) for i in range(1_300)]
    assert got[5] is not items[5]  # read back from the database, not held
    assert items[0] == _pending(0) and items[-1] == _pending(1_299)
    assert items[255:258] == [_pending(255), _pending(256), _pending(257)]
    assert items[:3] == got[:3] and items[1_298:5_000] == got[1_298:]
    assert items[10:2] == [] and items[::500] == got[::500] and items[::-400] == got[::-400]
    with pytest.raises(IndexError):
        items[1_300]
    assert items.index(_pending(700)) == 700 and _pending(3) in items


def test_appending_while_iterating_reads_the_new_items_too() -> None:
    items = DiskList(["a", "b"])
    seen = []
    for item in items:
        seen.append(item)
        if item == "a":
            items.append("c")
    assert seen == ["a", "b", "c"]


def test_an_empty_or_cleared_list_is_empty() -> None:
    items: DiskList[str] = DiskList()
    assert len(items) == 0 and not items and list(items) == [] and items[:5] == []
    items.extend(["x", "y"])
    items.clear()
    assert len(items) == 0 and list(items) == []
    items.append("z")
    assert list(items) == ["z"]


def test_lists_share_one_database_and_a_list_let_go_drops_its_table() -> None:
    first, second = DiskList(["a"]), DiskList(["b"])
    assert first._db is second._db  # one connection (and page cache) for every list
    table = second._table
    tables = "SELECT name FROM sqlite_master WHERE type = 'table'"
    assert table in {name for (name,) in first._db.execute(tables)}
    del second
    gc.collect()
    assert table not in {name for (name,) in first._db.execute(tables)}
    assert list(first) == ["a"]


def test_a_runs_other_scratch_structures_use_the_same_database() -> None:
    from dream.phases.spilled_facts import FactSpill
    from dream.phases.workset import FileDigests
    from dream.wiki.subjects import TakenIds

    items: DiskList[str] = DiskList()
    ids, digests, spill = TakenIds(["a"]), FileDigests(), FactSpill()
    assert ids._db is digests._db is spill._db is items._db
    digests.find("notes/x.md", None)
    digests.wrote("notes/x.md", b"1")
    assert "a" in ids and list(digests.settle()[0]) == ["notes/x.md"]


def test_a_disk_set_answers_in_and_len_from_disk() -> None:
    from dream.landing.disklist import DiskSet

    paths = DiskSet(f"memory/notes/n{i:05d}.md" for i in range(2_000))
    paths.update(["memory/notes/n00001.md", "memory/INDEX.md"])  # one already there
    assert len(paths) == 2_001
    assert "memory/notes/n01999.md" in paths and "memory/INDEX.md" in paths
    assert "memory/notes/n02000.md" not in paths and 3 not in paths
    assert paths._db is DiskList()._db  # the run's one scratch database
