"""A full disk never wedges a store: Dream's landing and ``forget`` stopped at every write.

Dream's landing (``git merge --ff-only`` in the store root) is stopped part way
through writing the live tree: on a real 3-6 MB tmpfs filled up to a few bytes left
(only as root: ``mount`` needs it), and without root by taking away the object of
the k-th file of the run's commit, so git writes the files before it and fails.
``forget`` gets ``ENOSPC`` at its k-th write, for every k (``os.write``, ``os.fsync``,
``os.replace``: every atomic write and receipt append goes through them), and from
``git commit``. After each: ``main`` is where it was and its tree validates, the live
tree is exactly ``main``'s, no receipt says ``committed`` for what did not land (not
even after the next ``ingest``, which commits the receipts folder whole), the error
is one line, and the same command succeeds once the fault is gone.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import shutil
import subprocess
import tarfile
from collections.abc import Callable, Iterator
from pathlib import Path

import git
import pytest
from killpoints import copy_store
from paths import SAMPLE
from typer.testing import CliRunner

from cli.dream_app import app as dream_app
from cli.memoryfs_app import app as memoryfs_app
from dream.engines import load_engine
from dream.errors import DreamError
from dream.landing.runlog import recent_records
from dream.landing.staging import Stage, kept_runs
from dream.runner import run_dream
from dream.skills import approve
from memoryfs.forget.remove import forget
from memoryfs.ingest import ingest
from memoryfs.receipts.log import parse_receipts
from memoryfs.store.store import Store, init_store
from memoryfs.validate.rules import validate_store

pytest.importorskip("dream.engines.embedded.engine")

FIRST, LATER = 4, 2  # sessions dreamed before, sessions the failing run lands
FORGET_SESSION = "2026-01-06-progress-report"


def _git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, check=True
    ).stdout.strip()


@pytest.fixture(scope="module")
def pending(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A dreamed sample store with two sessions pending: the next run adds and changes
    files in the live tree."""
    store = init_store(tmp_path_factory.mktemp("disk") / "store", "dana", "atlas")
    approve(store, by="tests")
    sessions = sorted(SAMPLE.glob("*.md"))
    ingest(store, sessions[:FIRST])
    assert run_dream(store, load_engine()).status == "committed"
    ingest(store, sessions[FIRST : FIRST + LATER])
    return store.root


def _validate_main(root: Path, scratch: Path) -> None:
    data = subprocess.run(
        ["git", "-C", str(root), "archive", "--format=tar", "main"], capture_output=True, check=True
    ).stdout
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(scratch, filter="data")
    findings = validate_store(Store.open(scratch))
    assert findings == [], [f.format() for f in findings]


def _receipt_runs(root: Path, rev: str | None) -> set[str]:
    """Run ids of the ``committed`` receipts in ``rev``'s tree (the live tree: None)."""
    runs: set[str] = set()
    if rev is None:
        folder = root / ".dream/receipts"
        blobs = [p.read_bytes() for p in folder.glob("*.jsonl")] if folder.is_dir() else []
    else:
        names = _git(root, "ls-tree", "-r", "--name-only", rev, ".dream/receipts/").split()
        blobs = [
            subprocess.run(
                ["git", "-C", str(root), "show", f"{rev}:{n}"], capture_output=True, check=True
            ).stdout
            for n in names
        ]
    for data in blobs:
        receipts, _ = parse_receipts(data)
        runs |= {r.run_id for r in receipts if r.status in ("committed", "forgotten")}
    return runs


def _check_untouched(root: Path, base: str, failed_run: str, scratch: Path) -> None:
    """``main`` where it was, valid, the live tree exactly it, no receipt of ``failed_run``."""
    assert _git(root, "rev-parse", "main") == base
    _validate_main(root, scratch)
    assert _git(root, "status", "--porcelain", "--untracked-files=all") == ""
    assert not (root / ".git" / "memoryfs-moving").exists()
    assert failed_run not in _receipt_runs(root, None)
    assert failed_run not in _receipt_runs(root, "main")
    assert kept_runs(Store.open(root)) == []  # the next run redoes it: no branch to keep


def _failed_run_id(store: Store) -> str:
    """The run that failed (run ids of one minute do not sort by time)."""
    failed = [r for r in recent_records(store, 100) if r["status"] == "error"]
    assert len(failed) == 1, failed
    return str(failed[0]["run_id"])


def _lands(root: Path, base: str, scratch: Path) -> None:
    """With the fault gone: ``dream run`` lands, the tree validates, nothing is left over."""
    result = run_dream(Store.open(root), load_engine())
    assert result.status == "committed", result.message
    assert _git(root, "rev-parse", "main~1") == base
    assert _git(root, "status", "--porcelain", "--untracked-files=all") == ""
    assert validate_store(Store.open(root)) == []
    _validate_main(root, scratch)


# -- Dream's landing, without root: the k-th file's object is missing --------------------


def _landing_files(root: Path, base: str, commit: str) -> list[tuple[str, str]]:
    """(path, blob) of each file the landing writes, in the order git writes them."""
    out = _git(root, "diff", "--raw", "--no-abbrev", "--no-renames", base, commit)
    rows = [line.split("\t") for line in out.splitlines()]
    return [(path, meta.split()[3]) for meta, path in rows if meta.split()[3] != "0" * 40]


@contextlib.contextmanager
def _missing_object(root: Path, k: int) -> Iterator[Callable[[Stage], None]]:
    """A ``before_sync`` that takes away the object of the k-th file the landing writes
    (put back when the block ends): git writes the files before it, then fails."""
    taken: list[tuple[Path, Path]] = []

    def take(stage: Stage) -> None:
        commit = _git(stage.path, "rev-parse", "HEAD")
        files = _landing_files(root, stage.base, commit)
        _, blob = files[min(k, len(files) - 1)]
        obj = root / ".git/objects" / blob[:2] / blob[2:]
        assert obj.exists(), "a new blob is loose"
        aside = root.parent / f"{blob}.aside"
        obj.rename(aside)
        taken.append((aside, obj))

    try:
        yield take
    finally:
        for aside, obj in taken:
            aside.rename(obj)


@pytest.mark.parametrize("k", [0, 7, 20, 10_000])
def test_a_landing_stopped_midway_leaves_the_live_tree_as_main(
    pending: Path, tmp_path: Path, k: int
) -> None:
    """A landing git stopped part way left the run's files in the live tree: every later
    run refused ("local changes would be overwritten") and the next ingest committed the
    run's receipts saying "committed"."""
    root = tmp_path / "store"
    copy_store(pending, root)
    base = _git(root, "rev-parse", "main")
    with _missing_object(root, k) as fault, pytest.raises(DreamError, match="main was not moved"):
        run_dream(Store.open(root), load_engine(), before_sync=fault)
    failed = _failed_run_id(Store.open(root))
    _check_untouched(root, base, failed, tmp_path / "scratch")
    _lands(root, base, tmp_path / "scratch")


def test_a_landing_whose_undo_failed_too_is_undone_by_the_next_ingest(
    pending: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The disk still full when the landing is undone: the next command puts the files
    back before it commits, says so, and commits no receipt of the run."""
    root = tmp_path / "store"
    copy_store(pending, root)
    base = _git(root, "rev-parse", "main")

    def no_space(*args: object, **kwargs: object) -> list[str]:
        raise OSError(errno.ENOSPC, "No space left on device")

    with monkeypatch.context() as m, _missing_object(root, 20) as fault:
        m.setattr("dream.landing.sync.undo_move", no_space)
        with pytest.raises(DreamError, match="put back by the next 'dream run'"):
            run_dream(Store.open(root), load_engine(), before_sync=fault)
    failed = _failed_run_id(Store.open(root))
    assert _git(root, "rev-parse", "main") == base
    assert _git(root, "status", "--porcelain")  # half moved, and noted
    assert (root / ".git" / "memoryfs-moving").exists()
    new_session = sorted(SAMPLE.glob("*.md"))[FIRST + LATER]
    out = CliRunner().invoke(memoryfs_app, ["ingest", str(new_session), "--store", str(root)])
    assert out.exit_code == 0, out.output
    assert "stopped half way" in out.stderr and "put back" in out.stderr
    assert failed not in _receipt_runs(root, "main")
    assert _git(root, "status", "--porcelain", "--untracked-files=all") == ""
    _validate_main(root, tmp_path / "scratch")
    result = run_dream(Store.open(root), load_engine())
    assert result.status == "committed", result.message
    assert validate_store(Store.open(root)) == []


def test_a_users_own_edits_stay_when_a_landing_is_undone(pending: Path, tmp_path: Path) -> None:
    root = tmp_path / "store"
    copy_store(pending, root)
    mine = root / "memory/knowledge/people/dana.md"
    mine.write_text(mine.read_text() + "\nA line Dana wrote by hand.\n")
    notes = root / "memory/my-notes.txt"
    notes.write_text("mine\n")
    with _missing_object(root, 3) as fault, pytest.raises(DreamError, match="local changes"):
        run_dream(Store.open(root), load_engine(), before_sync=fault)
    assert "A line Dana wrote by hand." in mine.read_text()
    assert notes.read_text() == "mine\n"
    status = _git(root, "status", "--porcelain", "--untracked-files=all").splitlines()
    assert sorted(line.split()[-1] for line in status) == [
        "memory/knowledge/people/dana.md",
        "memory/my-notes.txt",
    ]


# -- Dream's landing on a real full disk (root only) -------------------------------------


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 8 MB tmpfs, unmounted afterwards; skipped where mounting is not allowed."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root ('mount -t tmpfs -o size=8m')")
    where = tmp_path / "disk"
    where.mkdir()
    proc = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(where)], capture_output=True
    )
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {proc.stderr.decode().strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def _fill(disk: Path, leave: int) -> Callable[[Stage], None]:
    """A ``before_sync`` that fills ``disk`` up to ``leave`` bytes free."""

    def fill(stage: Stage) -> None:
        st = os.statvfs(disk)
        free = st.f_bavail * st.f_frsize
        with contextlib.suppress(OSError), open(disk / "ballast", "wb") as fh:
            fh.write(b"\0" * max(0, free - leave))

    return fill


def _full_disk_case(pending: Path, disk: Path, tmp_path: Path, leave: int) -> bool:
    """True when the disk stopped the landing."""
    root = disk / "store"
    copy_store(pending, root)
    base = _git(root, "rev-parse", "main")
    try:
        result = run_dream(Store.open(root), load_engine(), before_sync=_fill(disk, leave))
    except DreamError as exc:
        message = str(exc)
        assert "\n" not in message
        assert "no space left on device" in message or "put back by the next" in message
        (disk / "ballast").unlink()
        failed = _failed_run_id(Store.open(root))
        if "put back by the next" in message:  # the undo needed space too: the next run does it
            _lands(root, base, tmp_path / "scratch")
            assert failed not in _receipt_runs(root, "main")
        else:
            _check_untouched(root, base, failed, tmp_path / "scratch")
            _lands(root, base, tmp_path / "scratch")
        stopped = True
    else:  # enough room after all: it landed whole
        assert result.status == "committed"
        assert _git(root, "status", "--porcelain", "--untracked-files=all") == ""
        (disk / "ballast").unlink()
        stopped = False
    shutil.rmtree(root)
    return stopped


@pytest.mark.parametrize("leave", [0, 40_000])
def test_a_landing_on_a_full_disk_leaves_main_and_the_live_tree_whole(
    pending: Path, small_disk: Path, tmp_path: Path, leave: int
) -> None:
    """On a disk with a few KB left while Dream moved main: zero-byte files in the live
    tree, dozens of findings, and every later run refused."""
    assert _full_disk_case(pending, small_disk, tmp_path, leave)


_AMOUNTS = range(0, 200_000, 4096)  # bytes left free: the landing needs ~110 KB


@pytest.mark.slow
def test_a_landing_on_a_full_disk_at_every_amount_of_free_space(
    pending: Path, small_disk: Path, tmp_path: Path
) -> None:
    stopped = [_full_disk_case(pending, small_disk, tmp_path, leave) for leave in _AMOUNTS]
    assert stopped[0] and not stopped[-1]  # from nothing left to enough


# -- forget, ENOSPC at its k-th write ----------------------------------------------------


@pytest.fixture(scope="module")
def dreamed(pending: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("disk-dreamed") / "store"
    copy_store(pending, root)
    assert run_dream(Store.open(root), load_engine()).status == "committed"
    return root


class _WriteFault:
    """Fails the k-th ``os.write``/``os.fsync``/``os.replace`` with ``ENOSPC`` (k from 1;
    0: never) and counts them."""

    def __init__(self, k: int) -> None:
        self.k, self.count = k, 0
        self.real = {name: getattr(os, name) for name in ("write", "fsync", "replace")}

    def install(self, m: pytest.MonkeyPatch) -> None:
        for name, real in self.real.items():
            m.setattr(os, name, self._wrap(real))

    def _wrap(self, real: Callable[..., object]) -> Callable[..., object]:
        def call(*args: object, **kwargs: object) -> object:
            self.count += 1
            if self.count == self.k:
                raise OSError(errno.ENOSPC, "No space left on device")
            return real(*args, **kwargs)

        return call


def _forget(root: Path) -> object:
    return forget(Store.open(root), "session", FORGET_SESSION, "asked to drop that week")


def _forget_writes(dreamed: Path, tmp_path: Path) -> int:
    """How many writes a forget of the session makes before its commit."""
    root = tmp_path / "count"
    copy_store(dreamed, root)
    fault = _WriteFault(0)
    with pytest.MonkeyPatch.context() as m:
        m.setattr("memoryfs.store.store.Store.commit", _commit_counting(fault))
        fault.install(m)
        _forget(root)
    shutil.rmtree(root)
    return fault.seen_at_commit  # type: ignore[attr-defined, no-any-return]


def _commit_counting(fault: _WriteFault) -> Callable[..., str]:
    real = Store.commit

    def commit(self: Store, message: str, paths: list[str] | None = None) -> str:
        fault.seen_at_commit = fault.count  # type: ignore[attr-defined]
        return real(self, message, paths)

    return commit


def _forget_case(dreamed: Path, tmp_path: Path, k: int | None) -> None:
    """ENOSPC at the k-th write of a forget (None: from ``git commit``)."""
    root = tmp_path / f"forget-{k}"
    copy_store(dreamed, root)
    base = _git(root, "rev-parse", "main")
    with pytest.MonkeyPatch.context() as m:
        if k is None:

            def full(*args: object, **kwargs: object) -> str:
                raise git.GitCommandError(
                    ["git", "commit"], 128, b"error: insufficient space for object"
                )

            m.setattr("memoryfs.store.store._git_retrying", full)
        else:
            _WriteFault(k).install(m)
        out = CliRunner().invoke(
            memoryfs_app,
            ["forget", "--session", FORGET_SESSION, "--reason", "asked", "--store", str(root)],
        )
    assert out.exit_code == 1, (k, out.output)
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "no space left on device" in lines[0].lower(), (k, out.stderr)
    assert "run the command again" in lines[0], out.stderr
    assert _git(root, "rev-parse", "main") == base
    assert _git(root, "status", "--porcelain", "--untracked-files=all") == "", k
    assert not any(r.startswith("forget-") for r in _receipt_runs(root, None)), k
    ingest(Store.open(root), [sorted(SAMPLE.glob("*.md"))[FIRST + LATER]])  # the next command
    assert not any(r.startswith("forget-") for r in _receipt_runs(root, "main")), k
    done = _forget(root)  # the way out: the same command once there is space
    assert done.commit  # type: ignore[attr-defined]
    assert validate_store(Store.open(root)) == []
    assert run_dream(Store.open(root), load_engine()).status == "committed"
    shutil.rmtree(root)


def test_forget_on_a_full_disk_is_one_line_and_leaves_the_tree_as_main(
    dreamed: Path, tmp_path: Path
) -> None:
    """``forget`` on a full disk ended in a 57-line traceback, its receipts left in the live
    tree for the next ingest to commit."""
    writes = _forget_writes(dreamed, tmp_path)
    assert writes >= 10
    for k in (None, 1, writes // 2, writes):
        _forget_case(dreamed, tmp_path, k)


@pytest.mark.slow
def test_forget_with_enospc_at_every_write(dreamed: Path, tmp_path: Path) -> None:
    writes = _forget_writes(dreamed, tmp_path)
    for k in range(1, writes + 1):
        _forget_case(dreamed, tmp_path, k)


def test_dream_on_a_read_only_store_is_one_line(pending: Path, tmp_path: Path) -> None:
    """EROFS from the landing's first write: one line, nothing moved."""
    root = tmp_path / "store"
    copy_store(pending, root)
    base = _git(root, "rev-parse", "main")

    def read_only(*args: object, **kwargs: object) -> None:
        raise OSError(errno.EROFS, "Read-only file system")

    with pytest.MonkeyPatch.context() as m:
        m.setattr("dream.landing.sync.begin_move", read_only)
        out = CliRunner().invoke(dream_app, ["run", "--store", str(root)])
    assert out.exit_code == 1
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "read-only file system" in lines[0], out.stderr
    assert "Make the store writable" in lines[0]
    assert _git(root, "rev-parse", "main") == base
    assert _git(root, "status", "--porcelain", "--untracked-files=all") == ""
    _failed_run_id(Store.open(root))


def test_an_ingest_the_disk_stopped_leaves_no_receipts_for_dream_to_trip_on(
    pending: Path, tmp_path: Path
) -> None:
    """An ingest whose commit the disk refused left its receipts appended in the live
    tree: the next Dream landing refused them as local edits."""
    root = tmp_path / "store"
    copy_store(pending, root)
    base = _git(root, "rev-parse", "main")
    session = sorted(SAMPLE.glob("*.md"))[FIRST + LATER]

    def full(*args: object, **kwargs: object) -> str:
        if "--no-verify" in args:  # git commit (git add passes -A)
            raise git.GitCommandError(["git", "commit"], 128, b"fatal: Out of diskspace")
        return args[0](*args[1:])  # type: ignore[operator, no-any-return]

    with pytest.MonkeyPatch.context() as m:
        m.setattr("memoryfs.store.store._git_retrying", full)
        out = CliRunner().invoke(memoryfs_app, ["ingest", str(session), "--store", str(root)])
    assert out.exit_code == 1
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "no space left on device" in lines[0], out.stderr
    assert _git(root, "rev-parse", "main") == base
    status = _git(root, "status", "--porcelain", "--untracked-files=all").splitlines()
    assert [line.split()[-1] for line in status] == [f"memory/sessions/transcripts/{session.name}"]
    landed = run_dream(Store.open(root), load_engine())  # the transcript is not in its way
    assert landed.status == "committed", landed.message
    assert _git(root, "rev-parse", "main~1") == base
    result = ingest(Store.open(root), [session])  # and the next ingest commits it
    assert result.commit and _git(root, "status", "--porcelain", "--untracked-files=all") == ""
