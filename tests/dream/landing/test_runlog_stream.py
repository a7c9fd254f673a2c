"""The run record (``dream.landing.runlog.write_record``) is written a piece at a time, in
the bytes ``json.dumps(record, indent=2)`` gives."""

from __future__ import annotations

import json
from pathlib import Path

from dream.landing.runlog import read_record, write_record
from memoryfs.store.store import init_store


def test_a_record_is_written_as_json_dumps_writes_it(tmp_path: Path) -> None:
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
    write_record(store, lists)
    path = store.dream_dir / "runs" / f"{run_id}.json"
    assert path.read_text(encoding="utf-8") == json.dumps(lists, indent=2) + "\n"
    assert read_record(store, run_id) == json.loads(json.dumps(lists))
