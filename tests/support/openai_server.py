"""A tiny OpenAI-compatible chat server on 127.0.0.1 that replays scripted answers.

``ScriptedServer`` speaks ``POST /v1/chat/completions``: it finds the session a request
is about (the ``Session <id>,`` line of the prompt) and plays the next step scripted for
it, or ``default`` when none is left. A step is one of:

- ``answer(obj)``: 200 with ``obj`` as JSON in ``choices[0].message.content``;
- ``text(s)``: 200 with ``s`` as the content, verbatim (malformed JSON, say);
- ``status(code, retry_after=None)``: an error response (429, 500, 401 ...);
- ``hang(seconds)``: sleep past the client's timeout, then answer nothing useful.

``responder``, when set, is asked first with each request's body: a step, or None to
play the script (the model judge's tests answer per claim, ``tests/dream/gates/test_judge.py``).
Every request is recorded (``requests``) for the tests to inspect.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Step = tuple[str, Any]
USAGE = {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}
_SESSION_RE = re.compile(r"^Session (\S+),", re.MULTILINE)


def answer(obj: dict[str, Any]) -> Step:
    return ("text", json.dumps(obj))


def text(content: str) -> Step:
    return ("text", content)


def status(code: int, retry_after: str | None = None) -> Step:
    return ("status", (code, retry_after))


def hang(seconds: float) -> Step:
    return ("hang", seconds)


class ScriptedServer:
    def __init__(self) -> None:
        self.script: dict[str, deque[Step]] = defaultdict(deque)
        self.default: Step = status(500)
        self.responder: Callable[[dict[str, Any]], Step | None] | None = None
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                if self.path.rstrip("/") != "/v1/chat/completions":
                    self._send(404, {"error": {"message": "not found"}})
                    return
                kind, arg = server.next_step(body)
                if kind == "hang":
                    time.sleep(arg)
                    kind, arg = "status", (503, None)
                if kind == "status":
                    code, retry_after = arg
                    headers = {"retry-after": retry_after} if retry_after else {}
                    self._send(code, {"error": {"message": f"scripted {code}"}}, headers)
                    return
                reply = {
                    "id": "chatcmpl-test",
                    "object": "chat.completion",
                    "created": 0,
                    "model": body.get("model", ""),
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": arg},
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": USAGE,
                }
                self._send(200, reply)

            def _send(self, code: int, obj: Any, headers: dict[str, str] | None = None) -> None:
                data = json.dumps(obj).encode()
                try:
                    self.send_response(code)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    for key, value in (headers or {}).items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def next_step(self, body: dict[str, Any]) -> Step:
        prompt = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
        m = _SESSION_RE.search(prompt)
        sid = m.group(1) if m else ""
        with self._lock:
            self.requests.append({"session": sid, **body})
            step = self.responder(body) if self.responder is not None else None
            if step is not None:
                return step
            steps = self.script.get(sid)
            return steps.popleft() if steps else self.default

    def for_session(self, sid: str) -> list[dict[str, Any]]:
        return [r for r in self.requests if r["session"] == sid]

    def start(self) -> ScriptedServer:
        self.thread.start()
        return self

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)
