"""Shared fixtures: a fresh store per test, and no store leaking in from the environment."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from git_server import GitServer

from memoryfs.store.store import Store, init_store


@pytest.fixture(autouse=True)
def _no_env_store(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMORYFS_STORE", raising=False)


@pytest.fixture
def tmp_store(tmp_path: Path) -> Store:
    return init_store(tmp_path / "store", "dana", "atlas")


@pytest.fixture
def git_server(tmp_path: Path) -> Iterator[GitServer]:
    """A real ``git daemon`` on loopback over bare repositories under ``tmp_path``."""
    server = GitServer(tmp_path / "git-server")
    yield server
    server.close()


@pytest.fixture
def store_url(tmp_path: Path, git_server: GitServer) -> str:
    """The URL of a new store (dana / atlas) on ``git_server``."""
    init_store(tmp_path / "origin", "dana", "atlas", "Dana")
    return git_server.bare("dana", from_store=tmp_path / "origin")
