"""Skills: the active dream skill, approval in memory.toml, the refusal to run a changed one
with an engine that acts on it (and the embedded engine, which acts on none, needing none)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from dream_fixtures import add_sessions
from paths import ROOT
from typer.testing import CliRunner

from cli.dream_app import app as dream_app
from cli.dream_health_cmds import register
from dream.engines.base import Engine
from dream.engines.command import CommandEngine, CommandSettings
from dream.engines.embedded.engine import EmbeddedEngine
from dream.engines.llm.engine import LLMEngine, LLMSettings
from dream.errors import DreamError, SkillNotApproved
from dream.runner import run_dream
from dream.skills import (
    SKILL_ENV,
    active_skill_path,
    approve,
    check_skill,
    skill_hash,
    skill_status,
)
from memoryfs.receipts.records import source_parts
from memoryfs.store.config import load_config
from memoryfs.store.hashing import content_hash
from memoryfs.store.store import Store, init_store


@pytest.fixture
def skill(tmp_path: Path) -> Path:
    path = tmp_path / "SKILL.md"
    path.write_text("# Dream\nYou may write summaries.\n")
    return path


def test_active_skill_is_the_packaged_copy_unless_overridden(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, skill: Path
) -> None:
    monkeypatch.delenv(SKILL_ENV, raising=False)
    assert active_skill_path() == ROOT / "dream" / "data" / "skills" / "dream" / "SKILL.md"
    monkeypatch.setenv(SKILL_ENV, str(skill))
    assert active_skill_path() == skill
    monkeypatch.setenv(SKILL_ENV, str(tmp_path / "nope.md"))
    assert active_skill_path() is None
    assert skill_hash(None) == "none" and skill_hash(tmp_path / "nope.md") == "none"
    assert skill_hash(skill) == content_hash(skill.read_bytes())


def test_unapproved_changed_and_missing_skills_are_refused(
    tmp_store: Store, skill: Path, tmp_path: Path
) -> None:
    with pytest.raises(SkillNotApproved, match="never approved.*dream skills approve"):
        check_skill(tmp_store, skill)
    assert check_skill(tmp_store, skill, allow_unapproved=True).state == "unapproved"

    approval = approve(tmp_store, skill, by="dana")
    assert approval.hash == skill_hash(skill) and approval.commit == tmp_store.head()
    cfg = load_config(tmp_store.root / "memory.toml").dream
    assert (cfg.approved_skill, cfg.approved_by, cfg.approved_at) == (
        approval.hash,
        "dana",
        approval.at,
    )
    assert "approve skill" in tmp_store.repo.head.commit.message
    assert not tmp_store.repo.is_dirty()
    status = check_skill(tmp_store, skill)
    assert status.ok and status.approved_by == "dana"

    old = approval.hash
    skill.write_text("# Dream\nYou may also rewrite transcripts.\n")
    with pytest.raises(SkillNotApproved) as err:
        check_skill(tmp_store, skill)
    message = str(err.value)
    assert f"approved version {old} by dana" in message
    assert skill_hash(skill) in message and "dream skills approve" in message
    assert "--allow-unapproved" in message

    with pytest.raises(SkillNotApproved, match="no dream skill found"):
        check_skill(tmp_store, tmp_path / "gone.md")
    with pytest.raises(DreamError, match="no dream skill to approve"):
        approve(tmp_store, tmp_path / "gone.md", by="dana")


def test_approving_twice_makes_no_new_commit_and_bad_names_are_refused(
    tmp_store: Store, skill: Path
) -> None:
    first = approve(tmp_store, skill, by="dana")
    again = approve(tmp_store, skill, by="dana")
    assert again.commit == "" and tmp_store.head() == first.commit
    with pytest.raises(DreamError, match="one line"):
        approve(tmp_store, skill, by='dana"\nformat = 99')
    assert load_config(tmp_store.root / "memory.toml").format == 1


def test_skills_cli_approve_and_status(tmp_store: Store, skill: Path) -> None:
    app = typer.Typer()
    register(app)
    runner = CliRunner()
    args = ["--store", str(tmp_store.root), "--skill", str(skill)]
    status = runner.invoke(app, ["skills", "status", *args, "--json"])
    assert status.exit_code == 1 and json.loads(status.stdout)["state"] == "unapproved"
    done = runner.invoke(app, ["skills", "approve", *args, "--by", "dana", "--json"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["hash"] == skill_hash(skill)
    status = runner.invoke(app, ["skills", "status", *args])
    assert status.exit_code == 0 and status.stdout.startswith("approved:")
    assert skill_status(tmp_store, skill).ok
    path = runner.invoke(app, ["skills", "path"])
    assert path.exit_code == 0


# -- which runs the approval gates --------------------------------------------------------

SESSION = ("2026-01-05-figures", "2026-01-05", ["I need the figures as PDF for Reefsong.", "Sure."])


def _fresh_store(tmp_path: Path) -> Store:
    """A new store with one session and no approval, as ``memoryfs init`` + ``ingest`` leave it."""
    s = init_store(tmp_path / "store", "dana", "atlas")
    add_sessions(s, tmp_path / "in", [SESSION])
    return s


def _skill_acting_engines() -> list[Engine]:
    # neither gets as far as a request or a process: the gate comes first
    llm = LLMEngine(LLMSettings(model="m", base_url="http://127.0.0.1:9/v1", api_key="k"))
    return [llm, CommandEngine(CommandSettings(cmd="true"))]


def test_the_embedded_engine_runs_a_new_store_without_an_approval(tmp_path: Path) -> None:
    s = _fresh_store(tmp_path)
    assert skill_status(s).state == "unapproved"
    result = run_dream(s, EmbeddedEngine())
    assert result.status == "committed", result.message
    # the run names no skill: the embedded engine followed none
    assert result.skill == "none" and "Dream-Skill: none" in s.repo.head.commit.message
    assert source_parts(result.source_version)["skill"] == "none"
    assert load_config(s.root / "memory.toml").dream.approved_skill == ""


@pytest.mark.parametrize("engine", _skill_acting_engines(), ids=lambda e: e.name)
def test_an_engine_that_acts_on_the_skill_refuses_it_unapproved_or_changed(
    tmp_path: Path, engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(SKILL_ENV, raising=False)
    s = _fresh_store(tmp_path)
    head = s.head()
    with pytest.raises(SkillNotApproved, match="never approved.*dream skills approve"):
        run_dream(s, engine)
    approve(s, by="dana")
    head = s.head()
    changed = tmp_path / "SKILL.md"
    changed.write_text("# Dream\nYou may also rewrite transcripts.\n")
    monkeypatch.setenv(SKILL_ENV, str(changed))
    with pytest.raises(SkillNotApproved, match="changed since it was approved"):
        run_dream(s, engine)
    assert s.head() == head and not s.repo.git.branch("--list", "dream/*")
    # the same changed skill does not stop the engine that reads none
    assert run_dream(s, EmbeddedEngine()).status == "committed"


def test_dream_run_on_a_new_store_needs_no_approval_step(tmp_path: Path) -> None:
    s = _fresh_store(tmp_path)
    r = CliRunner().invoke(dream_app, ["run", "--store", str(s.root)])
    assert r.exit_code == 0 and r.stdout.startswith("dream: 1 session summarized"), r.output
    llm = ["--engine", "llm", "--model", "m", "--base-url", "http://127.0.0.1:9/v1"]
    refused = CliRunner().invoke(dream_app, ["run", "--store", str(s.root), *llm])
    assert refused.exit_code == 1 and "never approved" in refused.stderr, refused.output
