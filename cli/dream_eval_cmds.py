"""``dream eval locomo``: the quality evaluation's front end (parsing and output only)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Annotated

import typer

from cli.output import JsonOpt, ProgressBar, QuietOpt, emit, fail, handle_errors, log

__all__ = ["register"]

# dream.evaluation.harness.ARMS, written out so that building the command tree
# ('dream --help') does not import the evaluation; tests/cli/test_cli_startup.py holds
# the two equal.
ARMS = ("wiki", "no-wiki", "bm25-turns", "wiki-hybrid")


@handle_errors
def locomo_cmd(
    files: Annotated[list[Path], typer.Argument(help="LoCoMo conversation files (.json).")],
    budget: Annotated[
        str,
        typer.Option(
            "--budget", help="Token budgets, comma-separated (memoryfs.store.tokens counts)."
        ),
    ] = "1000,2000",
    out: Annotated[
        Path | None,
        typer.Option(
            "--out", help="Folder for results.json, report.md and charts (default: print only)."
        ),
    ] = None,
    arms: Annotated[
        str,
        typer.Option(
            "--arms",
            help=f"Arms, comma-separated: {','.join(ARMS)} (wiki-hybrid needs --embed-model).",
        ),
    ] = ",".join(ARMS[:3]),
    limit: Annotated[
        int | None,
        typer.Option(
            "--limit", min=1, help="Score only the first N questions of each conversation."
        ),
    ] = None,
    keep_stores: Annotated[
        bool,
        typer.Option("--keep-stores", help="Keep each conversation's store under OUT/stores/."),
    ] = False,
    keep_text: Annotated[
        bool, typer.Option("--keep-text", help="Keep every output's text in results.json.")
    ] = False,
    engine: Annotated[str, typer.Option("--engine", help="Dream engine for the run.")] = "embedded",
    embed_model: Annotated[
        str | None,
        typer.Option(
            "--embed-model",
            help="Embedder of hybrid recall: a sentence-transformers model folder, or with "
            "--embed-endpoint the endpoint's model name.",
        ),
    ] = None,
    embed_endpoint: Annotated[
        str | None,
        typer.Option("--embed-endpoint", help="An OpenAI-compatible /v1 URL for embeddings."),
    ] = None,
    quiet: QuietOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Import each conversation into a fresh store, run Dream, and score recall per arm and budget.

    Scores per category (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop; 5 is
    skipped) and overall: session recall@5/@10 and MRR, evidence recall (direct and
    cited), answer token recall and exact containment, latency and tokens used.
    """
    from dream.evaluation.harness import evaluate_locomo, parse_arms, parse_budgets
    from dream.evaluation.report import render_markdown, summarize, write_outputs

    missing = [str(f) for f in files if not f.is_file()]
    if missing:
        raise fail(f"no such file: {', '.join(missing)}")
    if keep_stores and out is None:
        raise fail("--keep-stores needs --out DIR")
    if embed_endpoint and not embed_model:
        raise fail("--embed-endpoint needs --embed-model (the endpoint's model name)")
    embed = None
    if embed_model:
        from memoryfs.store.config import EmbedSettings

        backend = "endpoint" if embed_endpoint else "local"
        embed = EmbedSettings(backend=backend, model=embed_model, endpoint=embed_endpoint or "")
    with ProgressBar(quiet) as bar:
        run = evaluate_locomo(
            files,
            budgets=parse_budgets(budget),
            arms=parse_arms(arms),
            stores_dir=(out / "stores") if (out and keep_stores) else None,
            limit=limit,
            keep_text=keep_text,
            engine=engine,
            progress=bar,
            embed=embed,
        )
    rows = summarize(run)
    written = write_outputs(run, out) if out else {}
    for label, path in written.items():
        if path and not quiet:
            log(f"wrote {label}: {path}")
    data = {
        "budgets": list(run.budgets),
        "arms": list(run.arms),
        "tokenizer": run.tokenizer,
        "conversations": [dataclasses.asdict(c) for c in run.conversations],
        "summary": rows,
        "files": written,
    }
    emit(data, render_markdown(run, rows), as_json)


def register(app: typer.Typer) -> None:
    eval_app = typer.Typer(
        help="Measure memory quality on public benchmarks.", no_args_is_help=True
    )
    eval_app.command("locomo")(locomo_cmd)
    app.add_typer(eval_app, name="eval")
