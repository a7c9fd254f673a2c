"""Store commands: init, ingest, validate, index, path."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from cli.output import (
    JsonOpt,
    ProgressBar,
    QuietOpt,
    StoreOpt,
    emit,
    fail,
    handle_errors,
    log,
    open_store,
)
from memoryfs.ingest.formats import FORMATS

__all__ = ["register"]

_PROGRESS_MIN = 20  # inputs before an ingest is long enough to show progress


def _known_format(fmt: str | None) -> str | None:
    """The ``--format`` callback: one of the importers' names."""
    if fmt is not None and fmt not in FORMATS:
        raise typer.BadParameter(f"unknown format {fmt!r} (use one of: {', '.join(FORMATS)})")
    return fmt


@handle_errors
def init_cmd(
    directory: Annotated[Path, typer.Argument(help="Folder for the new store (new or empty).")],
    user: Annotated[str, typer.Option("--user", help="User scope id.")],
    assistant: Annotated[str, typer.Option("--assistant", help="Assistant scope id.")],
    user_name: Annotated[
        str,
        typer.Option(
            "--user-name",
            help='The user\'s name in claims, e.g. "Alex Moreau" (default: from the id).',
        ),
    ] = "",
    assistant_name: Annotated[
        str,
        typer.Option(
            "--assistant-name", help="The assistant's name in claims (default: from the id)."
        ),
    ] = "",
    as_json: JsonOpt = False,
) -> None:
    """Create a store: a Git repo with memory.toml, the memory/ skeleton and a first commit."""
    from memoryfs.store.store import init_store

    store = init_store(directory, user, assistant, user_name, assistant_name)
    roster = store.config.roster
    emit(
        {
            "store": str(store.root),
            "user": user,
            "assistant": assistant,
            "userName": roster.user_name,
            "assistantName": roster.assistant_name,
            "commit": store.head(),
        },
        f"created store {store.root} ({roster.user_name} as {user} / "
        f"{roster.assistant_name} as {assistant})",
        as_json,
    )


@handle_errors
def ingest_cmd(
    files: Annotated[
        list[Path],
        typer.Argument(
            help="Chat logs or transcripts; '-' reads one input from stdin.",
            allow_dash=True,
        ),
    ],
    fmt: Annotated[
        str | None,
        typer.Option(
            "--format",
            callback=_known_format,
            help=f"Input format: {', '.join(FORMATS)} (default: by name, else by content).",
        ),
    ] = None,
    session_id: Annotated[
        str | None,
        typer.Option(
            "--session-id",
            help="Name the one session the input holds (default: from the input).",
        ),
    ] = None,
    store_dir: StoreOpt = None,
    quiet: QuietOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Write sessions into memory/sessions/transcripts/ (append-only) and commit."""
    from memoryfs.ingest import Source
    from memoryfs.ingest.source import MAX_INPUT_BYTES

    store = open_store(store_dir)
    if sum(1 for f in files if str(f) == "-") > 1:
        raise fail("stdin ('-') can be read once", 2)
    inputs = [
        Source.from_stdin(sys.stdin.buffer.read(MAX_INPUT_BYTES + 1)) if str(f) == "-" else f
        for f in files
    ]
    with ProgressBar(quiet or len(inputs) < _PROGRESS_MIN) as bar:
        result = store.ingest(inputs, fmt, session_id, progress=bar)
    human = (
        f"ingest: {result.changed} sessions, {result.turns_added} turns ({result.commit[:10]})"
        if result.commit
        else "ingest: nothing new"
    )
    emit(result.to_json(), human, as_json)


@handle_errors
def validate_cmd(store_dir: StoreOpt = None, as_json: JsonOpt = False) -> None:
    """Check every deterministic rule; exit 0 when clean, 1 on findings, 2 on usage errors."""
    from memoryfs.validate.rules import validate_store

    store = open_store(store_dir)
    findings = validate_store(store)
    emit(
        {"ok": not findings, "findings": [f.__dict__ for f in findings]},
        "\n".join(f.format() for f in findings) if findings else "",
        as_json,
    )
    if findings:
        log(f"{len(findings)} findings")
        raise typer.Exit(1)
    log("ok: no findings")


@handle_errors
def index_cmd(
    prompt: Annotated[
        bool, typer.Option("--prompt", help="Print the compact index for an agent's first message.")
    ] = False,
    max_tokens: Annotated[
        int | None, typer.Option("--max-tokens", min=1, help="Token budget for --prompt.")
    ] = None,
    store_dir: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Regenerate memory/INDEX.md and memory/sessions/index.md, or print the prefill (--prompt)."""
    from memoryfs.index.index_md import write_indexes
    from memoryfs.remote import remote_writes

    store = open_store(store_dir)
    if prompt:
        budget = max_tokens or store.config.budgets.index_tokens
        text = store.prompt_index(budget)
        emit({"maxTokens": budget, "text": text}, text, as_json)
        return
    if max_tokens is not None:
        raise fail("--max-tokens only applies with --prompt", 2)
    with remote_writes(store), store.lock("write"):
        changed = write_indexes(store)
        commit = (
            store.commit("index: regenerate", [f"memory/{p}" for p in changed]) if changed else ""
        )
    emit({"changed": changed, "commit": commit}, f"index: {len(changed)} files changed", as_json)


@handle_errors
def path_cmd(store_dir: StoreOpt = None, as_json: JsonOpt = False) -> None:
    """Print the store folder in use."""
    store = open_store(store_dir)
    emit({"store": str(store.root)}, str(store.root), as_json)


def register(app: typer.Typer) -> None:
    app.command("init")(init_cmd)
    app.command("ingest")(ingest_cmd)
    app.command("validate")(validate_cmd)
    app.command("index")(index_cmd)
    app.command("path")(path_cmd)
