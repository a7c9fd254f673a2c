"""A server process of the tests on a free loopback port, that can be stopped and started
again on the same port (for the "server away" cases): the base of ``GitServer`` and
``RedisServer``."""

from __future__ import annotations

import socket
import subprocess
import time

__all__ = ["LoopbackServer", "free_port"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class LoopbackServer:
    """``command()`` is started by ``resume`` and is up once ``ready()`` says so."""

    name = "server"

    def __init__(self) -> None:
        self.port = free_port()
        self._proc: subprocess.Popen[bytes] | None = None

    def command(self) -> list[str]:
        raise NotImplementedError

    def ready(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                return True
        except OSError:
            return False

    def resume(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            return
        self._proc = subprocess.Popen(
            self.command(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.ready():
                return
            time.sleep(0.05)
        self.pause()
        raise RuntimeError(f"{self.name} did not start")

    def pause(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            self._proc.terminate()
            self._proc.wait(timeout=10)
        self._proc = None

    def close(self) -> None:
        self.pause()
