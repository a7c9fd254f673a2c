"""``memoryfs.store.git_changes``: what differs, streamed from Git a block at a time (after a
full Dream run, every file of the store), the same as reading Git's output whole."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from memoryfs.store import git_changes
from memoryfs.store.git_changes import Untold, anchor_of, changed_between


def _git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=root, check=True, capture_output=True, text=True
    ).stdout.strip()


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "r"
    (root / "memory" / "notes").mkdir(parents=True)
    _git(root, "init", "-q")
    _git(root, "config", "user.name", "t")
    _git(root, "config", "user.email", "t@example.org")
    (root / "memory" / "INDEX.md").write_text("x\n")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "one")
    return root


@pytest.mark.parametrize("block", [1, 7, 1 << 16])
def test_changes_and_dirty_files_read_a_block_at_a_time(
    repo: Path, block: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(git_changes, "_READ", block)
    first = _git(repo, "rev-parse", "HEAD")
    names = [f"notes/n{i:03d} é.md" for i in range(40)]
    for name in names:
        (repo / "memory" / name).write_text(name)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "two")
    second = _git(repo, "rev-parse", "HEAD")
    assert sorted(changed_between(repo, first, second)) == sorted(names)
    assert list(changed_between(repo, second, second)) == []
    (repo / "memory" / "notes" / "new.md").write_text("new")
    (repo / "memory" / "INDEX.md").write_text("y\n")
    found = anchor_of(repo)
    assert found is not None
    commit, dirty = found
    assert commit == second
    assert sorted(dirty) == ["INDEX.md", "notes/new.md"]


def test_git_that_cannot_tell_says_so(repo: Path, tmp_path: Path) -> None:
    head = _git(repo, "rev-parse", "HEAD")
    with pytest.raises(Untold):
        list(changed_between(repo, "0" * 40, head))
    plain = tmp_path / "plain"
    plain.mkdir()
    assert anchor_of(plain) is None
