"""A workset writes a run's files early once they are many (``SPILL_CHARS``): same files,
same report."""

from __future__ import annotations

from pathlib import Path

import pytest
from engine_fixtures import consolidate, sample_store, tree_bytes

from dream.engines.embedded.engine import EmbeddedEngine
from dream.phases import workset
from dream.phases.workset import Workset
from dream.records import ConsolidationReport
from memoryfs.forget.deletions import Deletions


def _report(r: ConsolidationReport) -> tuple[list[str], ...]:
    return (r.sessions_summarized, r.pages_created, r.pages_updated, r.notes_written)


def test_spilling_writes_the_same_tree_and_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    held = sample_store(tmp_path / "held")
    held_report = consolidate(held)
    monkeypatch.setattr(workset, "SPILL_CHARS", 1)  # every write reaches the disk at once
    spilled = sample_store(tmp_path / "spilled")
    spilled_report = consolidate(spilled)
    assert held_report.pages_created and held_report.notes_written
    assert _report(spilled_report) == _report(held_report)
    assert tree_bytes(spilled) == tree_bytes(held)


def test_a_file_written_back_to_what_it_was_is_not_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = sample_store(tmp_path)
    monkeypatch.setattr(workset, "SPILL_CHARS", 1)
    ws = Workset(EmbeddedEngine(), store, ConsolidationReport(), Deletions())
    rel = "INDEX.md"
    before = ws.read(rel)
    assert before is not None
    ws.write(rel, "changed\n")  # on disk at once
    assert (store.memory / rel).read_text() == "changed\n"
    ws.write("notes/new.md", "new\n")
    ws.write(rel, before)
    assert ws.flush() == (["notes/new.md"], [])
    assert (store.memory / rel).read_text() == before
    ws.write(rel, "again\n")
    assert ws.flush() == ([], [rel])
