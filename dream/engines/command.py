"""The command engine: an external agent CLI does Dream's thinking in the staged tree.

Job: run ``--agent-cmd`` (split with ``shlex``, never through a shell) with the staged
worktree as its working folder, then hand whatever it wrote to the same gates as any
engine. The agent learns what to do from its environment:

- ``DREAM_SKILL``: path of the active dream skill (its instructions);
- ``DREAM_PENDING``: the pending session ids, one per line;
- ``DREAM_PENDING_FILE``: a JSON list of the pending sessions (``id``, ``path`` relative
  to ``memory/``, ``reason``, ``turns``), in a temporary folder outside the worktree;
- ``DREAM_RUN_ID``, ``DREAM_WORKTREE`` (= the working folder), ``DREAM_TIMEOUT`` (seconds);
- ``MEMORYFS_STORE`` points at the worktree, so ``memoryfs`` commands the agent runs
  read and write the staged tree. The live store's path is never given.

The agent runs in its own process group with a time limit (``timeout``, and never past
the run's deadline); on timeout the whole group is killed and the run fails: ``main``
is untouched. A non-zero exit fails the run the same way. Its output goes to stderr.

After it exits, the engine refuses (``GateFailed``) a tree in which the agent changed
anything Dream may not write: files outside ``memory/``, transcripts, the deletion log.
(The validation gate checks what is under ``memory/``; it does not police the rest of
the tree, so this check lives here.) Then it regenerates ``INDEX.md`` and
``sessions/index.md``: they are generated files, whatever the agent did to them.
"""

from __future__ import annotations

import collections
import contextlib
import json
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, Any

from dream.engines.base import Engine, EngineContext
from dream.errors import DreamError, GateFailed
from dream.landing.staging import Change, Stage, stage_changes
from dream.records import ConsolidationReport, Fact, SummaryDraft
from dream.skills import active_skill_path
from memoryfs.pages.transcript import Transcript

__all__ = ["CommandEngine", "CommandSettings", "forbidden_changes"]

DEFAULT_TIMEOUT = 1800.0
_GRACE = 3.0  # seconds between SIGTERM and SIGKILL for the agent's process group
_FORBIDDEN = ("memory/sessions/transcripts/", "memory/deletions.jsonl")


@dataclass(frozen=True)
class CommandSettings:
    cmd: str = ""
    timeout: float = DEFAULT_TIMEOUT
    env: Mapping[str, str] = field(default_factory=dict)  # extra variables for the agent

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: Any) -> CommandSettings:
        """``DREAM_AGENT_CMD`` and ``DREAM_AGENT_TIMEOUT``; non-None ``overrides`` win."""
        env = os.environ if env is None else env
        values: dict[str, Any] = {}
        if env.get("DREAM_AGENT_CMD", "").strip():
            values["cmd"] = env["DREAM_AGENT_CMD"]
        raw = env.get("DREAM_AGENT_TIMEOUT", "").strip()
        if raw:
            try:
                values["timeout"] = float(raw)
            except ValueError:
                raise DreamError(f"DREAM_AGENT_TIMEOUT={raw!r} is not a number (seconds)") from None
        values.update({k: v for k, v in overrides.items() if v is not None})
        return replace(cls(), **values)

    def argv(self) -> list[str]:
        if not self.cmd.strip():
            raise DreamError(
                'the command engine needs an agent: pass --agent-cmd "CMD" or set DREAM_AGENT_CMD'
            )
        try:
            argv = shlex.split(self.cmd)
        except ValueError as exc:
            raise DreamError(f"cannot parse --agent-cmd {self.cmd!r}: {exc}") from None
        if not argv:
            raise DreamError("--agent-cmd is empty")
        return argv


def forbidden_changes(changes: Sequence[Change]) -> list[str]:
    """Paths of ``changes`` Dream may not write: outside ``memory/``, transcripts, deletions."""
    return [
        c.path for c in changes if not c.path.startswith("memory/") or c.path.startswith(_FORBIDDEN)
    ]


class CommandEngine(Engine):
    name = "command"
    version = "1"

    def __init__(self, settings: CommandSettings | None = None) -> None:
        self.settings = settings if settings is not None else CommandSettings.from_env()

    def configuration(self) -> dict[str, Any]:
        # the variables' names only: their values may be keys
        env = sorted(self.settings.env)
        return {"cmd": self.settings.cmd, "timeout": self.settings.timeout, "env": env}

    def summarize(self, session: Transcript) -> SummaryDraft:
        raise DreamError("the command engine writes the staged tree itself; use consolidate")

    def extract(self, session: Transcript) -> list[Fact]:
        raise DreamError("the command engine writes the staged tree itself; use consolidate")

    def consolidate(self, ctx: EngineContext) -> ConsolidationReport:
        argv = self.settings.argv()
        timeout = self.settings.timeout
        if ctx.deadline is not None:
            timeout = max(1.0, min(timeout, ctx.deadline - time.monotonic()))
        ctx.progress("agent", 0, 1)
        with tempfile.TemporaryDirectory(prefix="dream-agent-") as tmp:
            env = self._env(ctx, Path(tmp), timeout)
            _run_agent(argv, ctx.stage_root, env, timeout)
        ctx.progress("agent", 1, 1)
        changes = stage_changes(Stage(ctx.run_id, ctx.stage_root, ctx.base_commit))
        bad = forbidden_changes(changes)
        if bad:
            shown = ", ".join(bad[:5]) + (f" and {len(bad) - 5} more" if len(bad) > 5 else "")
            raise GateFailed(
                f"the agent changed what Dream may not write ({shown}): only memory/ pages, "
                "summaries and notes; main untouched, the staged tree is discarded"
            )
        Stage(ctx.run_id, ctx.stage_root, ctx.base_commit).write_indexes(ctx.store)
        report = ConsolidationReport()
        pending = {p.id for p in ctx.pending}
        for change in stage_changes(Stage(ctx.run_id, ctx.stage_root, ctx.base_commit)):
            rel = change.rel
            if rel.startswith("sessions/summaries/") and change.status != "D":
                sid = rel.rsplit("/", 1)[1].removesuffix(".md")
                if sid in pending:
                    report.sessions_summarized.append(sid)
            elif rel.startswith(("knowledge/", "notes/")):
                {"A": report.pages_created}.get(change.status, report.pages_updated).append(rel)
        return report

    def _env(self, ctx: EngineContext, tmp: Path, timeout: float) -> dict[str, str]:
        pending_file = tmp / "pending.json"
        pending_file.write_text(
            json.dumps(
                [
                    {"id": p.id, "path": p.path, "reason": p.reason, "turns": p.turns}
                    for p in ctx.pending
                ],
                indent=2,
            ),
            encoding="utf-8",
        )
        skill = active_skill_path()
        env = {k: v for k, v in os.environ.items() if not k.startswith("DREAM_")}
        env.update(self.settings.env)
        env.update(
            {
                "DREAM_SKILL": str(skill) if skill is not None else "",
                "DREAM_PENDING": "\n".join(p.id for p in ctx.pending),
                "DREAM_PENDING_FILE": str(pending_file),
                "DREAM_RUN_ID": ctx.run_id,
                "DREAM_WORKTREE": str(ctx.stage_root),
                "DREAM_TIMEOUT": str(int(timeout)),
                "MEMORYFS_STORE": str(ctx.stage_root),
            }
        )
        return env


def _run_agent(argv: list[str], cwd: Path, env: dict[str, str], timeout: float) -> None:
    """Run the agent; its output goes to stderr. Raise a ``DreamError`` unless it exits 0."""
    try:
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: a timeout kills all of it
        )
    except OSError as exc:
        raise DreamError(f"cannot start the agent {argv[0]!r}: {exc.strerror}") from None
    tail: collections.deque[str] = collections.deque(maxlen=5)
    assert proc.stdout is not None
    reader = threading.Thread(target=_relay, args=(proc.stdout, tail), daemon=True)
    reader.start()
    try:
        code = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        reader.join(timeout=1)
        raise DreamError(
            f"the agent did not finish within {timeout:.0f}s and was stopped; main untouched, "
            "the sessions stay pending (raise --agent-timeout if it needs longer)"
        ) from None
    finally:
        if proc.poll() is None:  # interrupted (KeyboardInterrupt): never leave it running
            _kill_group(proc)
    _kill_group(proc)  # children it left behind in its group
    reader.join(timeout=1)
    if code != 0:
        last = tail[-1] if tail else "no output"
        raise DreamError(f"the agent exited with code {code} ({last}); main untouched")


def _relay(stream: IO[bytes], tail: collections.deque[str]) -> None:
    for raw in stream:
        line = raw.decode("utf-8", errors="replace").rstrip("\n")
        if line.strip():
            tail.append(line.strip()[:200])
        sys.stderr.write(f"agent: {line}\n")
        sys.stderr.flush()


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        return
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=_GRACE)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
