"""Concurrent ingests: several processes, different and overlapping sessions, at once.

The store's write lock serializes them; every session lands with all its turns,
nothing is lost, history stays linear, each commit holds only transcripts, and
no process sees a Git lock error.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from forkrun import fork_cli, wait_exit

from memoryfs.pages.transcript import parse_transcript
from memoryfs.store.store import Store

SHARED_TURNS = 12


def _git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, check=True
    ).stdout


def _jsonl(path: Path, texts: list[str], day: int) -> Path:
    rows = [
        {
            "role": "user" if i % 2 == 0 else "assistant",
            "content": t,
            "ts": f"2026-03-{day:02d}T10:{i:02d}:00",
        }
        for i, t in enumerate(texts)
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


def _workload(folder: Path, workers: int) -> tuple[list[list[Path]], dict[str, int]]:
    """Per worker: its input files. Sessions overlap between workers; 'shared' grows."""
    folder.mkdir()
    own = {
        f"s{i:02d}": _jsonl(
            folder / f"s{i:02d}.jsonl", [f"session {i} turn {j}" for j in range(4)], i + 1
        )
        for i in range(workers + 2)
    }
    shared_texts = [f"shared turn {j}" for j in range(SHARED_TURNS)]
    jobs: list[list[Path]] = []
    for w in range(workers):
        sub = folder / f"w{w}"
        sub.mkdir()
        # a prefix of the shared session: whichever lands first, the others only append
        n = SHARED_TURNS - (w % 4) * 3
        shared = _jsonl(sub / "shared.jsonl", shared_texts[:n], 28)
        jobs.append([own[f"s{w:02d}"], own[f"s{w + 1:02d}"], own[f"s{w + 2:02d}"], shared])
    expected = {sid: 4 for sid in own}
    expected["shared"] = SHARED_TURNS
    return jobs, expected


def _sessions(files: list[Path]) -> set[str]:
    return {f"memory/sessions/transcripts/{p.stem}.md" for p in files}


def _check_store(
    store: Store, expected: dict[str, int], logs: list[Path], jobs: list[list[Path]]
) -> None:
    for log in logs:
        text = log.read_text()
        assert "lock" not in text.lower() and "error" not in text.lower(), text
    for sid, turns in expected.items():
        t = parse_transcript(store.transcript_path(sid).read_text())
        assert len(t.turns) == turns, sid
        assert [x.n for x in t.turns] == list(range(1, turns + 1))
    assert _git(store.root, "status", "--porcelain") == ""
    # linear history, and every ingest commit holds transcripts only
    for line in _git(store.root, "log", "--format=%H %P %s").splitlines()[:-1]:
        sha, parent, subject = line.split(" ", 2)
        assert len(parent) == 40, "a merge or a root commit appeared"
        files = _git(store.root, "show", "--name-only", "--format=", sha, "--", "memory").split()
        if subject.startswith("ingest:"):  # only what one worker wrote (and its receipts)
            assert files and any(set(files) <= _sessions(job) for job in jobs), files
        else:
            assert subject.startswith("index:")
    subprocess.run(["git", "-C", str(store.root), "fsck", "--no-progress"], check=True)


def test_eight_forked_ingests_at_once(tmp_store: Store, tmp_path: Path) -> None:
    jobs, expected = _workload(tmp_path / "in", 8)
    r, w = os.pipe()
    logs, pids = [], []
    for i, files in enumerate(jobs):
        logs.append(tmp_path / f"worker-{i}.log")
        args = ["ingest", "--store", str(tmp_store.root), *map(str, files)]
        pids.append(fork_cli(args, r, logs[-1]))
    logs.append(tmp_path / "index.log")
    pids.append(fork_cli(["index", "--store", str(tmp_store.root)], r, logs[-1]))
    os.write(w, b"x" * len(pids))
    codes = [wait_exit(pid) for pid in pids]
    os.close(r)
    os.close(w)
    assert codes == [0] * len(pids), [log.read_text() for log in logs]
    _check_store(tmp_store, expected, logs, jobs)
    commits = int(_git(tmp_store.root, "rev-list", "--count", "HEAD"))
    print(f"{len(pids)} writers, {commits} commits")


def test_four_cli_processes_at_once(tmp_store: Store, tmp_path: Path) -> None:
    """The same with real ``memoryfs`` processes (not forks)."""
    jobs, expected = _workload(tmp_path / "in", 4)
    exe = Path(sys.executable).with_name("memoryfs")
    if not exe.exists():
        pytest.skip("the memoryfs console script is not installed next to python")
    procs = []
    logs = []
    for i, files in enumerate(jobs):
        logs.append(tmp_path / f"cli-{i}.log")
        procs.append(
            subprocess.Popen(
                [str(exe), "ingest", "--store", str(tmp_store.root), *map(str, files)],
                stdout=subprocess.DEVNULL,
                stderr=logs[-1].open("w"),
            )
        )
    assert [p.wait(timeout=120) for p in procs] == [0] * len(procs)
    expected = {
        sid: n
        for sid, n in expected.items()
        if sid in {f"s{i:02d}" for i in range(6)} or sid == "shared"
    }
    _check_store(tmp_store, expected, logs, jobs)


def test_an_ingest_commits_only_its_own_paths(tmp_store: Store, tmp_path: Path) -> None:
    """Something else staged in the index (a user's ``git add``) stays out of it."""
    from memoryfs.ingest import ingest

    note = tmp_store.memory / "notes" / "draft.md"
    note.write_text("---\nid: draft\ntitle: Draft\ntype: note\nupdated: 2026-01-01\n---\nwip\n")
    _git(tmp_store.root, "add", str(note))
    jobs, _ = _workload(tmp_path / "in", 1)
    result = ingest(tmp_store, jobs[0][:1])
    files = _git(tmp_store.root, "show", "--name-only", "--format=", result.commit).split()
    receipts = [f for f in files if f.startswith(".dream/receipts/")]
    assert files == [*receipts, "memory/sessions/transcripts/s00.md"] and len(receipts) == 1
    assert "A  memory/notes/draft.md" in _git(tmp_store.root, "status", "--porcelain")
