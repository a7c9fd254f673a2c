"""``memoryfs mcp --http``: the MCP server over streamable HTTP, with a bearer token.

The rules (``docs/mcp.md``): without a token the server binds loopback addresses
only (``cli.mcp_cmds`` refuses others before anything binds); with one (read from an
environment variable, never from the command line) every request must carry
``Authorization: Bearer <token>``, or gets 401 before it reaches the MCP transport.
The token is compared in constant time. On loopback the SDK's DNS-rebinding
protection (Host and Origin checks) stays on.
"""

from __future__ import annotations

import hmac
import json
from typing import Any

import uvicorn
from mcp.server.mcpserver import MCPServer
from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = ["BearerAuth", "serve_http", "MCP_PATH"]

MCP_PATH = "/mcp"


class BearerAuth:
    """ASGI middleware: every HTTP request needs ``Authorization: Bearer <token>``."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self._token = token.encode("utf-8")

    def _allowed(self, scope: Scope) -> bool:
        for name, value in scope.get("headers", ()):
            if name.lower() == b"authorization":
                scheme, _, token = value.partition(b" ")
                return scheme.lower() == b"bearer" and hmac.compare_digest(
                    token.strip(), self._token
                )
        return False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or self._allowed(scope):
            await self.app(scope, receive, send)  # lifespan events pass through
            return
        body = json.dumps(
            {"error": "unauthorized", "message": "missing or wrong bearer token"}
        ).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 401,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"www-authenticate", b'Bearer realm="memoryfs"'),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})


def serve_http(server: MCPServer[Any], host: str, port: int, token: str | None) -> None:
    """Serve ``server`` at ``http://host:port/mcp`` until interrupted."""
    app: ASGIApp = server.streamable_http_app(streamable_http_path=MCP_PATH, host=host)
    if token:
        app = BearerAuth(app, token)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", access_log=False)
    uvicorn.Server(config).run()
