"""Read commands: search, recall (the Memory Agent), show, materialize, and used (a receipt).

Each command opens the store, brings the search cache up to date (progress on
stderr when that is long work) and makes one call of the Python API
(``memoryfs.api.StoreAPI``), the call the MCP server makes too.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from cli.output import (
    JsonOpt,
    StoreOpt,
    emit,
    handle_errors,
    log,
    non_blank,
    open_store,
    usage_check,
)
from memoryfs.store.store import LAYERS

if TYPE_CHECKING:
    from memoryfs.read.search import SearchIndex
    from memoryfs.store.store import Store

__all__ = ["register"]

_PROGRESS_MIN = 500  # files to (re-)index before progress is worth printing


def _known_layers(values: list[str] | None) -> list[str] | None:
    """A ``--layer`` / ``--exclude-layer`` callback: only the store's layers."""
    bad = sorted(set(values or ()) - set(LAYERS))
    if bad:
        raise typer.BadParameter(f"unknown layer(s) {', '.join(bad)} (use {', '.join(LAYERS)})")
    return values


LayerOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--layer",
        callback=_known_layers,
        help=f"Only these layers ({', '.join(LAYERS)}); repeatable.",
    ),
]


SEARCH_MODES = ("lexical", "dense", "hybrid")  # memoryfs.read.dense.SEARCH_MODES


def _known_mode(value: str | None) -> str | None:
    if value is not None and value not in SEARCH_MODES:
        raise typer.BadParameter(f"unknown mode {value!r} (use {', '.join(SEARCH_MODES)})")
    return value


ModeOpt = Annotated[
    str | None,
    typer.Option(
        "--mode",
        callback=_known_mode,
        help="lexical, dense or hybrid "
        "(default: hybrid when \\[embed] is configured, else lexical).",
    ),
]


def _refreshed(store: Store) -> SearchIndex:
    """The store's search index, brought up to date with progress on stderr."""
    from memoryfs.read.search import SearchIndex

    idx = SearchIndex.open(store)

    def progress(done: int, total: int) -> None:
        if total >= _PROGRESS_MIN:
            log(f"indexing: {done}/{total} files")

    stats = idx.refresh_for_read(progress)
    if stats.added + stats.changed >= _PROGRESS_MIN:
        log(f"indexed {stats.added + stats.changed} files in {stats.seconds:.1f}s")
    return idx


def _prepared(store: Store, mode: str | None) -> None:
    """The search index brought up to date and, when an embedder is in use, the vectors
    of new units made, with progress on stderr."""
    with _refreshed(store) as idx:
        if mode == "lexical" or not store.config.embed.on:
            return
        from memoryfs.read.dense import Dense

        def progress(done: int, total: int) -> None:
            if total >= _PROGRESS_MIN:
                log(f"embedding: {done}/{total} units")

        dense = Dense.open(store, idx, progress)
        if dense is not None:
            dense.close()


@handle_errors
def search_cmd(
    query: Annotated[
        str,
        typer.Argument(
            callback=non_blank, help="Words or a question; FTS syntax is taken literally."
        ),
    ],
    k: Annotated[int, typer.Option("-k", "--limit", min=1, max=1000, help="Number of hits.")] = 10,
    layer: LayerOpt = None,
    mode: ModeOpt = None,
    store_dir: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Search every layer of the store (knowledge, notes, sessions), best hits first."""
    store = open_store(store_dir)
    _prepared(store, mode)
    hits = store.search(query, k=k, layer=layer, mode=mode)
    human = "\n".join(h.to_text() for h in hits)
    emit({"query": query, "hits": [h.to_json() for h in hits]}, human, as_json)
    if not hits:
        log("no hits")


@handle_errors
def recall_cmd(
    question: Annotated[
        str, typer.Argument(callback=non_blank, help="A question in plain language.")
    ],
    into: Annotated[
        Path | None,
        typer.Option("--into", help="Sandbox folder to materialize the supporting files into."),
    ] = None,
    budget_tokens: Annotated[
        int | None,
        typer.Option("--budget-tokens", min=1, help="Token budget (default: memory.toml)."),
    ] = None,
    exclude_layer: Annotated[
        list[str] | None,
        typer.Option(
            "--exclude-layer",
            callback=_known_layers,
            help="Leave a layer out (e.g. knowledge); repeatable.",
        ),
    ] = None,
    mode: ModeOpt = None,
    store_dir: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """The Memory Agent: a short, cited synthesis of what the store knows about QUESTION.

    With --into a sandbox materialized --from a URL, the supporting files are fetched
    from that URL at the sandbox's commit; the search still needs a local store.
    """
    store = _recall_store(store_dir, into)
    _prepared(store, mode)
    result = store.recall(
        question, budget_tokens, exclude_layers=exclude_layer or (), into=into, mode=mode
    )
    emit(result.to_json(), result.text, as_json)
    if not result.items:
        log("nothing found")
    elif into is not None:
        log(f"materialized {len(result.files)} files into {into}")


def _recall_store(store_dir: Path | None, into: Path | None) -> Store:
    """The store recall searches; for a sandbox from a URL and no store, what to pass."""
    from memoryfs.errors import MemoryFSError, StoreNotFoundError
    from memoryfs.read.sandbox import manifest_head

    try:
        return open_store(store_dir)
    except StoreNotFoundError:
        url = manifest_head(into.expanduser().resolve()).url if into is not None else ""
        if not url or store_dir is not None:
            raise
        raise MemoryFSError(
            f"recall searches a local store and none was found; {into} came from {url}: "
            f"clone it (memoryfs clone {url} DIR) and pass --store DIR"
        ) from None


@handle_errors
def materialize_cmd(
    to: Annotated[Path, typer.Option("--to", help="Sandbox folder (created if missing).")],
    budget_bytes: Annotated[
        int | None,
        typer.Option("--budget-bytes", min=0, help="Byte budget (default: memory.toml)."),
    ] = None,
    from_url: Annotated[
        str | None,
        typer.Option(
            "--from",
            metavar="URL",
            help="Fetch from the store's Git server instead of a local store: only the "
            "files the working set needs (a blob-less partial clone), never a full clone.",
        ),
    ] = None,
    store_dir: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Write INDEX.md and the most useful pages into a sandbox, with a manifest."""
    if from_url is not None:
        if store_dir is not None:
            raise typer.BadParameter("--from and --store name two stores; pass one")
        from memoryfs.remote.sandbox import materialize_from

        result = materialize_from(from_url, to, budget_bytes)
    else:
        store = open_store(store_dir)
        _refreshed(store).close()
        result = store.materialize(to, budget_bytes)
    human = (
        f"materialized {len(result.files)} files ({result.bytes} of {result.budget_bytes} bytes) "
        f"into {result.sandbox}: {len(result.copied)} copied, {result.unchanged} unchanged, "
        f"{len(result.removed)} removed"
    )
    if result.url:
        log(f"fetched {result.fetched_bytes} bytes from {result.url} in {result.fetches} fetches")
    emit(result.to_json(), human, as_json)


@handle_errors
def show_cmd(
    page: Annotated[
        str,
        typer.Argument(
            metavar="PAGE",
            callback=non_blank,
            help="A path under memory/ (.md optional, #tN for one turn), a page id, an alias "
            "or title, or a session id.",
        ),
    ],
    section: Annotated[
        str | None,
        typer.Option(
            "--section", help="Only the sections whose heading is this, or starts with it."
        ),
    ] = None,
    lines: Annotated[
        str | None, typer.Option("--lines", help='Only these lines: "12", "12-30" or "12-".')
    ] = None,
    max_tokens: Annotated[
        int | None,
        typer.Option("--max-tokens", min=1, help="Cut at a line to fit this many tokens."),
    ] = None,
    store_dir: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Print one page, note, session summary or transcript, whole or in part.

    A cut page lists only the sources its shown lines cite, and says what was left out.
    """
    got = open_store(store_dir).show(page, section, max_tokens, lines)
    emit(got.to_json(), got.text.rstrip("\n"), as_json)


def _check_outcome(outcome: str) -> None:
    from memoryfs.receipts.records import check_outcome

    check_outcome(outcome)


@handle_errors
def used_cmd(
    pages: Annotated[
        list[str], typer.Argument(metavar="PAGE...", help="Pages relative to memory/.")
    ],
    sandbox: Annotated[Path, typer.Option("--sandbox", help="The sandbox the agent read.")],
    outcome: Annotated[
        str,
        typer.Option(
            "--outcome",
            callback=usage_check(_check_outcome),
            help="A deterministic check: file:HEX, commit:HEX, test:pass or test:fail.",
        ),
    ] = "",
    store_dir: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Record that an agent relied on these sandbox pages (a 'used' receipt per page)."""
    from memoryfs.receipts.records import page_item

    receipts = open_store(store_dir).record_use(pages, outcome, sandbox=sandbox)
    # a receipt names its page by a hash only (receipts carry no content): the paths
    # given name them here
    named = {page_item(p.removeprefix("memory/")): p.removeprefix("memory/") for p in pages}
    used = [(named[r.item], r) for r in receipts]
    data = {
        "pages": [path for path, _ in used],
        "receipts": [r.to_json() for _, r in used],
    }
    human = "\n".join(f"used {path} ({r.depends_on_version})" for path, r in used)
    emit(data, human, as_json)


def register(app: typer.Typer) -> None:
    app.command("search")(search_cmd)
    app.command("recall")(recall_cmd)
    app.command("materialize")(materialize_cmd)
    app.command("used")(used_cmd)
    app.command("show")(show_cmd)
