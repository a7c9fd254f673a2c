"""Run a ``memoryfs`` command in a forked child, to kill it or race it.

Forking a process that has already imported the package saves about a second of
start-up per run. The child runs the real command-line app in its own session
(process group), so killing the group also kills the git processes it started,
as a crash of the whole service would.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cli.memoryfs_app import app as memoryfs_app

__all__ = ["fork_cli", "wait_exit", "wait_group_gone"]


def fork_cli(
    args: list[str],
    barrier: int | None = None,
    stderr: Path | None = None,
    app: Callable[..., Any] = memoryfs_app,
    prog_name: str = "memoryfs",
) -> int:
    """Start ``memoryfs *args`` (or ``app``: ``dream *args``) in a child; returns its pid
    (= its process group id).

    With ``barrier`` (a pipe's read end), the child waits for one byte first, so
    several children can be released at once.
    """
    pid = os.fork()
    if pid == 0:  # child: never return into pytest
        code = 1
        try:
            os.setsid()
            if barrier is not None:
                os.read(barrier, 1)
            devnull = os.open(os.devnull, os.O_RDWR)
            err = os.open(stderr, os.O_WRONLY | os.O_CREAT | os.O_TRUNC) if stderr else devnull
            os.dup2(devnull, 0)
            os.dup2(devnull, 1)
            os.dup2(err, 2)
            # pytest's capture replaced sys.stdout/sys.stderr with its own objects; the
            # child must write to its real fds 1 and 2 (the log), as the real CLI does.
            sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115
            sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115
            try:
                app(args, prog_name=prog_name)
                code = 0
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 1
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)
    return pid


def wait_exit(pid: int) -> int:
    """The child's exit code (negative: the signal that killed it)."""
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def wait_group_gone(pgid: int, timeout: float = 10.0) -> None:
    """Wait until no process of the group is left (a git child finishing on its own)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.005)
    os.killpg(pgid, signal.SIGKILL)
