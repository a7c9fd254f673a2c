"""``dream demo``: build a store from the sample memory and show the result."""

from __future__ import annotations

import shlex
import shutil
import sys
from pathlib import Path
from typing import Annotated

import typer

from cli.output import JsonOpt, emit, handle_errors, log

__all__ = ["memoryfs_command", "register"]


def memoryfs_command() -> str:
    """How to run ``memoryfs`` from the user's shell: the bare name when it is on PATH,
    else the full path of the console script installed beside this ``dream`` (a venv
    that is not activated)."""
    beside = [Path(sys.argv[0]).absolute().with_name("memoryfs")]
    beside.append(Path(sys.executable).with_name("memoryfs"))
    installed = [p for p in beside if p.is_file()]
    found = shutil.which("memoryfs")
    if found and (not installed or any(Path(found).samefile(p) for p in installed)):
        return "memoryfs"
    return shlex.quote(str(installed[0])) if installed else "memoryfs"


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
            f"dream:     {r.run.message.removeprefix('dream: ')}",
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
            f"Explore: cd {shlex.quote(str(r.store))} && git log --stat && "
            f"{memoryfs_command()} search 'release checklist'",
        ]
    )
    emit(data, human, as_json)
    if r.findings:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("demo")(demo_cmd)
