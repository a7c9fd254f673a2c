"""One store's consolidation on a worker, without Celery: lock, clone, run, push, record.

``consolidate(url, config, client)`` takes the store's lock in Redis (``LockHeld`` when
another worker has it), opens the worker's scratch clone (``scratch``), runs
``dream.remote.run_remote`` there (fetch, bring ``main`` to the remote's, Dream, push as a
compare-and-swap, re-run on a lost race) and records the outcome in the store's status.
A gate rejection is an outcome (``failed``), not an exception: running again on the same
sessions would be rejected again. What is worth a retry raises (``TRANSIENT``): the
remote unreachable or refusing, the lock held; the Celery task (``app``) retries those
with backoff. Any other error is the store's problem for a person to look at.

Boundary: one store, one run; which stores and when is ``schedule``'s, retries are ``app``'s.
"""

from __future__ import annotations

import socket
import subprocess
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dream.engines import load_engine
from dream.fleet import scratch, status
from dream.fleet.config import FleetConfig
from dream.fleet.lock import LockHeld, held
from dream.remote import run_remote
from dream.runner import RunOptions
from memoryfs.remote import RemoteError

if TYPE_CHECKING:
    from redis import Redis

__all__ = ["Outcome", "TRANSIENT", "consolidate"]

# Errors a later try may not meet: the remote or the network, the lock, a scratch clone
# another process of this machine is using.
TRANSIENT: tuple[type[Exception], ...] = (RemoteError, LockHeld)


@dataclass(frozen=True)
class Outcome:
    url: str
    status: str  # the run's status: committed, nothing-pending, no-change, gate-failed, ...
    message: str
    run_id: str
    pushed: str  # the commit now on the remote's main that the run pushed; "" if none
    tries: int  # runs made (a lost push race re-runs)
    seen: str  # the remote main after the run
    pending_after: int
    seconds: float  # the whole task: lock, clone or fetch, run, push, record
    run_seconds: float  # the local Dream run(s) in it
    worker: str

    @property
    def failed(self) -> bool:
        return self.status == "gate-failed"

    def to_json(self) -> dict[str, Any]:
        return {
            "url": self.url,
            "status": self.status,
            "message": self.message,
            "runId": self.run_id,
            "pushed": self.pushed,
            "tries": self.tries,
            "seen": self.seen,
            "pendingAfter": self.pending_after,
            "seconds": self.seconds,
            "runSeconds": self.run_seconds,
            "worker": self.worker,
            "failed": self.failed,
        }


def _head(root: object) -> str:
    proc = subprocess.run(
        ["git", "rev-parse", "--verify", "--quiet", "refs/heads/main"],
        cwd=str(root),
        capture_output=True,
        text=True,
        check=False,
    )
    return proc.stdout.strip()


def consolidate(url: str, config: FleetConfig, client: Redis, worker: str = "") -> Outcome:
    """One run of the store at ``url``; raises one of ``TRANSIENT`` when it is worth a retry."""
    worker = worker or socket.gethostname()
    t0 = time.monotonic()
    with held(client, config.key("lock", url), config.lock_ttl):
        status.mark(client, config, url, "running", worker)
        client.delete(config.key("queued", url))  # a new session may queue it again
        engine = load_engine(config.engine)
        options = RunOptions(max_sessions=config.max_sessions, deadline=config.deadline)
        with scratch.opened(config, url) as store:
            run = run_remote(store, engine, options, attempts=config.attempts)
            seen = _head(store.root)
        scratch.prune(config)  # the clones this machine no longer runs
        result = run.result
        outcome = Outcome(
            url=url,
            status=result.status,
            message=result.message,
            run_id=result.run_id,
            pushed=run.pushed,
            tries=run.tries,
            seen=seen,
            pending_after=result.pending_after,
            seconds=round(time.monotonic() - t0, 3),
            run_seconds=float(result.timings.get("total", 0.0)),
            worker=worker,
        )
        status.record_run(
            client,
            config,
            url,
            status=outcome.status,
            message=outcome.message,
            run_id=outcome.run_id,
            pushed=outcome.pushed,
            tries=outcome.tries,
            seen=outcome.seen,
            pending_after=outcome.pending_after,
            failed=outcome.failed,
            seconds=outcome.seconds,
            run_seconds=outcome.run_seconds,
        )
    return outcome
