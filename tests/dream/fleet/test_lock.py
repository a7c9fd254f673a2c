"""The per-store lock: one holder, released only by its holder, expiring, renewed while held."""

from __future__ import annotations

import time

import pytest

pytest.importorskip("celery", reason="the [fleet] extra is not installed")
redis = pytest.importorskip("redis", reason="the [fleet] extra is not installed")

from dream.fleet.lock import LockHeld, StoreLock, held  # noqa: E402


@pytest.fixture
def client(redis_url: str) -> redis.Redis:
    return redis.Redis.from_url(redis_url, decode_responses=True)


def test_one_holder_and_only_the_holder_releases(client: redis.Redis) -> None:
    first, second = StoreLock(client, "k", 30), StoreLock(client, "k", 30)
    assert first.acquire() and not second.acquire()
    assert not second.release() and first.holder() == first.token  # not the holder: no effect
    assert not second.renew()
    assert first.release() and first.holder() is None
    assert second.acquire() and not first.release()  # a stale holder cannot free it now


def test_an_unrenewed_lock_expires_and_its_old_holder_cannot_free_the_new_one(
    client: redis.Redis,
) -> None:
    dead = StoreLock(client, "k", 0.3)  # a worker SIGKILLed while holding it: nobody renews
    assert dead.acquire()
    assert 0 < client.pttl("k") <= 300
    time.sleep(0.45)
    alive = StoreLock(client, "k", 30)
    assert alive.acquire()
    assert not dead.release() and not dead.renew()
    assert alive.holder() == alive.token


def test_held_renews_while_the_body_runs_and_frees_after(client: redis.Redis) -> None:
    with held(client, "k", 0.3) as lock:
        time.sleep(1.0)  # three lives of the lock: only the renewal keeps it
        assert lock.holder() == lock.token
        with pytest.raises(LockHeld, match="another worker holds k"), held(client, "k", 0.3):
            pass
    assert client.get("k") is None


def test_held_frees_the_lock_when_the_body_raises(client: redis.Redis) -> None:
    with pytest.raises(RuntimeError), held(client, "k", 30):
        raise RuntimeError("the run failed")
    assert client.get("k") is None
