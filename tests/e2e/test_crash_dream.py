"""Crash safety of ``dream run``: SIGKILL at many points, then check and recover.

Each kill point (``killpoints``) forks a child running the real command
(``forkrun.fork_cli``: its own session, so killing the group also kills the git
processes it started, as a crash of the whole service would; a plain kill leaves
a git child to finish on its own). The child dies by SIGKILL at a phase boundary,
the moment an outside observer sees it happen (the lock taken, the worktree or
the branch created, summaries and pages appearing in the staged tree, Git's
index.lock in the worktree or the store, the branch or ``main`` moving, the
worktree parked, the run record), or after a random delay inside a phase. There
is no fault hook or pause in the product code. Half the runs start from the last
run's parked worktree, half from none (``git worktree add``).

After every kill: ``git fsck`` is clean; ``main`` is a valid commit whose tree
passes ``memoryfs validate``; every transcript is byte-identical to its input (no
turn lost or changed); the ``dream`` lock is free at once; and the next
``dream run`` completes with the same ``memory/`` tree as a run that was never
interrupted (receipts differ only in run id and time), exactly one Dream commit
on the base, a clean live tree, and no stale worktree, branch or Git lock file.
"""

from __future__ import annotations

import contextlib
import io
import os
import random
import re
import shutil
import subprocess
import tarfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from forkrun import fork_cli, wait_exit
from killpoints import KillPoint, copy_store, in_two_processes, kill_when
from paths import SAMPLE

from cli.dream_app import app as dream_app
from dream.engines import load_engine
from dream.errors import DreamError
from dream.landing.staging import kept_runs
from dream.runner import RunOptions, run_dream
from dream.skills import approve
from memoryfs.ingest import ingest
from memoryfs.pages.transcript import Turn, parse_transcript, render_transcript
from memoryfs.store.store import Store, init_store
from memoryfs.validate.rules import validate_store

pytest.importorskip("dream.engines.embedded.engine")

FIRST, LATER = 4, 4  # sessions dreamed before the kill runs, sessions the kill runs dream
GROWN = 1  # index of a dreamed session that gains a turn before the kill runs


def _git(root: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, check=check
    )


def _out(root: Path, *args: str) -> str:
    return _git(root, *args).stdout.strip()


# -- the stores ------------------------------------------------------------------------


@dataclass(frozen=True)
class Setup:
    spare: Path  # a dreamed store with pending work and the last run's parked worktree
    fresh: Path  # the same without the parked worktree (the run adds a new one)
    base: str  # main in both
    tree: str  # main:memory after an uninterrupted run (receipts differ in run id and time)
    transcripts: dict[str, bytes]  # path -> bytes in main (Dream never changes them)
    duration: float  # an uninterrupted forked run, start to exit


def _grow(store: Store, sid: str, folder: Path) -> None:
    t = parse_transcript(store.transcript_path(sid).read_text(encoding="utf-8"))
    extra = Turn(
        n=len(t.turns) + 1,
        speaker="user",
        ts=t.turns[-1].ts,
        text="One more thing: the review meeting moved to Thursday with Marta.",
    )
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{sid}.md"
    path.write_text(render_transcript(t.__class__(**{**t.__dict__, "turns": (*t.turns, extra)})))
    ingest(store, [path])


def _transcripts(root: Path, rev: str = "main") -> dict[str, bytes]:
    names = _out(root, "ls-tree", "-r", "--name-only", rev, "memory/sessions/transcripts/")
    return {
        name: subprocess.run(
            ["git", "-C", str(root), "show", f"{rev}:{name}"], capture_output=True, check=True
        ).stdout
        for name in names.split()
        if name.endswith(".md")
    }


def _fork_dream(store: Path) -> int:
    return fork_cli(["run", "--store", str(store)], app=dream_app, prog_name="dream")


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Setup:
    folder = tmp_path_factory.mktemp("dream-crash")
    sessions = sorted(SAMPLE.glob("*.md"))
    store = init_store(folder / "spare", "dana", "atlas")
    approve(store, by="tests")
    ingest(store, sessions[:FIRST])
    engine = load_engine()
    assert run_dream(store, engine).status == "committed"
    ingest(store, sessions[FIRST : FIRST + LATER])
    _grow(store, sessions[GROWN].stem, folder / "grown")
    base = store.head()
    fresh = folder / "fresh"
    copy_store(store.root, fresh)
    _git(fresh, "worktree", "remove", "--force", str(fresh / ".dream/worktrees/.spare"))
    _git(fresh, "worktree", "prune")
    # the reference: an uninterrupted forked run, timed (for the random kill points)
    reference = folder / "reference"
    copy_store(store.root, reference)
    start = time.monotonic()
    pid = _fork_dream(reference)
    assert wait_exit(pid) == 0
    duration = time.monotonic() - start
    tree = _out(reference, "rev-parse", "main:memory")
    # a run from a fresh worktree gives the same tree
    other = folder / "other"
    copy_store(fresh, other)
    assert run_dream(Store.open(other), engine).status == "committed"
    assert _out(other, "rev-parse", "main:memory") == tree
    return Setup(store.root, fresh, base, tree, _transcripts(store.root), duration)


# -- observers: the moment a step happens ------------------------------------------------


def _observer(event: str, store: Path, pid: int, base: str) -> Callable[[], bool]:
    """A predicate that turns true when ``event`` has happened in ``store``."""
    git_dir = store / ".git"
    worktrees = store / ".dream/worktrees"
    heads = git_dir / "refs/heads"

    def run_dirs() -> list[Path]:
        try:
            return [worktrees / n for n in os.listdir(worktrees) if n != ".spare"]
        except FileNotFoundError:
            return []

    def branches() -> list[Path]:
        try:
            return [heads / "dream" / n for n in os.listdir(heads / "dream")]
        except FileNotFoundError:
            return []

    def read(path: Path) -> str:
        try:
            return path.read_text().strip()
        except OSError:
            return ""

    if event == "lock":
        lock = store / ".memoryfs/locks/dream.lock"
        return lambda: read(lock) == str(pid)
    if event == "worktree":
        return lambda: bool(run_dirs())
    if event == "branch":
        return lambda: bool(branches())
    if event.startswith("staged>="):  # k new files (summaries, pages) in the staged tree
        k = int(event.split(">=")[1])
        summaries = "memory/sessions/summaries"
        before = len(_out(store, "ls-tree", "--name-only", base, f"{summaries}/").split())

        def staged() -> bool:
            dirs = run_dirs()
            with contextlib.suppress(FileNotFoundError):
                return bool(dirs) and len(os.listdir(dirs[0] / summaries)) - 1 >= before + k
            return False

        return staged
    if event == "worktree-index.lock":
        admin = git_dir / "worktrees"

        def locked() -> bool:
            with contextlib.suppress(FileNotFoundError):
                return any((admin / n / "index.lock").exists() for n in os.listdir(admin))
            return False

        return locked
    if event == "branch-moved":
        return lambda: any(read(b) not in ("", base) for b in branches())
    if event == "index.lock":
        return lambda: (git_dir / "index.lock").exists()
    if event == "main-moved":
        return lambda: read(heads / "main") not in ("", base)
    if event == "parked":
        seen = [False]

        def parked() -> bool:
            seen[0] = seen[0] or bool(run_dirs())
            return seen[0] and not run_dirs()

        return parked
    if event == "record":
        runs = store / ".dream/runs"
        before_runs = set(os.listdir(runs)) if runs.is_dir() else set()
        return lambda: runs.is_dir() and bool(set(os.listdir(runs)) - before_runs)
    raise ValueError(event)


EVENTS = [
    "lock",
    "worktree",
    "branch",
    "staged>=1",
    "staged>=3",
    "worktree-index.lock",
    "branch-moved",
    "index.lock",
    "main-moved",
    "parked",
    "record",
]


def kill_points(setup: Setup, n: int, seed: int) -> list[KillPoint]:
    rng = random.Random(seed)
    points = []
    for i in range(n):
        group, fresh = bool(i % 2), bool((i // 2) % 2)
        if i % 3 == 2:
            points.append(KillPoint("timer", rng.uniform(0.0, setup.duration), group, fresh))
        else:
            event = EVENTS[(i - i // 3) % len(EVENTS)]
            delay = rng.choice([0.0, 0.0, 0.001, 0.005, 0.02])
            points.append(KillPoint(event, delay, group, fresh))
    return points


# -- one kill and its checks -------------------------------------------------------------


def _kill_at(point: KillPoint, store: Path, base: str) -> str:
    """Run ``dream run`` on ``store`` and kill it at ``point``: "killed" or "finished"."""
    pid = _fork_dream(store)
    fired = (lambda: True) if point.event == "timer" else _observer(point.event, store, pid, base)
    return kill_when(pid, fired, point)


def _validate_rev(store: Path, rev: str, scratch: Path) -> None:
    """``memoryfs validate`` on the tree of ``rev`` (not the live tree)."""
    data = subprocess.run(
        ["git", "-C", str(store), "archive", "--format=tar", rev], capture_output=True, check=True
    ).stdout
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(scratch, filter="data")
    findings = validate_store(Store.open(scratch))
    assert findings == [], [f.format() for f in findings]


_RUN_WORKTREE = re.compile(r"\bworktrees/\d{8}T\d{4,6}-[0-9a-f]{6}/")


def _check_after_kill(store: Path, setup: Setup, scratch: Path) -> None:
    fsck = _git(store, "fsck", "--no-progress", check=False)
    # Only a worktree that 'git worktree add' had not finished may be incomplete
    # ("worktrees/<id>/HEAD: detached HEAD points at nothing", "invalid worktrees/<id>/HEAD");
    # the next run removes it.
    problems = [line for line in fsck.stderr.splitlines() if not _RUN_WORKTREE.search(line)]
    assert fsck.returncode == 0 or not problems, fsck.stderr
    main = _out(store, "rev-parse", "--verify", "main^{commit}")
    assert main == setup.base or _out(store, "rev-parse", "main~1") == setup.base
    _validate_rev(store, "main", scratch)
    assert _transcripts(store) == setup.transcripts  # no turn lost or changed, in main
    for rel, data in setup.transcripts.items():  # nor in the live tree
        assert (store / rel).read_bytes() == data, rel
    # the dream lock died with the process
    with Store.open(store).lock("dream", timeout=1.0):
        pass


def _recover_and_compare(store: Path, setup: Setup) -> str:
    s = Store.open(store)
    result = run_dream(s, load_engine())
    assert result.status in ("committed", "nothing-pending"), result
    assert _out(store, "rev-parse", "main:memory") == setup.tree
    assert _out(store, "rev-parse", "main~1") == setup.base  # one dream commit, never two
    status = _out(store, "status", "--porcelain", "--untracked-files=all")
    assert all(line.startswith("?? .dream/receipts/") for line in status.splitlines()), status
    assert not (store / ".git/index.lock").exists()
    assert kept_runs(s) == []
    parked = os.listdir(store / ".dream/worktrees")
    assert parked in ([], [".spare"])  # at most the parked worktree of the last run
    worktrees = _out(store, "worktree", "list", "--porcelain").count("worktree ")
    assert worktrees == 1 + len(parked)
    assert validate_store(s) == []
    _git(store, "fsck", "--no-progress")  # and now entirely clean
    return result.status


def run_kills(setup: Setup, tmp_path: Path, points: list[KillPoint]) -> dict[str, int]:
    tmp_path.mkdir(exist_ok=True)
    outcomes = {"killed": 0, "finished": 0, "landed-before-kill": 0}
    for i, point in enumerate(points):
        store = tmp_path / f"run-{i}"
        t0 = time.monotonic()
        copy_store(setup.fresh if point.fresh else setup.spare, store)
        outcome = _kill_at(point, store, setup.base)
        outcomes[outcome] += 1
        t1 = time.monotonic()
        try:
            _check_after_kill(store, setup, tmp_path / "scratch")
            t2 = time.monotonic()
            if _recover_and_compare(store, setup) == "nothing-pending":
                outcomes["landed-before-kill"] += 1
        except AssertionError as exc:
            raise AssertionError(f"kill point {i} {point.label()} ({outcome}): {exc}") from exc
        if os.environ.get("CRASH_DEBUG"):
            print(
                f"{i:3} {point.label():40} {outcome} run {t1 - t0:.2f}s "
                f"check {t2 - t1:.2f}s recover {time.monotonic() - t2:.2f}s"
            )
        shutil.rmtree(store)
    return outcomes


def test_dream_run_survives_sigkill_at_12_points(setup: Setup, tmp_path: Path) -> None:
    points = [KillPoint(e, 0.0, i % 2 == 1, i % 4 >= 2) for i, e in enumerate(EVENTS)]
    points.append(KillPoint("timer", setup.duration / 2, True, False))
    outcomes = in_two_processes(lambda tmp, pts: run_kills(setup, tmp, pts), tmp_path, points)
    print(f"dream kill points: {len(points)} {outcomes}")
    assert outcomes["killed"] >= 10


@pytest.mark.slow
def test_dream_run_survives_sigkill_at_40_more_points(setup: Setup, tmp_path: Path) -> None:
    points = kill_points(setup, 40, seed=7)
    outcomes = in_two_processes(lambda tmp, pts: run_kills(setup, tmp, pts), tmp_path, points)
    print(f"dream kill points: {len(points)} {outcomes}")
    assert outcomes["killed"] >= 32


# -- regressions found by the kill runs ---------------------------------------------------


def _crashed_run(setup: Setup, store: Path) -> tuple[str, str]:
    """What a run killed after its commit leaves: its branch (one commit on the base),
    its worktree, no run record. Returns (run id, commit)."""
    copy_store(setup.spare, store)
    kept = run_dream(Store.open(store), load_engine(), RunOptions(review=True))
    assert kept.status == "review"
    (store / ".dream/runs" / f"{kept.run_id}.json").unlink()
    wt = store / ".dream/worktrees" / kept.run_id
    _git(store, "worktree", "add", "-q", str(wt), f"dream/{kept.run_id}")
    return kept.run_id, kept.commit


def _old_lock(path: Path) -> None:
    path.write_bytes(b"")
    os.utime(path, (time.time() - 5, time.time() - 5))


def test_the_branch_of_a_run_killed_after_its_commit_is_removed_by_the_next_run(
    setup: Setup, tmp_path: Path
) -> None:
    """A kill between the branch commit and the sync left a 'kept' branch forever."""
    store = tmp_path / "store"
    run_id, _ = _crashed_run(setup, store)
    s = Store.open(store)
    assert kept_runs(s) == [run_id]
    _recover_and_compare(store, setup)


def test_a_branch_deletion_killed_midway_does_not_keep_the_branch_forever(
    setup: Setup, tmp_path: Path
) -> None:
    """A run killed inside 'git branch -D', just after parking its worktree, left
    ``.git/packed-refs.new``: every later deletion of a ref failed ("unable to create
    file packed-refs.new: File exists"), so the landed run's branch stayed kept."""
    store = tmp_path / "store"
    copy_store(setup.spare, store)
    landed = run_dream(Store.open(store), load_engine())
    assert landed.status == "committed"
    _git(store, "branch", f"dream/{landed.run_id}", "main")  # killed before its deletion
    _git(store, "pack-refs", "--all")
    _old_lock(store / ".git/packed-refs.new")
    assert kept_runs(Store.open(store)) == [landed.run_id]
    assert run_dream(Store.open(store), load_engine()).status == "nothing-pending"
    assert kept_runs(Store.open(store)) == []
    assert not (store / ".git/packed-refs.new").exists()


def test_a_branch_kept_for_review_stays(setup: Setup, tmp_path: Path) -> None:
    store = tmp_path / "store"
    copy_store(setup.spare, store)
    kept = run_dream(Store.open(store), load_engine(), RunOptions(review=True))
    assert run_dream(Store.open(store), load_engine()).status == "committed"
    assert kept_runs(Store.open(store)) == [kept.run_id]


def _half_synced(setup: Setup, store: Path) -> tuple[list[str], list[str]]:
    """A store whose sync (``git merge --ff-only``) was killed midway: index.lock and
    some of the run's files (whole, cut short, not yet re-created) in the live tree.
    Returns the added and the modified paths of the run's commit."""
    _, commit = _crashed_run(setup, store)
    diff = _out(store, "diff", "--name-status", "--no-renames", "main", commit).splitlines()
    added = [line.split("\t")[1] for line in diff if line.startswith("A")]
    modified = [line.split("\t")[1] for line in diff if line.startswith("M")]
    assert len(added) >= 3 and len(modified) >= 2
    for rel, cut in zip(added[:3], (1.0, 0.5, 0.0), strict=True):
        data = subprocess.run(
            ["git", "-C", str(store), "show", f"{commit}:{rel}"], capture_output=True
        ).stdout
        (store / rel).write_bytes(data[: int(len(data) * cut)])
    (store / modified[0]).unlink()
    _old_lock(store / ".git/index.lock")
    return added, modified


def test_a_sync_killed_while_checking_out_is_undone_and_the_next_run_lands(
    setup: Setup, tmp_path: Path
) -> None:
    """What a killed sync left in the live tree made every later sync refuse to move main
    ('local edits', 'Unable to create index.lock')."""
    store = tmp_path / "store"
    _half_synced(setup, store)
    _recover_and_compare(store, setup)


def test_undoing_a_killed_sync_keeps_a_users_own_edits(setup: Setup, tmp_path: Path) -> None:
    store = tmp_path / "store"
    added, modified = _half_synced(setup, store)
    mine = store / modified[1]
    mine.write_text(mine.read_text() + "\na user's own edit\n")
    with pytest.raises(DreamError, match="was not moved"):  # as for any local edit
        run_dream(Store.open(store), load_engine())
    assert "a user's own edit" in mine.read_text()
    assert not (store / ".git/index.lock").exists()
    for rel in [*added[:3], modified[0]]:  # the killed sync's leftovers are gone
        assert _git(store, "diff", "--quiet", "HEAD", "--", rel, check=False).returncode == 0
        assert not _out(store, "status", "--porcelain", "--", rel)


def test_a_worktree_killed_while_being_added_is_unlocked_and_removed(
    setup: Setup, tmp_path: Path
) -> None:
    """'git worktree add' killed midway left a locked entry: prune kept it, and its
    branch (checked out there) could never be deleted."""
    store = tmp_path / "store"
    copy_store(setup.fresh, store)
    path = store / ".dream/worktrees/20260101T0000-abcdef"
    _git(store, "worktree", "add", "-q", "-b", "dream/20260101T0000-abcdef", str(path), "main")
    _git(store, "worktree", "lock", "--reason", "initializing", str(path))
    (store / ".git/worktrees" / path.name / "HEAD").write_text("0" * 40 + "\n")  # not set yet
    shutil.rmtree(path)
    assert _git(store, "fsck", "--no-progress", check=False).returncode != 0
    _recover_and_compare(store, setup)


@pytest.mark.parametrize("killed_in", ["commondir", "gitdir"])
def test_a_worktree_entry_left_half_written_is_forgotten(
    setup: Setup, tmp_path: Path, killed_in: str
) -> None:
    """'git worktree add' killed while writing its entry: an empty commondir made every
    'git worktree' command, the next run's cleanup first, fail; an empty gitdir left a
    locked entry that prune kept forever."""
    store = tmp_path / "store"
    copy_store(setup.fresh, store)
    path = store / ".dream/worktrees/20260101T0000-abcdef"
    _git(store, "worktree", "add", "-q", "-b", "dream/20260101T0000-abcdef", str(path), "main")
    _git(store, "worktree", "lock", "--reason", "initializing", str(path))
    admin = store / ".git/worktrees" / path.name
    (admin / "HEAD").unlink()  # written after both
    (admin / killed_in).write_text("")
    if killed_in == "gitdir":
        (admin / "commondir").unlink()  # written after gitdir
    else:
        assert _git(store, "worktree", "list", check=False).returncode != 0
    _recover_and_compare(store, setup)
    assert not admin.exists() and not path.exists()


def test_stale_ref_locks_and_a_half_parked_worktree_are_recovered(
    setup: Setup, tmp_path: Path
) -> None:
    """A run killed while deleting its branch left refs/heads/dream/<id>.lock (the branch
    stayed forever); one killed while parking its worktree left a folder Git no longer
    knows."""
    store = tmp_path / "store"
    copy_store(setup.spare, store)
    _git(store, "branch", "dream/20260101T0000-abcdef", "main")
    _old_lock(store / ".git/refs/heads/dream/20260101T0000-abcdef.lock")
    _old_lock(store / ".git/refs/heads/main.lock")
    spare = store / ".dream/worktrees/.spare"
    admin = Path((spare / ".git").read_text().split(":", 1)[1].strip())
    (admin / "gitdir").write_text(f"{store}/.dream/worktrees/20260101T0000-abcdef/.git\n")
    _recover_and_compare(store, setup)
    assert not list((store / ".git/refs").rglob("*.lock"))
