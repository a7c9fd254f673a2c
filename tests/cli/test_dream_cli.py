"""The dream CLI through CliRunner: every command, --json, exit codes, one-line errors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from dream_fixtures import ScriptedEngine, add_sessions, approved_store
from typer.testing import CliRunner, Result

from cli.dream_app import app
from cli.memoryfs_app import app as memoryfs_app
from memoryfs.store.store import Store, init_store

ENGINE = ["--engine", "dream_fixtures:ScriptedEngine"]
BAD_ENGINE = ["--engine", "tests.cli.test_dream_cli:BadClaimEngine"]
S1 = ("2026-01-05-figures", "2026-01-05", ["I need the figures as PDF for Reefsong.", "Sure."])
S2 = ("2026-01-06-marta", "2026-01-06", ["Marta is a nurse at the UKE in Hamburg.", "Noted."])


class BadClaimEngine(ScriptedEngine):
    def __init__(self) -> None:
        super().__init__(claim=lambda t, turn: "Met Gunther in Oslo.")


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return approved_store(tmp_path, [S1, S2])


def dream(runner: CliRunner, store: Store, *args: str) -> Result:
    return runner.invoke(app, [*args, "--store", str(store.root)])


def validate_ok(runner: CliRunner, store: Store) -> None:
    r = runner.invoke(memoryfs_app, ["validate", "--store", str(store.root)])
    assert r.exit_code == 0, r.stdout


def test_run_prints_one_summary_line_and_validates(runner: CliRunner, store: Store) -> None:
    r = dream(runner, store, "run", *ENGINE)
    assert r.exit_code == 0, r.stderr
    assert r.stdout.count("\n") == 1 and r.stdout.startswith("dream: 2 sessions summarized")
    assert r.stderr == ""  # no terminal: no progress bar
    validate_ok(runner, store)
    again = dream(runner, store, "run", *ENGINE)
    assert again.exit_code == 0 and "nothing pending" in again.stdout


def test_run_json(runner: CliRunner, store: Store) -> None:
    r = dream(runner, store, "run", *ENGINE, "--json", "--max-sessions", "1")
    data = json.loads(r.stdout)
    assert data["status"] == "committed" and data["sessions"] == [S1[0]]
    assert data["stopped"] == "max-sessions" and data["pendingAfter"] == 1
    assert set(data) >= {"runId", "commit", "base", "engine", "skill", "problems", "timings"}
    validate_ok(runner, store)


def test_gate_failure_exits_1_with_reasons(runner: CliRunner, store: Store) -> None:
    r = dream(runner, store, "run", *BAD_ENGINE)
    assert r.exit_code == 1
    lines = r.stdout.strip().splitlines()
    assert any(
        line.startswith(f"memory/sessions/summaries/{S1[0]}.md:") and "Gunther" in line
        for line in lines
    )
    assert "gate problems" in lines[-1] and "main untouched" in lines[-1]
    data = json.loads(dream(runner, store, "status", "--json").stdout)
    assert data["kept"][0]["status"] == "gate-failed" and len(data["pending"]) == 2
    run_id = data["kept"][0]["runId"]
    again = dream(runner, store, "apply", run_id)
    assert again.exit_code == 1
    assert dream(runner, store, "discard", run_id).exit_code == 0


def test_review_apply_discard(runner: CliRunner, store: Store) -> None:
    r = dream(runner, store, "run", *ENGINE, "--review", "--json")
    run_id = json.loads(r.stdout)["runId"]
    shown = dream(runner, store, "review", run_id)
    assert shown.exit_code == 0
    assert f"== memory/sessions/summaries/{S1[0]}.md (added) ==" in shown.stdout
    assert shown.stdout.strip().endswith(f"files changed in run {run_id}")
    pages = json.loads(dream(runner, store, "review", run_id, "--json").stdout)["pages"]
    assert pages[0]["status"] == "A" and pages[0]["diff"].startswith("diff --git")
    applied = dream(runner, store, "apply", f"dream/{run_id}", "--json")
    assert applied.exit_code == 0 and json.loads(applied.stdout)["status"] == "committed"
    validate_ok(runner, store)
    missing = dream(runner, store, "discard", run_id)
    assert missing.exit_code == 1
    assert missing.stderr.count("\n") == 1 and missing.stderr.startswith("error: no kept run")


def test_discard(runner: CliRunner, store: Store) -> None:
    run_id = json.loads(dream(runner, store, "run", *ENGINE, "--review", "--json").stdout)["runId"]
    r = dream(runner, store, "discard", run_id)
    assert r.exit_code == 0 and f"discarded run {run_id}" in r.stdout
    assert json.loads(dream(runner, store, "status", "--json").stdout)["kept"] == []


def test_status(runner: CliRunner, store: Store) -> None:
    r = dream(runner, store, "status")
    assert r.exit_code == 0 and "pending: 2" in r.stdout and f"pending {S1[0]}" in r.stdout
    dream(runner, store, "run", *ENGINE)
    data = json.loads(dream(runner, store, "status", "--json").stdout)
    assert data["pending"] == [] and data["runs"][0]["status"] == "committed"


def test_dry_run(runner: CliRunner, store: Store) -> None:
    r = dream(runner, store, "run", *ENGINE, "--dry-run")
    assert r.exit_code == 0 and "dry run" in r.stdout
    assert json.loads(dream(runner, store, "status", "--json").stdout)["pending"] == [S1[0], S2[0]]


def test_concurrent_run_is_refused(runner: CliRunner, store: Store) -> None:
    with store.lock("dream", timeout=0):
        r = dream(runner, store, "run", *ENGINE)
    assert r.exit_code == 1 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and "another dream run is in progress" in r.stderr


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["run", *ENGINE, "--deadline", "soon"], 2, "bad duration"),
        (["run", "--engine", "nope"], 2, "unknown engine"),
        (["run", "--engine", "no.such.module:Engine"], 1, "not available"),
        (["review", "garbage"], 1, "not a run id"),
        (["apply", "20260101T0000-abcdef"], 1, "no kept run"),
    ],
)
def test_bad_input_is_one_line(
    runner: CliRunner, store: Store, args: list[str], code: int, message: str
) -> None:
    r = dream(runner, store, *args)
    assert r.exit_code == code and message in r.stderr and r.stderr.count("\n") == 1


def test_unapproved_skill_is_refused_unless_allowed(runner: CliRunner, tmp_path: Path) -> None:
    s = init_store(tmp_path / "fresh", "dana", "atlas")
    add_sessions(s, tmp_path / "in", [S1])
    r = dream(runner, s, "run", *ENGINE)
    assert r.exit_code == 1 and "skill" in r.stderr
    assert dream(runner, s, "run", *ENGINE, "--allow-unapproved").exit_code == 0


def test_missing_store_exits_2(runner: CliRunner, tmp_path: Path) -> None:
    r = runner.invoke(app, ["status", "--store", str(tmp_path / "nowhere")])
    assert r.exit_code == 2 and r.stderr.startswith("error: no store")


def test_a_store_without_its_repository_exits_2(runner: CliRunner, store: Store) -> None:
    shutil.rmtree(store.root / ".git")
    for command in ("run", "status"):
        r = dream(runner, store, command, *ENGINE[: 2 if command == "run" else 0])
        assert r.exit_code == 2, (command, r.output)
        assert r.stderr.count("\n") == 1 and "is not a Git repository" in r.stderr


def test_version_and_help(runner: CliRunner) -> None:
    assert runner.invoke(app, ["version"]).stdout.strip()
    for command in ("run", "status", "review", "apply", "discard"):
        r = runner.invoke(app, [command, "--help"])
        assert r.exit_code == 0 and "--store" in r.stdout
