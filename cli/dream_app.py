"""The ``dream`` command: the consolidation worker's front end."""

from __future__ import annotations

import typer

from memoryfs import __version__

__all__ = ["app", "main"]

app = typer.Typer(
    name="dream",
    help="Dream: consolidate a memoryfs store (summaries, facts, wiki) behind validation gates.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.command("version")
def version_cmd() -> None:
    """Print the dream version."""
    print(__version__)


def main() -> None:
    app()
