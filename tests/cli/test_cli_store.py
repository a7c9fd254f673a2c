"""CLI store commands through CliRunner: results on stdout, one-line errors, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import git
import pytest
from paths import SAMPLE_MEMORY
from typer.testing import CliRunner

from cli.memoryfs_app import app

SAMPLE = sorted((SAMPLE_MEMORY / "transcripts").glob("*.md"))


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture(autouse=True)
def _no_env_store(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMORYFS_STORE", raising=False)


def _ok(result: object) -> None:
    assert getattr(result, "exit_code", None) == 0, getattr(result, "output", "")


def test_init_ingest_index_validate_on_the_sample(runner: CliRunner, tmp_path: Path) -> None:
    store = tmp_path / "s"
    r = runner.invoke(app, ["init", str(store), "--user", "dana", "--assistant", "atlas", "--json"])
    _ok(r)
    assert json.loads(r.stdout)["user"] == "dana"
    r = runner.invoke(app, ["ingest", "--store", str(store), "--json", *map(str, SAMPLE)])
    _ok(r)
    data = json.loads(r.stdout)
    assert data["changed"] == len(SAMPLE) >= 25 and data["turnsAdded"] > 300
    r = runner.invoke(app, ["index", "--store", str(store), "--json"])
    _ok(r)
    assert set(json.loads(r.stdout)["changed"]) == {"INDEX.md", "sessions/index.md"}
    r = runner.invoke(app, ["validate", "--store", str(store), "--json"])
    _ok(r)
    assert json.loads(r.stdout) == {"ok": True, "findings": []}
    assert not git.Repo(store).is_dirty(untracked_files=True)
    r = runner.invoke(app, ["index", "--prompt", "--max-tokens", "80", "--store", str(store)])
    _ok(r)
    assert r.stdout.startswith("# Memory index")


def test_index_is_deterministic(runner: CliRunner, tmp_path: Path) -> None:
    outs = []
    for name in ("a", "b"):
        store = tmp_path / name
        _ok(runner.invoke(app, ["init", str(store), "--user", "dana", "--assistant", "atlas"]))
        _ok(runner.invoke(app, ["ingest", "--store", str(store), *map(str, SAMPLE[:5])]))
        _ok(runner.invoke(app, ["index", "--store", str(store)]))
        outs.append(
            (
                (store / "memory/INDEX.md").read_bytes(),
                (store / "memory/sessions/index.md").read_bytes(),
            )
        )
    assert outs[0] == outs[1]


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["init", "{tmp}/busy", "--user", "dana", "--assistant", "atlas"], 1, "not empty"),
        (
            ["init", "{tmp}/new", "--user", "bad/name", "--assistant", "atlas"],
            1,
            "invalid user scope",
        ),
        (["ingest", "--store", "{tmp}/nostore", "{tmp}/x.md"], 2, "no store at"),
        (["ingest", "--store", "{store}", "{tmp}/missing.md"], 1, "cannot read"),
        (["ingest", "--store", "{store}", "{tmp}/bad.jsonl"], 1, "not a JSON object"),
        (
            ["ingest", "--store", "{store}", "--format", "csv", "{tmp}/bad.jsonl"],
            2,
            "unknown format",
        ),
        (["validate", "--store", "{tmp}/nostore"], 2, "no store at"),
        (["index", "--store", "{store}", "--max-tokens", "10"], 2, "only applies with --prompt"),
        # a folder under a file cannot be made: the file system's reason, no traceback
        (
            ["init", "{tmp}/bad.jsonl/s", "--user", "dana", "--assistant", "atlas"],
            1,
            "bad.jsonl/s: Not a directory",
        ),
        (
            ["materialize", "--store", "{store}", "--to", "{tmp}/bad.jsonl/box"],
            1,
            "bad.jsonl/box: Not a directory",
        ),
    ],
)
def test_bad_input_is_one_line_on_stderr(
    runner: CliRunner, tmp_path: Path, args: list[str], code: int, message: str
) -> None:
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "keep.txt").write_text("user data")
    (tmp_path / "bad.jsonl").write_text("{nope\n")
    store = tmp_path / "store"
    _ok(runner.invoke(app, ["init", str(store), "--user", "dana", "--assistant", "atlas"]))
    head = git.Repo(store).head.commit.hexsha
    argv = [a.format(tmp=tmp_path, store=store) for a in args]
    r = runner.invoke(app, argv)
    assert r.exit_code == code, r.output
    assert r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0]
    assert "Traceback" not in r.output
    assert git.Repo(store).head.commit.hexsha == head
    assert (tmp_path / "busy" / "keep.txt").read_text() == "user data"
    assert not (tmp_path / "new").exists()


def test_validate_reports_findings_with_exit_1(runner: CliRunner, tmp_path: Path) -> None:
    store = tmp_path / "s"
    _ok(runner.invoke(app, ["init", str(store), "--user", "dana", "--assistant", "atlas"]))
    (store / "memory/knowledge/people/ana.md").write_text("no frontmatter here\n")
    r = runner.invoke(app, ["validate", "--store", str(store)])
    assert r.exit_code == 1
    assert r.stdout.startswith("memory/knowledge/people/ana.md:")
    r = runner.invoke(app, ["validate", "--store", str(store), "--json"])
    assert r.exit_code == 1 and json.loads(r.stdout)["ok"] is False


def test_store_found_by_env_and_cwd(
    runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = tmp_path / "s"
    _ok(runner.invoke(app, ["init", str(store), "--user", "dana", "--assistant", "atlas"]))
    monkeypatch.setenv("MEMORYFS_STORE", str(store))
    r = runner.invoke(app, ["path"])
    assert r.stdout.strip() == str(store.resolve())
    monkeypatch.delenv("MEMORYFS_STORE")
    monkeypatch.chdir(store / "memory" / "knowledge")
    r = runner.invoke(app, ["path", "--json"])
    assert json.loads(r.stdout)["store"] == str(store.resolve())
