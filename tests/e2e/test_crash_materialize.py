"""Crash safety of ``memoryfs materialize``: SIGKILL at many points, then check and recover.

The sandbox was filled from an earlier state of the store; the store has moved on
(a Dream run created and changed pages), so the killed ``materialize`` refreshes
the search index, copies new and changed files and removes dropped ones. It dies
by SIGKILL at a random moment, a few milliseconds after its first write in the
sandbox (inside the copying), or at a step of the manifest (``killpoints``).

After every kill: the manifest parses, every file it lists holds exactly the
version it names, every file in the sandbox is listed (or pending) and whole (the
earlier or the later version, never torn), and the search index passes SQLite's
and FTS5's integrity checks. The next ``materialize`` completes with the same
sandbox as a run that was never interrupted, no temp files, and an index that
agrees with the files.
"""

from __future__ import annotations

import contextlib
import json
import random
import shutil
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from forkrun import fork_cli, wait_exit
from killpoints import KillPoint, copy_store, in_two_processes, kill_when
from paths import SAMPLE

from dream.engines import load_engine
from dream.runner import run_dream
from dream.skills import approve
from memoryfs.ingest import ingest
from memoryfs.read.materialize import MANIFEST, blob_hash, materialize
from memoryfs.read.search import INDEX_NAME, SearchIndex
from memoryfs.store.store import Store, init_store

pytest.importorskip("dream.engines.embedded.engine")

BUDGET = 40_000  # the working set changes when the store does: files come, go and change


@dataclass(frozen=True)
class MSetup:
    store: Path  # dreamed once more since the sandbox was filled (its search index too)
    sandbox: Path  # materialized before that run
    versions: dict[str, set[str]]  # sandbox path -> blobs it may hold (before or after)
    files: dict[str, str]  # sandbox path -> blob after an uninterrupted materialize
    duration: float


def _manifest(sandbox: Path) -> dict[str, Any]:
    data = json.loads((sandbox / MANIFEST).read_text())
    assert isinstance(data, dict)
    return data


def _listed(sandbox: Path) -> dict[str, str]:
    files = _manifest(sandbox)["files"]
    assert isinstance(files, list)
    return {e["path"]: e["blob"] for e in files}


def _sandbox_files(sandbox: Path) -> dict[str, str]:
    """path -> blob of every file under the sandbox's memory/ (temp files aside)."""
    out = {}
    for path in (sandbox / "memory").rglob("*"):
        if path.is_file() and not path.name.endswith(".tmp"):
            out[path.relative_to(sandbox).as_posix()] = blob_hash(path.read_bytes())
    return out


def _fork_materialize(store: Path, sandbox: Path) -> int:
    args = ["materialize", "--store", str(store), "--to", str(sandbox)]
    return fork_cli([*args, "--budget-bytes", str(BUDGET)])


@pytest.fixture(scope="module")
def msetup(tmp_path_factory: pytest.TempPathFactory) -> MSetup:
    folder = tmp_path_factory.mktemp("materialize-crash")
    store, sandbox = folder / "store", folder / "sandbox"
    sessions = sorted(SAMPLE.glob("*.md"))
    s = init_store(store, "dana", "atlas")
    approve(s, by="tests")
    ingest(s, sessions[:4])
    assert run_dream(s, load_engine()).status == "committed"
    materialize(s, sandbox, BUDGET)
    before = _listed(sandbox)
    ingest(s, sessions[4:8])
    assert run_dream(s, load_engine()).status == "committed"
    ref_store, ref_sandbox = folder / "ref-store", folder / "ref-sandbox"
    copy_store(store, ref_store)
    shutil.copytree(sandbox, ref_sandbox)
    start = time.monotonic()
    assert wait_exit(_fork_materialize(ref_store, ref_sandbox)) == 0
    duration = time.monotonic() - start
    after = _listed(ref_sandbox)
    assert set(after) - set(before) and set(before) - set(after)  # files come and go
    assert any(after[p] != before[p] for p in set(after) & set(before))  # and change
    versions = {p: {before.get(p, ""), after.get(p, "")} - {""} for p in {*before, *after}}
    return MSetup(store, sandbox, versions, after, duration)


M_EVENTS = ["pending", "receipts", "final"]


def _m_observer(event: str, sandbox: Path) -> Callable[[], bool]:
    manifest = sandbox / MANIFEST

    def pending() -> bool:
        try:
            return '"pending"' in manifest.read_text()
        except OSError:
            return False

    if event == "pending":
        return pending
    if event == "write":  # the first file created, replaced or removed in the sandbox
        folders = [sandbox / "memory", *(p for p in (sandbox / "memory").rglob("*") if p.is_dir())]
        before = [f.stat().st_mtime_ns for f in folders]

        def changed() -> bool:
            for folder, mtime in zip(folders, before, strict=True):
                with contextlib.suppress(OSError):
                    if folder.stat().st_mtime_ns != mtime:
                        return True
            return False

        return changed
    if event == "receipts":
        return lambda: (sandbox / ".receipts").exists()
    if event == "final":
        seen = [False]

        def final() -> bool:
            now = pending()
            seen[0] = seen[0] or now
            return seen[0] and not now

        return final
    raise ValueError(event)


def _check_sandbox(sandbox: Path, ms: MSetup) -> None:
    """A manifest that parses, every listed file matching its entry, every file whole."""
    listed = _listed(sandbox)
    pending = {p["path"] for p in _manifest(sandbox).get("pending", [])}
    on_disk = _sandbox_files(sandbox)
    for path, blob in listed.items():
        assert on_disk.get(path) == blob, f"{path}: listed {blob}, holds {on_disk.get(path)}"
    for path, blob in on_disk.items():
        assert path in listed or path in pending, f"{path} is in no manifest entry"
        assert blob in ms.versions[path], f"{path} is torn or unknown"


def _check_index(store: Path) -> None:
    conn = sqlite3.connect(store / ".memoryfs" / INDEX_NAME)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        conn.execute("INSERT INTO fts(fts) VALUES('integrity-check')")
    finally:
        conn.close()


def run_materialize_kills(ms: MSetup, tmp_path: Path, points: list[KillPoint]) -> dict[str, int]:
    tmp_path.mkdir(exist_ok=True)
    outcomes = {"killed": 0, "finished": 0, "mid-copy": 0}
    for i, point in enumerate(points):
        store, sandbox = tmp_path / f"store-{i}", tmp_path / f"sandbox-{i}"
        copy_store(ms.store, store)
        shutil.copytree(ms.sandbox, sandbox)
        pid = _fork_materialize(store, sandbox)
        fired = (lambda: True) if point.event == "timer" else _m_observer(point.event, sandbox)
        outcome = kill_when(pid, fired, point)
        outcomes[outcome] += 1
        outcomes["mid-copy"] += "pending" in _manifest(sandbox)
        try:
            _check_sandbox(sandbox, ms)
            _check_index(store)
            s = Store.open(store)
            materialize(s, sandbox, BUDGET)
            assert "pending" not in _manifest(sandbox)
            assert _listed(sandbox) == _sandbox_files(sandbox) == ms.files
            assert not [p for p in sandbox.rglob("*.tmp")]
            _check_index(store)
            with SearchIndex.open(s) as idx:  # the index agrees with the files
                stats = idx.refresh(full=True)
                assert (stats.added, stats.changed, stats.removed) == (0, 0, 0), stats
        except AssertionError as exc:
            raise AssertionError(f"kill point {i} {point.label()} ({outcome}): {exc}") from exc
        shutil.rmtree(store)
        shutil.rmtree(sandbox)
    return outcomes


def materialize_points(ms: MSetup, n: int, seed: int) -> list[KillPoint]:
    """A third at random moments, a third inside the copying (after the first write),
    a third at the manifest's steps."""
    rng = random.Random(seed)
    points = []
    for i in range(n):
        group = bool(i % 2)
        if i % 3 == 0:
            points.append(KillPoint("timer", rng.uniform(0.0, ms.duration * 0.9), group, False))
        elif i % 3 == 1:
            points.append(KillPoint("write", rng.uniform(0.0, 0.004), group, False))
        else:
            event = M_EVENTS[(i // 3) % len(M_EVENTS)]
            points.append(KillPoint(event, rng.choice([0.0, 0.0005, 0.002]), group, False))
    return points


def test_materialize_survives_sigkill_at_6_points(msetup: MSetup, tmp_path: Path) -> None:
    outcomes = run_materialize_kills(msetup, tmp_path, materialize_points(msetup, 6, seed=3))
    print(f"materialize kill points: 6 {outcomes}")
    assert outcomes["killed"] >= 4


@pytest.mark.slow
def test_materialize_survives_sigkill_at_24_more_points(msetup: MSetup, tmp_path: Path) -> None:
    points = materialize_points(msetup, 24, seed=4)
    outcomes = in_two_processes(
        lambda tmp, pts: run_materialize_kills(msetup, tmp, pts), tmp_path, points
    )
    print(f"materialize kill points: 24 {outcomes}")
    assert outcomes["killed"] >= 16 and outcomes["mid-copy"] >= 4
