"""The stage's index facts (``dream.landing.staging``): anchored at the run's commit when the stage
is parked, refreshed by what Git says changed since, and never stale: hand edits
committed to ``main`` between runs, sessions ingested, a parked worktree edited."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from dream_fixtures import ScriptedEngine, add_sessions, git_out

from dream.engines.base import EngineContext
from dream.landing.staging import STAGE_INDEX_CACHE, Stage
from dream.records import ConsolidationReport
from dream.runner import RunOptions, run_dream
from memoryfs.index import facts_cache
from memoryfs.index.index_md import write_indexes
from memoryfs.store.store import Store, init_store

S1 = ("2026-01-05-figures", "2026-01-05", ["I need the figures as PDF for Reefsong.", "Sure."])
S2 = ("2026-01-06-marta", "2026-01-06", ["Marta is a nurse at the UKE in Hamburg.", "Noted."])
S3 = ("2026-01-07-lisbon", "2026-01-07", ["The Lisbon workshop is on 12 March.", "Great."])
PAGE = "---\nid: {id}\ntitle: {title}\ntype: person\nupdated: '2026-01-0{n}'\n---\n\n{body}\n"


class StageIndexEngine(ScriptedEngine):
    """The scripted engine, its indexes written from the stage's facts cache (as the
    embedded and command engines write them)."""

    def consolidate(self, ctx: EngineContext) -> ConsolidationReport:
        report = super().consolidate(ctx)
        Stage(ctx.run_id, ctx.stage_root, ctx.base_commit).write_indexes(ctx.store)
        return report


def _anchor(store: Store) -> tuple[str, int]:
    with closing(sqlite3.connect(store.cache_dir / STAGE_INDEX_CACHE)) as db:
        head = db.execute("SELECT head FROM anchor").fetchone()
        dirty = db.execute("SELECT COUNT(*) FROM dirty").fetchone()[0]
    return (head[0] if head else ""), dirty


def _fresh(store: Store, tmp_path: Path, name: str) -> list[str]:
    """What a fresh cache would change in the live tree (nothing, when main's are right)."""
    return write_indexes(store, cache_path=tmp_path / f"{name}.sqlite")


def test_stage_indexes_follow_main_between_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = init_store(tmp_path / "store", "dana", "atlas")
    opts = RunOptions(allow_unapproved=True)
    stage_cache = store.cache_dir / STAGE_INDEX_CACHE
    full: list[Path] = []
    scan_all = facts_cache.IndexCache._scan_all

    def counting(self: facts_cache.IndexCache) -> None:
        if self.path == stage_cache:
            full.append(self.path)
        scan_all(self)

    monkeypatch.setattr(facts_cache.IndexCache, "_scan_all", counting)
    add_sessions(store, tmp_path / "in", [S1, S2])
    first = run_dream(store, StageIndexEngine(), opts)
    assert first.status == "committed"
    assert _anchor(store) == (first.commit, 0)  # parked at the run's commit
    assert _fresh(store, tmp_path, "a") == []
    assert len(full) == 1  # the first pass ever
    # by hand on main: a page added, a summary's title changed, both committed
    people = store.memory / "knowledge/people"
    people.mkdir(parents=True, exist_ok=True)
    (people / "marta.md").write_text(PAGE.format(id="marta", title="Marta", n=6, body="x"))
    summary = store.memory / f"sessions/summaries/{S1[0]}.md"
    summary.write_text(summary.read_text().replace(f"Session {S1[0]}", "Figures by hand"))
    git_out(store, "add", "-A")
    git_out(store, "commit", "-q", "-m", "by hand")
    # and the parked worktree edited (its checkout puts it back)
    spare = store.dream_dir / "worktrees" / ".spare"
    (spare / "memory/knowledge/people/ghost.md").write_text(
        PAGE.format(id="ghost", title="Ghost", n=7, body="[[marta]]")
    )
    add_sessions(store, tmp_path / "in2", [S3])
    second = run_dream(store, StageIndexEngine(), opts)
    assert second.status == "committed"
    index = (store.memory / "INDEX.md").read_text()
    assert "Marta" in index and "Ghost" not in index
    assert "Figures by hand" in (store.memory / "sessions/index.md").read_text()
    assert _fresh(store, tmp_path, "b") == []
    assert len(full) == 1  # no pass of the second run listed the store
    assert _anchor(store) == (second.commit, 0)
