"""dream run with the embedded engine on the sample memory: the orchestration end to end."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from paths import SAMPLE
from typer.testing import CliRunner

from cli.dream_app import app as dream_app
from cli.memoryfs_app import app as memoryfs_app
from dream.engines import load_engine
from dream.phases.orient import find_pending
from dream.runner import RunOptions, run_dream
from memoryfs.ingest import ingest
from memoryfs.pages.transcript import Turn, parse_transcript, render_transcript
from memoryfs.store.store import Store, init_store

pytest.importorskip("dream.engines.embedded.engine")

GROWN = "2026-01-26-dinner-for-marta"


def git(store: Store, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=store.root, capture_output=True, text=True, check=True
    ).stdout.strip()


def sample_store(root: Path) -> Store:
    store = init_store(root, "dana", "atlas")
    ingest(store, sorted(SAMPLE.glob("*.md")))
    return store


@pytest.fixture(scope="module")
def dreamed(tmp_path_factory: pytest.TempPathFactory) -> Store:
    store = sample_store(tmp_path_factory.mktemp("e2e") / "store")
    runner = CliRunner()
    r = runner.invoke(dream_app, ["run", "--store", str(store.root), "--allow-unapproved"])
    assert r.exit_code == 0, r.stdout + r.stderr
    assert r.stdout.startswith("dream: 28 sessions summarized")
    return store


def test_the_commit_validates_and_nothing_is_left_pending(dreamed: Store) -> None:
    r = CliRunner().invoke(memoryfs_app, ["validate", "--store", str(dreamed.root)])
    assert r.exit_code == 0, r.stdout
    assert find_pending(dreamed, dreamed.head())[0] == []
    message = git(dreamed, "log", "-1", "--format=%B")
    assert "Dream-Engine: embedded/" in message and "Dream-Skill: " in message
    again = run_dream(dreamed, load_engine(), RunOptions(allow_unapproved=True))
    assert again.status == "nothing-pending"


def test_a_grown_session_changes_only_the_pages_that_cite_it(
    dreamed: Store, tmp_path: Path
) -> None:
    path = dreamed.transcript_path(GROWN)
    t = parse_transcript(path.read_text(encoding="utf-8"))
    extra = Turn(
        n=len(t.turns) + 1,
        speaker="user",
        ts=t.turns[-1].ts,
        text="One more thing: Marta is starting a new job at the Altona hospital in April.",
    )
    longer = tmp_path / f"{GROWN}.md"
    longer.write_text(render_transcript(t.__class__(**{**t.__dict__, "turns": (*t.turns, extra)})))
    ingest(dreamed, [longer])
    result = run_dream(dreamed, load_engine(), RunOptions(allow_unapproved=True))
    assert result.status == "committed" and result.sessions == (GROWN,), result.problems
    changed = git(dreamed, "diff", "--name-only", "HEAD~1", "HEAD", "--", "memory").splitlines()
    assert f"memory/sessions/summaries/{GROWN}.md" in changed
    cite = f"sessions/transcripts/{GROWN}.md#"
    for name in changed:
        if name in ("memory/INDEX.md", "memory/sessions/index.md"):
            continue
        text = (dreamed.root / name).read_text(encoding="utf-8")
        assert cite in text, f"{name} changed but does not cite the grown session"
    r = CliRunner().invoke(memoryfs_app, ["validate", "--store", str(dreamed.root)])
    assert r.exit_code == 0, r.stdout


def test_same_input_same_tree(dreamed: Store, tmp_path: Path) -> None:
    other = sample_store(tmp_path / "other")
    result = run_dream(other, load_engine(), RunOptions(allow_unapproved=True))
    assert result.status == "committed"
    first = git(dreamed, "log", "--format=%H", "--grep=^dream:", "--reverse").splitlines()[0]
    # the memory trees (the receipts beside them carry times and run ids)
    assert git(other, "rev-parse", "HEAD:memory") == git(dreamed, "rev-parse", f"{first}:memory")
