"""Real ``dream fleet worker`` processes on a real Redis and git daemon: two workers never
run one store at once and each batch of sessions ends in one Dream commit; a worker killed
mid-run leaves the remote valid and its task runs again on another (a killed pool child's
task goes back to the queue at once); a gate rejection is
recorded and never retried; the beat runs the registry once a night and queues the stores
that received sessions."""

from __future__ import annotations

import datetime as dt
import os
import re
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fleet_fixtures import (
    Beat,
    Worker,
    add_batch,
    dream_commits,
    log_lines,
    served_store,
    validate_fresh_clone,
    wait_for,
)
from git_server import GitServer

pytest.importorskip("celery", reason="the [fleet] extra is not installed")
redis = pytest.importorskip("redis", reason="the [fleet] extra is not installed")

from dream.fleet import registry, status  # noqa: E402
from dream.fleet.app import create_app, enqueue, sweep_changed  # noqa: E402
from dream.fleet.config import FleetConfig  # noqa: E402
from dream.fleet.lock import StoreLock  # noqa: E402

# quick retries and a short lock life, so that the tests see them within seconds
FAST = {
    "DREAM_FLEET_LOCK_TTL": "3",
    "DREAM_FLEET_BACKOFF": "0.3",
    "DREAM_FLEET_BACKOFF_MAX": "1",
    "DREAM_FLEET_MAX_RETRIES": "30",
    "DREAM_FLEET_VISIBILITY_TIMEOUT": "30",
    "DREAM_FLEET_RESTORE_EVERY": "1",
}


class Fleet:
    def __init__(self, redis_url: str, tmp_path: Path, env: dict[str, str]) -> None:
        self.tmp = tmp_path
        self.env = {**FAST, **env, "FLEET_TEST_LOG": str(tmp_path / "runs.log")}
        self.config = FleetConfig.from_env(self.env, redis_url=redis_url)
        self.client = redis.Redis.from_url(redis_url, decode_responses=True)
        self.app = create_app(self.config)
        self.workers: list[Worker] = []

    def worker(
        self,
        name: str,
        engine: str = "fleet_fixtures:TimedEngine",
        disk: str = "",
        **env: str,
    ) -> Worker:
        w = Worker(
            self.config.redis_url,
            self.tmp / f"scratch-{disk or name}",  # by default its own disk, as on its own machine
            engine,
            name,
            {**self.env, **env},
            self.tmp / f"{name}.log",
        )
        self.workers.append(w)
        wait_for(w.ready, 30, f"worker {name} to start")
        return w

    def enqueue(self, urls: list[str]) -> None:
        enqueue(self.app, self.client, self.config, urls, once=False)

    def records(self, urls: list[str]) -> list[status.StoreStatus]:
        return status.load(self.client, self.config, urls)

    def close(self) -> None:
        for w in self.workers:
            w.stop()


@pytest.fixture
def fleet_env() -> dict[str, str]:
    return {}


@pytest.fixture
def fleet(redis_url: str, tmp_path: Path, fleet_env: dict[str, str]) -> Iterator[Fleet]:
    f = Fleet(redis_url, tmp_path, fleet_env)
    yield f
    f.close()


def _received(log: Path) -> list[str]:
    text = log.read_text(errors="replace")
    return re.findall(r"Task dream\.fleet\.consolidate\[([0-9a-f-]+)\] received", text)


def _overlaps(lines: list[tuple[str, str, int, float]]) -> list[str]:
    """Runs of one store whose start-end intervals overlap."""
    open_runs: dict[str, tuple[int, float]] = {}
    bad = []
    for what, user, pid, at in sorted(lines, key=lambda x: x[3]):
        if what == "start":
            if user in open_runs:
                bad.append(f"{user}: pid {pid} started while pid {open_runs[user][0]} ran")
            open_runs[user] = (pid, at)
        elif open_runs.get(user, (None,))[0] == pid:
            del open_runs[user]
    return bad


def test_two_workers_never_run_one_store_at_once_and_each_batch_is_one_dream_commit(
    fleet: Fleet, git_server: GitServer, tmp_path: Path
) -> None:
    names = ["ann", "ben", "cleo", "dev"]
    urls = [served_store(git_server, tmp_path / "src", n, 2) for n in names]
    fleet.env["FLEET_TEST_DELAY"] = "0.4"  # runs long enough for the other worker to try
    w1, w2 = fleet.worker("w1"), fleet.worker("w2")

    def settled(heads: dict[str, str]) -> bool:
        recs = fleet.records(urls)
        return all(
            r.state == "done" and r.seen == git_server.head(n) != heads[n]
            for r, n in zip(recs, names, strict=True)
        ) and not fleet.client.llen("dream-fleet")

    for batch in range(2):
        if batch:
            for n, url in zip(names, urls, strict=True):
                add_batch(url, tmp_path / f"agent-{n}", 2, 2)
        heads = {n: git_server.head(n) for n in names}
        fleet.enqueue([u for url in urls for u in (url, url)])  # both workers want each store

        wait_for(lambda h=heads: settled(h), 60, f"batch {batch} on every store")
    wait_for(lambda: all(not fleet.client.exists(fleet.config.key("lock", u)) for u in urls), 10,
             "the locks to be freed")  # fmt: skip
    runs = log_lines(tmp_path / "runs.log")
    assert not _overlaps(runs), _overlaps(runs)
    assert {pid for what, _, pid, _ in runs} == {w1.proc.pid, w2.proc.pid}  # both worked
    logs = w1.log.read_text(errors="replace") + w2.log.read_text(errors="replace")
    assert "holds dream:fleet:lock:" in logs  # a worker found a store taken and retried later
    for n in names:
        kinds = [k for k in dream_commits(git_server, n) if k in ("dream", "ingest")]
        assert kinds == ["ingest"] * 2 + ["dream"] + ["ingest"] * 2 + ["dream"], (n, kinds)
    validate_fresh_clone(urls[0], tmp_path / "fresh")
    assert all(r.pending == 0 and r.failures == 0 for r in fleet.records(urls))


def test_a_worker_killed_mid_run_leaves_the_remote_valid_and_its_task_runs_again(
    fleet: Fleet, git_server: GitServer, tmp_path: Path
) -> None:
    url = served_store(git_server, tmp_path / "src", "dana", 3)
    before = git_server.head("dana")
    # an unacknowledged task goes back to the queue after 4 s, a dead worker's lock after 2
    fleet.env.update(DREAM_FLEET_VISIBILITY_TIMEOUT="4", DREAM_FLEET_LOCK_TTL="2")
    slow = fleet.worker("slow", FLEET_TEST_DELAY="60")
    fleet.enqueue([url])
    runs = tmp_path / "runs.log"
    wait_for(lambda: any(w == "start" for w, *_ in log_lines(runs)), 30, "the run to start")
    slow.kill()  # SIGKILL to the whole worker: no ack, no clean-up, the lock not released
    assert git_server.head("dana") == before
    validate_fresh_clone(url, tmp_path / "after-kill")
    (rec,) = fleet.records([url])
    assert rec.state == "running" and rec.worker == "slow@test"
    # the next worker uses the same disk: the killed run's clone, worktree and locks
    assert (tmp_path / "scratch-slow").is_dir()
    fleet.worker("next", disk="slow", FLEET_TEST_DELAY="0")
    wait_for(lambda: fleet.records([url])[0].state == "done", 60, "the redelivered run")
    (rec,) = fleet.records([url])
    assert rec.status == "committed" and rec.pushed == git_server.head("dana") != before
    assert rec.worker == "next@test"
    # the same task, delivered again (a retry, if the dead worker's lock was still alive,
    # keeps its id)
    taken = [set(_received(w.log)) for w in fleet.workers]
    assert taken[0] == taken[1] and len(taken[0]) == 1
    assert dream_commits(git_server, "dana")[-1] == "dream"
    validate_fresh_clone(url, tmp_path / "after-redelivery")


def test_a_gate_rejection_is_recorded_as_a_failure_and_never_retried(
    fleet: Fleet, git_server: GitServer, tmp_path: Path
) -> None:
    url = served_store(git_server, tmp_path / "src", "dana", 2)
    before = git_server.head("dana")
    worker = fleet.worker("w", engine="fleet_fixtures:RejectingEngine")
    fleet.enqueue([url])
    wait_for(lambda: fleet.records([url])[0].state == "failed", 30, "the rejected run")
    time.sleep(1.5)  # more than the longest retry countdown (1 s): none comes
    (rec,) = fleet.records([url])
    assert (rec.status, rec.failures, rec.tries, rec.seen) == ("gate-failed", 1, 1, before)
    assert git_server.head("dana") == before
    assert len(_received(worker.log)) == 1 and "retry" not in worker.log.read_text().lower()
    assert not fleet.client.llen("dream-fleet")
    # nothing new on the store since: the "changed" sweep leaves it alone
    sweep = sweep_changed(fleet.app, fleet.client, fleet.config, [url])
    assert sweep.changed == () and sweep.queued == []


def test_the_beat_runs_the_registry_once_a_night_and_queues_stores_that_got_sessions(
    fleet: Fleet, git_server: GitServer, tmp_path: Path
) -> None:
    names = ["ann", "ben"]
    urls = [served_store(git_server, tmp_path / "src", n, 2) for n in names]
    registry.add(fleet.client, fleet.config, urls)
    now = dt.datetime.now(dt.UTC)
    fleet.worker("w")
    beat_env = {
        **fleet.env,
        "DREAM_FLEET_NIGHTLY_HOUR": str(now.hour),  # the window opened this hour
        "DREAM_FLEET_JITTER": "1",
        "DREAM_FLEET_TICK_EVERY": "0.5",
        "DREAM_FLEET_CHANGED_EVERY": "1",
    }
    beat = Beat(fleet.config.redis_url, tmp_path / "beat", beat_env, tmp_path / "beat.log")
    try:
        heads = {n: git_server.head(n) for n in names}
        wait_for(
            lambda: all(
                r.state == "done" and r.seen == git_server.head(n) != heads[n]
                for r, n in zip(fleet.records(urls), names, strict=True)
            ),
            60,
            "the nightly runs",
        )
        night = fleet.config.key("nightly", now.date().isoformat())
        assert fleet.client.smembers(night) == set(urls)
        # sessions arrive at ann's store only: the "changed" sweep queues it, not ben's
        add_batch(urls[0], tmp_path / "agent", 2, 1)
        moved = git_server.head("ann")
        wait_for(
            lambda: (
                fleet.records(urls)[0].seen not in ("", moved)
                and fleet.records(urls)[0].state == "done"
            ),
            60,
            "the run of the store that received a session",
        )
        time.sleep(2)  # a few more ticks and sweeps: nothing else to do
    finally:
        beat.stop()
    kinds = {
        n: [k for k in dream_commits(git_server, n) if k in ("dream", "ingest")] for n in names
    }
    assert kinds["ann"] == ["ingest", "ingest", "dream", "ingest", "dream"], kinds
    assert kinds["ben"] == ["ingest", "ingest", "dream"], kinds
    assert beat.logged("Sending due task nightly-tick") and beat.logged("enqueue-changed")


def test_a_pool_child_killed_mid_run_puts_its_task_back_at_once(
    fleet: Fleet, git_server: GitServer, tmp_path: Path
) -> None:
    url = served_store(git_server, tmp_path / "src", "dana", 2)
    before = git_server.head("dana")
    # the visibility timeout is long here: only task_reject_on_worker_lost brings it back soon
    fleet.env["DREAM_FLEET_VISIBILITY_TIMEOUT"] = "600"
    worker = Worker(
        fleet.config.redis_url,
        tmp_path / "scratch",
        "fleet_fixtures:TimedEngine",
        "pool",
        {**fleet.env, "FLEET_TEST_DELAY": "60", "FLEET_TEST_SLOW_ONCE": str(tmp_path / "once")},
        tmp_path / "pool.log",
        pool="prefork",
    )
    fleet.workers.append(worker)
    wait_for(worker.ready, 30, "the worker to start")
    fleet.enqueue([url])
    runs = tmp_path / "runs.log"
    wait_for(lambda: any(w == "start" for w, *_ in log_lines(runs)), 30, "the run to start")
    (child,) = {pid for w, _, pid, _ in log_lines(runs)}
    assert child != worker.proc.pid  # the pool's child runs it, not the worker itself
    os.kill(child, signal.SIGKILL)
    wait_for(lambda: fleet.records([url])[0].state == "done", 40, "the task to run again")
    (rec,) = fleet.records([url])
    assert rec.status == "committed" and git_server.head("dana") == rec.pushed != before
    # the same task came back after the child's loss (and, if the dead child's lock had not
    # expired yet, waited for it with retries: a retry keeps the task's id)
    ids = _received(worker.log)
    assert len(ids) >= 2 and set(ids) == {ids[0]}
    text = worker.log.read_text(errors="replace")
    lost = text.index("WorkerLostError")
    assert text.index(f"consolidate[{ids[0]}] received", lost) > lost
    validate_fresh_clone(url, tmp_path / "fresh")


def test_a_lock_held_past_every_retry_leaves_the_store_to_its_holder_and_is_no_failure(
    fleet: Fleet, git_server: GitServer, tmp_path: Path
) -> None:
    url = served_store(git_server, tmp_path / "src", "dana", 1)
    holder = StoreLock(fleet.client, fleet.config.key("lock", url), 60)  # a long run elsewhere
    assert holder.acquire()
    worker = fleet.worker("w", DREAM_FLEET_MAX_RETRIES="2")
    fleet.enqueue([url])
    wait_for(lambda: worker.logged("left to the worker running it"), 30, "the retries to end")
    (rec,) = fleet.records([url])
    assert (rec.state, rec.status, rec.failures) == ("queued", "", 0)  # not this task's record
    assert len(_received(worker.log)) == 3  # the task and its two retries
    assert holder.holder() == holder.token and not log_lines(tmp_path / "runs.log")
