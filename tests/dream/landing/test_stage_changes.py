"""``dream.landing.staging.stage_changes``: the files that differ from the base, as Git lists
them (added, modified; any characters in a path), sorted by path."""

from __future__ import annotations

from pathlib import Path

from dream_fixtures import add_sessions

from dream.landing.staging import Change, create_stage, remove_stage, stage_changes
from memoryfs.store.store import init_store


def test_changes_are_those_git_lists_by_path(tmp_path: Path) -> None:
    store = init_store(tmp_path / "store", "dana", "atlas")
    add_sessions(store, tmp_path / "in", [("2026-01-05-a", "2026-01-05", ["Hello there.", "Hi."])])
    stage = create_stage(store, "20261202T1000-abc123", store.head())
    try:
        memory = stage.path / "memory"
        names = [f"notes/t/n{i:03d}.md" for i in range(300)] + ["knowledge/x y é.md"]
        for name in names:
            (memory / name).parent.mkdir(parents=True, exist_ok=True)
            (memory / name).write_text(f"# {name}\n", encoding="utf-8")
        (memory / "INDEX.md").write_text("changed\n", encoding="utf-8")
        found = stage_changes(stage)
        assert Change("M", "memory/INDEX.md") in found
        assert Change("A", "memory/knowledge/x y é.md") in found
        assert [c.path for c in found] == sorted(c.path for c in found)
        assert len(found) == len(names) + 1
    finally:
        remove_stage(store, stage, keep_branch=False)
