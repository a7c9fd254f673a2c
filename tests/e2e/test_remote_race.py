"""Real races on one remote store: writers in separate processes, one ``git daemon``.

Three clones ingest at once, each its own sessions, each through the ``memoryfs``
command (fetch, commit, push; a lost race replays and pushes again). Then two clones
run ``dream run`` at once. Nothing may be lost and nothing doubled: the remote holds
every session, one ingest commit per input, a straight history, and one Dream commit
for the batch (the run that loses the race finds nothing pending when it runs again).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from git_server import GitServer, git

import memoryfs
from memoryfs.remote import clone_store
from memoryfs.validate.rules import validate_store

WRITERS = 3
SESSIONS = 4  # per writer


@pytest.fixture
def server(tmp_path: Path) -> Iterator[GitServer]:
    srv = GitServer(tmp_path / "srv")
    yield srv
    srv.close()


def _exe(app: str) -> str:
    return str(Path(sys.executable).with_name(app))


def _chat(folder: Path, writer: int, n: int) -> Path:
    path = folder / f"2026-04-{writer + 1:02d}-w{writer}-s{n}.jsonl"
    path.write_text(
        json.dumps(
            {
                "role": "user",
                "content": f"Note {n} of writer {writer}: my colleague Rui{writer}{n} joined.",
                "ts": f"2026-04-{writer + 1:02d}T{9 + n:02d}:00",
            }
        )
        + "\n"
    )
    return path


def test_concurrent_writers_and_runs_lose_nothing(tmp_path: Path, server: GitServer) -> None:
    memoryfs.init_store(tmp_path / "origin", "dana", "atlas", "Dana")
    url = server.bare("dana", from_store=tmp_path / "origin")
    clones = [clone_store(url, tmp_path / f"c{i}").root for i in range(WRITERS)]
    scripts = []
    for w, root in enumerate(clones):
        inputs = [_chat(tmp_path, w, n) for n in range(SESSIONS)]
        lines = [f"{_exe('memoryfs')} ingest -q --store {root} {p}" for p in inputs]
        scripts.append(" && ".join(lines))
    procs = [
        subprocess.Popen(["bash", "-c", s], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        for s in scripts
    ]
    errors = [p.communicate(timeout=600)[1].decode() for p in procs]
    assert [p.returncode for p in procs] == [0] * WRITERS, errors

    bare = server.path("dana")
    subjects = git(bare, "log", "--format=%s", "main").splitlines()
    assert subjects.count("ingest: 1 sessions, 1 turns") == WRITERS * SESSIONS
    assert git(bare, "rev-list", "--merges", "main") == ""  # a straight history
    names = git(bare, "ls-tree", "-r", "--name-only", "main", "memory/sessions/transcripts/")
    assert len([n for n in names.splitlines() if n.endswith(".md")]) == WRITERS * SESSIONS

    runs = [
        subprocess.Popen(
            [_exe("dream"), "run", "-q", "--json", "--store", str(root)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for root in clones[:2]
    ]
    outs = [r.communicate(timeout=600) for r in runs]
    assert [r.returncode for r in runs] == [0, 0], [o[1].decode() for o in outs]
    results = [json.loads(o[0]) for o in outs]
    statuses = sorted(r["status"] for r in results)
    subjects = git(bare, "log", "--format=%s", "main").splitlines()
    dream_commits = [s for s in subjects if s.startswith("dream:")]
    assert len(dream_commits) == 1, subjects
    assert dream_commits[0].startswith(f"dream: {WRITERS * SESSIONS} sessions summarized")
    # one landed the batch; the other found it on the remote (at once, or after its own
    # commit lost the push race and it ran again)
    assert statuses == ["committed", "nothing-pending"]
    fresh = clone_store(url, tmp_path / "fresh")
    assert validate_store(fresh) == []
    summaries = list((fresh.memory / "sessions" / "summaries").glob("*.md"))
    assert len(summaries) == WRITERS * SESSIONS
