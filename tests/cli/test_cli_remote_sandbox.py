"""``memoryfs materialize --from URL`` and ``recall --into`` a sandbox from a URL, by the CLI."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from git_server import GitServer
from read_fixtures import build_store
from typer.testing import CliRunner

from cli.memoryfs_app import app
from memoryfs.read.sandbox import MANIFEST
from memoryfs.store.store import Store

PREF = "memory/knowledge/preferences/figures.md"


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return build_store(tmp_path / "store")


@pytest.fixture
def server(tmp_path: Path) -> Iterator[GitServer]:
    srv = GitServer(tmp_path / "srv")
    yield srv
    srv.close()


def test_materialize_from_prints_the_result_and_what_it_fetched(
    store: Store, server: GitServer, tmp_path: Path
) -> None:
    url = server.bare("caroline", from_store=store.root)
    sandbox = tmp_path / "sandbox"
    r = CliRunner().invoke(app, ["materialize", "--from", url, "--to", str(sandbox), "--json"])
    assert r.exit_code == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["url"] == url and out["commit"] == server.head("caroline")
    assert out["fetchedBytes"] > 0 and out["fetches"] >= 2
    assert PREF in {f["path"] for f in out["files"]}
    assert (sandbox / PREF).read_bytes() == (store.root / PREF).read_bytes()
    assert f"fetched {out['fetchedBytes']} bytes from {url}" in r.stderr
    r = CliRunner().invoke(app, ["materialize", "--from", url, "--to", str(sandbox)])
    assert r.exit_code == 0, r.stderr
    assert r.stdout.startswith("materialized ") and "0 copied" in r.stdout


def test_unreachable_server_is_one_line_and_exit_1(
    store: Store, server: GitServer, tmp_path: Path
) -> None:
    url = server.bare("caroline", from_store=store.root)
    server.pause()
    sandbox = tmp_path / "sandbox"
    r = CliRunner().invoke(app, ["materialize", "--from", url, "--to", str(sandbox)])
    assert r.exit_code == 1 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and r.stderr.startswith(f"error: cannot fetch from {url}")
    assert not sandbox.exists()


def test_from_and_store_together_is_a_usage_error(store: Store, tmp_path: Path) -> None:
    args = ["materialize", "--from", "git://127.0.0.1:1/x.git", "--store", str(store.root)]
    r = CliRunner().invoke(app, [*args, "--to", str(tmp_path / "sb")])
    assert r.exit_code == 2 and r.stderr.count("\n") == 1 and "--from and --store" in r.stderr


def test_recall_into_a_sandbox_from_a_url(
    store: Store, server: GitServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = server.bare("caroline", from_store=store.root)
    sandbox = tmp_path / "sandbox"
    args = ["materialize", "--from", url, "--to", str(sandbox), "--budget-bytes", "0"]
    assert CliRunner().invoke(app, args).exit_code == 0
    question = "What does Caroline want to study?"
    r = CliRunner().invoke(
        app, ["recall", question, "--into", str(sandbox), "--store", str(store.root), "--json"]
    )
    assert r.exit_code == 0, r.stderr
    files = json.loads(r.stdout)["files"]
    assert files
    manifest = json.loads((sandbox / MANIFEST).read_text())
    recalled = {e["path"] for e in manifest["files"] if e["reason"] == "recall"}
    assert recalled == {f"memory/{p}" for p in files}
    # no local store to search: one line naming what to pass
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(app, ["recall", question, "--into", str(sandbox)])
    assert r.exit_code == 1 and r.stderr.count("\n") == 1
    assert url in r.stderr and "--store DIR" in r.stderr


def test_recall_into_a_sandbox_whose_server_is_unreachable_writes_nothing(
    store: Store, server: GitServer, tmp_path: Path
) -> None:
    url = server.bare("caroline", from_store=store.root)
    sandbox = tmp_path / "sandbox"
    args = ["materialize", "--from", url, "--to", str(sandbox), "--budget-bytes", "0"]
    assert CliRunner().invoke(app, args).exit_code == 0
    before = {p: p.read_bytes() for p in sandbox.rglob("*") if p.is_file()}
    server.pause()
    question = "What does Caroline want to study?"
    r = CliRunner().invoke(
        app, ["recall", question, "--into", str(sandbox), "--store", str(store.root)]
    )
    assert r.exit_code == 1 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and r.stderr.startswith(f"error: cannot fetch from {url}")
    assert {p: p.read_bytes() for p in sandbox.rglob("*") if p.is_file()} == before
