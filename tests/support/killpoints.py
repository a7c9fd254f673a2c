"""Kill points: SIGKILL a forked command at a chosen moment, and what the kill tests share.

A kill point is an observable step of the run (an ``event`` a predicate watches
for from outside: a file, a ref, a lock appearing) plus a delay, or a random
moment (``timer``). ``kill_when`` kills the child (or its whole process group,
git children too) then, and waits until no process of the group is left alive,
so the checks that follow never race a git that is still finishing.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from forkrun import wait_exit, wait_group_gone

__all__ = ["KillPoint", "copy_store", "in_two_processes", "kill_when", "wait_group_dead"]


@dataclass(frozen=True)
class KillPoint:
    event: str  # an observable step, or "timer" (a random moment of the run)
    delay: float  # extra seconds after the event
    group: bool  # kill the whole process group (git children too)
    fresh: bool = False  # dream: start without the last run's parked worktree

    def label(self) -> str:
        who = "group" if self.group else "pid"
        return f"{self.event}+{self.delay * 1000:.1f}ms/{who}" + ("/fresh" if self.fresh else "")


def copy_store(src: Path, dest: Path) -> None:
    """A copy of a store whose parked worktree (if any) belongs to the copy."""
    shutil.copytree(src, dest, symlinks=True)
    spare = dest / ".dream/worktrees/.spare"
    if spare.exists():  # its links still name the original: point them at the copy
        # (by hand: 'git worktree repair' would re-point the original at the copy)
        admin = (
            dest
            / ".git/worktrees"
            / Path((spare / ".git").read_text().split(":", 1)[1].strip()).name
        )
        (spare / ".git").write_text(f"gitdir: {admin}\n")
        (admin / "gitdir").write_text(f"{spare / '.git'}\n")


def kill_when(pid: int, fired: Callable[[], bool], point: KillPoint) -> str:
    """SIGKILL the child ``point.delay`` seconds after ``fired()`` turns true."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if fired():
            if point.delay:
                time.sleep(point.delay)
            break
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done:
            return "finished"
        time.sleep(0.0005)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL) if point.group else os.kill(pid, signal.SIGKILL)
    code = wait_exit(pid)
    wait_group_dead(pid)  # a git child of a plain kill finishes on its own
    return "killed" if code == -signal.SIGKILL else "finished"


def wait_group_dead(pgid: int, timeout: float = 10.0) -> None:
    """Wait until no process of the group is alive (orphaned zombies wait for init to
    reap them, which can take seconds: ``forkrun.wait_group_gone`` waits for that)."""
    if not Path("/proc/self/stat").exists():
        wait_group_gone(pgid, timeout)
        return
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        alive = False
        for stat in Path("/proc").glob("[0-9]*/stat"):
            with contextlib.suppress(OSError):
                # "pid (comm) state ppid pgrp ...": comm may hold spaces, so split after ")"
                fields = stat.read_text().rsplit(")", 1)[1].split()
                if int(fields[2]) == pgid and fields[0] != "Z":
                    alive = True
                    break
        if not alive:
            return
        time.sleep(0.005)
    os.killpg(pgid, signal.SIGKILL)


def in_two_processes(
    run: Callable[[Path, list[KillPoint]], dict[str, int]], tmp_path: Path, points: list[KillPoint]
) -> dict[str, int]:
    """Half the points in a forked worker, half here: a kill point mostly waits on one
    child, so two at a time keep both cores busy."""
    out = tmp_path / "worker.json"
    pid = os.fork()
    if pid == 0:  # the worker: never return into pytest
        code = 1
        try:
            out.write_text(json.dumps({"ok": run(tmp_path / "w1", points[1::2])}))
            code = 0
        except BaseException:
            out.write_text(json.dumps({"error": traceback.format_exc()}))
        finally:
            os._exit(code)
    try:
        mine = run(tmp_path / "w0", points[0::2])
    finally:
        wait_exit(pid)
    theirs = json.loads(out.read_text())
    if "error" in theirs:
        pytest.fail(f"in the worker process: {theirs['error']}")
    return {k: v + theirs["ok"][k] for k, v in mine.items()}
