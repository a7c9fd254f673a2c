"""``dream watch``: bursts coalesce into one run, the lock is respected, SIGTERM is clean."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from dream_fixtures import add_sessions
from paths import SUPPORT

from dream.errors import DreamError
from dream.runner import RunResult
from dream.skills import approve
from dream.watch import Watcher, parse_quiet_period
from memoryfs.store.store import Store, init_store


def sessions(n: int, start: int = 0) -> list[tuple[str, str, list[str]]]:
    return [
        (f"2026-02-{i + 1:02d}-s{i}", f"2026-02-{i + 1:02d}", [f"Note {i} about Reefsong.", "Ok."])
        for i in range(start, start + n)
    ]


def dream_commits(store: Store) -> int:
    log = subprocess.run(
        ["git", "log", "--format=%B%x00"], cwd=store.root, capture_output=True, text=True
    ).stdout
    return log.count("Dream-Run:")


def wait_for(check: Callable[[], bool], timeout: float) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if check():
            return True
        time.sleep(0.1)
    return check()


def test_watch_runs_once_per_burst_and_stops_on_sigterm(tmp_path: Path) -> None:
    store = init_store(tmp_path / "store", "dana", "atlas")
    approve(store, by="tests")
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join([str(SUPPORT), os.environ.get("PYTHONPATH", "")])
    )
    argv = [sys.executable, "-c", "from cli.dream_app import main; main()", "watch"]
    argv += ["--quiet-period", "1s", "--store", str(store.root)]
    argv += ["--engine", "dream_fixtures:ScriptedEngine"]
    proc = subprocess.Popen(
        argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert proc.stderr is not None
        ready = proc.stderr.readline()
        assert "dream watch: watching" in ready, ready
        for i, session in enumerate(sessions(3)):  # a burst: three ingests in a row
            add_sessions(store, tmp_path / f"in{i}", [session])
        assert wait_for(lambda: dream_commits(store) == 1, 30)
        time.sleep(2.0)  # longer than the quiet period: no second run follows
        assert dream_commits(store) == 1
        message = str(store.repo.head.commit.message)
        assert message.startswith("dream: 3 sessions summarized")
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    assert out.splitlines()[0].startswith("dream: 3 sessions summarized")
    assert "stopped after 1 runs" in err


class FakeRuns:
    """A ``run`` callable for ``Watcher``: counts calls, can be slow or fail."""

    def __init__(self, delay: float = 0.0, fail: bool = False) -> None:
        self.delay, self.fail = delay, fail
        self.calls = 0
        self.finished = 0

    def __call__(self) -> RunResult:
        self.calls += 1
        time.sleep(self.delay)
        self.finished += 1
        if self.fail:
            raise DreamError("gate exploded")
        return RunResult(run_id=f"r{self.calls}", status="committed", message="ok")


def serving(watcher: Watcher) -> threading.Thread:
    thread = threading.Thread(target=watcher.loop, daemon=True)
    thread.start()
    return thread


def test_events_coalesce_and_a_later_event_runs_again(tmp_store: Store) -> None:
    runs = FakeRuns()
    watcher = Watcher(tmp_store, runs, quiet_period=0.3)
    thread = serving(watcher)
    for _ in range(5):
        watcher.notice()
        time.sleep(0.05)
    assert wait_for(lambda: runs.calls == 1, 5)
    time.sleep(0.5)
    assert runs.calls == 1
    watcher.notice()
    assert wait_for(lambda: runs.calls == 2, 5)
    watcher.stop()
    thread.join(5)
    assert not thread.is_alive()


def test_never_runs_while_another_run_holds_the_lock(tmp_store: Store) -> None:
    runs = FakeRuns()
    watcher = Watcher(tmp_store, runs, quiet_period=0.1, retry=0.1)
    with tmp_store.lock("dream", timeout=0):
        thread = serving(watcher)
        watcher.notice()
        time.sleep(0.6)
        assert runs.calls == 0
    assert wait_for(lambda: runs.calls == 1, 5)
    watcher.stop()
    thread.join(5)


def test_stop_during_a_run_waits_for_it(tmp_store: Store) -> None:
    runs = FakeRuns(delay=0.6)
    watcher = Watcher(tmp_store, runs, quiet_period=0.05)
    thread = serving(watcher)
    watcher.notice()
    assert wait_for(lambda: runs.calls == 1, 5)
    watcher.stop()
    thread.join(5)
    assert not thread.is_alive() and runs.finished == 1


def test_a_failed_run_is_reported_and_watching_goes_on(tmp_store: Store) -> None:
    errors: list[str] = []
    runs = FakeRuns(fail=True)
    watcher = Watcher(tmp_store, runs, quiet_period=0.05, on_error=errors.append)
    thread = serving(watcher)
    watcher.notice()
    assert wait_for(lambda: errors == ["gate exploded"], 5)
    watcher.notice()
    assert wait_for(lambda: runs.calls == 2, 5)
    watcher.stop()
    thread.join(5)


@pytest.mark.parametrize(("text", "seconds"), [("60s", 60), ("2m", 120), ("1.5", 1.5)])
def test_quiet_period(text: str, seconds: float) -> None:
    assert parse_quiet_period(text) == seconds


def test_bad_quiet_period() -> None:
    with pytest.raises(DreamError, match="quiet period"):
        parse_quiet_period("0")
    with pytest.raises(DreamError):
        parse_quiet_period("soon")
