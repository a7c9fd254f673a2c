"""A small OpenAI-compatible embeddings server on 127.0.0.1, for the endpoint back-end.

``EmbeddingsServer`` speaks ``POST /v1/embeddings`` (``{"model", "input": [...]}`` ->
``{"data": [{"index", "embedding"}], "model"}``) over real HTTP. Its "model" is
deterministic and needs no weights: a text's vector is the hashed bag of its words'
concepts (``CONCEPTS`` maps words of one meaning to one concept, every other word is
its own), so texts sharing a concept but no word are near each other, as a sentence
encoder would have them. Each model name gets its own width (``width_of``), so a test
can tell vectors of two models apart. Every request is recorded; ``token`` makes the
server require ``Authorization: Bearer <token>``; ``fail`` queues error statuses;
``short`` makes the next answer hold one embedding too few.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import threading
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

CONCEPTS = {
    "camping": "outdoors", "hiking": "outdoors", "tent": "outdoors", "outdoor": "outdoors",
    "activities": "outdoors", "trail": "outdoors",
    "puppy": "pet", "dog": "pet", "cat": "pet", "pets": "pet", "animal": "pet",
    "cello": "music", "violin": "music", "instrument": "music", "instruments": "music",
}  # fmt: skip
_WORD = re.compile(r"[a-z]+")


def width_of(model: str) -> int:
    return 32 + 16 * (int(hashlib.sha256(model.encode()).hexdigest(), 16) % 3)


def vector(text: str, width: int) -> list[float]:
    v = [0.0] * width
    for word in _WORD.findall(text.lower()):
        concept = CONCEPTS.get(word, word)
        h = int(hashlib.sha256(concept.encode()).hexdigest(), 16)
        v[h % width] += 1.0 if (h >> 8) % 2 else -1.0
    norm = math.sqrt(sum(x * x for x in v)) or 1.0
    return [x / norm * 3.0 for x in v]  # not unit length: the client normalizes


class EmbeddingsServer:
    def __init__(self, token: str = "") -> None:
        self.token = token
        self.requests: list[dict[str, Any]] = []
        self.fail: deque[int] = deque()
        self.short = False
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                with server._lock:
                    server.requests.append(
                        {"body": body, "auth": self.headers.get("authorization", "")}
                    )
                    failing = server.fail.popleft() if server.fail else 0
                    short, server.short = server.short, False
                if self.path.rstrip("/") != "/v1/embeddings":
                    self._send(404, {"error": {"message": "not found"}})
                elif server.token and self.headers.get("authorization") != f"Bearer {server.token}":
                    self._send(401, {"error": {"message": "bad token"}})
                elif failing:
                    self._send(failing, {"error": {"message": f"scripted {failing}"}})
                else:
                    texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
                    width = width_of(str(body.get("model", "")))
                    data = [
                        {"object": "embedding", "index": i, "embedding": vector(t, width)}
                        for i, t in enumerate(texts)
                    ]
                    data.reverse()  # the protocol orders by "index", not by position
                    if short:
                        data.pop()
                    self._send(200, {"object": "list", "data": data, "model": body.get("model")})

            def _send(self, code: int, obj: dict[str, Any]) -> None:
                raw = json.dumps(obj).encode()
                self.send_response(code)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    def texts(self) -> list[str]:
        """Every text embedded so far, in request order."""
        return [t for r in self.requests for t in r["body"]["input"]]

    def __enter__(self) -> EmbeddingsServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
