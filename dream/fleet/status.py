"""What the fleet knows of each store: one Redis hash a store, written by the tasks.

Per store (``<prefix>:store:<url>``): its state (queued, running, retrying, done, failed),
the last run's time, status, one-line message and run id, the commit it pushed, how many
runs it made (lost push races re-run), the failures since the last success (and in all),
the remote ``main`` the last finished run left or found (``seen``), and the remote ``main``
last observed by anyone (``tip``: the run, or the "changed" sweep's ``git ls-remote``).

Pending sessions are known only where they were counted: when the remote's ``main`` is
still the one the last run left, the count that run left (``pending_after``); when it
moved since, sessions arrived and nobody counted them yet, which the status says
("unknown") rather than guess.

Boundary: reading and writing these records; what a run does is ``consolidate``'s.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dream.fleet.config import FleetConfig

if TYPE_CHECKING:
    from redis import Redis

__all__ = [
    "StoreStatus",
    "known",
    "load",
    "mark",
    "now_utc",
    "record_failure",
    "record_run",
    "record_tip",
]


def now_utc() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class StoreStatus:
    url: str
    state: str = ""  # queued | running | retrying | done | failed; "" never queued
    last_run: str = ""  # UTC time the last run finished (or failed)
    status: str = ""  # the run's status (committed, nothing-pending, gate-failed, ...) or error
    message: str = ""
    run_id: str = ""
    pushed: str = ""  # the last commit a run pushed to the remote's main
    tries: int = 0
    failures: int = 0  # failed runs since the last success
    failures_total: int = 0
    seen: str = ""  # the remote main the last finished run left or found
    tip: str = ""  # the remote main last observed
    tip_at: str = ""
    pending_after: int | None = None  # what the last run left pending (it counted)
    worker: str = ""
    seconds: float = 0.0  # the last run's task: lock, clone or fetch, run, push
    run_seconds: float = 0.0  # the local Dream run in it

    @property
    def pending(self) -> int | None:
        """Sessions waiting, when known: the last run's count while main has not moved."""
        if not self.seen or self.pending_after is None:
            return None
        if self.tip and self.tip != self.seen:
            return None  # sessions arrived since; nobody counted them yet
        return self.pending_after

    @property
    def pending_text(self) -> str:
        if self.pending is not None:
            return str(self.pending)
        if self.seen and self.tip and self.tip != self.seen:
            return "unknown (main moved since the last run)"
        return "unknown"

    def to_json(self) -> dict[str, Any]:
        return {
            "url": self.url,
            "state": self.state,
            "lastRun": self.last_run,
            "status": self.status,
            "message": self.message,
            "runId": self.run_id,
            "pushed": self.pushed,
            "tries": self.tries,
            "failures": self.failures,
            "failuresTotal": self.failures_total,
            "seen": self.seen,
            "tip": self.tip,
            "tipAt": self.tip_at,
            "pending": self.pending,
            "worker": self.worker,
            "seconds": self.seconds,
            "runSeconds": self.run_seconds,
        }


def _key(config: FleetConfig, url: str) -> str:
    return config.key("store", url)


def _write(client: Redis, config: FleetConfig, url: str, values: dict[str, Any]) -> None:
    fields: dict[str | bytes, str] = {k: "" if v is None else str(v) for k, v in values.items()}
    fields["url"] = url
    pipe = client.pipeline()
    pipe.hset(_key(config, url), mapping=fields)  # type: ignore[arg-type]
    pipe.sadd(config.key("known"), url)
    pipe.execute()


def mark(client: Redis, config: FleetConfig, url: str, state: str, worker: str = "") -> None:
    """The store's state now (queued, running, retrying), with the worker running it."""
    values: dict[str, Any] = {"state": state}
    if worker:
        values["worker"] = worker
    _write(client, config, url, values)


def record_run(
    client: Redis,
    config: FleetConfig,
    url: str,
    *,
    status: str,
    message: str,
    run_id: str,
    pushed: str,
    tries: int,
    seen: str,
    pending_after: int,
    failed: bool,
    seconds: float = 0.0,
    run_seconds: float = 0.0,
) -> None:
    """A finished run (committed, nothing to do, or a gate rejection: ``failed``)."""
    values: dict[str, Any] = {
        "state": "failed" if failed else "done",
        "last_run": now_utc(),
        "status": status,
        "message": message,
        "run_id": run_id,
        "tries": tries,
        "seen": seen,
        "tip": seen,
        "tip_at": now_utc(),
        "pending_after": pending_after,
        "seconds": seconds,
        "run_seconds": run_seconds,
    }
    if pushed:  # a run that pushed nothing leaves the last push on record
        values["pushed"] = pushed
    if failed:
        client.hincrby(_key(config, url), "failures", 1)
        client.hincrby(_key(config, url), "failures_total", 1)
    else:
        values["failures"] = 0
    _write(client, config, url, values)


def record_failure(
    client: Redis, config: FleetConfig, url: str, status: str, message: str, final: bool
) -> None:
    """A run that could not be made (``final``: no retry left) or will be retried."""
    values = {"state": "failed" if final else "retrying", "status": status, "message": message}
    if final:
        values["last_run"] = now_utc()
        client.hincrby(_key(config, url), "failures", 1)
        client.hincrby(_key(config, url), "failures_total", 1)
    _write(client, config, url, values)


def record_tip(client: Redis, config: FleetConfig, url: str, tip: str) -> None:
    _write(client, config, url, {"tip": tip, "tip_at": now_utc()})


def known(client: Redis, config: FleetConfig) -> list[str]:
    """Every store with a record."""
    return sorted(str(u) for u in client.smembers(config.key("known")))


def _int(raw: str | None, default: int | None = 0) -> int | None:
    try:
        return int(raw) if raw not in (None, "") else default
    except ValueError:
        return default


def _float(raw: str | None) -> float:
    try:
        return float(raw) if raw else 0.0
    except ValueError:
        return 0.0


def load(client: Redis, config: FleetConfig, urls: Iterable[str]) -> list[StoreStatus]:
    """The records of ``urls`` (an empty one for a store never seen), in that order."""
    wanted = list(urls)
    pipe = client.pipeline()
    for url in wanted:
        pipe.hgetall(_key(config, url))
    out = []
    for url, raw in zip(wanted, pipe.execute(), strict=True):
        get = raw.get
        out.append(
            StoreStatus(
                url=url,
                state=get("state", ""),
                last_run=get("last_run", ""),
                status=get("status", ""),
                message=get("message", ""),
                run_id=get("run_id", ""),
                pushed=get("pushed", ""),
                tries=_int(get("tries")) or 0,
                failures=_int(get("failures")) or 0,
                failures_total=_int(get("failures_total")) or 0,
                seen=get("seen", ""),
                tip=get("tip", ""),
                tip_at=get("tip_at", ""),
                pending_after=_int(get("pending_after"), None),
                worker=get("worker", ""),
                seconds=_float(get("seconds")),
                run_seconds=_float(get("run_seconds")),
            )
        )
    return out
