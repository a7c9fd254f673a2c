"""A real Redis for the fleet tests: ``redis-server`` on a free loopback port, no disk.

``RedisServer()`` starts it (``--save ''``, ``--appendonly no``: nothing written, nothing
left behind) and waits until it answers; ``close`` stops it; ``pause()``/``resume()``
stop and restart it on the same port, for the "Redis down" cases. The process is in its
own session, so a test that dies still leaves nothing that outlives pytest's reaping.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time

from git_server import free_port

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


class RedisServer:
    def __init__(self) -> None:
        self.port = free_port()
        self._proc: subprocess.Popen[bytes] | None = None
        self.resume()

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def resume(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            return
        self._proc = subprocess.Popen(
            [
                "redis-server", "--port", str(self.port), "--bind", "127.0.0.1",
                "--save", "", "--appendonly", "no", "--protected-mode", "yes",
                "--loglevel", "warning",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if _answers(self.port):
                return
            time.sleep(0.05)
        self.pause()
        raise RuntimeError("redis-server did not start")

    def pause(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            self._proc.terminate()
            self._proc.wait(timeout=10)
        self._proc = None

    def close(self) -> None:
        self.pause()

    def __enter__(self) -> RedisServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
