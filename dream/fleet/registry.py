"""Which stores the fleet looks after: a Redis set, or a file of URLs.

The set (``<prefix>:stores``) is what ``dream fleet add``/``remove`` change. A file
(``registry_file``: one URL a line, ``#`` comments and blank lines ignored) suits an
operator who keeps the list in configuration management; it is read afresh at each
look, so an edit needs no restart, and the commands never write it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from dream.fleet.config import FleetConfig, FleetError

if TYPE_CHECKING:
    from redis import Redis

__all__ = ["add", "check_url", "remove", "stores"]


def check_url(url: str) -> str:
    """A store URL as given, or a ``FleetError`` for one that cannot be one."""
    if not url.strip() or url != url.strip() or any(c.isspace() for c in url):
        raise FleetError(f"{url!r} is not a store URL (no spaces; e.g. git@host:users/dana.git)")
    return url


def _read_file(config: FleetConfig) -> list[str]:
    assert config.registry_file is not None
    try:
        text = config.registry_file.read_text(encoding="utf-8")
    except OSError as exc:
        raise FleetError(f"cannot read the registry {config.registry_file}: {exc}") from None
    lines = (line.split("#", 1)[0].strip() for line in text.splitlines())
    return sorted({check_url(line) for line in lines if line})


def stores(client: Redis, config: FleetConfig) -> list[str]:
    """Every registered store URL, sorted."""
    if config.registry_file is not None:
        return _read_file(config)
    return sorted(str(u) for u in client.smembers(config.key("stores")))


def _writable(config: FleetConfig) -> None:
    if config.registry_file is not None:
        raise FleetError(
            f"the registry is the file {config.registry_file}: edit it (one URL a line)"
        )


def add(client: Redis, config: FleetConfig, urls: Iterable[str]) -> list[str]:
    """Register ``urls``; the ones that were not registered yet."""
    _writable(config)
    wanted = [check_url(u) for u in urls]
    return [u for u in wanted if client.sadd(config.key("stores"), u)]


def remove(client: Redis, config: FleetConfig, urls: Iterable[str]) -> list[str]:
    """Unregister ``urls`` (their status records stay); the ones that were registered."""
    _writable(config)
    return [u for u in urls if client.srem(config.key("stores"), u)]
