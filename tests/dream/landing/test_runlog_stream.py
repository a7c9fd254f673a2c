"""The run record (``dream.landing.runlog.write_record``): a full run's lists of sessions and
pages are ``DiskList``s, written an item at a time, in the bytes ``json.dumps`` gives
the same record with lists (issue 3: a full run lists every file of the store)."""

from __future__ import annotations

import json
from pathlib import Path

from dream.landing.disklist import DiskList
from dream.landing.runlog import read_record, write_record
from memoryfs.store.store import init_store


def test_a_record_with_disk_lists_is_written_as_json_dumps_writes_it(tmp_path: Path) -> None:
    store = init_store(tmp_path / "store", "dana", "atlas")
    run_id = "20261202T1000-abc123"
    sessions = [f"2026-01-{d:02d}-s" for d in range(1, 30)]
    pages = [f"knowledge/people/p{i}.md" for i in range(300)]
    lists = {
        "run_id": run_id,
        "status": "committed",
        "sessions": sessions,
        "pages_created": pages,
        "pages_updated": [],
        "problems": ("a: b", 'c "d"\n'),
        "timings": {"orient": 0.1, "total": 2.5},
        "tokens": 0,
    }
    on_disk = {
        **lists,
        "sessions": DiskList(sessions),
        "pages_created": DiskList(pages),
        "pages_updated": DiskList(),
    }
    write_record(store, on_disk)
    path = store.dream_dir / "runs" / f"{run_id}.json"
    assert path.read_text(encoding="utf-8") == json.dumps(lists, indent=2) + "\n"
    assert read_record(store, run_id) == json.loads(json.dumps(lists))
