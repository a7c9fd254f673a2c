"""Concurrency around Dream and the read side: processes at once on one store.

- Two ``dream run``s at once: one runs, the other exits at once with a clear
  message; there are never two commits from the same base.
- Ingest while Dream runs (at different moments of the run): both land, Dream's
  commit is rebased onto the ingest, nothing is lost, ``main`` stays valid.
- Agents materializing and recalling at once, into separate sandboxes and into the
  same one, while the store changes under them: every sandbox stays consistent
  (each listed file matches its manifest entry, nothing unlisted, no temp files)
  and the search index passes SQLite's and FTS5's integrity checks.
- A load test (slow): 8 processes doing recall, search and ingest on one store for
  60 s: zero errors, zero lost turns.

Processes are forked children (``forkrun``: the real CLI, or a library loop), so
each has its own locks and file descriptors, as separate agents would.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
import subprocess
import time
import traceback
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from forkrun import fork_cli, wait_exit
from paths import SAMPLE

from cli.dream_app import app as dream_app
from dream.engines import load_engine
from dream.phases.orient import find_pending
from dream.runner import run_dream
from dream.skills import approve
from memoryfs.ingest import ingest
from memoryfs.pages.transcript import Turn, parse_transcript, render_transcript
from memoryfs.read.materialize import MANIFEST, blob_hash, materialize
from memoryfs.read.recall import recall
from memoryfs.read.search import INDEX_NAME, SearchIndex
from memoryfs.store.store import Store, init_store
from memoryfs.validate.rules import validate_store

pytest.importorskip("dream.engines.embedded.engine")

QUESTIONS = [
    "what format does Dana want figures in",
    "who is Marta",
    "when is the Lisbon workshop",
    "what did we decide about the taxonomy",
    "hydrophone deployment",
    "release checklist",
]


def _git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, check=True
    ).stdout.strip()


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store with 4 sessions dreamed and 4 pending."""
    root = tmp_path_factory.mktemp("dream-concurrency") / "store"
    sessions = sorted(SAMPLE.glob("*.md"))
    store = init_store(root, "dana", "atlas")
    approve(store, by="tests")
    ingest(store, sessions[:4])
    assert run_dream(store, load_engine()).status == "committed"
    ingest(store, sessions[4:8])
    return root


def _copy(template: Path, dest: Path) -> Store:
    # without the parked worktree (and its entry in .git/worktrees): its links name
    # the template; the copy's first run adds a fresh one
    shutil.copytree(template, dest, symlinks=True, ignore=shutil.ignore_patterns("worktrees"))
    return Store.open(dest)


def _jsonl(path: Path, sid_day: int, texts: list[str]) -> Path:
    rows = [
        {
            "role": "user" if i % 2 == 0 else "assistant",
            "content": text,
            "ts": f"2026-04-{sid_day:02d}T10:{i:02d}:00",
        }
        for i, text in enumerate(texts)
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


def _turn_texts(store: Store, rev: str = "main") -> dict[str, list[str]]:
    """session id -> its turns' texts in ``rev``."""
    out = {}
    names = _git(store.root, "ls-tree", "--name-only", f"{rev}:memory/sessions/transcripts")
    for name in names.split():
        if name.endswith(".md"):
            text = _git(store.root, "show", f"{rev}:memory/sessions/transcripts/{name}")
            out[name[:-3]] = [t.text for t in parse_transcript(text).turns]
    return out


def _dream_commits(store: Store, base: str) -> list[tuple[str, str]]:
    """(commit, parent) of every dream commit made since ``base`` on any ref or reflog."""
    out = _git(store.root, "log", "--all", "--reflog", "--format=%H %P %s", "--not", base)
    return [
        (line.split()[0], line.split()[1])
        for line in out.splitlines()
        if line.split(" ", 2)[2].startswith("dream: ")
    ]


# -- two dream runs at once ----------------------------------------------------------------


def test_two_dream_runs_at_once_one_runs_and_the_other_exits_clearly(
    template: Path, tmp_path: Path
) -> None:
    for round_ in range(3):
        store = _copy(template, tmp_path / f"store-{round_}")
        base = store.head()
        r, w = os.pipe()
        logs = [tmp_path / f"dream-{round_}-{i}.log" for i in range(2)]
        pids = [
            fork_cli(["run", "--store", str(store.root)], r, log, app=dream_app, prog_name="dream")
            for log in logs
        ]
        os.write(w, b"xx")  # release both at once
        codes = [wait_exit(pid) for pid in pids]
        os.close(r)
        os.close(w)
        errors = [log.read_text() for log in logs]
        assert sorted(codes) == [0, 1], errors
        loser = errors[codes.index(1)]
        assert loser.startswith("error: another dream run is in progress on"), loser
        assert "its lock goes away when it ends" in loser and loser.count("\n") == 1
        commits = _dream_commits(store, base)
        assert [parent for _, parent in commits] == [base], "two commits from one base"
        assert _git(store.root, "rev-parse", "main~1") == base
        assert run_dream(store, load_engine()).status == "nothing-pending"


# -- ingest while Dream runs -----------------------------------------------------------------


def _moment(event: str, store: Store) -> Callable[[], bool]:
    """A predicate that turns true at ``event`` of a dream run on ``store``."""
    heads = store.root / ".git/refs/heads/dream"
    worktrees = store.dream_dir / "worktrees"

    def branch_tips() -> list[str]:
        with contextlib.suppress(OSError):
            return [(heads / n).read_text().strip() for n in os.listdir(heads)]
        return []

    if event == "start":
        return lambda: True
    if event == "worktree":
        return lambda: worktrees.is_dir() and any(n != ".spare" for n in os.listdir(worktrees))
    if event == "committed-on-branch":  # after the gates, before the sync
        base = store.head()
        return lambda: any(tip not in ("", base) for tip in branch_tips())
    raise ValueError(event)


@pytest.mark.parametrize("moment", ["start", "worktree", "committed-on-branch"])
def test_ingest_while_dream_runs_both_land(template: Path, tmp_path: Path, moment: str) -> None:
    store = _copy(template, tmp_path / "store")
    base = store.head()
    before = _turn_texts(store)
    pending = find_pending(store, base)[0]
    grown_id = pending[0].id  # a session this run is summarizing gains turns meanwhile
    t = parse_transcript(store.transcript_path(grown_id).read_text())
    extra = Turn(n=len(t.turns) + 1, speaker="user", ts=t.turns[-1].ts, text="One more.")
    grown = tmp_path / "in" / f"{grown_id}.md"
    grown.parent.mkdir(parents=True)
    grown.write_text(render_transcript(replace(t, turns=(*t.turns, extra))))
    fresh = [
        _jsonl(
            tmp_path / "in" / f"late-{i}.jsonl", 10 + i, [f"late {i} turn {j}" for j in range(3)]
        )
        for i in range(2)
    ]
    fired = _moment(moment, store)
    log = tmp_path / "dream.log"
    pid = fork_cli(
        ["run", "--store", str(store.root)], stderr=log, app=dream_app, prog_name="dream"
    )
    deadline = time.monotonic() + 30
    while not fired() and time.monotonic() < deadline:
        time.sleep(0.0005)
    ingested = ingest(store, [grown, *fresh])  # the store's write lock; Dream's sync waits
    assert wait_exit(pid) == 0, log.read_text()
    # both landed, one after the other, on a linear history
    log_lines = _git(store.root, "log", "--format=%H %P %s", f"{base}..main").splitlines()
    subjects = [line.split(" ", 2)[2] for line in log_lines]
    assert sorted(s.split(":")[0] for s in subjects) == ["dream", "ingest"], subjects
    assert all(len(line.split()) >= 3 and len(line.split()[1]) == 40 for line in log_lines)
    assert _git(store.root, "merge-base", "--is-ancestor", ingested.commit, "main") == ""
    # nothing lost: every turn that was there, the grown one and the new sessions
    after = _turn_texts(store)
    for sid, turns in before.items():
        assert after[sid][: len(turns)] == turns
    assert after[grown_id][-1] == "One more."
    assert after["late-0"] == [f"late 0 turn {j}" for j in range(3)]
    assert validate_store(store) == []
    assert _git(store.root, "status", "--porcelain", "--untracked-files=no") == ""
    dreamed = next(line.split()[0] for line in log_lines if " dream: " in line)
    run_id = _git(store.root, "log", "-1", "--format=%(trailers:key=Dream-Run,valueonly)", dreamed)
    record = json.loads((store.dream_dir / "runs" / f"{run_id}.json").read_text())
    assert record["status"] == "committed", record
    if moment != "start" and subjects[0].startswith("dream"):
        assert record["rebased"] + record["restarted"] >= 1  # the ingest came first
    # the next run takes what the ingest brought (the grown session too)
    again = run_dream(store, load_engine())
    assert again.status in ("committed", "nothing-pending")  # at "start" Dream saw it all
    assert find_pending(store, store.head())[0] == []
    assert validate_store(store) == []


# -- materialize and recall at once ------------------------------------------------------------


def fork_loop(job: Callable[[], dict[str, Any]], out: Path) -> int:
    """Run ``job`` in a forked child that writes its result (or traceback) to ``out``."""
    pid = os.fork()
    if pid == 0:  # child: never return into pytest
        code = 1
        try:
            os.setsid()
            result = job()
            out.write_text(json.dumps(result))
            code = 0
        except BaseException:
            out.write_text(json.dumps({"crash": traceback.format_exc()}))
        finally:
            os._exit(code)
    return pid


def _check_sandbox(sandbox: Path) -> int:
    """Every listed file matches its entry; nothing unlisted, pending or half-written."""
    manifest = json.loads((sandbox / MANIFEST).read_text())
    assert "pending" not in manifest
    listed = {e["path"]: e["blob"] for e in manifest["files"]}
    on_disk = {
        p.relative_to(sandbox).as_posix(): blob_hash(p.read_bytes())
        for p in (sandbox / "memory").rglob("*")
        if p.is_file()
    }
    assert on_disk == listed
    return len(listed)


def _check_index(store: Store) -> None:
    conn = sqlite3.connect(store.cache_dir / INDEX_NAME)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        conn.execute("INSERT INTO fts(fts) VALUES('integrity-check')")
    finally:
        conn.close()
    with SearchIndex.open(store) as idx:
        idx.refresh()
        stats = idx.refresh(full=True)  # the incremental state agrees with the files
        assert (stats.added, stats.changed, stats.removed) == (0, 0, 0), stats
        assert idx.search("Lisbon workshop")


def _materializer(root: Path, sandbox: Path, until: float, budget: int) -> Callable[[], dict]:
    def job() -> dict[str, Any]:
        n = 0
        while time.time() < until or n == 0:
            materialize(Store.open(root), sandbox, budget)
            n += 1
        return {"materialize": n}

    return job


def _recaller(root: Path, sandbox: Path | None, until: float) -> Callable[[], dict]:
    def job() -> dict[str, Any]:
        n = 0
        while time.time() < until or n == 0:
            recall(Store.open(root), QUESTIONS[n % len(QUESTIONS)], into=sandbox)
            n += 1
        return {"recall": n}

    return job


def _writer(root: Path, inputs: Path, rounds: int) -> Callable[[], dict]:
    """Ingest new sessions and dream them: pages come and change under the readers."""

    def job() -> dict[str, Any]:
        store = Store.open(root)
        for i in range(rounds):
            texts = [f"Writer note {i}: the Lisbon workshop moved to room {i}."] * 2
            ingest(store, [_jsonl(inputs / f"w{i}.jsonl", 20 + i, texts)])
            run_dream(store, load_engine())
        return {"writes": rounds}

    return job


@pytest.mark.slow
def test_materialize_and_recall_at_once_into_shared_and_separate_sandboxes(
    template: Path, tmp_path: Path
) -> None:
    store = _copy(template, tmp_path / "store")
    root = store.root
    shared, other = tmp_path / "sandbox-shared", tmp_path / "sandbox-other"
    until = time.time() + 5
    jobs = {
        "materialize-shared-1": _materializer(root, shared, until, 30_000),
        "materialize-shared-2": _materializer(root, shared, until, 60_000),
        "recall-shared": _recaller(root, shared, until),
        "materialize-other": _materializer(root, other, until, 40_000),
        "recall-other": _recaller(root, other, until),
        "recall-no-sandbox": _recaller(root, None, until),
        "ingest-and-dream": _writer(root, tmp_path / "in", 3),
    }
    outs = {name: tmp_path / f"{name}.json" for name in jobs}
    pids = {name: fork_loop(job, outs[name]) for name, job in jobs.items()}
    codes = {name: wait_exit(pid) for name, pid in pids.items()}
    results = {name: json.loads(outs[name].read_text()) for name in jobs}
    assert all(code == 0 for code in codes.values()), results
    print(f"materialize/recall at once: {results}")
    for sandbox in (shared, other):
        _check_sandbox(sandbox)
    _check_index(store)
    # a last materialize after the store settled: consistent and up to date
    final = materialize(store, shared, 60_000)
    assert _check_sandbox(shared) == len(final.files)
    assert all((shared / e.path).read_bytes() == (root / e.path).read_bytes() for e in final.files)
    assert validate_store(store) == []


# -- the load test ---------------------------------------------------------------------------

LOAD_SECONDS = 60.0


def _load_job(kind: str, n: int, root: Path, work: Path, until: float) -> Callable[[], dict]:
    def job() -> dict[str, Any]:
        counts: dict[str, Any] = {"ops": 0, "errors": [], "turns": {}}
        i = 0
        while time.time() < until:
            try:
                store = Store.open(root)
                if kind == "ingest":
                    # a new session every third op, else the last one grows by two turns
                    sid_n = i // 3
                    turns = 2 * (i % 3 + 1)
                    sid = f"load-{n}-{sid_n}"
                    texts = [f"{sid} turn {j}: Lisbon notes {j}" for j in range(turns)]
                    path = _jsonl(work / f"{sid}.jsonl", 1 + sid_n % 28, texts)
                    ingest(store, [path])
                    counts["turns"][sid] = turns
                elif kind == "search":
                    with SearchIndex.open(store) as idx:
                        idx.refresh()
                        idx.search(QUESTIONS[i % len(QUESTIONS)], k=5)
                else:
                    recall(store, QUESTIONS[i % len(QUESTIONS)], into=work / "sandbox")
                counts["ops"] += 1
            except Exception:
                counts["errors"].append(traceback.format_exc(limit=3))
            i += 1
        return counts

    return job


@pytest.mark.slow
def test_load_8_processes_recall_search_ingest_for_60s(template: Path, tmp_path: Path) -> None:
    store = _copy(template, tmp_path / "store")
    assert run_dream(store, load_engine()).status == "committed"
    before = _turn_texts(store)
    plan = [("ingest", 3), ("search", 3), ("recall", 2)]
    until = time.time() + LOAD_SECONDS
    pids, outs = {}, {}
    for kind, count in plan:
        for n in range(count):
            name = f"{kind}-{n}"
            work = tmp_path / name
            work.mkdir()
            outs[name] = tmp_path / f"{name}.json"
            pids[name] = fork_loop(_load_job(kind, n, store.root, work, until), outs[name])
    codes = {name: wait_exit(pid) for name, pid in pids.items()}
    results = {name: json.loads(outs[name].read_text()) for name in pids}
    assert all(code == 0 for code in codes.values()), results
    errors = {name: r["errors"] for name, r in results.items() if r["errors"]}
    # zero lost turns: every turn an ingester wrote is in main, and nothing older changed
    expected = {sid: n for r in results.values() for sid, n in r.get("turns", {}).items()}
    after = _turn_texts(store)
    lost = 0
    for sid, n in expected.items():
        want = [f"{sid} turn {j}: Lisbon notes {j}" for j in range(n)]
        got = after.get(sid, [])
        lost += sum(1 for j, text in enumerate(want) if j >= len(got) or got[j] != text)
    for sid, turns in before.items():
        assert after[sid] == turns
    ops = {
        kind: sum(r["ops"] for name, r in results.items() if name.startswith(kind))
        for kind, _ in plan
    }
    print(
        f"load test, 8 processes, {LOAD_SECONDS:.0f}s: ops {ops}, sessions ingested "
        f"{len(expected)}, turns {sum(expected.values())}, "
        f"errors {sum(map(len, errors.values()))}, lost turns {lost}"
    )
    assert errors == {}
    assert lost == 0
    assert all(ops[kind] > 0 for kind, _ in plan)
    assert _git(store.root, "status", "--porcelain", "--untracked-files=no") == ""
    subprocess.run(["git", "-C", str(store.root), "fsck", "--no-progress"], check=True)
    _check_index(store)
    _check_sandbox(tmp_path / "recall-0" / "sandbox")
    assert validate_store(store) == []
