"""Helpers of the fleet tests and the fleet bench: stores on a Git server, engines the
tests steer through the environment, and real ``dream fleet worker`` processes.

Engines (a worker loads them by ``--engine fleet_fixtures:Name``; this folder is on the
worker's ``PYTHONPATH``):
- ``TimedEngine``: the embedded engine, which first appends ``start <user> <pid> <time>``
  to ``$FLEET_TEST_LOG``, sleeps ``$FLEET_TEST_DELAY`` seconds (a slow run, for a kill
  at a known point; with ``$FLEET_TEST_SLOW_ONCE`` naming a file, only the run that makes
  it), and appends ``end ...`` when done;
- ``RejectingEngine``: writes one unsupported claim per session, so the gates reject it.

``Worker`` starts ``dream fleet worker`` (solo pool), ``Beat`` ``dream fleet beat``, each in
its own process group with the fleet's settings in the environment; ``kill()`` is the
SIGKILL of the whole group, ``stop()`` a SIGTERM (a warm shutdown) and then that.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from dream_fixtures import ScriptedEngine
from git_server import GitServer, git
from paths import ROOT

from dream.engines.base import EngineContext
from dream.engines.embedded.engine import EmbeddedEngine
from dream.records import ConsolidationReport
from memoryfs.pages.transcript import Transcript
from memoryfs.store.store import Store, find_store, init_store

__all__ = [
    "Beat",
    "FleetProcess",
    "RejectingEngine",
    "TimedEngine",
    "Worker",
    "add_batch",
    "dream_commits",
    "ingest_batch",
    "log_lines",
    "served_store",
    "validate_fresh_clone",
    "wait_for",
]

SUPPORT = Path(__file__).resolve().parent
_TOPICS = [
    ("I moved to {city} last month.", "Porto", "Lyon", "Graz", "Oslo"),
    ("My sister {name} plays the cello.", "Ines", "Maya", "Lea", "Ana"),
    ("I prefer figures as PDF, not PNG, for the {project} paper.", "tides", "kelp", "reef", "ice"),
    ("We decided to use Postgres for the {project} project.", "atlas", "orca", "delta", "fjord"),
]


class TimedEngine(EmbeddedEngine):
    name = "timed"

    def consolidate(self, ctx: EngineContext) -> ConsolidationReport:
        log = os.environ.get("FLEET_TEST_LOG", "")
        user = ctx.store.config.user

        def note(what: str) -> None:
            if log:
                with open(log, "a", encoding="utf-8") as fh:
                    fh.write(f"{what} {user} {os.getpid()} {time.time():.6f}\n")

        note("start")
        once = os.environ.get("FLEET_TEST_SLOW_ONCE", "")
        if not once or not os.path.exists(once):  # with a marker file: only the first run
            if once:
                Path(once).touch()
            time.sleep(float(os.environ.get("FLEET_TEST_DELAY", "0") or 0))
        report = super().consolidate(ctx)
        note("end")
        return report


def _unsupported(t: Transcript, turn: object) -> str:
    return "Dana met Gunther in Oslo on 3 April 2026 and paid 250 euros."


class RejectingEngine(ScriptedEngine):
    name = "rejecting"
    acts_on_skill = False

    def __init__(self) -> None:
        super().__init__(claim=_unsupported)


def _messages(user: str, n: int, day: int) -> list[dict[str, str]]:
    template, *values = _TOPICS[n % len(_TOPICS)]
    value = values[(n + len(user)) % len(values)]
    text = template.format(city=value, name=value, project=value)
    ts = f"2026-03-{day:02d}T09:{n % 60:02d}"
    return [
        {"role": "user", "content": text, "ts": ts},
        {"role": "assistant", "content": "Noted, I will remember that.", "ts": ts},
    ]


def ingest_batch(store: Store, first: int, count: int) -> None:
    """Sessions ``first`` .. ``first + count - 1`` of the store's user, ingested and committed."""
    user = store.config.user
    for n in range(first, first + count):
        day = 1 + n % 27
        store.ingest(_messages(user, n, day), session_id=f"2026-03-{day:02d}-{user}-{n:03d}")


def served_store(server: GitServer, work: Path, name: str, sessions: int) -> str:
    """A store of user ``name`` with ``sessions`` pending sessions, on ``server``; its URL."""
    store = init_store(work / name, name, "atlas", name.capitalize())
    ingest_batch(store, 0, sessions)
    return server.bare(name, from_store=store.root)


def add_batch(url: str, work: Path, first: int, count: int) -> None:
    """Another batch of sessions pushed to the store at ``url``, as an agent would."""
    if not (work / ".git").is_dir():
        work.parent.mkdir(parents=True, exist_ok=True)
        git(work.parent, "clone", "--quiet", url, str(work))
    git(work, "pull", "--quiet", "--ff-only")
    ingest_batch(find_store(work), first, count)
    git(work, "push", "--quiet", "origin", "main")


def dream_commits(server: GitServer, name: str) -> list[str]:
    """Oldest first: "dream" or "ingest" (or the subject) for each commit on main."""
    log = git(server.path(name), "log", "--reverse", "--format=%H%x00%B%x1e", "main")
    kinds = []
    for entry in filter(None, (e.strip() for e in log.split("\x1e"))):
        _, _, body = entry.partition("\x00")
        if "Dream-Run:" in body:
            kinds.append("dream")
        elif body.startswith("ingest"):
            kinds.append("ingest")
        else:
            kinds.append(body.splitlines()[0])
    return kinds


def validate_fresh_clone(url: str, where: Path) -> str:
    """``memoryfs validate`` on a new clone of ``url``: its output (it must pass)."""
    git(where.parent, "clone", "--quiet", url, str(where))
    proc = subprocess.run(
        [sys.executable, "-c", "from cli.memoryfs_app import main; main()", "validate",
         "--store", str(where)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def log_lines(path: Path) -> list[tuple[str, str, int, float]]:
    if not path.exists():
        return []
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        what, user, pid, at = line.split()
        out.append((what, user, int(pid), float(at)))
    return out


def wait_for(check: Callable[[], bool], timeout: float, what: str, every: float = 0.1) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(every)
    raise AssertionError(f"timed out after {timeout:g}s waiting for {what}")


class FleetProcess:
    """``dream fleet ...`` in its own process group, logging to a file."""

    def __init__(self, args: list[str], env: Mapping[str, str], log: Path) -> None:
        self.log = log
        full_env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(SUPPORT), str(ROOT)]),
            **env,
        }
        argv = [sys.executable, "-c", "from cli.dream_app import main; main()", "fleet", *args]
        with open(log, "ab") as out:
            self.proc = subprocess.Popen(
                argv, env=full_env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )

    def logged(self, text: str) -> bool:
        return self.log.exists() and text in self.log.read_text(errors="replace")

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=10)

    def stop(self) -> None:
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=8)
            except subprocess.TimeoutExpired:
                self.kill()
        with contextlib.suppress(ProcessLookupError):  # anything the group left behind
            os.killpg(self.proc.pid, signal.SIGKILL)


class Worker(FleetProcess):
    """``dream fleet worker`` (solo pool by default)."""

    def __init__(
        self,
        redis_url: str,
        scratch: Path,
        engine: str,
        name: str,
        env: Mapping[str, str],
        log: Path,
        pool: str = "solo",
    ) -> None:
        args = [
            "worker", "--redis", redis_url, "--scratch", str(scratch), "--engine", engine,
            "--pool", pool, "--hostname", f"{name}@test", "--loglevel", "info",
        ]  # fmt: skip
        super().__init__(args, env, log)

    def ready(self) -> bool:
        return self.logged("ready.")


class Beat(FleetProcess):
    """``dream fleet beat``, its state file under ``scratch``."""

    def __init__(self, redis_url: str, scratch: Path, env: Mapping[str, str], log: Path) -> None:
        args = ["beat", "--redis", redis_url, "--scratch", str(scratch), "--loglevel", "info"]
        super().__init__(args, env, log)

    def ready(self) -> bool:
        return self.logged("beat: Starting")
