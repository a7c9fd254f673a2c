"""Start-up of both CLIs: a command imports what it runs and nothing more.

Each case runs the installed console entry (``memoryfs`` / ``dream`` beside this
Python) in a fresh process with Python's import profiler on, and reads from its
report every module the process imported. ``bench/bench_startup.py`` measures what
this saves; ``docs/performance.md`` has the figures.
"""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
from pathlib import Path

import paths
import pytest

from cli.dream_eval_cmds import ARMS as CLI_ARMS
from cli.dream_health_cmds import DEFAULT_DUE_DAYS
from memoryfs.ingest import ingest
from memoryfs.store.store import Store

SAMPLE = paths.SAMPLE


def _imported(*argv: str) -> set[str]:
    """Every module the console entry ``argv[0]`` imported while running ``argv``."""
    exe = Path(sys.executable).with_name(argv[0])
    assert exe.exists(), f"the {argv[0]} console entry is not installed beside {sys.executable}"
    env = dict(os.environ, PYTHONPROFILEIMPORTTIME="1")
    done = subprocess.run(
        [str(exe), *argv[1:]], capture_output=True, text=True, env=env, timeout=60
    )
    assert done.returncode == 0, done.stderr[-2000:]
    names = {
        line.rsplit("|", 1)[1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and "imported package" not in line
    }
    assert "typer" in names and f"cli.{argv[0]}_app" in names  # the report was read
    return names


def _under(names: set[str], *packages: str) -> list[str]:
    return sorted(n for n in names if any(n == p or n.startswith(p + ".") for p in packages))


def test_memoryfs_help_imports_no_dream_and_no_library_work() -> None:
    names = _imported("memoryfs", "--help")
    assert _under(names, "dream") == []
    # the MCP SDK (an extra) loads when `memoryfs mcp` runs, not with the command tree
    assert _under(names, "mcp", "cli.mcp_server", "pydantic", "starlette", "uvicorn") == []
    # the help needs the command tree only: no reader, writer, Git or parser
    assert _under(names, "git", "memoryfs.read", "memoryfs.index", "memoryfs.forget") == []
    assert _under(names, "memoryfs.ingest.commit", "memoryfs.ingest.formats.chatgpt") == []


def test_memoryfs_search_imports_the_search_only(tmp_store: Store) -> None:
    ingest(tmp_store, [SAMPLE / "2026-01-05-reefsong-figures.md"])
    names = _imported("memoryfs", "search", "figures", "--store", str(tmp_store.root))
    assert "memoryfs.read.search" in names
    assert _under(names, "dream") == []
    # a read opens the store without GitPython and loads no other command's modules
    assert _under(names, "git", "memoryfs.read.recall", "memoryfs.read.materialize") == []
    assert _under(names, "memoryfs.forget", "memoryfs.ingest.commit", "memoryfs.validate") == []
    assert _under(names, "mcp", "cli.mcp_server") == []


def test_dream_help_imports_no_engine_gate_or_evaluation() -> None:
    names = _imported("dream", "--help")
    assert _under(names, "dream.engines", "dream.gates", "dream.evaluation") == []
    assert _under(names, "dream.runner", "dream.phases", "dream.health", "git") == []


@pytest.mark.parametrize("argv", [["dream", "eval", "--help"], ["dream", "health", "--help"]])
def test_a_dream_command_help_imports_no_engine(argv: list[str]) -> None:
    assert _under(_imported(*argv), "dream.engines", "dream.gates", "dream.evaluation") == []


def test_the_help_texts_name_the_library_defaults() -> None:
    """The CLI writes out library constants so that its help imports nothing."""
    from cli.read_cmds import SEARCH_MODES as CLI_MODES
    from dream.evaluation.harness import ARMS
    from dream.health.verdicts import DEFAULT_DUE
    from memoryfs.read.dense import SEARCH_MODES

    assert CLI_ARMS == ARMS
    assert CLI_MODES == SEARCH_MODES
    assert dt.timedelta(days=DEFAULT_DUE_DAYS) == DEFAULT_DUE
