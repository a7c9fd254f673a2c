"""The ``dream`` command: the consolidation worker's front end.

Each command opens the store, calls one function of ``dream.runner`` and prints:
results (and the one-line summary) on stdout, progress on stderr, ``--json`` for
machines. A run that left parts out exits 0 and names them ("left out: ..."); a run
with nothing valid left to commit exits 1 with the gates' reasons; library errors are
one line on stderr and a non-zero exit (``cli.output.handle_errors``).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from cli import dream_demo_cmds, dream_eval_cmds, dream_health_cmds
from cli.dream_engine_cmds import (
    AgentCmdOpt,
    AgentTimeoutOpt,
    BaseUrlOpt,
    DeadlineCheck,
    EngineOpt,
    MaxTokensOpt,
    ModelOpt,
    PriceOpt,
    make_engine,
    run_many,
    stores_or_fail,
    watch_cmd,
)
from cli.examples import add_examples
from cli.fleet import commands as fleet_cmds
from cli.output import (
    HELP_SETTINGS,
    CliGroup,
    JsonOpt,
    ProgressBar,
    QuietOpt,
    StoreOpt,
    VersionOpt,
    emit,
    handle_errors,
    log,
    open_store,
    print_version,
)

if TYPE_CHECKING:
    from dream.runner import RunResult

__all__ = ["app", "main"]

app = typer.Typer(
    name="dream",
    help="Dream: consolidate a memoryfs store (summaries, facts, wiki) behind validation gates.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    cls=CliGroup,
    context_settings=HELP_SETTINGS,
)

RunArg = Annotated[str, typer.Argument(metavar="RUN", help="Run id (see 'dream status').")]


def _emit_result(result: RunResult, as_json: bool, data: dict[str, Any] | None = None) -> None:
    for line in result.hand_edits:  # one line a page a person edited, JSON or not
        log(f"hand edit: {line}")
    # a run that left parts out names them; the problems behind them say the same again
    found = [f"left out: {x}" for x in result.left_out] or list(result.problems)
    lines = [*found, *(f"rejected: {r}" for r in result.rejected)]
    lines.append(result.message)
    emit(data or result.to_json(), "\n".join(lines), as_json)
    if result.exit_code:
        raise typer.Exit(result.exit_code)


@app.command("run")
@handle_errors
def run_cmd(
    store_dir: StoreOpt = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Stage and check, then throw the result away.")
    ] = False,
    review: Annotated[
        bool,
        typer.Option("--review", help="Keep the checked commit on its branch for 'dream apply'."),
    ] = False,
    max_sessions: Annotated[
        int | None,
        typer.Option("--max-sessions", min=0, help="Stop after N sessions (0: no limit)."),
    ] = None,
    deadline: Annotated[
        str | None,
        typer.Option(
            "--deadline",
            callback=DeadlineCheck,
            help="Stop cleanly after this long, e.g. 20m, 1h30m.",
        ),
    ] = None,
    engine: EngineOpt = "embedded",
    base_url: BaseUrlOpt = None,
    model: ModelOpt = None,
    agent_cmd: AgentCmdOpt = None,
    agent_timeout: AgentTimeoutOpt = None,
    max_tokens: MaxTokensOpt = None,
    price_per_1k: PriceOpt = None,
    stores: Annotated[
        list[Path] | None,
        typer.Option("--stores", help="Run on each of these stores: --stores PATH... (with -j)."),
    ] = None,
    jobs: Annotated[int, typer.Option("-j", "--jobs", min=1, help="Stores run in parallel.")] = 1,
    more_stores: Annotated[
        list[str] | None, typer.Argument(metavar="PATH", help="More --stores paths.")
    ] = None,
    allow_unapproved: Annotated[
        bool,
        typer.Option(
            "--allow-unapproved",
            help="Let an engine that follows the dream skill (llm, command) run it unapproved.",
        ),
    ] = False,
    full_validation: Annotated[
        bool,
        typer.Option("--full-validation", help="Validate the whole staged tree, not just changes."),
    ] = False,
    quiet: QuietOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Consolidate pending sessions: stage, check with both gates, then commit to main."""
    from dream.remote import run_remote
    from dream.runner import RunOptions, run_dream
    from memoryfs.remote import remote_url

    chosen = make_engine(
        engine, base_url, model, agent_cmd, agent_timeout, max_tokens, price_per_1k
    )
    options = RunOptions(
        dry_run=dry_run,
        review=review,
        max_sessions=max_sessions,
        deadline=deadline,
        allow_unapproved=allow_unapproved,
        full_validation=full_validation,
    )
    paths = stores_or_fail(stores, more_stores)
    if paths:
        run_many(paths, jobs, chosen, options, as_json)
        return
    store = open_store(store_dir)
    if remote_url(store) is not None:
        with ProgressBar(quiet) as bar:
            remote = run_remote(store, chosen, options, progress=bar)
        if remote.pushed:
            log(
                f"pushed {remote.pushed[:10]} to {remote.url}"
                + (f" (run {remote.tries} times)" if remote.tries > 1 else "")
            )
        _emit_result(remote.result, as_json, remote.to_json())
        return
    with ProgressBar(quiet) as bar:
        result = run_dream(store, chosen, options, progress=bar)
    _emit_result(result, as_json)


@app.command("status")
@handle_errors
def status_cmd(store_dir: StoreOpt = None, as_json: JsonOpt = False) -> None:
    """Pending sessions, the last runs and the kept branches."""
    from dream.landing.kept_runs import dream_status

    report = dream_status(open_store(store_dir))
    lines = [
        f"store {report.store} ({report.target} at {report.head[:10]})",
        f"sessions: {report.sessions}, pending: {len(report.pending)}",
    ]
    lines += [f"  pending {sid}" for sid in report.pending[:10]]
    if len(report.pending) > 10:
        lines.append(f"  ... and {len(report.pending) - 10} more")
    lines.append(f"last runs: {len(report.runs)}")
    lines += [
        f"  {r.get('run_id', '?')}  {r.get('status', '?'):<15} {r.get('message', '')}"
        for r in report.runs
    ]
    lines.append(f"kept runs: {len(report.kept)}")
    lines += [f"  {k['runId']}  {k['status'] or '?':<15} {k['subject']}" for k in report.kept]
    emit(report.to_json(), "\n".join(lines), as_json)


@app.command("review")
@handle_errors
def review_cmd(run_id: RunArg, store_dir: StoreOpt = None, as_json: JsonOpt = False) -> None:
    """Show a kept run's diff, grouped by page (after a partial landing: what was left out)."""
    from dream.landing.kept_runs import left_out_of, review_run

    store = open_store(store_dir)
    pages = review_run(store, run_id)
    left = left_out_of(store, run_id)
    names = {"A": "added", "M": "modified", "D": "deleted"}
    parts: list[str] = [f"left out: {item}" for item in left]
    for page in pages:
        parts.append(f"== {page.path} ({names.get(page.status, page.status)}) ==")
        parts.append(page.diff.rstrip("\n"))
    parts.append(f"{len(pages)} files changed in run {run_id.removeprefix('dream/')}")
    data: dict[str, Any] = {
        "runId": run_id,
        "leftOut": list(left),
        "pages": [p.to_json() for p in pages],
    }
    emit(data, "\n".join(parts), as_json)


@app.command("apply")
@handle_errors
def apply_cmd(
    run_id: RunArg,
    store_dir: StoreOpt = None,
    full_validation: Annotated[
        bool,
        typer.Option("--full-validation", help="Validate the whole staged tree, not just changes."),
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Land a kept run on main, after the same gates as 'dream run'."""
    from dream.remote import apply_store

    _emit_result(apply_store(open_store(store_dir), run_id, full_validation), as_json)


@app.command("discard")
@handle_errors
def discard_cmd(run_id: RunArg, store_dir: StoreOpt = None, as_json: JsonOpt = False) -> None:
    """Delete a kept run's branch; main is not touched."""
    from dream.landing.kept_runs import discard_run

    _emit_result(discard_run(open_store(store_dir), run_id), as_json)


app.command("watch")(watch_cmd)


@app.callback()
def _root(version: VersionOpt = False) -> None:
    """Dream: consolidate a memoryfs store (summaries, facts, wiki) behind validation gates."""


@app.command("version")
def version_cmd(as_json: JsonOpt = False) -> None:
    """Print the version (dream ships with memoryfs) and the commit it was built from."""
    print_version(as_json)


# Commands that live in their own modules register themselves here.
for _module in (dream_demo_cmds, dream_eval_cmds, dream_health_cmds, fleet_cmds):
    _module.register(app)
add_examples(app, "dream")


def main() -> None:
    app()
