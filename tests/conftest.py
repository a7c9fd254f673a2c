"""Shared fixtures: a fresh store per test, and no store leaking in from the environment."""

from __future__ import annotations

from pathlib import Path

import pytest

from memoryfs.store.store import Store, init_store


@pytest.fixture(autouse=True)
def _no_env_store(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMORYFS_STORE", raising=False)


@pytest.fixture
def tmp_store(tmp_path: Path) -> Store:
    return init_store(tmp_path / "store", "dana", "atlas")
