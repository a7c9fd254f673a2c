"""``dream run --stores PATH... -j N``: one result line per store, exit 1 if any failed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from dream_fixtures import ScriptedEngine, add_sessions
from typer.testing import CliRunner

from cli.dream_app import app
from dream.errors import DreamError
from dream.multistore import run_stores
from dream.skills import approve
from memoryfs.store.store import Store, init_store

ENGINE = ["--engine", "dream_fixtures:ScriptedEngine"]


def make_store(tmp_path: Path, name: str, approved: bool = True) -> Store:
    store = init_store(tmp_path / name, "dana", "atlas")
    if approved:
        approve(store, by="tests")
    session = (f"2026-03-01-{name}", "2026-03-01", [f"{name} starts on Reefsong.", "Ok."])
    add_sessions(store, tmp_path / f"in-{name}", [session])
    return store


@pytest.fixture
def stores(tmp_path: Path) -> list[Store]:
    return [
        make_store(tmp_path, "ana"),
        make_store(tmp_path, "ben"),
        make_store(tmp_path, "cy", approved=False),
    ]


def test_parallel_runs_one_line_per_store_and_exit_1_on_a_failure(stores: list[Store]) -> None:
    paths = [str(s.root) for s in stores]
    r = CliRunner().invoke(app, ["run", *ENGINE, "-j", "3", "--stores", *paths])
    assert r.exit_code == 1, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == 3
    by_store = {line.split(": ", 1)[0]: line for line in lines}
    assert set(by_store) == set(paths)
    assert ": committed: dream: 1 session summarized" in by_store[paths[0]]
    assert ": committed: " in by_store[paths[1]]
    assert ": error: " in by_store[paths[2]] and "never approved" in by_store[paths[2]]
    assert "3 stores, 1 failed" in r.stderr
    assert all("Dream-Run:" in str(s.repo.head.commit.message) for s in stores[:2])


def test_json_and_all_good_exit_0(stores: list[Store], tmp_path: Path) -> None:
    paths = [str(s.root) for s in stores[:2]]
    missing = str(tmp_path / "nowhere")
    r = CliRunner().invoke(app, ["run", *ENGINE, "-j", "2", "--json", "--stores", *paths])
    assert r.exit_code == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["failed"] == 0 and [s["store"] for s in out["stores"]] == paths
    assert all(s["result"]["status"] == "committed" for s in out["stores"])
    r = CliRunner().invoke(app, ["run", *ENGINE, "--stores", paths[0], "--stores", missing])
    assert r.exit_code == 1
    assert (
        r.stdout.splitlines()[0]
        == f"{paths[0]}: nothing-pending: dream: nothing pending; no commit"
    )
    assert r.stdout.splitlines()[1].startswith(f"{missing}: error: ")


def test_library_keeps_input_order_and_refuses_duplicates(stores: list[Store]) -> None:
    paths = [str(s.root) for s in stores]
    runs = run_stores(paths, ScriptedEngine(), jobs=2)
    assert [r.store for r in runs] == paths
    assert [r.failed for r in runs] == [False, False, True]
    with pytest.raises(DreamError, match="twice"):
        run_stores([paths[0], paths[0]], ScriptedEngine())


def test_paths_without_stores_flag_are_refused(stores: list[Store]) -> None:
    r = CliRunner().invoke(app, ["run", str(stores[0].root)])
    assert r.exit_code == 2 and "did you mean --stores" in r.stderr
