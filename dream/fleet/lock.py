"""The per-store lock in Redis: one worker at a time on a store.

``SET key token NX PX ttl`` takes it; only the holder's token releases or renews it (a
compare-and-delete / compare-and-expire script, so a worker whose lock expired never
frees a lock another worker now holds). While a run holds it, a thread renews it every
third of its life; a SIGKILLed worker stops renewing and its lock expires by itself.

The lock saves work, it does not keep the store correct: the push of a run is a
compare-and-swap on the remote's ``main`` (``dream.remote``), so a holder that lost its
lock (a pause longer than the TTL) still never overwrites another worker's commit.
"""

from __future__ import annotations

import contextlib
import secrets
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING

from dream.fleet.config import FleetError

if TYPE_CHECKING:
    from redis import Redis

__all__ = ["LockHeld", "StoreLock", "held"]

_RELEASE = """
if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end
return 0
"""
_RENEW = """
if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) end
return 0
"""


class LockHeld(FleetError):
    """Another worker holds the store's lock: try again later."""


class StoreLock:
    """One store's lock: ``acquire`` (no wait), ``renew``, ``release``; a fresh token
    per instance."""

    def __init__(self, client: Redis, key: str, ttl: float) -> None:
        self.client = client
        self.key = key
        self.ttl_ms = max(1, int(ttl * 1000))
        self.token = secrets.token_hex(16)

    def acquire(self) -> bool:
        return bool(self.client.set(self.key, self.token, nx=True, px=self.ttl_ms))

    def renew(self) -> bool:
        """True while this instance still holds the lock (its life starts again)."""
        return bool(self.client.eval(_RENEW, 1, self.key, self.token, self.ttl_ms))

    def release(self) -> bool:
        """True when this instance held the lock and freed it."""
        return bool(self.client.eval(_RELEASE, 1, self.key, self.token))

    def holder(self) -> str | None:
        value = self.client.get(self.key)
        return str(value) if value is not None else None


@contextlib.contextmanager
def held(client: Redis, key: str, ttl: float) -> Iterator[StoreLock]:
    """The lock for the ``with`` body, renewed meanwhile; ``LockHeld`` when taken."""
    lock = StoreLock(client, key, ttl)
    if not lock.acquire():
        raise LockHeld(f"another worker holds {key}; try again later")
    stop = threading.Event()

    def renew() -> None:
        while not stop.wait(ttl / 3):
            with contextlib.suppress(Exception):  # Redis away for a moment: try next time
                if not lock.renew():
                    return  # lost (expired and taken): the remote's CAS guards the push

    thread = threading.Thread(target=renew, name=f"renew {key}", daemon=True)
    thread.start()
    try:
        yield lock
    finally:
        stop.set()
        thread.join(timeout=5)
        with contextlib.suppress(Exception):
            lock.release()
