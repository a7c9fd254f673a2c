"""Fixtures of the fleet tests: one real ``redis-server`` for the folder, a clean key space
per test, a ``git daemon`` per test. Every test module here skips, with the reason, when
the ``[fleet]`` extra (Celery, redis-py) or the ``redis-server`` program is missing."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from redis_server import RedisServer, have_redis_server


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    if not have_redis_server():
        pytest.skip("redis-server is not installed (Debian: apt-get install redis-server)")
    with RedisServer() as server:
        yield server


@pytest.fixture
def redis_url(redis_server: RedisServer) -> Iterator[str]:
    import redis

    client = redis.Redis.from_url(redis_server.url)
    client.flushall()
    client.close()
    yield redis_server.url
