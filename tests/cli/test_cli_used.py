"""``memoryfs used``: what it prints, and a bad ``--outcome`` as a usage error."""

from __future__ import annotations

from pathlib import Path

from read_fixtures import build_store
from typer.testing import CliRunner

from cli.memoryfs_app import app
from memoryfs.read.materialize import materialize
from memoryfs.store.hashing import content_hash

PAGE = "knowledge/people/melanie.md"


def test_memoryfs_used_prints_the_pages_it_recorded(tmp_path: Path) -> None:
    store = build_store(tmp_path / "store")
    sandbox = tmp_path / "sandbox"
    materialize(store, sandbox)
    version = content_hash((sandbox / "memory" / PAGE).read_bytes())
    args = ["used", f"memory/{PAGE}", "--sandbox", str(sandbox), "--store", str(store.root)]
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 0, r.stderr
    assert r.stdout == f"used {PAGE} ({version})\n"
    r = CliRunner().invoke(app, [*args, "--outcome", "ok"])
    assert r.exit_code == 2 and r.stderr.count("\n") == 1
    assert "test:pass" in r.stderr and "commit:<hex>" in r.stderr
