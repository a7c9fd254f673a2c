"""A store that cannot be written (``chmod -R a-w``, a read-only mount, another user's
store) is still searched and recalled: the index is built in memory, nothing is written.

Root ignores file permissions, so as root the commands run as ``nobody`` (``setpriv``);
without it the test is skipped."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from memoryfs.ingest import ingest
from memoryfs.store.store import init_store

NOBODY = 65534


def _as_reader(args: list[str]) -> subprocess.CompletedProcess[str]:
    """``memoryfs *args`` as a user who may not write the store."""
    cmd = [sys.executable, "-c", "from cli.memoryfs_app import main; main()", *args]
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("root ignores permissions and setpriv is missing to drop them")
        cmd = [setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", *cmd]
    env = {**os.environ, "HOME": "/nonexistent", "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120, check=False)


@pytest.fixture
def read_only_root() -> Iterator[Path]:
    # not under pytest's tmp folder: as root that is closed to other users
    top = Path(tempfile.mkdtemp(prefix="memoryfs-ro-"))
    top.chmod(0o755)
    try:
        yield top
    finally:
        subprocess.run(["chmod", "-R", "u+w", str(top)], check=False)
        shutil.rmtree(top, ignore_errors=True)


@pytest.mark.parametrize("indexed", [False, True], ids=["no-cache", "cache-built-before"])
def test_read_only_store_can_be_searched_and_recalled(read_only_root: Path, indexed: bool) -> None:
    store = init_store(read_only_root / "store", "dana", "atlas")
    chat = read_only_root / "porto.jsonl"
    chat.write_text(
        '{"role": "user", "content": "I moved to Porto last month.", '
        '"ts": "2026-03-02T09:00:00Z"}\n',
        encoding="utf-8",
    )
    ingest(store, [chat])
    if indexed:
        store.search("Porto")
    else:
        shutil.rmtree(store.cache_dir, ignore_errors=True)
    subprocess.run(["chmod", "-R", "a-w,a+rX", str(store.root)], check=True)
    before = sorted(p.relative_to(store.root) for p in store.root.rglob("*"))

    found = _as_reader(["search", "--store", str(store.root), "Porto"])
    assert found.returncode == 0, found.stderr
    assert "sessions/transcripts/porto.md#t1" in found.stdout
    recalled = _as_reader(["recall", "--store", str(store.root), "Where does Dana live?"])
    assert recalled.returncode == 0, recalled.stderr
    assert "Porto" in recalled.stdout
    assert sorted(p.relative_to(store.root) for p in store.root.rglob("*")) == before
