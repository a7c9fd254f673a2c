"""Crash safety of ``memoryfs ingest``: SIGKILL at many points, then check and recover.

Each run forks a child that runs the real ``memoryfs ingest`` command
(``forkrun.fork_cli``: a separate process in its own session, so its git
subprocesses die with it when the whole group is killed). The child is killed
with SIGKILL either after a random delay or the moment an outside observer sees
a step happen (a temp file, the k-th transcript, Git's index.lock, HEAD moving).
There is no fault hook in the product code.

After every kill: ``git fsck`` is clean, ``main`` is a valid commit, every turn
on disk and in HEAD is a prefix of what the uninterrupted run stores (no turn
lost or changed), and the next ingest completes with the same tree as a run that
was never interrupted, and a clean working tree.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from forkrun import fork_cli, wait_exit, wait_group_gone

from memoryfs.ingest import ingest, load_sessions, plan_ingest
from memoryfs.pages.transcript import Turn, parse_transcript
from memoryfs.store.atomic import atomic_write_text
from memoryfs.store.store import Store, init_store

SESSIONS = 14


@dataclass(frozen=True)
class Setup:
    template: Path  # a store with one session committed (the runs grow it)
    inputs: list[Path]
    tree: str  # HEAD:memory after an uninterrupted ingest (receipts differ in time)
    turns: dict[str, list[Turn]]  # session id -> turns after an uninterrupted ingest
    duration: float  # from the first transcript written to HEAD moving, uninterrupted


def _git(root: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, check=check
    )


def _inputs(folder: Path) -> list[Path]:
    folder.mkdir(parents=True)
    paths = []
    for i in range(SESSIONS):
        rows = [
            {
                "role": "user",
                "content": f"Session {i}: note {j} " + "words " * 40,
                "ts": f"2026-02-{i + 1:02d}T10:{j:02d}:00",
            }
            for j in range(6)
        ]
        path = folder / f"chat-{i:02d}.jsonl"
        path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
        paths.append(path)
    # growth of the session the template already holds
    grown = folder / "base.jsonl"
    grown.write_text(
        "\n".join(
            json.dumps(
                {"role": "user", "content": f"base turn {j}", "ts": f"2026-01-01T09:{j:02d}:00"}
            )
            for j in range(8)
        )
        + "\n"
    )
    return [*paths, grown]


def _fork_ingest(store: Path, inputs: list[Path]) -> int:
    return fork_cli(["ingest", "--store", str(store), *map(str, inputs)])


def _turns(text: str) -> list[Turn]:
    return list(parse_transcript(text).turns)


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Setup:
    base = tmp_path_factory.mktemp("crash")
    inputs = _inputs(base / "inputs")
    template = base / "template"
    store = init_store(template, "dana", "atlas")
    first = base / "first" / "base.jsonl"
    first.parent.mkdir()
    first.write_text("\n".join(inputs[-1].read_text().splitlines()[:3]) + "\n")
    ingest(store, [first])
    reference = base / "reference"
    shutil.copytree(template, reference, symlinks=True)
    first_file, head_moved = _observer("files>=1", reference), _observer("head-moved", reference)
    pid = _fork_ingest(reference, inputs)
    while not first_file():
        time.sleep(0.0002)
    start = time.monotonic()
    while not head_moved():
        time.sleep(0.0002)
    duration = time.monotonic() - start  # from the first write to the commit
    assert wait_exit(pid) == 0
    ref = Store.open(reference)
    turns = {
        p.stem: _turns(p.read_text()) for p in (ref.memory / "sessions/transcripts").glob("*.md")
    }
    assert len(turns) == SESSIONS + 1
    tree = _git(reference, "rev-parse", "HEAD:memory").stdout.strip()
    return Setup(template, inputs, tree, turns, duration)


def _observer(event: str, store: Path) -> Callable[[], bool]:
    """A predicate that turns true when ``event`` has happened in ``store``."""
    transcripts = store / "memory/sessions/transcripts"
    git_dir = store / ".git"
    head = (
        (git_dir / "refs/heads/main").read_text() if (git_dir / "refs/heads/main").exists() else ""
    )
    before = set(os.listdir(transcripts))
    if event.startswith("files>="):
        k = int(event.split(">=")[1])
        return lambda: len(set(os.listdir(transcripts)) - before) >= k
    if event == "tempfile":
        return lambda: any(n.endswith(".tmp") for n in os.listdir(transcripts))
    if event == "index.lock":
        return lambda: os.path.exists(git_dir / "index.lock")
    if event == "head-moved":
        ref = git_dir / "refs/heads/main"
        return lambda: ref.exists() and ref.read_text() != head
    raise ValueError(event)


def _kill_points(setup: Setup, n: int, seed: int) -> list[tuple[str, float, bool]]:
    """(event or "timer", extra delay, kill the whole process group) for ``n`` runs."""
    rng = random.Random(seed)
    events = ["tempfile", "index.lock", "head-moved"] + [f"files>={k}" for k in (1, 3, 7, 11, 14)]
    points: list[tuple[str, float, bool]] = []
    for i in range(n):
        group = i % 2 == 1
        if i % 3 == 0:
            points.append(("timer", rng.uniform(0.0, setup.duration * 1.2), group))
        else:
            points.append((events[i % len(events)], rng.choice([0.0, 0.0, 0.0005, 0.002]), group))
    return points


def _check_after_kill(store: Path, setup: Setup) -> None:
    fsck = _git(store, "fsck", "--no-progress", check=False)
    assert fsck.returncode == 0, fsck.stderr
    _git(store, "rev-parse", "--verify", "main^{commit}")
    committed = _git(
        store, "ls-tree", "--name-only", "HEAD", "memory/sessions/transcripts/"
    ).stdout.split()
    for rel in committed:
        if not rel.endswith(".md") or rel.endswith(".gitkeep"):
            continue
        sid = Path(rel).stem
        head_turns = _turns(_git(store, "show", f"HEAD:{rel}").stdout)
        assert [t.text for t in head_turns] == [t.text for t in setup.turns[sid][: len(head_turns)]]
    # what is on disk is whole (atomic writes) and a prefix of the final transcript too
    for path in (store / "memory/sessions/transcripts").glob("*.md"):
        disk = _turns(path.read_text())
        assert [t.text for t in disk] == [t.text for t in setup.turns[path.stem][: len(disk)]]
    # the base session's committed turns are never lost
    base = _turns(_git(store, "show", "HEAD:memory/sessions/transcripts/base.md").stdout)
    assert len(base) >= 3


def _recover_and_compare(store: Path, setup: Setup) -> None:
    result = ingest(Store.open(store), setup.inputs)
    assert result is not None
    assert _git(store, "rev-parse", "HEAD:memory").stdout.strip() == setup.tree
    assert _git(store, "status", "--porcelain", "--untracked-files=all").stdout == ""
    _git(store, "fsck", "--no-progress")


def _run_kills(setup: Setup, tmp_path: Path, n: int, seed: int) -> dict[str, int]:
    outcomes = {"killed": 0, "finished": 0}
    for i, (event, delay, group) in enumerate(_kill_points(setup, n, seed)):
        store = tmp_path / f"run-{i}"
        shutil.copytree(setup.template, store, symlinks=True)
        # "timer": a random moment between the first write and the commit
        fired = _observer("files>=1" if event == "timer" else event, store)
        pid = _fork_ingest(store, setup.inputs)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if fired():
                if delay:
                    time.sleep(delay)
                break
            done, _ = os.waitpid(pid, os.WNOHANG)
            if done:
                pid = 0
                break
        if pid:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL) if group else os.kill(pid, signal.SIGKILL)
            code = wait_exit(pid)
            wait_group_gone(pid)  # a git child of a plain kill finishes on its own
            outcomes["killed" if code == -signal.SIGKILL else "finished"] += 1
        else:
            outcomes["finished"] += 1
        _check_after_kill(store, setup)
        if os.environ.get("CRASH_DEBUG"):
            st = _git(store, "status", "--porcelain").stdout.count("\n")
            lock = (store / ".git/index.lock").exists()
            log = _git(store, "rev-list", "--count", "HEAD").stdout.strip()
            print(f"{event:12} {delay:.4f} group={group} dirty={st} lock={lock} commits={log}")
        _recover_and_compare(store, setup)
        shutil.rmtree(store)
    return outcomes


def _kills_landing(setup: Setup, tmp_path: Path, n: int, seed: int, need: int) -> dict[str, int]:
    """``n`` kill points, then up to two more rounds of ``n`` until ``need`` kills landed.

    A kill lands when the ingest is still running; on a loaded machine the observer can
    see an event late and the ingest finishes first. Every point, landed or not, is
    checked; the rounds only make sure enough of them hit a running ingest."""
    total = {"killed": 0, "finished": 0}
    for round_no in range(3):
        got = _run_kills(setup, tmp_path / f"round-{round_no}", n, seed + 1000 * round_no)
        total = {k: total[k] + got[k] for k in total}
        print(f"kill points, round {round_no + 1}: {got}")
        if total["killed"] >= need:
            break
    return total


def test_ingest_survives_sigkill_at_20_points(setup: Setup, tmp_path: Path) -> None:
    outcomes = _kills_landing(setup, tmp_path, 20, seed=1, need=14)
    assert outcomes["killed"] >= 14  # kills must land while the ingest runs


@pytest.mark.slow
def test_ingest_survives_sigkill_at_60_more_points(setup: Setup, tmp_path: Path) -> None:
    outcomes = _kills_landing(setup, tmp_path, 60, seed=2, need=45)
    assert outcomes["killed"] >= 45


# -- regressions found by the kill runs ---------------------------------------------------


def test_transcripts_written_but_not_committed_are_committed_by_the_next_ingest(
    tmp_store: Store, setup: Setup
) -> None:
    """A kill between the atomic writes and the commit left files the next ingest
    saw as 'unchanged' and never committed."""
    sessions = [s for p in setup.inputs[:3] for s in load_sessions(tmp_store, p)]
    for change, text in plan_ingest(tmp_store, sessions):
        assert text is not None
        atomic_write_text(tmp_store.transcript_path(change.id), text)
    result = ingest(tmp_store, setup.inputs[:3])
    assert result.commit and result.changed == 3 and result.turns_added == 18
    assert _git(tmp_store.root, "status", "--porcelain").stdout == ""


def test_stale_git_lock_left_by_a_killed_git_is_cleared(tmp_store: Store, setup: Setup) -> None:
    lock = tmp_store.root / ".git" / "index.lock"
    lock.write_bytes(b"")
    os.utime(lock, (time.time() - 5, time.time() - 5))
    ingest(tmp_store, setup.inputs[:1])
    assert not lock.exists()
    assert _git(tmp_store.root, "status", "--porcelain").stdout == ""


def test_temp_files_of_a_killed_write_are_removed(tmp_store: Store, setup: Setup) -> None:
    temp = tmp_store.memory / "sessions/transcripts/.chat-00.md.abc123.tmp"
    temp.write_text("half a transcr")
    ingest(tmp_store, setup.inputs[:1])
    assert not temp.exists()
