"""A real Redis for the fleet tests: ``redis-server`` on a free loopback port, no disk.

``RedisServer()`` starts it (``--save ''``, ``--appendonly no``: nothing written, nothing
left behind) and waits until it answers; ``close`` stops it; ``pause()``/``resume()``
stop and restart it on the same port, for the "Redis down" cases. The process is in its
own session, so a test that dies still leaves nothing that outlives pytest's reaping.
"""

from __future__ import annotations

import shutil
import socket

from loopback import LoopbackServer

__all__ = ["RedisServer", "have_redis_server"]


def have_redis_server() -> bool:
    return shutil.which("redis-server") is not None


def _answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False


class RedisServer(LoopbackServer):
    name = "redis-server"

    def __init__(self) -> None:
        super().__init__()
        self.resume()

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def command(self) -> list[str]:
        return [
            "redis-server", "--port", str(self.port), "--bind", "127.0.0.1",
            "--save", "", "--appendonly", "no", "--protected-mode", "yes",
            "--loglevel", "warning",
        ]  # fmt: skip

    def ready(self) -> bool:
        return _answers(self.port)

    def __enter__(self) -> RedisServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
