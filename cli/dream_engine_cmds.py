"""Engine options of ``dream run`` / ``dream watch``, ``dream run --stores``, ``dream watch``.

Thin: turns the command-line options into an engine (``make_engine``), and prints what
``dream.multistore`` and ``dream.watch`` report.
"""

from __future__ import annotations

import json
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from cli.output import (
    JsonOpt,
    StoreOpt,
    emit,
    fail,
    handle_errors,
    log,
    open_store,
    usage_check,
)

if TYPE_CHECKING:
    from dream.engines.base import Engine
    from dream.multistore import StoreRun
    from dream.runner import RunOptions, RunResult

__all__ = [
    "EngineOpt",
    "DeadlineCheck",
    "BaseUrlOpt",
    "ModelOpt",
    "AgentCmdOpt",
    "AgentTimeoutOpt",
    "MaxTokensOpt",
    "PriceOpt",
    "make_engine",
    "run_many",
    "stores_or_fail",
    "watch_cmd",
]


def _check_engine(name: str) -> None:
    """The engine name's shape (a known name or ``package.module:Class``), before any work."""
    from dream.engines import ENGINES

    if not ENGINES.get(name, name).partition(":")[2]:
        raise typer.BadParameter(
            f"unknown engine {name!r} (use {', '.join(ENGINES)} or package.module:Class)"
        )


def _check_deadline(text: str) -> None:
    from dream.phases.orient import parse_duration

    parse_duration(text)


EngineOpt = Annotated[
    str,
    typer.Option(
        "--engine",
        callback=usage_check(_check_engine),
        help="embedded, llm, command, or package.module:Class.",
    ),
]
DeadlineCheck = usage_check(_check_deadline)  # the --deadline callback of run and watch
BaseUrlOpt = Annotated[
    str | None,
    typer.Option("--base-url", help="llm: OpenAI-compatible endpoint ($MEMORYFS_LLM_BASE_URL)."),
]
ModelOpt = Annotated[
    str | None, typer.Option("--model", help="llm: model name ($MEMORYFS_LLM_MODEL).")
]
AgentCmdOpt = Annotated[
    str | None,
    typer.Option("--agent-cmd", help="command: the agent to run in the staged tree."),
]
AgentTimeoutOpt = Annotated[
    float | None,
    typer.Option("--agent-timeout", min=1, help="command: seconds before the agent is killed."),
]
MaxTokensOpt = Annotated[
    int | None,
    typer.Option("--max-tokens", min=0, help="llm: stop the run after N tokens (0: no limit)."),
]
PriceOpt = Annotated[
    float | None,
    typer.Option(
        "--price-per-1k",
        min=0,
        help="llm: price of 1000 tokens, for the cost count ($MEMORYFS_LLM_PRICE_PER_1K).",
    ),
]


def make_engine(
    engine: str,
    base_url: str | None = None,
    model: str | None = None,
    agent_cmd: str | None = None,
    agent_timeout: float | None = None,
    max_tokens: int | None = None,
    price_per_1k: float | None = None,
) -> Engine:
    """The engine the options name, configured by them (and the environment)."""
    from dream.engines import load_engine

    llm_opts = {
        "--base-url": base_url,
        "--model": model,
        "--max-tokens": max_tokens,
        "--price-per-1k": price_per_1k,
    }
    agent_opts = {"--agent-cmd": agent_cmd, "--agent-timeout": agent_timeout}
    if engine != "llm":
        _only_for("llm", llm_opts)
    if engine != "command":
        _only_for("command", agent_opts)
    if engine == "llm":
        from dream.engines.llm.client import LLMSettings
        from dream.engines.llm.engine import LLMEngine

        settings = LLMSettings.from_env(
            base_url=base_url, model=model, max_tokens=max_tokens, price_per_1k=price_per_1k
        )
        settings.require_model()
        return LLMEngine(settings)
    if engine == "command":
        from dream.engines.command import CommandEngine, CommandSettings

        command = CommandSettings.from_env(cmd=agent_cmd, timeout=agent_timeout)
        command.argv()  # a missing or unparsable command fails before the run starts
        return CommandEngine(command)
    return load_engine(engine)


def _only_for(engine: str, options: dict[str, Any]) -> None:
    from dream.errors import DreamError

    given = [name for name, value in options.items() if value is not None]
    if given:
        raise DreamError(f"{', '.join(given)} only apply to --engine {engine}")


def run_many(
    stores: list[str], jobs: int, engine: Engine, options: RunOptions, as_json: bool
) -> None:
    """``dream run --stores``: one line per store as it finishes; exit 1 if any failed."""
    from dream.multistore import run_stores

    def line(run: StoreRun) -> None:
        if not as_json:
            sys.stdout.write(run.line() + "\n")
            sys.stdout.flush()

    runs = run_stores(stores, engine, options, jobs=jobs, on_done=line)
    failed = sum(run.failed for run in runs)
    if as_json:
        emit({"stores": [r.to_json() for r in runs], "failed": failed}, "", True)
    else:
        log(f"dream: {len(runs)} stores, {failed} failed")
    if failed:
        raise typer.Exit(1)


@handle_errors
def watch_cmd(
    store_dir: StoreOpt = None,
    quiet_period: Annotated[
        str,
        typer.Option("--quiet-period", help="Run after this long without new sessions (60s, 2m)."),
    ] = "60s",
    engine: EngineOpt = "embedded",
    base_url: BaseUrlOpt = None,
    model: ModelOpt = None,
    agent_cmd: AgentCmdOpt = None,
    agent_timeout: AgentTimeoutOpt = None,
    max_tokens: MaxTokensOpt = None,
    price_per_1k: PriceOpt = None,
    max_sessions: Annotated[
        int | None,
        typer.Option("--max-sessions", min=0, help="Stop each run after N sessions (0: no limit)."),
    ] = None,
    deadline: Annotated[
        str | None,
        typer.Option(
            "--deadline", callback=DeadlineCheck, help="Stop each run cleanly after this long."
        ),
    ] = None,
    allow_unapproved: Annotated[
        bool,
        typer.Option(
            "--allow-unapproved",
            help="Let an engine that follows the dream skill (llm, command) run it unapproved.",
        ),
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Watch the transcripts; run Dream once new sessions have been quiet for a while."""
    from dream.remote import run_store
    from dream.runner import RunOptions
    from dream.watch import Watcher, parse_quiet_period

    store = open_store(store_dir)
    quiet = parse_quiet_period(quiet_period)
    chosen = make_engine(
        engine, base_url, model, agent_cmd, agent_timeout, max_tokens, price_per_1k
    )
    options = RunOptions(
        max_sessions=max_sessions, deadline=deadline, allow_unapproved=allow_unapproved
    )

    def report(result: RunResult) -> None:
        for line in result.hand_edits:  # one line a page a person edited
            log(f"hand edit: {line}")
        if as_json:
            sys.stdout.write(json.dumps(result.to_json(), default=str) + "\n")
        else:
            found = [f"left out: {x}" for x in result.left_out] or list(result.problems)
            sys.stdout.write("\n".join([*found, result.message]) + "\n")
        sys.stdout.flush()

    def error(message: str) -> None:
        print(f"error: {message}", file=sys.stderr, flush=True)

    def ready() -> None:
        log(f"dream watch: watching {store.root} (quiet period {quiet:g}s); SIGTERM stops it")

    watcher = Watcher(
        store,
        lambda: run_store(store, chosen, options),
        quiet,
        on_result=report,
        on_error=error,
        on_ready=ready,
    )
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}
    for sig in previous:
        signal.signal(sig, lambda signum, frame: watcher.stop())
    try:
        runs = watcher.serve()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    log(f"dream watch: stopped after {runs} runs")


def stores_or_fail(stores: list[Path] | None, extra: list[str] | None) -> list[str]:
    """``--stores A B C`` (click sees ``--stores A`` and B, C as arguments) as one list."""
    if extra and not stores:
        raise fail(f"unexpected argument {extra[0]!r} (did you mean --stores?)", 2)
    return [str(p) for p in (stores or [])] + list(extra or [])
