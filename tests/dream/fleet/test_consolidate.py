"""One store's run on a worker, in-process (no Celery): lock, scratch clone, run, push, record."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from fleet_fixtures import (
    RejectingEngine,
    add_batch,
    dream_commits,
    served_store,
    validate_fresh_clone,
)
from git_server import GitServer, git

pytest.importorskip("celery", reason="the [fleet] extra is not installed")
redis = pytest.importorskip("redis", reason="the [fleet] extra is not installed")

from dream.fleet import status  # noqa: E402
from dream.fleet.config import FleetConfig  # noqa: E402
from dream.fleet.consolidate import consolidate  # noqa: E402
from dream.fleet.lock import LockHeld, StoreLock  # noqa: E402
from dream.fleet.scratch import scratch_path  # noqa: E402
from memoryfs.errors import RemoteError  # noqa: E402


@pytest.fixture
def setup(redis_url: str, tmp_path: Path) -> tuple[FleetConfig, redis.Redis]:
    config = FleetConfig(redis_url=redis_url, scratch=tmp_path / "scratch", lock_ttl=5)
    return config, redis.Redis.from_url(redis_url, decode_responses=True)


def test_a_run_pushes_one_commit_records_it_and_reuses_its_clone(
    setup: tuple[FleetConfig, redis.Redis], git_server: GitServer, tmp_path: Path
) -> None:
    config, client = setup
    url = served_store(git_server, tmp_path / "src", "dana", 3)
    first = consolidate(url, config, client, "w1")
    assert first.status == "committed" and first.pushed == git_server.head("dana") == first.seen
    assert dream_commits(git_server, "dana")[1:] == ["ingest", "ingest", "ingest", "dream"]
    (rec,) = status.load(client, config, [url])
    assert (rec.state, rec.status, rec.pushed, rec.pending, rec.worker) == (
        "done", "committed", first.pushed, 0, "w1",
    )  # fmt: skip
    clone = scratch_path(config, url)
    marker = clone / ".git" / "fleet-test-marker"
    marker.write_text("kept", encoding="utf-8")
    add_batch(url, tmp_path / "agent", 3, 2)
    second = consolidate(url, config, client, "w1")
    assert second.status == "committed" and marker.exists()  # the same clone, brought up to date
    assert dream_commits(git_server, "dana")[-3:] == ["ingest", "ingest", "dream"]
    again = consolidate(url, config, client, "w1")
    assert again.status == "nothing-pending" and again.pushed == ""
    assert git_server.head("dana") == second.pushed
    validate_fresh_clone(url, tmp_path / "fresh")


def test_the_lock_held_by_another_worker_stops_the_run_before_any_work(
    setup: tuple[FleetConfig, redis.Redis], git_server: GitServer, tmp_path: Path
) -> None:
    config, client = setup
    url = served_store(git_server, tmp_path / "src", "dana", 1)
    before = git_server.head("dana")
    other = StoreLock(client, config.key("lock", url), 30)
    assert other.acquire()
    with pytest.raises(LockHeld):
        consolidate(url, config, client)
    assert git_server.head("dana") == before and not scratch_path(config, url).exists()
    assert other.holder() == other.token  # the refused run did not free it


def test_a_scratch_clone_left_by_a_killed_worker_still_works(
    setup: tuple[FleetConfig, redis.Redis], git_server: GitServer, tmp_path: Path
) -> None:
    config, client = setup
    url = served_store(git_server, tmp_path / "src", "dana", 2)
    consolidate(url, config, client)
    clone = scratch_path(config, url)
    # what a SIGKILL leaves: Git's own lock files, and a half-made clone beside it
    (clone / ".git" / "index.lock").write_text("", encoding="utf-8")
    (clone / ".git" / "refs" / "heads" / "main.lock").write_text("", encoding="utf-8")
    half = clone.parent / f"{clone.name}.tmp-deadbeef"
    (half / ".git").mkdir(parents=True)
    add_batch(url, tmp_path / "agent", 2, 1)
    assert consolidate(url, config, client).status == "committed"
    assert not (clone / ".git" / "index.lock").exists()
    # a clone whose history is gone is cloned again
    git(clone, "update-ref", "-d", "refs/heads/main")
    add_batch(url, tmp_path / "agent", 3, 1)
    assert consolidate(url, config, client).status == "committed"
    validate_fresh_clone(url, tmp_path / "fresh")


def test_a_gate_rejection_is_a_recorded_failure_and_pushes_nothing(
    setup: tuple[FleetConfig, redis.Redis], git_server: GitServer, tmp_path: Path
) -> None:
    config, client = setup
    config = FleetConfig(**{**config.__dict__, "engine": "fleet_fixtures:RejectingEngine"})
    assert RejectingEngine.acts_on_skill is False
    url = served_store(git_server, tmp_path / "src", "dana", 1)
    before = git_server.head("dana")
    outcome = consolidate(url, config, client)
    assert outcome.failed and outcome.status == "gate-failed" and outcome.pushed == ""
    assert git_server.head("dana") == before
    (rec,) = status.load(client, config, [url])
    assert (rec.state, rec.failures, rec.seen) == ("failed", 1, before)
    # the worker's clone keeps the rejected run's branch, as 'dream run' does, for review
    kept = git(
        scratch_path(config, url), "branch", "--list", "dream/*", "--format=%(refname:short)"
    )
    assert kept == f"dream/{outcome.run_id}"


def test_an_unreachable_remote_raises_the_transient_error_and_writes_nothing(
    setup: tuple[FleetConfig, redis.Redis], git_server: GitServer, tmp_path: Path
) -> None:
    config, client = setup
    url = served_store(git_server, tmp_path / "src", "dana", 1)
    git_server.pause()
    with pytest.raises(RemoteError):
        consolidate(url, config, client)
    assert client.get(config.key("lock", url)) is None
    assert not scratch_path(config, url).exists()
    assert not list(config.scratch.glob("*.tmp-*"))


def test_clones_unused_for_keep_clones_days_are_pruned_and_in_use_ones_kept(
    setup: tuple[FleetConfig, redis.Redis], git_server: GitServer, tmp_path: Path
) -> None:
    import fcntl
    import os
    import time

    from dream.fleet.scratch import prune

    config, client = setup
    urls = [served_store(git_server, tmp_path / f"src{i}", f"s{i}", 1) for i in range(3)]
    for url in urls:
        consolidate(url, config, client)
    old, busy, recent = (scratch_path(config, u) for u in urls)
    week_ago = time.time() - 8 * 86400
    for clone in (old, busy):
        os.utime(clone.with_suffix(".lock"), (week_ago, week_ago))
    fd = os.open(busy.with_suffix(".lock"), os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)  # a task of another process is using it
    try:
        assert prune(config) == [old]
    finally:
        os.close(fd)
    assert not old.exists() and busy.is_dir() and recent.is_dir()
    assert old.with_suffix(".lock").exists()  # kept: deleting it could let two claim one folder
    # the store whose clone went is cloned again by its next task
    add_batch(urls[0], tmp_path / "agent", 2, 1)
    assert consolidate(urls[0], config, client).status == "committed"
    assert prune(replace(config, keep_clones_days=0), now=time.time() + 10**9) == []
