"""The MCP face of one store: tools and resources, each a call of the Python API.

``build_server`` registers on the official SDK's ``MCPServer`` one small function per
tool, each the ``memoryfs.api.StoreAPI`` call the matching command makes, with the
same budgets (``memory.toml``'s when not given) and receipts:

- ``recall(question, budget_tokens)``: ``memoryfs recall`` (text, and the ``--json`` data);
- ``search(query, k, layer, mode)``: ``memoryfs search``;
- ``read(path, lines, section, max_tokens)``: one Markdown file under ``memory/`` by path or
  name (``memoryfs show``), ``path#tN`` for one turn;
- ``index(max_tokens)``: ``memoryfs index --prompt``;
- ``record_use(paths, outcome)``: ``memoryfs used``, for pages read from the store;
- ``add_session(messages | transcript, session_id)``: ``memoryfs ingest``, only when the
  server was started with ``--allow-write``.

Resources: ``memory://INDEX.md`` and ``memory://{path}`` (any Markdown file under
``memory/``, the rules of ``read``). A library error is one line: a tool's comes back
as an error result (``isError``) for the model to read, a resource's as a JSON-RPC
error. Importing this module imports the ``mcp`` SDK: only ``memoryfs mcp`` does.
"""

# no ``from __future__ import annotations``: the SDK reads each tool's annotations at
# registration, where they name values of ``build_server`` (the store's budgets)
import sys
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.context import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.resources.templates import ResourceSecurity
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS, CallToolResult, TextContent, ToolAnnotations
from pydantic import Field, ValidationError

from memoryfs import __version__
from memoryfs.api import MAX_HITS
from memoryfs.errors import MemoryFSError
from memoryfs.remote import pull_if_stale
from memoryfs.store.store import LAYERS, Store

__all__ = ["build_server", "WRITE_OFF"]

WRITE_OFF = "add_session is off: start the server with 'memoryfs mcp --allow-write'"
_READS = ToolAnnotations(read_only_hint=True, open_world_hint=False)
_INSTRUCTIONS = (
    "Long-term memory of one user, kept as Markdown files. Start from `index` (a map of "
    "every page), ask `recall` a question for a short cited synthesis, `search` for hits, "
    "and `read` a path (page, note, summary, transcript, or `path#tN` for one turn) to "
    "see the evidence. After relying on pages, `record_use` them."
)


class _MemoryServer(MCPServer[Any]):
    """``MCPServer`` whose argument errors are one line: the argument and what it wants."""

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            cause = exc.__cause__
            if not isinstance(cause, ValidationError):
                raise
            wrong = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or 'arguments'}: {err['msg']}"
                for err in cause.errors(include_url=False)
            )
            raise ToolError(f"Error executing tool {name}: bad arguments: {wrong}") from cause


def _result(text: str, data: dict[str, Any]) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)


def _refused(exc: Exception) -> ToolError:
    """A library error as the one line the tool result carries."""
    if isinstance(exc, OSError):
        reason = exc.strerror or str(exc)
        return ToolError(f"{exc.filename}: {reason}" if exc.filename else reason)
    return ToolError(str(exc))


def build_server(
    store: Store, allow_write: bool = False, pull_every: float = 0.0
) -> MCPServer[Any]:
    """An ``MCPServer`` serving ``store``; ``add_session`` refuses unless ``allow_write``.
    A store with a remote is pulled before a read at most every ``pull_every`` seconds
    (0: never); a pull that cannot be made is logged and the read served as it is."""
    server = _MemoryServer(
        "memoryfs",
        version=__version__,
        instructions=_INSTRUCTIONS,
        log_level="WARNING",
    )
    budgets = store.config.budgets

    def fresh() -> None:
        problem = pull_if_stale(store, pull_every)
        if problem:
            print(f"memoryfs mcp: serving the store as it is: {problem}", file=sys.stderr)

    @server.tool(annotations=_READS)
    def recall(
        question: Annotated[str, Field(description="A question in plain language.")],
        budget_tokens: Annotated[
            int | None,
            Field(ge=1, description=f"Token budget (default {budgets.recall_tokens})."),
        ] = None,
    ) -> CallToolResult:
        """The Memory Agent: a short synthesis of what memory knows about the question,
        one dated line per item with where it lives and the transcript turns it cites.
        The structured result is `memoryfs recall --json`'s: items, files, tokens."""
        fresh()
        try:
            result = store.recall(question, budget_tokens)
        except (MemoryFSError, OSError) as exc:
            raise _refused(exc) from None
        return _result(result.text or "nothing found", result.to_json())

    @server.tool(annotations=_READS)
    def search(
        query: Annotated[str, Field(description="Words or a question.")],
        k: Annotated[int, Field(ge=1, le=MAX_HITS, description="Number of hits.")] = 10,
        layer: Annotated[
            str | None, Field(description=f"Only this layer: {', '.join(LAYERS)}.")
        ] = None,
        mode: Annotated[
            str | None,
            Field(
                description="lexical (words), dense (meaning) or hybrid (both); default: "
                "hybrid when the store has an embedder, else lexical."
            ),
        ] = None,
    ) -> CallToolResult:
        """Search over memory, best hits first: `path:line` (or `path#tN` for a
        transcript turn), layer, date and the matching text."""
        fresh()
        try:
            hits = store.search(query, k=k, layer=layer, mode=mode)
        except (MemoryFSError, OSError) as exc:
            raise _refused(exc) from None
        text = "\n".join(h.to_text() for h in hits)
        return _result(text or "no hits", {"query": query, "hits": [h.to_json() for h in hits]})

    @server.tool(annotations=_READS)
    def read(
        path: Annotated[
            str,
            Field(
                description="A path under memory/, e.g. knowledge/people/sam.md, or "
                "sessions/transcripts/<id>.md#t3 for one turn; or a page id, alias or "
                "title, or a session id."
            ),
        ],
        lines: Annotated[
            str | int | None, Field(description='Lines to show: "12", "12-30" or "12-".')
        ] = None,
        section: Annotated[
            str | None,
            Field(description="Only the page's sections whose heading is this, or starts with it."),
        ] = None,
        max_tokens: Annotated[
            int | None,
            Field(ge=1, description="Cut at a line to fit this many tokens."),
        ] = None,
    ) -> CallToolResult:
        """One file of memory (a page, note, session summary or transcript), whole, by
        lines, by section, or one transcript turn with `#tN`. Only files under memory/.
        A cut page lists only the sources its shown lines cite and says what it left out."""
        fresh()
        try:
            got = store.show(path, section, max_tokens, None if lines is None else str(lines))
        except (MemoryFSError, OSError) as exc:
            raise _refused(exc) from None
        data = got.to_json()
        del data["text"]  # in the content once
        return _result(got.text, data)

    @server.tool(annotations=_READS)
    def index(
        max_tokens: Annotated[
            int | None,
            Field(ge=1, description=f"Token budget (default {budgets.index_tokens})."),
        ] = None,
    ) -> CallToolResult:
        """The map of memory an agent starts with: every page with its one-line summary,
        recent sessions and note folders, cut to the budget (most useful first)."""
        budget = max_tokens or budgets.index_tokens
        fresh()
        try:
            text = store.prompt_index(budget)
        except (MemoryFSError, OSError) as exc:
            raise _refused(exc) from None
        return _result(text, {"maxTokens": budget, "text": text})

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False))
    def record_use(
        paths: Annotated[
            list[str], Field(min_length=1, description="Pages relied on, relative to memory/.")
        ],
        outcome: Annotated[
            str,
            Field(description="A deterministic check: test:pass, test:fail, file:HEX, commit:HEX."),
        ] = "",
    ) -> CallToolResult:
        """Record that the answer relied on these pages (a content-free `used` receipt
        per page, at the version the store holds), so memory health can tell what was
        used."""
        try:
            receipts = store.record_use(paths, outcome)
        except (MemoryFSError, OSError) as exc:
            raise _refused(exc) from None
        # receipts come sorted by page, one per page named (their items are opaque ids)
        pages = sorted({p.removeprefix("memory/") for p in paths})
        text = "\n".join(
            f"used {rel} at {r.depends_on_version}" for rel, r in zip(pages, receipts, strict=True)
        )
        return _result(text, {"receipts": [r.to_json() for r in receipts]})

    @server.tool(
        annotations=ToolAnnotations(
            read_only_hint=False, destructive_hint=False, idempotent_hint=True
        )
    )
    def add_session(
        messages: Annotated[
            list[dict[str, Any]] | None,
            Field(
                description='Chat messages: {"role": "user"|"assistant"|..., "content": '
                '"...", "ts": ISO time (optional)}.'
            ),
        ] = None,
        transcript: Annotated[
            str | None,
            Field(description="A transcript in memoryfs Markdown form, or JSONL chat lines."),
        ] = None,
        session_id: Annotated[
            str | None,
            Field(description="The session's id, a lowercase slug (default: from its time)."),
        ] = None,
    ) -> CallToolResult:
        """Append a session to memory for tonight's Dream run (transcripts only grow: the
        same session again adds only its new turns). Give messages or a transcript."""
        if not allow_write:
            raise ToolError(WRITE_OFF)
        if (messages is None) == (transcript is None):
            raise ToolError("give messages or a transcript (one of them)")
        try:
            from memoryfs.ingest.source import Source

            source = (
                Source.from_stdin(transcript.encode("utf-8"), "<transcript>")
                if transcript is not None
                else Source.from_messages(messages or [])
            )
            fmt = "openai" if messages is not None else None
            result = store.ingest(source, fmt, session_id)
        except (MemoryFSError, OSError) as exc:
            raise _refused(exc) from None
        text = (
            f"ingest: {result.changed} sessions, {result.turns_added} turns ({result.commit[:10]})"
            if result.commit
            else "ingest: nothing new"
        )
        return _result(text, result.to_json())

    def resource_text(path: str) -> str:
        fresh()
        try:
            return store.read(path).text
        except (MemoryFSError, OSError) as exc:
            raise MCPError(code=INVALID_PARAMS, message=str(_refused(exc))) from None

    @server.resource("memory://INDEX.md", name="INDEX.md", mime_type="text/markdown")
    def index_md() -> str:
        """The generated index of memory: every page with its summary, recent sessions."""
        return resource_text("INDEX.md")

    # the library's checks (memoryfs.read.file_text) decide what leaves memory/, with a
    # message that says why; the SDK's own would answer "unknown resource"
    @server.resource(
        "memory://{+path}",
        name="memory file",
        mime_type="text/markdown",
        security=ResourceSecurity(exempt_params={"path"}),
    )
    def memory_file(path: str) -> str:
        """A Markdown file under memory/ by its path (knowledge/, notes/, sessions/)."""
        return resource_text(path)

    return server
