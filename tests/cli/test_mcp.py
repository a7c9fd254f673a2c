"""``memoryfs mcp``: the real server in a subprocess, driven by the MCP SDK's own client.

Over stdio (``stdio_client`` spawns ``memoryfs mcp --store ...``) and streamable HTTP on
a free loopback port: every tool, both resources, path escapes, a write without
``--allow-write``, missing and wrong bearer tokens, malformed requests, and a recall
over MCP that returns what the library call returns. The store is the sample memory
after one Dream run.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult
from paths import SAMPLE

import dream
from cli.mcp_cmds import MISSING_EXTRA, is_loopback_host, parse_address
from cli.mcp_server import WRITE_OFF
from memoryfs.receipts.log import ReceiptLog, local_receipt_dir
from memoryfs.store.hashing import content_hash
from memoryfs.store.store import Store, init_store

MEMORYFS = Path(sys.executable).with_name("memoryfs")
PAGE = "knowledge/people/sam.md"
TOKEN = "test-token-0123456789-abcdefghij"
QUESTIONS = [
    "Where does Sam work now?",
    "What instrument does Sam play in an amateur orchestra?",
    "When did Dana present the Reefsong poster in Berlin?",
]

Steps = Callable[[ClientSession], Awaitable[None]]


@pytest.fixture(scope="module")
def dreamed(tmp_path_factory: pytest.TempPathFactory) -> Store:
    store = init_store(tmp_path_factory.mktemp("mcp") / "store", "dana", "atlas")
    store.ingest(sorted(SAMPLE.glob("*.md")))
    assert dream.run(store, allow_unapproved=True).status == "committed"
    return store


@pytest.fixture
def copy(dreamed: Store, tmp_path: Path) -> Store:
    """A store of its own for a test that changes it."""
    shutil.copytree(dreamed.root, tmp_path / "store", symlinks=True)
    return Store.open(tmp_path / "store")


@contextlib.asynccontextmanager
async def _initialized(read: Any, write: Any) -> AsyncIterator[ClientSession]:
    async with ClientSession(read, write) as session:
        await session.initialize()
        yield session


def over_stdio(store: Store, steps: Steps, *flags: str) -> None:
    async def main() -> None:
        params = StdioServerParameters(
            command=str(MEMORYFS), args=["mcp", "--store", str(store.root), *flags]
        )
        with anyio.fail_after(60):
            async with stdio_client(params) as (read, write), _initialized(read, write) as s:
                await steps(s)

    anyio.run(main)


def over_http(url: str, steps: Steps, token: str | None = None) -> None:
    async def main() -> None:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        with anyio.fail_after(60):
            async with (
                httpx2.AsyncClient(headers=headers, timeout=30) as http,
                streamable_http_client(url, http_client=http) as (read, write),
                _initialized(read, write) as s,
            ):
                await steps(s)

    anyio.run(main)


def data(result: CallToolResult) -> dict[str, Any]:
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


def text(result: CallToolResult) -> str:
    block = result.content[0]
    assert block.type == "text"
    return block.text


def error(result: CallToolResult) -> str:
    """The one line a refused call carries."""
    assert result.is_error
    line = text(result)
    assert "\n" not in line and "Traceback" not in line, line
    return line


def plain(value: Any) -> Any:
    return json.loads(json.dumps(value))


# -- stdio -----------------------------------------------------------------------------


def test_the_tools_and_resources_a_client_sees(dreamed: Store) -> None:
    async def steps(s: ClientSession) -> None:
        tools = {t.name: t for t in (await s.list_tools()).tools}
        assert sorted(tools) == [
            "add_session", "index", "read", "recall", "record_use", "search",
        ]  # fmt: skip
        assert set(tools["recall"].input_schema["properties"]) == {"question", "budget_tokens"}
        assert set(tools["search"].input_schema["properties"]) == {"query", "k", "layer", "mode"}
        assert set(tools["read"].input_schema["properties"]) == {
            "path",
            "lines",
            "section",
            "max_tokens",
        }
        assert tools["read"].annotations and tools["read"].annotations.read_only_hint
        assert all(t.description for t in tools.values())
        resources = (await s.list_resources()).resources
        assert [str(r.uri) for r in resources] == ["memory://INDEX.md"]
        templates = (await s.list_resource_templates()).resource_templates
        assert [t.uri_template for t in templates] == ["memory://{+path}"]
        index = (await s.read_resource("memory://INDEX.md")).contents[0]
        assert getattr(index, "text", None) == (dreamed.memory / "INDEX.md").read_text()
        page = (await s.read_resource(f"memory://{PAGE}")).contents[0]
        assert getattr(page, "text", None) == (dreamed.memory / PAGE).read_text()

    over_stdio(dreamed, steps)


def test_recall_over_mcp_returns_what_the_library_call_returns(dreamed: Store) -> None:
    got: dict[str, CallToolResult] = {}

    async def steps(s: ClientSession) -> None:
        for q in QUESTIONS:
            got[q] = await s.call_tool("recall", {"question": q})
        got["small"] = await s.call_tool("recall", {"question": QUESTIONS[0], "budget_tokens": 80})

    over_stdio(dreamed, steps)
    for q in QUESTIONS:
        expected = dreamed.recall(q)
        assert expected.items, q
        assert data(got[q]) == plain(expected.to_json())  # items, files, tokens, budget
        assert text(got[q]) == expected.text
        assert data(got[q])["budgetTokens"] == dreamed.config.budgets.recall_tokens
    small = data(got["small"])
    assert small["budgetTokens"] == 80 and small["tokens"] <= 80
    assert small == plain(dreamed.recall(QUESTIONS[0], 80).to_json())


def test_search_read_and_index_are_the_library_calls(dreamed: Store) -> None:
    got: dict[str, CallToolResult] = {}

    async def steps(s: ClientSession) -> None:
        got["search"] = await s.call_tool("search", {"query": "hydrophone", "k": 3})
        got["knowledge"] = await s.call_tool("search", {"query": "Sam", "layer": "knowledge"})
        got["wiki"] = await s.call_tool("search", {"query": "Sam", "layer": "wiki"})
        got["page"] = await s.call_tool("read", {"path": PAGE})
        got["lines"] = await s.call_tool("read", {"path": PAGE, "lines": "2-4"})
        got["line"] = await s.call_tool("read", {"path": PAGE, "lines": 3})
        turn = "sessions/transcripts/2026-01-23-tidewater-interview.md#t11"
        got["turn"] = await s.call_tool("read", {"path": turn})
        got["named"] = await s.call_tool("read", {"path": "dana", "section": "Profile"})
        got["cut"] = await s.call_tool("read", {"path": PAGE, "max_tokens": 60})
        got["index"] = await s.call_tool("index", {"max_tokens": 120})
        got["default index"] = await s.call_tool("index", {})

    over_stdio(dreamed, steps)
    hits = dreamed.search("hydrophone", k=3)
    assert data(got["search"])["hits"] == plain([h.to_json() for h in hits])
    assert text(got["search"]).splitlines() == [h.to_text() for h in hits]
    knowledge = data(got["knowledge"])["hits"]
    assert knowledge and {h["layer"] for h in knowledge} == {"knowledge"}
    assert error(got["wiki"]).endswith("unknown layer(s) wiki (use knowledge, notes, sessions)")
    page = (dreamed.memory / PAGE).read_text()
    assert text(got["page"]) == page
    assert data(got["page"])["version"] == content_hash(page.encode())
    assert text(got["lines"]) == "\n".join(page.splitlines()[1:4]) + "\n"
    assert (data(got["lines"])["start"], data(got["lines"])["end"]) == (2, 4)
    assert text(got["line"]) == page.splitlines()[2] + "\n"
    assert text(got["turn"]).startswith("## t11 · ") and data(got["turn"])["turn"] == "t11"
    named = dreamed.show("dana", section="Profile")
    assert text(got["named"]) == named.text and text(got["named"]).startswith("## Profile")
    assert data(got["named"])["path"] == "knowledge/people/dana.md"
    assert text(got["cut"]) == dreamed.show(PAGE, max_tokens=60).text and data(got["cut"])["cut"]
    assert text(got["index"]) == dreamed.prompt_index(120)
    assert data(got["index"])["maxTokens"] == 120
    assert text(got["default index"]) == dreamed.prompt_index()


def test_paths_that_leave_memory_are_refused_by_tool_and_resource(copy: Store) -> None:
    outside = copy.root.parent / "secret.md"
    outside.write_text("# secret\n", encoding="utf-8")
    (copy.memory / "notes" / "leak.md").symlink_to(outside)
    escapes = [
        "../memory.toml",
        "knowledge/../../memory.toml",
        "/etc/passwd",
        "../.git/config",
        "notes/leak.md",
    ]
    refused: list[str] = []
    resource_errors: list[str] = []

    async def steps(s: ClientSession) -> None:
        for path in escapes:
            refused.append(error(await s.call_tool("read", {"path": path})))
        for uri in (
            "memory://../memory.toml",
            "memory://%2e%2e/memory.toml",
            "memory://notes/leak.md",
        ):
            with pytest.raises(MCPError) as caught:
                await s.read_resource(uri)
            resource_errors.append(caught.value.error.message)

    over_stdio(copy, steps)
    assert all("secret" not in r and "user =" not in r for r in refused + resource_errors)
    assert sum("not a path inside memory/" in r for r in refused) == 4
    assert "symlink leads out of memory/" in refused[-1]
    assert "not a path inside memory/" in resource_errors[0]
    assert "not a path inside memory/" in resource_errors[1]
    assert "symlink leads out of memory/" in resource_errors[2]


def test_record_use_writes_the_used_receipt_of_the_page_read(copy: Store) -> None:
    got: dict[str, CallToolResult] = {}

    async def steps(s: ClientSession) -> None:
        got["read"] = await s.call_tool("read", {"path": PAGE})
        got["use"] = await s.call_tool("record_use", {"paths": [PAGE], "outcome": "test:pass"})
        got["transcript"] = await s.call_tool(
            "record_use", {"paths": ["sessions/transcripts/2026-01-05-reefsong-figures.md"]}
        )
        got["outcome"] = await s.call_tool("record_use", {"paths": [PAGE], "outcome": "maybe"})

    over_stdio(copy, steps)
    version = data(got["read"])["version"]
    assert text(got["use"]) == f"used {PAGE} at {version}"
    [receipt] = data(got["use"])["receipts"]
    assert (receipt["tier"], receipt["dependsOnVersion"], receipt["outcomeReceipt"]) == (
        "used",
        version,
        "test:pass",
    )
    log = ReceiptLog(local_receipt_dir(copy.root)).read()
    assert [(r.tier, r.version or r.depends_on_version) for r in log if r.item == receipt["item"]][
        -2:
    ] == [("recalled", version), ("used", version)]  # the read, then the use
    assert "is not a page" in error(got["transcript"])
    assert "outcome" in error(got["outcome"])


def test_add_session_is_refused_without_allow_write(copy: Store) -> None:
    head = copy.head()
    got: list[CallToolResult] = []

    async def steps(s: ClientSession) -> None:
        messages = [{"role": "user", "content": "I adopted a cat.", "ts": "2026-03-20T10:00"}]
        got.append(await s.call_tool("add_session", {"messages": messages}))

    over_stdio(copy, steps)
    assert error(got[0]) == f"Error executing tool add_session: {WRITE_OFF}"
    assert copy.head() == head and not copy.transcript_path("2026-03-20-chat-1000").exists()


def test_add_session_with_allow_write_appends_a_session_for_dream(copy: Store) -> None:
    got: dict[str, CallToolResult] = {}
    messages = [
        {"role": "user", "content": "We adopted a cat named Miso.", "ts": "2026-03-20T10:00"},
        {"role": "assistant", "content": "Miso is a lovely name."},
    ]
    markdown = (copy.memory / "sessions/transcripts/2026-01-05-reefsong-figures.md").read_text()

    async def steps(s: ClientSession) -> None:
        got["new"] = await s.call_tool("add_session", {"messages": messages, "session_id": "miso"})
        got["again"] = await s.call_tool(
            "add_session", {"messages": messages, "session_id": "miso"}
        )
        got["transcript"] = await s.call_tool("add_session", {"transcript": markdown})
        got["both"] = await s.call_tool("add_session", {"messages": messages, "transcript": "x"})
        got["bad id"] = await s.call_tool(
            "add_session", {"messages": messages, "session_id": "A B"}
        )
        got["search"] = await s.call_tool("search", {"query": "Miso", "k": 2})

    over_stdio(copy, steps, "--allow-write")
    new = data(got["new"])
    assert new["sessions"] == [{"id": "miso", "status": "new", "turnsAdded": 2, "turnsTotal": 2}]
    assert new["commit"] == copy.head() and text(got["new"]).startswith(
        "ingest: 1 sessions, 2 turns"
    )
    assert data(got["again"])["commit"] == "" and text(got["again"]) == "ingest: nothing new"
    assert data(got["transcript"])["sessions"][0]["status"] == "unchanged"
    assert "one of them" in error(got["both"])
    assert "--session-id 'A B' is not a lowercase slug" in error(got["bad id"])
    assert data(got["search"])["hits"][0]["path"] == "sessions/transcripts/miso.md"
    assert copy.transcript_path("miso").read_text().count("## t") == 2


def test_malformed_requests_get_one_line_errors(dreamed: Store) -> None:
    got: dict[str, CallToolResult] = {}

    async def steps(s: ClientSession) -> None:
        got["type"] = await s.call_tool("search", {"query": "Sam", "k": "ten"})
        got["range"] = await s.call_tool("search", {"query": "Sam", "k": 0})
        got["missing"] = await s.call_tool("recall", {})
        got["list"] = await s.call_tool("read", {"path": ["a", "b"]})
        got["unknown"] = await s.call_tool("forget_everything", {})
        got["after"] = await s.call_tool("search", {"query": "Sam", "k": 1})  # still serving

    over_stdio(dreamed, steps)
    assert error(got["type"]).startswith("Error executing tool search: bad arguments: k: ")
    assert "k: Input should be greater than or equal to 1" in error(got["range"])
    assert "question: Field required" in error(got["missing"])
    assert "path: Input should be a valid string" in error(got["list"])
    assert "Unknown tool: forget_everything" in error(got["unknown"])
    assert len(data(got["after"])["hits"]) == 1


# -- the command's own refusals ----------------------------------------------------------


def _run(
    *argv: str, env: dict[str, str] | None = None, code: str = ""
) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-c", code, *argv] if code else [str(MEMORYFS), *argv]
    return subprocess.run(
        cmd, capture_output=True, text=True, timeout=60, env={**os.environ, **(env or {})}
    )


@pytest.mark.parametrize(
    ("argv", "env", "message"),
    [
        (["--http", "0.0.0.0:8765"], {}, "a non-loopback address needs a bearer token"),
        (["--http", "192.0.2.10:8765"], {}, "a non-loopback address needs a bearer token"),
        (["--http", "localhost"], {}, "use HOST:PORT"),
        (["--http", "127.0.0.1:99999"], {}, "the port must be 1-65535"),
        (["--token-env", "MEMFS_T"], {"MEMFS_T": TOKEN}, "applies to --http only"),
        (["--http", "127.0.0.1:8765", "--token-env", "MEMFS_UNSET"], {}, "is not set or empty"),
        (["--http", "0.0.0.0:8765", "--token-env", "MEMFS_T"], {"MEMFS_T": "short"}, "shorter"),
    ],
)
def test_usage_errors_are_one_line_and_exit_2_before_binding(
    dreamed: Store, argv: list[str], env: dict[str, str], message: str
) -> None:
    env = {**env, "MEMFS_UNSET": ""}
    done = _run("mcp", "--store", str(dreamed.root), *argv, env=env)
    assert done.returncode == 2 and done.stdout == ""
    assert len(done.stderr.splitlines()) == 1 and message in done.stderr, done.stderr


def test_a_missing_extra_says_how_to_install_it(dreamed: Store) -> None:
    code = (
        "import sys\n"
        "sys.modules['mcp'] = None  # as if the extra were not installed\n"
        "from cli.memoryfs_app import main\n"
        "sys.argv = ['memoryfs', *sys.argv[1:]]\n"
        "main()\n"
    )
    done = _run("mcp", "--store", str(dreamed.root), code=code)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == f"error: {MISSING_EXTRA}\n"


# -- streamable HTTP -----------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def http_server(store: Store, *flags: str, env: dict[str, str] | None = None) -> Iterator[str]:
    """``memoryfs mcp --http`` on a free loopback port; yields its URL once it listens."""
    port = _free_port()
    argv = [str(MEMORYFS), "mcp", "--store", str(store.root), "--http", f"127.0.0.1:{port}"]
    proc = subprocess.Popen(
        [*argv, *flags],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            assert proc.poll() is None, proc.communicate()[1]
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
                break
            assert time.monotonic() < deadline, "the server did not start listening"
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stderr is not None:
            proc.stderr.close()


@pytest.fixture(scope="module")
def with_token(dreamed: Store) -> Iterator[str]:
    with http_server(dreamed, "--token-env", "MEMFS_T", env={"MEMFS_T": TOKEN}) as url:
        yield url


def _post(url: str, body: bytes, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(url, data=body, method="POST", headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


INIT = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"},
        },
    }
).encode()
JSON_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def test_http_with_the_token_serves_the_tools(dreamed: Store, with_token: str) -> None:
    got: dict[str, Any] = {}

    async def steps(s: ClientSession) -> None:
        got["tools"] = [t.name for t in (await s.list_tools()).tools]
        got["recall"] = await s.call_tool("recall", {"question": QUESTIONS[1]})
        got["index"] = (await s.read_resource("memory://INDEX.md")).contents[0]
        got["escape"] = await s.call_tool("read", {"path": "../memory.toml"})
        got["write"] = await s.call_tool("add_session", {"transcript": "x"})

    over_http(with_token, steps, TOKEN)
    assert "recall" in got["tools"] and len(got["tools"]) == 6
    assert data(got["recall"]) == plain(dreamed.recall(QUESTIONS[1]).to_json())
    assert getattr(got["index"], "text", None) == (dreamed.memory / "INDEX.md").read_text()
    assert "not a path inside memory/" in error(got["escape"])
    assert WRITE_OFF in error(got["write"])


@pytest.mark.parametrize("token", [None, "wrong-token-0123456789-abcdefghij", TOKEN[:-1]])
def test_http_without_the_right_token_gets_401(with_token: str, token: str | None) -> None:
    headers = dict(JSON_HEADERS)
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    status, response_headers, body = _post(with_token, INIT, headers)
    assert status == 401 and body and b"bearer token" in body
    assert response_headers.get("www-authenticate", "").startswith("Bearer")
    status, _, _ = _post(with_token, INIT, {**headers, "Authorization": f"Basic {TOKEN}"})
    assert status == 401

    async def steps(s: ClientSession) -> None:  # pragma: no cover - never reached
        raise AssertionError("initialized without the token")

    with pytest.raises(ExceptionGroup) as caught:  # the SDK client gives up on the 401
        over_http(with_token, steps, token)
    assert caught.group_contains(MCPError, match="error response")


def test_http_malformed_json_is_a_parse_error(with_token: str) -> None:
    headers = {**JSON_HEADERS, "Authorization": f"Bearer {TOKEN}"}
    status, _, body = _post(with_token, b"{not json", headers)
    assert status == 400 and json.loads(body)["error"]["code"] == -32700
    status, _, body = _post(with_token, INIT, headers)
    assert status == 200 and b'"serverInfo"' in body


def test_http_on_loopback_needs_no_token(dreamed: Store) -> None:
    got: list[CallToolResult] = []

    async def steps(s: ClientSession) -> None:
        got.append(await s.call_tool("search", {"query": "cello", "k": 1}))

    with http_server(dreamed) as url:
        over_http(url, steps)
    assert data(got[0])["hits"] == plain([h.to_json() for h in dreamed.search("cello", k=1)])


@pytest.mark.parametrize(
    ("text", "address", "loopback"),
    [
        ("127.0.0.1:8765", ("127.0.0.1", 8765), True),
        ("127.8.9.10:1", ("127.8.9.10", 1), True),
        ("localhost:80", ("localhost", 80), True),
        ("[::1]:8765", ("::1", 8765), True),
        ("0.0.0.0:8765", ("0.0.0.0", 8765), False),
        ("[::]:8765", ("::", 8765), False),
        ("10.0.0.5:8765", ("10.0.0.5", 8765), False),
        ("memory.example:443", ("memory.example", 443), False),
    ],
)
def test_addresses_and_which_are_loopback(
    text: str, address: tuple[str, int], loopback: bool
) -> None:
    assert parse_address(text) == address
    assert is_loopback_host(address[0]) is loopback


@pytest.mark.parametrize("text", ["8765", "127.0.0.1", "::1:8765", "127.0.0.1:", "a b:1", ":80"])
def test_addresses_that_are_not_host_port(text: str) -> None:
    with pytest.raises(ValueError, match="HOST:PORT"):
        parse_address(text)


def test_a_server_on_a_clone_serves_what_others_push(tmp_path: Path) -> None:
    from git_server import GitServer

    from memoryfs.remote import clone_store

    server = GitServer(tmp_path / "srv")
    try:
        init_store(tmp_path / "origin", "dana", "atlas", "Dana")
        url = server.bare("dana", from_store=tmp_path / "origin")
        served = clone_store(url, tmp_path / "served")
        writer = clone_store(url, tmp_path / "writer")

        async def steps(s: ClientSession) -> None:
            first = await s.call_tool("search", {"query": "kayak"})
            assert text(first) == "no hits"
            # another clone ingests and pushes while the server runs
            writer.ingest(
                [{"role": "user", "content": "I bought a red kayak.", "ts": "2026-03-02T09:00"}],
                session_id="2026-03-02-kayak",
            )
            await anyio.sleep(0.3)  # past --pull-every
            hits = data(await s.call_tool("search", {"query": "kayak"}))["hits"]
            assert [h["path"] for h in hits] == ["sessions/transcripts/2026-03-02-kayak.md"]
            server.pause()  # unreachable: the read is served from what the clone has
            await anyio.sleep(0.3)
            again = data(await s.call_tool("search", {"query": "kayak"}))["hits"]
            assert len(again) == 1

        over_stdio(served, steps, "--pull-every", "0.2")
    finally:
        server.close()
