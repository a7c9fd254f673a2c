"""The registry of stores (a Redis set, or a file of URLs) and the per-store status records."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("celery", reason="the [fleet] extra is not installed")
redis = pytest.importorskip("redis", reason="the [fleet] extra is not installed")

from dream.fleet import registry, status  # noqa: E402
from dream.fleet.config import FleetConfig, FleetError  # noqa: E402

A, B = "git://127.0.0.1:9/a.git", "git@host:users/b.git"


@pytest.fixture
def client(redis_url: str) -> redis.Redis:
    return redis.Redis.from_url(redis_url, decode_responses=True)


def test_the_redis_set_adds_once_and_removes(client: redis.Redis) -> None:
    config = FleetConfig()
    assert registry.add(client, config, [B, A]) == [B, A]
    assert registry.add(client, config, [A]) == []
    assert registry.stores(client, config) == sorted([A, B])
    assert registry.remove(client, config, [A, "nope"]) == [A]
    assert registry.stores(client, config) == [B]
    with pytest.raises(FleetError, match="is not a store URL"):
        registry.add(client, config, ["two words"])


def test_a_file_registry_is_read_afresh_and_never_written(
    client: redis.Redis, tmp_path: Path
) -> None:
    path = tmp_path / "stores.txt"
    path.write_text(f"# users of team x\n{B}\n\n{A}  # dana\n{A}\n", encoding="utf-8")
    config = FleetConfig(registry_file=path)
    assert registry.stores(client, config) == sorted([A, B])
    path.write_text(f"{A}\n", encoding="utf-8")
    assert registry.stores(client, config) == [A]
    with pytest.raises(FleetError, match=f"the registry is the file {path}: edit it"):
        registry.add(client, config, [B])
    assert path.read_text(encoding="utf-8") == f"{A}\n"
    with pytest.raises(FleetError, match="cannot read the registry"):
        registry.stores(client, FleetConfig(registry_file=tmp_path / "missing.txt"))


def test_pending_is_the_last_count_only_while_main_has_not_moved(client: redis.Redis) -> None:
    config = FleetConfig()
    (fresh,) = status.load(client, config, [A])
    assert (fresh.state, fresh.pending, fresh.pending_text) == ("", None, "unknown")
    status.record_run(
        client, config, A, status="committed", message="2 sessions", run_id="r1",
        pushed="c1", tries=1, seen="c1", pending_after=0, failed=False,
    )  # fmt: skip
    (done,) = status.load(client, config, [A])
    assert (done.state, done.pending, done.failures, done.pushed) == ("done", 0, 0, "c1")
    status.record_tip(client, config, A, "c2")  # a session arrived: main moved
    (moved,) = status.load(client, config, [A])
    assert moved.pending is None and moved.pending_text.startswith("unknown (main moved")
    assert status.known(client, config) == [A]


def test_failures_count_until_a_success(client: redis.Redis) -> None:
    config = FleetConfig()
    status.record_failure(client, config, A, "error", "unreachable", final=False)
    assert status.load(client, config, [A])[0].failures == 0  # a retry is not a failure yet
    status.record_failure(client, config, A, "error", "unreachable", final=True)
    status.record_run(
        client, config, A, status="gate-failed", message="rejected", run_id="r2",
        pushed="", tries=1, seen="c1", pending_after=2, failed=True,
    )  # fmt: skip
    (failed,) = status.load(client, config, [A])
    assert (failed.state, failed.failures, failed.failures_total) == ("failed", 2, 2)
    status.record_run(
        client, config, A, status="committed", message="ok", run_id="r3",
        pushed="c3", tries=1, seen="c3", pending_after=0, failed=False,
    )  # fmt: skip
    (ok,) = status.load(client, config, [A])
    assert (ok.state, ok.failures, ok.failures_total) == ("done", 0, 2)
