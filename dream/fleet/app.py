"""The Celery application of the fleet and its tasks; the only module that imports Celery.

``create_app(config)`` builds it: Redis as broker and result backend, JSON messages,
late acknowledgement (a task is acknowledged when it ends, so one a killed worker held is
delivered again) with ``task_reject_on_worker_lost`` (a pool child killed mid-task puts
its task back at once), one task prefetched at a time (a run takes seconds to minutes;
a worker holding tasks it cannot start delays them), and the broker's visibility timeout
from the config (how long an unacknowledged task waits before another worker gets it).

Tasks:
- ``dream.fleet.consolidate(store_url)``: ``consolidate.consolidate``; a ``TRANSIENT``
  error is retried ``max_retries`` times, the countdown doubling from ``backoff`` (up to
  ``backoff_max``, with jitter); a held lock is retried the same way but is no failure
  (another worker is running the store); a gate rejection is recorded as a failure and
  never retried; any other error is recorded and left for a person.
- ``dream.fleet.tick`` (beat, every ``tick_every``): queue the stores whose nightly start
  has come.
- ``dream.fleet.changed`` (beat, every ``changed_every``): queue the stores whose remote
  ``main`` moved since their last run.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import os
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dream.errors import DreamError
from dream.fleet import registry, schedule, status
from dream.fleet.config import FleetConfig, connect, require_extra, safe_url
from memoryfs.errors import MemoryFSError

if TYPE_CHECKING:
    from celery import Celery
    from redis import Redis

__all__ = [
    "BEAT_QUEUE",
    "CONSOLIDATE",
    "QUEUE",
    "Sweep",
    "backoff",
    "create_app",
    "enqueue",
    "sweep_changed",
]

CONSOLIDATE = "dream.fleet.consolidate"
QUEUE = "dream-fleet"  # the stores' runs
BEAT_QUEUE = "dream-fleet-beat"  # the beat's short tasks, not behind a night of runs
log = logging.getLogger("dream.fleet")


def backoff(retries: int, config: FleetConfig) -> float:
    """The countdown before retry ``retries + 1``: doubling, capped, with jitter (half to
    all of it) so that stores that failed together do not come back together."""
    full = min(config.backoff_max, config.backoff * 2**retries)
    return round(random.uniform(full / 2, full), 3)


def create_app(config: FleetConfig) -> Celery:
    require_extra()
    from celery import Celery

    transport = {
        "visibility_timeout": config.visibility_timeout,
        # kombu scans for tasks of dead workers every interval x throttle seconds
        # (10 x 10 by default): every ``restore_every`` instead
        "unacked_restore_interval": config.restore_every,
        "unacked_restore_throttle": 1,
        "socket_connect_timeout": 10,
        "socket_keepalive": True,
    }
    app = Celery("dream.fleet", broker=config.redis_url, backend=config.redis_url)
    app.conf.update(
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        broker_transport_options=transport,
        result_backend_transport_options=transport,
        result_expires=3 * 86400,
        task_serializer="json",
        result_serializer="json",
        accept_content=["json"],
        task_default_queue=QUEUE,
        task_routes={
            "dream.fleet.tick": {"queue": BEAT_QUEUE},
            "dream.fleet.changed": {"queue": BEAT_QUEUE},
        },
        enable_utc=True,
        timezone="UTC",
        broker_connection_retry_on_startup=True,
        # a publish to a broker that went away fails within seconds, not forever
        task_publish_retry_policy={"max_retries": 2, "interval_start": 0.2, "interval_step": 0.5},
        beat_schedule={
            # a look that waited past the next one is dropped (the next one does its work)
            "nightly-tick": {
                "task": "dream.fleet.tick",
                "schedule": config.tick_every,
                "options": {"expires": config.tick_every},
            },
            "enqueue-changed": {
                "task": "dream.fleet.changed",
                "schedule": config.changed_every,
                "options": {"expires": config.changed_every},
            },
        },
    )
    clients: dict[int, Redis] = {}

    def client() -> Redis:
        # one connection per process: a prefork child must not share its parent's socket
        pid = os.getpid()
        if pid not in clients:
            clients[pid] = connect(config)
        return clients[pid]

    @app.task(
        name=CONSOLIDATE,
        bind=True,
        acks_late=True,
        reject_on_worker_lost=True,
        max_retries=config.max_retries,
    )
    def consolidate_task(self: Any, store_url: str) -> dict[str, Any]:
        from redis import ConnectionError as RedisDown
        from redis import TimeoutError as RedisSlow

        from dream.fleet.consolidate import TRANSIENT, consolidate
        from dream.fleet.lock import LockHeld

        transient: tuple[type[Exception], ...] = (*TRANSIENT, RedisDown, RedisSlow)
        redis = client()
        try:
            return consolidate(store_url, config, redis, self.request.hostname or "").to_json()
        except LockHeld as exc:
            # Another worker runs the store: the store's record is that worker's to write.
            # Try again later (it may have died: its lock expires); when the retries are
            # spent it is still running, and its run does this task's work.
            if self.request.retries >= config.max_retries:
                log.info("%s: left to the worker running it: %s", store_url, exc)
                return {"url": store_url, "status": "lock-held", "message": str(exc)}
            wait = backoff(self.request.retries, config)
            log.info("%s: retry %d in %.1fs: %s", store_url, self.request.retries + 1, wait, exc)
            raise self.retry(exc=exc, countdown=wait) from None
        except transient as exc:
            retries = self.request.retries
            final = retries >= config.max_retries
            # Redis itself may be what failed: the record is best effort, the retry is not
            with contextlib.suppress(RedisDown, RedisSlow):
                status.record_failure(redis, config, store_url, "error", str(exc), final=final)
            if final:
                log.warning("%s: giving up after %d retries: %s", store_url, retries, exc)
                return {"url": store_url, "status": "error", "message": str(exc), "failed": True}
            wait = backoff(retries, config)
            log.info("%s: retry %d in %.1fs: %s", store_url, retries + 1, wait, exc)
            raise self.retry(exc=exc, countdown=wait) from None
        except (DreamError, MemoryFSError, OSError) as exc:
            status.record_failure(redis, config, store_url, "error", str(exc), final=True)
            log.warning("%s: %s", store_url, exc)
            return {"url": store_url, "status": "error", "message": str(exc), "failed": True}

    @app.task(name="dream.fleet.tick")
    def tick_task() -> list[str]:
        redis = client()
        now = dt.datetime.now(dt.UTC)
        due = schedule.nightly_due(
            registry.stores(redis, config), now, config.nightly_hour, config.jitter
        )
        queued = [url for url, night in due if schedule.claim_nightly(redis, config, url, night)]
        return enqueue(app, redis, config, queued, once=False)

    @app.task(name="dream.fleet.changed")
    def changed_task() -> list[str]:
        redis = client()
        return sweep_changed(app, redis, config, registry.stores(redis, config)).queued

    return app


def enqueue(
    app: Celery, client: Redis, config: FleetConfig, urls: Sequence[str], once: bool = True
) -> list[str]:
    """Send a consolidate task for each URL; with ``once``, not for a store that waits
    in the queue already. The URLs sent."""
    sent = []
    for url in urls:
        registry.check_url(url)
        if once and not schedule.claim_queue(client, config, url):
            continue
        if not once:
            schedule.claim_queue(client, config, url)
        status.mark(client, config, url, "queued")
        app.send_task(CONSOLIDATE, args=[url])
        sent.append(url)
    return sent


@dataclass(frozen=True)
class Sweep:
    checked: int
    changed: tuple[str, ...]  # main moved since the last run
    queued: list[str]  # of those, the ones sent (not waiting or running already)
    unreachable: tuple[str, ...]  # "url: why"


def sweep_changed(app: Celery, client: Redis, config: FleetConfig, urls: Sequence[str]) -> Sweep:
    """``git ls-remote`` every store, record the tips, queue those whose main moved."""
    tips = schedule.remote_tips(urls, config.sweep_threads)
    for tip in tips:
        if tip.commit:
            status.record_tip(client, config, tip.url, tip.commit)
    moved = schedule.changed(tips, status.load(client, config, urls))
    bad = tuple(f"{safe_url(t.url)}: {t.error}" for t in tips if t.error)
    for line in bad:
        log.warning("unreachable: %s", line)
    # a store being run now is left to its run: what arrived before its push is in it (a
    # push that lost the race runs again), what arrives after moves main for the next sweep
    idle = [u for u in moved if not client.exists(config.key("lock", u))]
    return Sweep(len(tips), tuple(moved), enqueue(app, client, config, idle), bad)
