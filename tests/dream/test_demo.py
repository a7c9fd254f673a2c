"""The Quickstart's main job: `dream demo` builds a valid store from the packaged sample memory."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import git
import pytest
from typer.testing import CliRunner

from cli.dream_app import app
from cli.dream_demo_cmds import memoryfs_command
from memoryfs.store.store import Store
from memoryfs.validate.rules import validate_store


def test_demo_builds_a_valid_consolidated_store(tmp_path: Path) -> None:
    target = tmp_path / "demo-store"
    r = CliRunner().invoke(app, ["demo", "--to", str(target), "--json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert data["sessions"] >= 25 and data["findings"] == 0
    assert data["run"]["status"] == "committed"
    assert data["summaries"] == data["sessions"] and data["knowledgePages"] > 5
    assert data["recall"].strip()
    store = Store.open(target)
    assert validate_store(store) == []
    repo = git.Repo(target)
    assert not repo.is_dirty(untracked_files=True)
    assert "Dream-Run:" in repo.head.commit.message


def test_demo_refuses_a_non_empty_target(tmp_path: Path) -> None:
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "keep.txt").write_text("mine")
    r = CliRunner().invoke(app, ["demo", "--to", str(tmp_path / "busy")])
    assert r.exit_code == 1
    assert r.stderr.splitlines()[-1].startswith("error: ") and "not empty" in r.stderr
    assert sorted(p.name for p in (tmp_path / "busy").iterdir()) == ["keep.txt"]


def test_demo_prints_each_line_once_and_a_follow_up_that_runs(tmp_path: Path) -> None:
    r = CliRunner().invoke(app, ["demo", "--to", str(tmp_path / "demo-store")])
    assert r.exit_code == 0, r.output
    [dream_line] = [line for line in r.stdout.splitlines() if line.startswith("dream:")]
    assert "dream:" not in dream_line.removeprefix("dream:")
    [explore] = [line for line in r.stdout.splitlines() if line.startswith("Explore:")]
    command = explore.rsplit(" && ", 1)[1]
    assert command.endswith(" search 'release checklist'")
    program = command.split(" ")[0]
    assert program == "memoryfs" or Path(program).is_file()


def test_the_follow_up_names_memoryfs_by_path_when_it_is_not_on_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    installed = Path(sys.executable).with_name("memoryfs")
    assert installed.is_file()  # the console script beside this Python
    monkeypatch.setenv("PATH", str(tmp_path))  # a shell where the venv is not activated
    assert memoryfs_command() == str(installed)
    monkeypatch.setenv("PATH", str(installed.parent))
    assert memoryfs_command() == "memoryfs"
