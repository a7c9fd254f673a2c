"""A TCP proxy on loopback that counts the bytes a server sends: what a client fetched.

``ByteProxy(port)`` forwards every connection to ``127.0.0.1:port`` (a ``git daemon``,
``GitServer.port``) and counts, over all connections, the bytes from the server to
the client (``received``), the bytes the other way (``sent``) and the connections
(``connections``): what ``git fetch`` or ``git clone`` really moved over the wire,
protocol and all. ``reset()`` zeroes the counts; ``close()`` stops it.
"""

from __future__ import annotations

import contextlib
import socket
import threading

__all__ = ["ByteProxy"]


class ByteProxy:
    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self._listener = socket.socket()
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(16)
        self.port: int = self._listener.getsockname()[1]
        self._lock = threading.Lock()
        self.received = 0
        self.sent = 0
        self.connections = 0
        self._threads: list[threading.Thread] = []
        self._closed = False
        accept = threading.Thread(target=self._accept, daemon=True)
        accept.start()

    def url(self, name: str) -> str:
        return f"git://127.0.0.1:{self.port}/{name}.git"

    def reset(self) -> None:
        with self._lock:
            self.received = self.sent = self.connections = 0

    def close(self) -> None:
        self._closed = True
        self._listener.close()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(("127.0.0.1", self.target_port))
            except OSError:
                client.close()
                continue
            with self._lock:
                self.connections += 1
            done = threading.Barrier(2, action=lambda c=client, s=server: (c.close(), s.close()))
            for src, dst, down in ((server, client, True), (client, server, False)):
                t = threading.Thread(target=self._pipe, args=(src, dst, down, done), daemon=True)
                t.start()

    def _pipe(
        self, src: socket.socket, dst: socket.socket, down: bool, done: threading.Barrier
    ) -> None:
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                with self._lock:
                    if down:
                        self.received += len(data)
                    else:
                        self.sent += len(data)
                dst.sendall(data)
        except OSError:
            pass
        finally:
            with contextlib.suppress(OSError):
                dst.shutdown(socket.SHUT_WR)  # pass the end of this direction on
            done.wait()  # both directions ended: close both sockets
