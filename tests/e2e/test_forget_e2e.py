"""The forget suite: on a Dream-consolidated store, forgetting leaves the text nowhere.

One store is built per module from the packaged sample (``dream demo``: ingest and
one Dream run) and copied whole per case, ``.dream/`` (the parked worktree, run
logs), ``.memoryfs/`` caches and reflogs included. Each case forgets a page, a
session or a phrase through the CLI, with and without ``--purge-history``, runs
Dream again, and looks for the forgotten text everywhere: the working tree,
caches, ``.dream/``, ``recall`` and, after a purge, every Git object and reflog.
The product's own scanner (``memoryfs forget --verify``) must agree, and a plain
grep for the words stands beside it so the scanner is not its own judge.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.memoryfs_app import app
from dream.demo import default_sample, run_demo
from dream.engines.embedded.engine import EmbeddedEngine
from dream.health.verdicts import check_health
from dream.runner import RunOptions, run_dream
from memoryfs.forget.verify import verify_forgotten
from memoryfs.read.recall import recall
from memoryfs.store.store import Store

SESSION = "2026-01-19-lisbon-followup"
# what that session alone said (no other transcript holds these words)
SESSION_WORDS = ("surfs every morning", "bioacoustician", "cascais")
PAGE = "tiago-ferreira"
PHRASE = "Tagus Marine Lab"
CASES = {
    "session": (SESSION, SESSION_WORDS, "Where does Tiago live and what does he do before work?"),
    "page": (PAGE, (), "Who is Tiago Ferreira?"),
    "phrase": (PHRASE, ("tagus marine lab",), "Where does Tiago work?"),
}


@pytest.fixture(scope="module")
def dreamed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("forget-e2e") / "store"
    run_demo(default_sample(), root)
    # the text is there to begin with, where the suite will look for it
    text = _words(_tree_text(root))
    assert all(_has(text, w) for w in (*SESSION_WORDS, "tagus marine lab"))
    assert (root / ".dream" / "worktrees" / ".spare").is_dir()
    assert any((root / ".dream" / "runs").glob("*.json"))
    return root


def _copy(dreamed: Path, dest: Path) -> Store:
    shutil.copytree(dreamed, dest, symlinks=True)
    return Store.open(dest)


def _words(text: str) -> str:
    """Text as lower-case words between single spaces (what a phrase matches on)."""
    return " " + " ".join(re.findall(r"\w+", text.lower())) + " "


def _has(words: str, phrase: str) -> bool:
    return _words(phrase) in words


def _tree_text(root: Path, skip_git: bool = True) -> str:
    """Every file under ``root`` (paths included), ``.git`` left out unless asked."""
    parts: list[str] = []
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if skip_git and rel.parts[0] == ".git":
            continue
        parts.append(rel.as_posix())
        if path.is_file() and not path.is_symlink():
            parts.append(path.read_bytes().decode("utf-8", errors="replace"))
    return "\n".join(parts)


def _objects(root: Path) -> str:
    out = subprocess.run(
        ["git", "-C", str(root), "cat-file", "--batch-all-objects", "--batch"],
        capture_output=True,
        check=True,
    ).stdout
    return out.decode("utf-8", errors="replace")


def _forget(store: Store, kind: str, target: str, purge: bool) -> str:
    args = ["forget", f"--{kind}", target, "--reason", "asked to", "--store", str(store.root)]
    result = CliRunner().invoke(app, args + (["--purge-history", "--yes"] if purge else []))
    assert result.exit_code == 0, result.stderr
    assert "verified: nothing forgotten remains" in result.stdout
    return result.stdout


@pytest.mark.parametrize("purge", [False, True], ids=["keep-history", "purge-history"])
@pytest.mark.parametrize("kind", sorted(CASES))
def test_forgotten_text_is_nowhere_after_dream(
    dreamed: Path, tmp_path: Path, kind: str, purge: bool
) -> None:
    target, words, question = CASES[kind]
    store = _copy(dreamed, tmp_path / "store")
    _forget(store, kind, target, purge)
    assert (dreamed / ".dream" / "worktrees" / ".spare").is_dir()  # the copy's, not ours
    run = run_dream(Store.open(store.root), EmbeddedEngine(), RunOptions())
    assert run.status in ("committed", "nothing-pending", "no-change"), run.problems
    store = Store.open(store.root)

    # the product's scanner: live places always, history after a purge
    report = verify_forgotten(store, history=purge)
    assert report.ok, [r.line() for r in report.remains]
    # a plain look beside it: the working tree, caches, .dream/ (paths and contents)
    live = _words(_tree_text(store.root))
    answer = _words(recall(store, question).text)
    for w in words:
        assert not _has(live, w), w
        assert not _has(answer, w), w
    if kind == "page":
        files = [p.stem for p in (store.memory / "knowledge").rglob("*.md")]
        assert PAGE not in files
        assert f"[[{PAGE}" not in _tree_text(store.root)
    if purge:
        history = _words(_objects(store.root) + _tree_text(store.root / ".git", skip_git=False))
        for w in words:
            assert not _has(history, w), w
        if kind == "page":
            assert f"[[{PAGE}" not in _objects(store.root)
    # a forget is an expected transition: health does not call it a loss
    report_h = check_health(store)
    bad = [
        (lv.item, lv.verdict, lv.reason)
        for lv in report_h.lineages
        if lv.verdict in ("source_at_risk", "uncertain")
    ]
    assert bad == []


def test_verify_fails_loudly_while_history_holds_it(dreamed: Path, tmp_path: Path) -> None:
    store = _copy(dreamed, tmp_path / "store")
    _forget(store, "session", SESSION, purge=False)
    out = CliRunner().invoke(app, ["forget", "--verify", "--store", str(store.root)])
    assert out.exit_code == 1
    lines = [line for line in out.stderr.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and lines[0].startswith("error: git objects: ")
    assert "--purge-history" in lines[0]
    # and what it reports never repeats the forgotten text
    assert not any(_has(_words(out.stdout + out.stderr), w) for w in SESSION_WORDS)


def test_a_purge_that_failed_after_its_forget_is_finished_by_running_it_again(
    dreamed: Path, tmp_path: Path
) -> None:
    store = _copy(dreamed, tmp_path / "store")
    args = ["forget", "--session", SESSION, "--reason", "asked to", "--store", str(store.root)]
    # the forget committed, the purge did not happen (killed, a full disk, ...)
    assert CliRunner().invoke(app, args).exit_code == 0
    again = CliRunner().invoke(app, [*args, "--purge-history", "--yes"])
    assert again.exit_code == 0, again.stderr
    assert "purged history" in again.stdout and "verified" in again.stdout
    assert not _has(_words(_objects(store.root)), "surfs every morning")


def test_a_purge_that_cannot_finish_refuses_before_the_forget(
    dreamed: Path, tmp_path: Path
) -> None:
    store = _copy(dreamed, tmp_path / "store")
    head = store.head()
    elsewhere = tmp_path / "checkout"
    subprocess.run(
        ["git", "-C", str(store.root), "worktree", "add", "-q", "--detach", str(elsewhere)],
        check=True,
    )
    args = ["forget", "--session", SESSION, "--reason", "asked to", "--purge-history", "--yes"]
    out = CliRunner().invoke(app, [*args, "--store", str(store.root)])
    assert out.exit_code == 1 and "worktrees outside .dream" in out.stderr
    assert store.head() == head  # nothing committed: the same command works once it is gone


def test_a_forget_stopped_after_its_commit_is_finished_by_running_it_again(
    dreamed: Path, tmp_path: Path
) -> None:
    store = _copy(dreamed, tmp_path / "store")
    args = ["forget", "--session", SESSION, "--reason", "asked to", "--store", str(store.root)]
    assert CliRunner().invoke(app, args).exit_code == 0
    # as if the forget had been stopped after its commit, before it removed Dream's
    # parked worktree (a checkout of the tree before the forget)
    spare = store.root / ".dream" / "worktrees" / ".spare"
    shutil.copytree(dreamed / ".dream" / "worktrees" / ".spare", spare, symlinks=True)
    left = verify_forgotten(store, history=False)
    assert not left.ok
    again = CliRunner().invoke(app, args)
    assert again.exit_code == 0, again.stderr
    assert "already forgotten; finished what the earlier forget left: " in again.stderr
    assert "Dream worktrees removed" in again.stderr and not spare.exists()
    assert verify_forgotten(store, history=False).ok
    # and once finished, running it again has nothing to do (an error, as it always was)
    third = CliRunner().invoke(app, args)
    assert third.exit_code == 1 and "already forgotten; nothing to do" in third.stderr
