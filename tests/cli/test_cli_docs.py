"""Every command of both CLIs: has help, takes --json, and is documented in the README."""

from __future__ import annotations

import re
import shlex
from typing import Any

import pytest
import typer.main
from paths import ROOT
from typer.testing import CliRunner

from cli.dream_app import app as dream_app
from cli.examples import EXAMPLES
from cli.memoryfs_app import app as memoryfs_app
from cli.output import click_errors

README = (ROOT / "README.md").read_text(encoding="utf-8")


def _walk(cmd: Any, prefix: list[str]) -> list[tuple[list[str], Any]]:
    if hasattr(cmd, "commands"):
        out = []
        for name, sub in sorted(cmd.commands.items()):
            out += _walk(sub, [*prefix, name])
        return out
    return [(prefix, cmd)]


COMMANDS = [
    (app, path, cmd)
    for app, name in ((memoryfs_app, "memoryfs"), (dream_app, "dream"))
    for path, cmd in _walk(typer.main.get_command(app), [name])
]
IDS = [" ".join(path) for _, path, _ in COMMANDS]
# Commands that print no results: a server speaks its protocol (stdout is MCP's on stdio); a
# fleet worker and beat run until stopped and log on stderr.
SERVERS = {"memoryfs mcp", "dream fleet worker", "dream fleet beat"}


@pytest.mark.parametrize(("app", "path", "cmd"), COMMANDS, ids=IDS)
def test_every_command_has_help_json_and_docs(app: typer.Typer, path: list[str], cmd: Any) -> None:
    assert (cmd.help or "").strip(), f"{' '.join(path)} has no help text"
    r = CliRunner().invoke(app, [*path[1:], "--help"])
    assert r.exit_code == 0 and "Usage" in r.output
    opts = {o for p in cmd.params for o in getattr(p, "opts", [])}
    if " ".join(path) not in SERVERS:
        assert "--json" in opts, f"{' '.join(path)} prints results but has no --json"
    assert " ".join(path) in README, f"README does not mention `{' '.join(path)}`"


def test_version_json() -> None:
    r = CliRunner().invoke(memoryfs_app, ["version", "--json"])
    assert r.exit_code == 0 and r.stdout.startswith("{") and '"version"' in r.stdout


def _argv(example: str) -> list[str]:
    """An example's words as the shell would pass them: no leading VAR=..., no redirect."""
    words = shlex.split(example)
    while words and "=" in words[0] and not words[0].startswith("-"):
        words.pop(0)
    return words[: words.index("<")] if "<" in words else words


@pytest.mark.parametrize(("app", "path", "cmd"), COMMANDS, ids=IDS)
def test_every_command_shows_examples_that_parse(
    app: typer.Typer, path: list[str], cmd: Any
) -> None:
    name = " ".join(path)
    examples = EXAMPLES.get(name)
    assert examples, f"{name} has no examples in cli/examples.py"
    r = CliRunner().invoke(app, [*path[1:], "--help"], env={"COLUMNS": "200"})
    assert "Examples:" in r.output
    for example in examples:
        assert example in r.output, f"{name} --help does not show {example!r}"
        argv = _argv(example)
        assert argv[: len(path)] == path, f"{example!r} is not an example of {name}"
        # parsing runs every type and callback check a user's command line meets
        with cmd.make_context(name, argv[len(path) :]) as ctx:
            assert ctx.params is not None


def test_an_example_that_does_not_parse_is_caught() -> None:
    show = dict((" ".join(p), c) for _, p, c in COMMANDS)["memoryfs show"]
    with pytest.raises(click_errors.UsageError, match="greater than or equal to 1"):
        show.make_context("memoryfs show", _argv("memoryfs show dana --max-tokens 0"))


def _groups(cmd: Any, prefix: list[str]) -> list[tuple[list[str], Any]]:
    out = [(prefix, cmd)]
    for name, sub in sorted(getattr(cmd, "commands", {}).items()):
        out += _groups(sub, [*prefix, name])
    return out


ALL_HELP = [
    (app, path, cmd)
    for app, name in ((memoryfs_app, "memoryfs"), (dream_app, "dream"))
    for path, cmd in _groups(typer.main.get_command(app), [name])
]


@pytest.mark.parametrize(
    ("app", "path", "cmd"), ALL_HELP, ids=[" ".join(p) for _, p, _ in ALL_HELP]
)
def test_help_shows_every_bracketed_word(app: typer.Typer, path: list[str], cmd: Any) -> None:
    """Rich reads "[word]" as markup and drops it ("the [fleet] extra" showed "the  extra")."""
    texts = [cmd.help or ""] + [getattr(p, "help", "") or "" for p in cmd.params]
    wanted = {m for text in texts for m in re.findall(r"\[[a-z][a-z_-]*\]", text)}
    r = CliRunner().invoke(app, [*path[1:], "--help"], env={"COLUMNS": "200"})
    shown = " ".join(r.output.split())
    for word in wanted:
        assert word in shown, f"{' '.join(path)} --help drops {word}"
