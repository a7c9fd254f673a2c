"""The ``memoryfs`` command: one sub-command per library entry point."""

from __future__ import annotations

import typer

from cli import forget_cmds, mcp_cmds, read_cmds, remote_cmds, store_cmds
from cli.examples import add_examples
from cli.output import HELP_SETTINGS, CliGroup, JsonOpt, VersionOpt, print_version

__all__ = ["app", "main"]

app = typer.Typer(
    name="memoryfs",
    help="Long-term memory for AI agents as Markdown files in Git.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    cls=CliGroup,
    context_settings=HELP_SETTINGS,
)


@app.callback()
def _root(version: VersionOpt = False) -> None:
    """Long-term memory for AI agents as Markdown files in Git."""


@app.command("version")
def version_cmd(as_json: JsonOpt = False) -> None:
    """Print the memoryfs version and the commit it was built from, when known."""
    print_version(as_json)


for _module in (store_cmds, remote_cmds, forget_cmds, read_cmds, mcp_cmds):
    _module.register(app)
add_examples(app, "memoryfs")


def main() -> None:
    app()
