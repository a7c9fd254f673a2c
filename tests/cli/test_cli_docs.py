"""Every command of both CLIs: has help, takes --json, and is documented in the README."""

from __future__ import annotations

from typing import Any

import pytest
import typer.main
from paths import ROOT
from typer.testing import CliRunner

from cli.dream_app import app as dream_app
from cli.memoryfs_app import app as memoryfs_app

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
# Commands that print no results: a server speaks its protocol (stdout is MCP's on stdio).
SERVERS = {"memoryfs mcp"}


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
