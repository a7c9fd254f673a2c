"""The fleet's settings (flags over ``DREAM_FLEET_*`` variables over defaults), its Redis
connection and its one error.

Boundary: reading settings and opening a checked connection; no Celery here, so that the
commands can say what is wrong (Redis down, the extra missing) before Celery starts.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from dream.errors import DreamError

if TYPE_CHECKING:
    from redis import Redis

__all__ = ["FleetConfig", "FleetError", "INSTALL_HINT", "connect", "require_extra", "safe_url"]

INSTALL_HINT = "pip install 'memoryfs[fleet]'"
DEFAULT_REDIS = "redis://127.0.0.1:6379/0"


class FleetError(DreamError):
    """The fleet cannot work: Redis unreachable, the extra missing, a bad setting."""


@dataclass(frozen=True)
class FleetConfig:
    """Everything a worker, the beat and the commands share. Each field has a
    ``DREAM_FLEET_<NAME>`` variable (``redis_url`` also reads ``DREAM_REDIS_URL``)."""

    redis_url: str = DEFAULT_REDIS  # broker, result backend, locks, registry and status
    scratch: Path = Path("~/.cache/dream-fleet").expanduser()  # the worker's clones
    engine: str = "embedded"  # dream.engines.load_engine name or package.module:Class
    prefix: str = "dream:fleet"  # every Redis key the fleet writes starts with it
    registry_file: Path | None = None  # one URL a line; None: the Redis set
    # A store's lock lives this long unless its holder renews it (every third of it):
    # a SIGKILLed worker's lock frees itself after at most this.
    lock_ttl: float = 120.0
    # A task a worker took but never acknowledged (the worker died) goes back to the queue
    # after this long (kombu's Redis visibility timeout). Longer than the longest run plus
    # the longest retry countdown, or a slow run is handed to a second worker (the lock
    # and the remote's compare-and-swap still keep that harmless, at the cost of the work).
    visibility_timeout: float = 7200.0
    # How often a worker looks for such tasks (kombu's unacked_restore_interval, with its
    # throttle at 1): a dead worker's task runs again within visibility_timeout plus this.
    restore_every: float = 60.0
    max_retries: int = 6  # for transient errors: the remote unreachable, the lock held
    backoff: float = 30.0  # first retry countdown; doubles each retry, with jitter
    backoff_max: float = 1800.0
    attempts: int = 3  # push races one run may lose before it gives up (run_remote)
    nightly_hour: int = 2  # UTC hour the nightly window opens
    jitter: float = 3 * 3600.0  # the window's width: each store's start is spread over it
    changed_every: float = 900.0  # seconds between "enqueue the stores whose main moved"
    tick_every: float = 60.0  # seconds between the beat's looks at the nightly window
    sweep_threads: int = 16  # parallel ``git ls-remote`` calls of one "changed" sweep
    # A scratch clone no task used for this many days is deleted (0: kept for ever), so a
    # machine's disk holds the stores it runs, not every store it ever ran.
    keep_clones_days: float = 7.0
    max_sessions: int | None = None  # per run; None: the store's memory.toml
    deadline: str | None = None  # per run, e.g. "20m"; None: the store's memory.toml

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: Any) -> FleetConfig:
        """The defaults, then ``DREAM_FLEET_*`` (and ``DREAM_REDIS_URL``), then the
        non-None ``overrides`` (the command's flags)."""
        env = os.environ if env is None else env
        values: dict[str, Any] = {}
        if env.get("DREAM_REDIS_URL", "").strip():
            values["redis_url"] = env["DREAM_REDIS_URL"].strip()
        for f in fields(cls):
            raw = env.get(f"DREAM_FLEET_{f.name.upper()}", "").strip()
            if raw:
                values[f.name] = _parse(f.name, raw, cls.__dataclass_fields__[f.name].default)
        values.update({k: v for k, v in overrides.items() if v is not None})
        config = replace(cls(), **values)
        config.check()
        return config

    def check(self) -> None:
        scheme = urlsplit(self.redis_url).scheme
        if scheme not in ("redis", "rediss", "unix"):
            raise FleetError(
                f"{safe_url(self.redis_url)} is not a Redis URL "
                "(redis://[:password@]host:port/db, rediss:// for TLS, unix:///path)"
            )
        if not 0 <= self.nightly_hour <= 23:
            raise FleetError(f"the nightly hour must be 0-23, not {self.nightly_hour}")
        positive = ("lock_ttl", "visibility_timeout", "restore_every", "backoff", "changed_every")
        for name in (*positive, "tick_every"):
            if getattr(self, name) <= 0:
                raise FleetError(f"{name} must be positive, not {getattr(self, name)}")
        if self.keep_clones_days < 0:
            raise FleetError(f"keep_clones_days must be 0 or more, not {self.keep_clones_days}")
        if self.backoff_max + self.lock_ttl >= self.visibility_timeout:
            raise FleetError(
                f"visibility_timeout ({self.visibility_timeout:g}s) must exceed the longest "
                f"retry countdown plus the lock's life ({self.backoff_max + self.lock_ttl:g}s), "
                "or a waiting retry would be handed to a second worker"
            )

    def key(self, *parts: str) -> str:
        return ":".join((self.prefix, *parts))


def _parse(name: str, raw: str, default: object) -> object:
    if name in ("scratch", "registry_file"):
        return Path(raw).expanduser()
    if name in ("max_sessions", "max_retries", "attempts", "nightly_hour", "sweep_threads"):
        caster: type = int
    elif isinstance(default, float):
        caster = float
    else:
        return raw
    try:
        return caster(raw)
    except ValueError:
        raise FleetError(f"DREAM_FLEET_{name.upper()}={raw!r} is not a number") from None


def safe_url(url: str) -> str:
    """``url`` without its password, for messages and logs."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.netloc.rpartition("@")[2]
    user = parts.username or ""
    return parts._replace(netloc=f"{user}:***@{host}").geturl()


def require_extra() -> None:
    """Celery and redis-py are installed, or one line saying how to get them."""
    missing = [m for m in ("celery", "redis") if importlib.util.find_spec(m) is None]
    if missing:
        raise FleetError(f"dream fleet needs {' and '.join(missing)}: {INSTALL_HINT}")


def connect(config: FleetConfig, timeout: float = 5.0) -> Redis:
    """A Redis client that answered a PING, or a ``FleetError`` in one line."""
    require_extra()
    import redis

    try:
        client = redis.Redis.from_url(
            config.redis_url,
            socket_connect_timeout=timeout,
            socket_timeout=timeout,
            decode_responses=True,
        )
        client.ping()
    except (redis.RedisError, ValueError, OSError) as exc:
        reason = " ".join(str(exc).split()) or type(exc).__name__
        raise FleetError(f"cannot reach Redis at {safe_url(config.redis_url)}: {reason}") from None
    return client
