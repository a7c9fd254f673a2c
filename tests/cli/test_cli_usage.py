"""Usage errors of both CLIs: one line on stderr and exit 2, from the installed console entries.

Each case runs ``memoryfs`` / ``dream`` beside this Python in a fresh process inside a real
store, so what is checked is what a user sees: the exit code, a single ``error:`` line (no
usage block, no box, no traceback) and nothing on stdout.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from memoryfs.store.store import Store


def _run(store: Store, *argv: str) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).with_name(argv[0])
    env = {k: v for k, v in os.environ.items() if k != "MEMORYFS_STORE"}
    return subprocess.run(
        [str(exe), *argv[1:]],
        capture_output=True,
        text=True,
        cwd=store.root,
        env=env,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )


USAGE_ERRORS = [
    (("dream", "run", "--deadline", "soon"), "bad duration 'soon'"),
    (("dream", "run", "--engine", "foo"), "unknown engine 'foo'"),
    (("dream", "watch", "--deadline", "soon"), "bad duration 'soon'"),
    (("dream", "run", "--max-sessions", "-1"), "--max-sessions"),
    (("memoryfs", "search", "--layer", "wiki", "tea"), "unknown layer(s) wiki"),
    (("memoryfs", "recall", "--exclude-layer", "wiki", "tea"), "unknown layer(s) wiki"),
    (("memoryfs", "ingest", "--format", "xml", "x.md"), "unknown format 'xml'"),
    (("memoryfs", "search", "-Tiago"), "No such option: -T"),
    (("memoryfs", "search", ""), "must not be empty"),
    (("memoryfs", "recall", ""), "must not be empty"),
    (("memoryfs", "recall", "   "), "must not be empty"),
    (("memoryfs", "search"), "Missing argument"),
    (("memoryfs", "no-such-command"), "No such command"),
    (("dream", "skills", "frobnicate"), "No such command"),
]


@pytest.mark.parametrize(("argv", "says"), USAGE_ERRORS, ids=[" ".join(a) for a, _ in USAGE_ERRORS])
def test_a_usage_error_is_one_line_and_exit_2(tmp_store: Store, argv: tuple[str, ...], says: str):
    done = _run(tmp_store, *argv)
    assert done.returncode == 2, (done.returncode, done.stderr)
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("error: ") and says in lines[0], lines[0]
    assert f"see '{argv[0]}" in lines[0]  # where to read more
    assert done.stdout == ""


@pytest.mark.parametrize(
    "argv",
    [
        ("memoryfs",),
        ("memoryfs", "search"),
        ("memoryfs", "ingest"),
        ("dream",),
        ("dream", "run"),
        ("dream", "skills"),
        ("dream", "skills", "approve"),
        ("dream", "eval"),
    ],
    ids=lambda a: " ".join(a),
)
def test_dash_h_is_help(tmp_store: Store, argv: tuple[str, ...]) -> None:
    short = _run(tmp_store, *argv, "-h")
    assert short.returncode == 0, short.stderr
    assert "Usage:" in short.stdout
    assert short.stdout == _run(tmp_store, *argv, "--help").stdout
