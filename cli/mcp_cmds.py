"""``memoryfs mcp``: serve one store to MCP clients, over stdio or streamable HTTP.

The SDK is an extra (``memoryfs[mcp]``) imported only when the command runs; without
it the command says how to install it. Usage errors (an address that is not
HOST:PORT, a non-loopback address without a token, a token variable that is unset)
are one line on stderr and exit 2, before anything binds. The tools and resources
are ``cli.mcp_server``'s; HTTP and its token are ``cli.mcp_http``'s.
"""

from __future__ import annotations

import ipaddress
import os
import re
from typing import Annotated

import typer

from cli.output import StoreOpt, fail, handle_errors, log, open_store

__all__ = ["register", "MISSING_EXTRA", "parse_address", "is_loopback_host"]

# the distribution's name (pyproject.toml [project] name) and its extra
MISSING_EXTRA = "memoryfs mcp needs the mcp extra: pip install 'memoryfs[mcp]'"
MIN_TOKEN = 16  # characters: a bearer token is the only thing between the network and memory
_ADDRESS_RE = re.compile(
    r"^(?:\[(?P<v6>[0-9A-Fa-f:.]+)\]|(?P<host>[^:\[\]\s]+)):(?P<port>\d{1,5})$"
)


def parse_address(text: str) -> tuple[str, int]:
    """``HOST:PORT`` or ``[V6]:PORT`` -> (host, port); ``ValueError`` with the reason."""
    m = _ADDRESS_RE.match(text.strip())
    if m is None:
        raise ValueError(f"--http {text!r}: use HOST:PORT, e.g. 127.0.0.1:8765")
    port = int(m.group("port"))
    if not 1 <= port <= 65535:
        raise ValueError(f"--http {text!r}: the port must be 1-65535")
    return m.group("v6") or m.group("host"), port


def _token(var: str | None, http: bool) -> str | None:
    if var is None:
        return None
    if not http:
        raise fail("--token-env applies to --http only (stdio needs no token)", 2)
    token = os.environ.get(var, "").strip()
    if not token:
        raise fail(f"--token-env {var}: ${var} is not set or empty", 2)
    if len(token) < MIN_TOKEN:
        raise fail(
            f"--token-env {var}: the token is shorter than {MIN_TOKEN} characters; make one "
            "with: python -c 'import secrets; print(secrets.token_urlsafe(32))'",
            2,
        )
    return token


@handle_errors
def mcp_cmd(
    store_dir: StoreOpt = None,
    http: Annotated[
        str | None,
        typer.Option(
            "--http",
            metavar="HOST:PORT",
            help="Serve streamable HTTP at http://HOST:PORT/mcp instead of stdio "
            "(loopback only, unless --token-env).",
        ),
    ] = None,
    token_env: Annotated[
        str | None,
        typer.Option(
            "--token-env",
            metavar="VAR",
            help="Require 'Authorization: Bearer <token>' with the token in $VAR (--http).",
        ),
    ] = None,
    allow_write: Annotated[
        bool,
        typer.Option("--allow-write", help="Let clients add sessions (the add_session tool)."),
    ] = False,
    pull_every: Annotated[
        float,
        typer.Option(
            "--pull-every",
            min=0,
            metavar="SECONDS",
            help="A store with a remote: pull before a read at most this often (0: never).",
        ),
    ] = 60.0,
) -> None:
    """Serve the store to MCP clients (tools: recall, search, read, index, record_use,
    add_session) over stdio, or streamable HTTP with --http."""
    host, port = "", 0
    if http is not None:
        try:
            host, port = parse_address(http)
        except ValueError as exc:
            raise fail(str(exc), 2) from None
    token = _token(token_env, http is not None)
    if http is not None and not token and not is_loopback_host(host):
        raise fail(
            f"--http {http}: a non-loopback address needs a bearer token (--token-env VAR); "
            "or bind 127.0.0.1",
            2,
        )
    try:
        from cli.mcp_server import build_server
    except ImportError as exc:
        if (exc.name or "").split(".")[0] not in ("mcp", "pydantic", "starlette", "uvicorn"):
            raise
        raise fail(MISSING_EXTRA, 2) from None
    store = open_store(store_dir)
    server = build_server(store, allow_write=allow_write, pull_every=pull_every)
    if http is None:
        server.run("stdio")
        return
    from cli.mcp_http import MCP_PATH, serve_http

    shown = f"[{host}]" if ":" in host else host
    auth = "bearer token required" if token else "no token: loopback only"
    write = "add_session on" if allow_write else "read-only"
    log(f"memoryfs mcp: {store.root} at http://{shown}:{port}{MCP_PATH} ({auth}; {write})")
    serve_http(server, host, port, token)


def is_loopback_host(host: str) -> bool:
    """``localhost``, ``127.0.0.0/8`` or ``::1``."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def register(app: typer.Typer) -> None:
    app.command("mcp")(mcp_cmd)
