"""The documented Python API: its examples run, and ``import memoryfs`` stays light."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from examples import run_examples

import memoryfs
import memoryfs.api


def test_the_api_examples_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert run_examples(memoryfs.api, tmp_path, monkeypatch) >= 20


def test_every_store_call_has_an_example() -> None:
    calls = [n for n in vars(memoryfs.api.StoreAPI) if not n.startswith("_")]
    assert sorted(calls) == [
        "ingest", "materialize", "prompt_index", "read", "recall", "record_use", "search",
        "show",
    ]  # fmt: skip
    undocumented = [
        n for n in calls if ">>>" not in (getattr(memoryfs.api.StoreAPI, n).__doc__ or "")
    ]
    assert undocumented == []


def test_the_top_level_names_load_on_first_use() -> None:
    code = (
        "import sys, memoryfs\n"
        "before = sorted(m for m in sys.modules if m.startswith(('memoryfs.', 'git')))\n"
        "memoryfs.open_store, memoryfs.Store, memoryfs.init_store, memoryfs.MemoryFSError\n"
        "print(before, 'memoryfs.store.store' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[] True"
    from memoryfs.store.store import Store

    assert memoryfs.Store is Store  # the names resolve to the library's own
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        _ = memoryfs.nothing  # type: ignore[attr-defined]
