"""``dream demo``: build a store from the sample memory and show the result."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from cli.output import JsonOpt, emit, handle_errors, log

__all__ = ["register"]


@handle_errors
def demo_cmd(
    to: Annotated[
        Path | None,
        typer.Option("--to", help="New or empty folder for the store (default: a temp folder)."),
    ] = None,
    sample: Annotated[
        Path | None,
        typer.Option(
            "--sample", help="Folder with transcripts/*.md (default: the packaged sample memory)."
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Build a store from the sample memory, run Dream, validate, show the index and a recall."""
    from dream.demo import default_sample, run_demo

    r = run_demo(sample or default_sample(), to, progress=log)
    data = {
        "store": str(r.store),
        "sessions": r.sessions,
        "turns": r.turns,
        "run": r.run.to_json(),
        "findings": r.findings,
        "knowledgePages": r.knowledge_pages,
        "notes": r.notes,
        "summaries": r.summaries,
        "question": r.question,
        "recall": r.recall.text,
    }
    human = "\n".join(
        [
            f"store:     {r.store}",
            f"ingested:  {r.sessions} sessions, {r.turns} turns",
            f"dream:     {r.run.message}",
            f"memory:    {r.summaries} session summaries, {r.knowledge_pages} knowledge pages, "
            f"{r.notes} notes",
            f"validate:  {'clean' if r.findings == 0 else f'{r.findings} findings'}",
            "",
            "--- INDEX.md prefill (400 tokens) ---",
            r.prefill.rstrip(),
            "",
            f"--- memoryfs recall {r.question!r} (300 tokens) ---",
            r.recall.text.rstrip(),
            "",
            f"Explore: cd {r.store} && git log --stat && memoryfs search 'release checklist'",
        ]
    )
    emit(data, human, as_json)
    if r.findings:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("demo")(demo_cmd)
