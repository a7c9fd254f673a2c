"""What is due: the nightly window with a per-store jitter, and the stores whose main moved.

Nightly: each store has a fixed offset in the window (``nightly_hour`` UTC, ``jitter``
seconds wide), a hash of its URL, so thousands of stores start spread over the window and
each one at the same time every night. The beat looks every ``tick_every`` seconds and
queues the stores whose start has come; a Redis set per night (``claim_nightly``) makes
that once a night however many beats look, and a beat that was down catches up when it
comes back (within ``catch_up``). The stores wait in Redis, not in a worker's ETA queue:
a countdown of hours would outlive the broker's visibility timeout and run twice.

Changed: ``git ls-remote`` of every store (a few milliseconds and no transfer of
content) in a thread pool; a store whose ``main`` is not the one its last run left or
found (``status.seen``) received sessions since, and is queued.

Boundary: deciding; sending the tasks is ``app``'s.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import subprocess
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING

from dream.fleet.config import FleetConfig

if TYPE_CHECKING:
    from redis import Redis

    from dream.fleet.status import StoreStatus

__all__ = [
    "Tip",
    "changed",
    "claim_nightly",
    "claim_queue",
    "jitter_offset",
    "nightly_due",
    "remote_tips",
]

CATCH_UP = 12 * 3600.0  # a nightly start missed by more than this waits for the next night


def jitter_offset(url: str, width: float) -> float:
    """The store's start in the window, in seconds from its opening: stable per URL."""
    digest = int.from_bytes(hashlib.sha256(url.encode("utf-8")).digest()[:8], "big")
    return (digest / 2**64) * width


def nightly_due(
    urls: Iterable[str], now: dt.datetime, hour: int, width: float, catch_up: float = CATCH_UP
) -> list[tuple[str, str]]:
    """(url, night) for each store whose nightly start has come and is less than
    ``catch_up`` old; ``night`` is the date the window opened (the once-a-night key)."""
    due = []
    for url in urls:
        offset = jitter_offset(url, width)
        for days_back in (0, 1):  # a window that started yesterday may still be running
            night = (now - dt.timedelta(days=days_back)).date()
            start = dt.datetime.combine(night, dt.time(hour), tzinfo=dt.UTC)
            begins = start + dt.timedelta(seconds=offset)
            if begins <= now < begins + dt.timedelta(seconds=catch_up):
                due.append((url, night.isoformat()))
                break
    return due


def claim_nightly(client: Redis, config: FleetConfig, url: str, night: str) -> bool:
    """True the first time ``url`` is claimed for ``night`` (then it is queued)."""
    key = config.key("nightly", night)
    pipe = client.pipeline()
    pipe.sadd(key, url)
    pipe.expire(key, 3 * 86400)
    added, _ = pipe.execute()
    return bool(added)


def claim_queue(client: Redis, config: FleetConfig, url: str) -> bool:
    """True unless ``url`` waits in the queue already (the task clears the mark when it
    starts); the mark expires with the broker's visibility timeout."""
    return bool(
        client.set(config.key("queued", url), "1", nx=True, ex=int(config.visibility_timeout))
    )


@dataclass(frozen=True)
class Tip:
    url: str
    commit: str  # the remote's main; "" when it has none
    error: str = ""  # why the remote could not be asked ("" when it answered)


def _ls_remote(url: str, timeout: float) -> Tip:
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0"}  # a missing credential fails, never asks
    try:
        proc = subprocess.run(
            ["git", "ls-remote", "--", url, "refs/heads/main"],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return Tip(url, "", f"no answer in {timeout:g}s")
    if proc.returncode != 0:
        lines = proc.stderr.strip().splitlines()
        return Tip(url, "", lines[-1] if lines else f"git ls-remote exited {proc.returncode}")
    return Tip(url, proc.stdout.split("\t", 1)[0].strip())


def remote_tips(urls: Sequence[str], threads: int = 16, timeout: float = 30.0) -> list[Tip]:
    """Each store's remote ``main``, asked ``threads`` at a time, in the order given."""
    if not urls:
        return []
    with ThreadPoolExecutor(max_workers=max(1, min(threads, len(urls)))) as pool:
        return list(pool.map(lambda u: _ls_remote(u, timeout), urls))


def changed(tips: Sequence[Tip], known: Sequence[StoreStatus]) -> list[str]:
    """The stores whose remote main moved since their last run (or that never ran)."""
    seen = {s.url: s.seen for s in known}
    return [t.url for t in tips if not t.error and t.commit and t.commit != seen.get(t.url, "")]
