"""Store creation, discovery and commits."""

from __future__ import annotations

from pathlib import Path

import git
import pytest

from memoryfs.errors import MemoryFSError, StoreExistsError, StoreNotFoundError
from memoryfs.store.config import load_config
from memoryfs.store.store import Store, find_store, init_store


def test_init_creates_repo_config_skeleton_and_first_commit(tmp_path: Path) -> None:
    store = init_store(tmp_path / "s", "dana", "atlas")
    repo = git.Repo(store.root)
    assert repo.head.commit.message.startswith("init:")
    assert repo.active_branch.name == "main"
    cfg = load_config(store.root / "memory.toml")
    assert (cfg.user, cfg.assistant, cfg.format) == ("dana", "atlas", 1)
    for sub in ("knowledge/people", "knowledge/preferences", "notes", "sessions/transcripts"):
        assert (store.memory / sub).is_dir()
    assert (store.memory / "INDEX.md").is_file()
    assert (store.memory / "deletions.jsonl").is_file()
    assert not repo.is_dirty(untracked_files=True)


def test_init_refuses_non_empty_folder_and_existing_store(tmp_path: Path) -> None:
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "notes.txt").write_text("mine")
    with pytest.raises(StoreExistsError, match="not empty"):
        init_store(tmp_path / "busy", "dana", "atlas")
    assert sorted(p.name for p in (tmp_path / "busy").iterdir()) == ["notes.txt"]
    init_store(tmp_path / "s", "dana", "atlas")
    with pytest.raises(StoreExistsError, match="already a store"):
        init_store(tmp_path / "s", "dana", "atlas")


def test_init_rejects_bad_scope_names(tmp_path: Path) -> None:
    with pytest.raises(MemoryFSError, match="invalid user scope"):
        init_store(tmp_path / "s", "../evil", "atlas")
    assert not (tmp_path / "s").exists()


def test_find_store_by_flag_env_and_walking_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = init_store(tmp_path / "s", "dana", "atlas")
    deep = store.memory / "knowledge" / "people"
    monkeypatch.delenv("MEMORYFS_STORE", raising=False)
    assert find_store(cwd=deep).root == store.root
    assert find_store(store.root).root == store.root
    monkeypatch.setenv("MEMORYFS_STORE", str(store.root))
    assert find_store(cwd=tmp_path).root == store.root
    monkeypatch.delenv("MEMORYFS_STORE")
    with pytest.raises(StoreNotFoundError, match="no store found"):
        find_store(cwd=tmp_path)


def test_commit_uses_default_identity_without_git_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "nogitconfig"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    store = init_store(tmp_path / "s", "dana", "atlas")
    commit = git.Repo(store.root).head.commit
    assert (commit.author.name, commit.author.email) == ("memoryfs", "memoryfs@localhost")


def test_resolve_refuses_paths_that_escape(tmp_path: Path) -> None:
    store = init_store(tmp_path / "s", "dana", "atlas")
    for bad in (
        "../memory.toml/../../x",
        "/etc/passwd",
        "file:///etc/passwd",
        "a\x00b",
        "../../outside",
    ):
        with pytest.raises(MemoryFSError):
            store.resolve(bad)
    (store.memory / "notes" / "out").symlink_to(tmp_path)
    with pytest.raises(MemoryFSError, match="escapes"):
        store.resolve("notes/out/secret.md")
    assert store.resolve("knowledge/people") == (store.memory / "knowledge" / "people").resolve()


def test_store_open_without_config_is_clear(tmp_path: Path) -> None:
    with pytest.raises(StoreNotFoundError, match="memoryfs init"):
        Store.open(tmp_path)
