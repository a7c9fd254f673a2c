"""The command engine: a scripted agent works in the staged tree; the gates judge it.

The agent is a small Python script written by the test. It reads the pending list from
its environment and, by mode, writes good summaries, a summary with a claim its turn
does not support, a file outside ``memory/``, an edited transcript, fails, or hangs.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
import time
from pathlib import Path

import pytest
from dream_fixtures import approved_store
from typer.testing import CliRunner

from cli.dream_app import app
from dream.engines.command import CommandEngine, CommandSettings
from dream.errors import DreamError
from dream.landing.staging import STAGE_INDEX_CACHE, kept_runs
from dream.phases.orient import find_pending
from dream.runner import run_dream
from dream.skills import active_skill_path
from memoryfs.store.store import Store
from memoryfs.validate.rules import validate_store

S1 = ("2026-01-05-figures", "2026-01-05", ["I need the figures as PDF for Reefsong.", "Sure."])
S2 = ("2026-01-06-marta", "2026-01-06", ["Marta is a nurse at the UKE in Hamburg.", "Noted."])

AGENT = """
import json, os, subprocess, sys, time
from pathlib import Path
from memoryfs.pages.page import Page, render_page
from memoryfs.store.hashing import content_hash
from memoryfs.pages.transcript import parse_transcript

mode, dump = sys.argv[1], Path(sys.argv[2])
keys = ("DREAM_SKILL", "DREAM_PENDING", "DREAM_PENDING_FILE", "DREAM_RUN_ID",
        "DREAM_WORKTREE", "DREAM_TIMEOUT", "MEMORYFS_STORE")
seen = {k: os.environ.get(k) for k in keys}
seen["cwd"] = os.getcwd()
seen["pending_file"] = json.loads(Path(os.environ["DREAM_PENDING_FILE"]).read_text())
seen["env_values"] = sorted(os.environ.values())
dump.write_text(json.dumps(seen))
print("agent starting in", mode, "mode")
if mode == "fail":
    print("cannot reach my model", file=sys.stderr)
    sys.exit(3)
if mode == "hang":
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    dump.with_suffix(".child").write_text(str(child.pid))
    time.sleep(60)
for p in seen["pending_file"]:
    raw = Path("memory", p["path"]).read_text()
    t = parse_transcript(raw, p["path"])
    turn = t.turns[0]
    claim = "Met Gunther in Oslo." if mode == "bad" else turn.text
    meta = {"id": t.id, "title": f"Session {t.id}", "type": "summary", "updated": t.date,
            "transcript_hash": content_hash(raw), "turns": len(t.turns),
            "sources": [{"id": 1, "ref": f"sessions/transcripts/{t.id}.md#t1",
                         "at": t.date, "hash": turn.hash}]}
    body = f"\\n## Key points\\n\\n- {claim} [cite:1]\\n\\n## Outcome\\n\\nnone recorded\\n"
    Path("memory/sessions/summaries", f"{t.id}.md").write_text(render_page(Page(meta, body)))
if mode == "outside":
    Path("notes.txt").write_text("scratch")
if mode == "transcript":
    path = Path("memory", seen["pending_file"][0]["path"])
    path.write_text(path.read_text() + "\\n## t9 · user · 2026-01-05T11:00\\n\\nMore.\\n")
"""


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return approved_store(tmp_path, [S1, S2])


@pytest.fixture
def agent(tmp_path: Path) -> Path:
    path = tmp_path / "agent.py"
    path.write_text(AGENT)
    return path


def cmd(agent: Path, mode: str, dump: Path) -> str:
    return shlex.join([sys.executable, str(agent), mode, str(dump)])


def head(store: Store) -> str:
    return store.repo.head.commit.hexsha


def pending(store: Store) -> list[str]:
    return [p.id for p in find_pending(store, head(store))[0]]


def test_good_pages_land_through_the_gates(store: Store, agent: Path, tmp_path: Path) -> None:
    dump = tmp_path / "env.json"
    r = CliRunner().invoke(
        app,
        ["run", "--engine", "command", "--agent-cmd", cmd(agent, "good", dump), "--json"]
        + ["--store", str(store.root)],
    )
    assert r.exit_code == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["status"] == "committed" and out["engine"] == "command/1"
    assert set(out["sessions"]) == {S1[0], S2[0]} and pending(store) == []
    assert "agent: agent starting in good mode" in r.stderr  # its output goes to stderr
    assert validate_store(store) == []
    index = (store.memory / "sessions/index.md").read_text()
    assert S1[0] in index and S2[0] in index  # the engine regenerated the indexes
    # from the stage's facts cache in the live store, not one in the worktree (whose
    # checkout by the next run cleans it away: each run built its cache anew)
    spare = store.dream_dir / "worktrees" / ".spare"
    assert not (spare / ".memoryfs" / "index-facts.sqlite").exists()
    assert (store.cache_dir / STAGE_INDEX_CACHE).is_file()
    seen = json.loads(dump.read_text())
    stage = Path(seen["cwd"])
    assert seen["DREAM_WORKTREE"] == str(stage) == seen["MEMORYFS_STORE"]
    assert stage != store.root and (stage / "memory").name == "memory"
    assert str(store.root) not in seen["env_values"]  # the live store's path is not given
    assert seen["DREAM_PENDING"].splitlines() == [S1[0], S2[0]]
    assert [p["id"] for p in seen["pending_file"]] == [S1[0], S2[0]]
    assert not Path(seen["DREAM_PENDING_FILE"]).exists()  # a temporary file, outside the tree
    assert seen["DREAM_SKILL"] == str(active_skill_path())
    assert seen["DREAM_RUN_ID"] == out["runId"]


def test_bad_pages_fail_the_gate_and_main_is_untouched(
    store: Store, agent: Path, tmp_path: Path
) -> None:
    before = head(store)
    engine = CommandEngine(CommandSettings(cmd=cmd(agent, "bad", tmp_path / "e.json")))
    result = run_dream(store, engine)
    assert result.status == "gate-failed" and result.exit_code == 1
    assert any("DV101" in p and "Gunther" in p for p in result.problems)
    assert head(store) == before and kept_runs(store) == [result.run_id]


@pytest.mark.parametrize("mode", ["outside", "transcript"])
def test_writing_outside_what_dream_may_change_fails_the_run(
    store: Store, agent: Path, tmp_path: Path, mode: str
) -> None:
    before = head(store)
    r = CliRunner().invoke(
        app,
        ["run", "--engine", "command", "--agent-cmd", cmd(agent, mode, tmp_path / "e.json")]
        + ["--store", str(store.root)],
    )
    assert r.exit_code == 1 and r.stdout == ""
    last = r.stderr.splitlines()[-1]
    assert last.startswith("error: the agent changed what Dream may not write")
    assert ("notes.txt" if mode == "outside" else "memory/sessions/transcripts/") in last
    assert head(store) == before and not (store.root / "notes.txt").exists()
    assert len(pending(store)) == 2


def test_agent_failure_and_timeout_fail_cleanly(store: Store, agent: Path, tmp_path: Path) -> None:
    before = head(store)
    dump = tmp_path / "e.json"
    failing = CommandEngine(CommandSettings(cmd=cmd(agent, "fail", dump)))
    with pytest.raises(DreamError, match=r"exited with code 3 \(cannot reach my model\)"):
        run_dream(store, failing)
    hanging = CommandEngine(CommandSettings(cmd=cmd(agent, "hang", dump), timeout=1.5))
    t0 = time.monotonic()
    with pytest.raises(DreamError, match="did not finish within 2s"):
        run_dream(store, hanging)
    assert time.monotonic() - t0 < 15
    child = int(dump.with_suffix(".child").read_text())
    for _ in range(50):  # the whole process group was killed, the agent's child too
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        pytest.fail("the agent's child survived the timeout")
    assert head(store) == before and kept_runs(store) == []


def test_agent_cmd_is_required_and_never_goes_through_a_shell(store: Store) -> None:
    runner = CliRunner()
    r = runner.invoke(app, ["run", "--engine", "command", "--store", str(store.root)])
    assert r.exit_code == 1 and "needs an agent" in r.stderr
    script = shlex.join([sys.executable, "-c", "import sys; sys.exit(5)"])
    engine = CommandEngine(CommandSettings(cmd=script + " ; exit 0"))
    with pytest.raises(DreamError, match="exited with code 5"):
        run_dream(store, engine)  # ";" and "exit" are arguments: no shell ran them
    with pytest.raises(DreamError, match="cannot start the agent"):
        run_dream(store, CommandEngine(CommandSettings(cmd="/nonexistent/agent")))


def test_settings_from_env() -> None:
    s = CommandSettings.from_env({"DREAM_AGENT_CMD": "a b", "DREAM_AGENT_TIMEOUT": "5"})
    assert (s.argv(), s.timeout) == (["a", "b"], 5.0)
    with pytest.raises(DreamError, match="DREAM_AGENT_TIMEOUT"):
        CommandSettings.from_env({"DREAM_AGENT_TIMEOUT": "later"})
