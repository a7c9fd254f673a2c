"""Run hostile input through the real code in a forked child, with a deadline and a memory
cap: a parser that hangs or balloons fails the test instead of taking the machine.

``call_bounded(fn, *args)`` returns what ``fn`` returned or raised (as ``Outcome``);
``cli_bounded(args)`` runs a ``memoryfs`` (or ``dream``) command and returns its exit
code, stdout and stderr. Both fail the test when the child is still running after
``timeout`` seconds (it is killed) or dies of a signal. The deadline guards against a
hang or a blow-up (minutes on the old code), not a speed measure: it is generous for a
loaded 2-core machine.
"""

from __future__ import annotations

import os
import pickle
import resource
import signal
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cli.memoryfs_app import app as memoryfs_app

__all__ = ["DEADLINE_S", "Outcome", "call_bounded", "cli_bounded"]

DEADLINE_S = 30.0
# address space the child may add to what it inherits (a test process that loaded PyTorch maps
# gigabytes it never touches): a bomb fails with MemoryError, not swap
MEMORY_CAP = 2 << 30


@dataclass(frozen=True)
class Outcome:
    value: Any = None
    error: str = ""  # the exception's type name, "" when fn returned
    message: str = ""


def _mapped() -> int:
    """The bytes of address space this process has mapped (its VmSize)."""
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


def _fork(body: Callable[[], None], timeout: float) -> None:
    """Run ``body`` in a child process group; wait up to ``timeout`` s for it to exit."""
    pid = os.fork()
    if pid == 0:  # child: never return into pytest
        try:
            os.setsid()
            cap = _mapped() + MEMORY_CAP
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
            body()
        finally:
            os._exit(0)
    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            code = os.waitstatus_to_exitcode(status)
            assert code >= 0, f"the child died of signal {-code}"
            return
        if time.monotonic() > deadline:
            os.killpg(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            raise AssertionError(f"still running after {timeout:.0f} s: not bounded")
        time.sleep(0.02)


def call_bounded(fn: Callable[..., Any], *args: Any, timeout: float = DEADLINE_S) -> Outcome:
    """``fn(*args)`` in a child: its return value (picklable) or the exception it raised."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "outcome"

        def body() -> None:
            try:
                outcome = Outcome(value=fn(*args))
            except BaseException as exc:  # noqa: BLE001 - reported to the parent
                outcome = Outcome(error=type(exc).__name__, message=str(exc)[:2000])
            out.write_bytes(pickle.dumps(outcome))

        _fork(body, timeout)
        assert out.exists(), "the child wrote no outcome"
        result: Outcome = pickle.loads(out.read_bytes())
        return result


def cli_bounded(
    args: list[str],
    app: Callable[..., Any] = memoryfs_app,
    prog_name: str = "memoryfs",
    timeout: float = DEADLINE_S,
) -> tuple[int, str, str]:
    """``memoryfs *args`` (or ``app``) in a child: (exit code, stdout, stderr)."""
    with tempfile.TemporaryDirectory() as tmp:
        paths = [Path(tmp) / name for name in ("stdout", "stderr", "code")]

        def body() -> None:
            fds = [os.open(p, os.O_WRONLY | os.O_CREAT | os.O_TRUNC) for p in paths[:2]]
            os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
            os.dup2(fds[0], 1)
            os.dup2(fds[1], 2)
            sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115
            sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115
            code = 1
            try:
                app(args, prog_name=prog_name)
                code = 0
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 1
            except BaseException:  # a crash, shown to the test (the CLI would print it too)
                traceback.print_exc()
                code = 99
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                paths[2].write_text(str(code))

        _fork(body, timeout)
        out, err, code = (p.read_text(encoding="utf-8", errors="replace") for p in paths)
        assert code, "the child wrote no exit code"
        return int(code), out, err
