"""dream run end to end with a scripted engine: staging, gates, compare-and-swap sync,
stop conditions, the run lock, review / apply / discard."""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from dream_fixtures import ScriptedEngine, add_sessions, session_file

from dream.engines.base import EngineContext
from dream.errors import DreamError, RunNotFound
from dream.landing.kept_runs import apply_run, discard_run, dream_status, review_run
from dream.landing.staging import Stage, kept_runs
from dream.phases.orient import CACHE_NAME, find_pending, orient
from dream.records import ConsolidationReport
from dream.runner import RunOptions, run_dream
from dream.skills import approve
from memoryfs.ingest import ingest
from memoryfs.pages.transcript import Transcript
from memoryfs.receipts.log import ReceiptLog, parse_receipts, store_receipt_dir
from memoryfs.receipts.records import page_item, scope_ids, session_item
from memoryfs.store.atomic import atomic_write_text
from memoryfs.store.hashing import content_hash, turn_hash
from memoryfs.store.store import Store, init_store
from memoryfs.validate.rules import validate_store

S1 = (
    "2026-01-05-figures",
    "2026-01-05",
    ["I need the figures as PDF for Reefsong. Three of them.", "Sure."],
)
S2 = ("2026-01-06-marta", "2026-01-06", ["Marta is a nurse at the UKE in Hamburg.", "Noted."])
S3 = (
    "2026-01-07-lisbon",
    "2026-01-07",
    ["The Lisbon workshop is on 12 March with Tiago.", "Great."],
)


def git(store: Store, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=store.root, capture_output=True, text=True, check=True
    ).stdout.strip()


def worktrees(store: Store) -> list[str]:
    """What is left under .dream/worktrees: only the parked worktree of the last run."""
    return sorted(p.name for p in (store.dream_dir / "worktrees").iterdir())


def clean(store: Store) -> bool:
    """No change to the live tree (a run's receipts are committed with its commit)."""
    return git(store, "status", "--porcelain", "--untracked-files=all") == ""


def head(store: Store) -> str:
    return git(store, "rev-parse", "HEAD")


@pytest.fixture
def store(tmp_path: Path) -> Store:
    s = init_store(tmp_path / "store", "dana", "atlas")
    approve(s, by="tests")
    return s


def test_nothing_pending_makes_no_commit_and_says_so(store: Store) -> None:
    before = head(store)
    result = run_dream(store, ScriptedEngine())
    assert result.status == "nothing-pending"
    assert "nothing pending" in result.message and "no commit" in result.message
    assert head(store) == before
    assert kept_runs(store) == []


def test_a_run_commits_once_with_trailers_and_validates(store: Store, tmp_path: Path) -> None:
    add_sessions(store, tmp_path / "in", [S1, S2])
    base = head(store)
    result = run_dream(store, ScriptedEngine())
    assert result.status == "committed", result
    assert result.sessions == (S1[0], S2[0])
    assert head(store) == result.commit
    assert git(store, "rev-parse", "HEAD~1") == base  # exactly one commit
    message = git(store, "log", "-1", "--format=%B")
    assert message.startswith("dream: 2 sessions summarized")
    assert f"Dream-Run: {result.run_id}" in message
    assert "Dream-Engine: scripted/1" in message
    assert "Dream-Skill: " in message and result.skill in message
    trailers = git(store, "log", "-1", "--format=%(trailers:key=Dream-Run,valueonly)")
    assert trailers == result.run_id
    # the live tree has it, nothing is left behind, and the store validates
    assert (store.memory / "sessions/summaries" / f"{S1[0]}.md").is_file()
    assert clean(store)
    assert kept_runs(store) == [] and worktrees(store) == [".spare"]
    assert validate_store(store) == []
    assert (store.dream_dir / "runs" / f"{result.run_id}.json").is_file()
    assert result.pending_after == 0
    assert run_dream(store, ScriptedEngine()).status == "nothing-pending"


def test_the_run_id_never_enters_the_tree(store: Store, tmp_path: Path) -> None:
    add_sessions(store, tmp_path / "in", [S1])
    result = run_dream(store, ScriptedEngine())
    proc = subprocess.run(
        ["git", "grep", "-q", result.run_id, "HEAD", "--", "memory", "memory.toml"], cwd=store.root
    )
    assert proc.returncode == 1  # not found anywhere in the committed memory
    receipts = git(store, "show", "--name-only", "--format=", "HEAD", "--", ".dream")
    assert receipts.startswith(".dream/receipts/")  # only in the receipts it committed


def test_a_grown_session_is_reprocessed_and_only_its_pages_change(
    store: Store, tmp_path: Path
) -> None:
    add_sessions(store, tmp_path / "in", [S1, S2])
    run_dream(store, ScriptedEngine())
    before = head(store)
    longer = (S2[0], S2[1], [*S2[2], "She also cycles to work."])
    add_sessions(store, tmp_path / "in2", [longer])
    pending, _ = find_pending(store, head(store))
    assert [(p.id, p.reason, p.turns) for p in pending] == [(S2[0], "grown", 3)]
    result = run_dream(store, ScriptedEngine())
    assert result.status == "committed" and result.sessions == (S2[0],)
    changed = git(store, "diff", "--name-only", "HEAD~1", "HEAD", "--", "memory").splitlines()
    assert changed == ["memory/sessions/index.md", f"memory/sessions/summaries/{S2[0]}.md"]
    assert git(store, "diff", "--name-only", before, "HEAD~1", "--", "memory").splitlines() == [
        f"memory/sessions/transcripts/{S2[0]}.md"
    ]


def test_same_input_and_base_give_identical_trees(tmp_path: Path) -> None:
    trees = []
    for name in ("a", "b"):
        s = init_store(tmp_path / name, "dana", "atlas")
        add_sessions(s, tmp_path / f"in-{name}", [S1, S2, S3])
        result = run_dream(s, ScriptedEngine(), RunOptions(allow_unapproved=True))
        assert result.status == "committed"
        # the memory trees; the receipts beside them carry times and run ids
        trees.append((git(s, "rev-parse", "HEAD~1:memory"), git(s, "rev-parse", "HEAD:memory")))
    assert trees[0] == trees[1]


def test_a_recycled_worktree_gives_the_same_tree_as_a_fresh_one(tmp_path: Path) -> None:
    trees = []
    for name, recycle in (("fresh", False), ("recycled", True)):
        s = init_store(tmp_path / name, "dana", "atlas")
        add_sessions(s, tmp_path / f"in-{name}", [S1])
        assert (
            run_dream(s, ScriptedEngine(), RunOptions(allow_unapproved=True)).status == "committed"
        )
        spare = s.dream_dir / "worktrees" / ".spare"
        if recycle:  # leave the parked worktree dirty: junk, an edit, a staged file
            (spare / "memory/notes/junk.md").write_text("junk\n")
            (spare / "memory/INDEX.md").write_text("edited\n")
            (spare / "memory/sessions/staged.md").write_text("x\n")
            subprocess.run(["git", "add", "memory/sessions/staged.md"], cwd=spare, check=True)
        else:
            subprocess.run(
                ["git", "worktree", "remove", "--force", str(spare)], cwd=s.root, check=True
            )
        add_sessions(s, tmp_path / f"in2-{name}", [S2, S3])
        assert (
            run_dream(s, ScriptedEngine(), RunOptions(allow_unapproved=True)).status == "committed"
        )
        trees.append(git(s, "rev-parse", "HEAD:memory"))
        assert "junk" not in git(s, "ls-tree", "-r", "--name-only", "HEAD")
    assert trees[0] == trees[1]


def test_after_a_sync_the_live_tree_is_mains_tree_and_the_parked_stage_is_detached(
    store: Store, tmp_path: Path
) -> None:
    add_sessions(store, tmp_path / "in", [S1, S2])
    first = run_dream(store, ScriptedEngine(), RunOptions())
    add_sessions(store, tmp_path / "in2", [S3])
    result = run_dream(store, ScriptedEngine(), RunOptions())
    assert first.status == result.status == "committed"
    # the live files and index are exactly main's commit: nothing missing, stale or extra
    assert clean(store) and git(store, "diff", "--name-only", "HEAD") == ""
    assert git(store, "write-tree") == git(store, "rev-parse", "main^{tree}")
    assert git(store, "rev-parse", "main") == result.commit
    spare = store.dream_dir / "worktrees" / ".spare"
    parked = subprocess.run(
        ["git", "symbolic-ref", "-q", "HEAD"], cwd=spare, capture_output=True, text=True
    )
    assert parked.returncode == 1  # detached: no branch held
    here = subprocess.run(["git", "rev-parse", "HEAD"], cwd=spare, capture_output=True, text=True)
    assert here.stdout.strip() == result.commit
    dirty = ["git", "status", "--porcelain", "--untracked-files=all"]
    assert subprocess.run(dirty, cwd=spare, capture_output=True, text=True).stdout == ""
    assert kept_runs(store) == []


def test_orient_is_derived_from_the_base_commit_not_the_live_tree(
    store: Store, tmp_path: Path
) -> None:
    add_sessions(store, tmp_path / "in", [S1])
    run_dream(store, ScriptedEngine())
    # an uncommitted transcript in the live tree is not a pending session
    session_file(store.memory / "sessions/transcripts", "2026-01-09-draft", "2026-01-09", ["Hi."])
    assert orient(store).pending == ()
    # a summary whose transcript_hash no longer matches makes its session pending again
    summary = store.memory / f"sessions/summaries/{S1[0]}.md"
    summary.write_text(summary.read_text().replace("transcript_hash: ", "transcript_hash: 0"))
    store.commit("hand edit", [f"memory/sessions/summaries/{S1[0]}.md"])
    assert [p.reason for p in orient(store).pending] == ["grown"]
    # the blob cache is only a cache: without it the answer is the same
    (store.cache_dir / CACHE_NAME).unlink()
    assert [p.id for p in orient(store).pending] == [S1[0]]


def _bad_claim(t: Transcript, turn: object) -> str:
    return "Dana met Gunther in Oslo on 3 April 2026 and paid 250 euros."


def test_a_gate_failure_leaves_main_untouched_and_keeps_the_branch(
    store: Store, tmp_path: Path
) -> None:
    add_sessions(store, tmp_path / "in", [S1])
    before = head(store)
    result = run_dream(store, ScriptedEngine(claim=_bad_claim))
    assert result.status == "gate-failed" and result.exit_code == 1
    assert head(store) == before
    assert clean(store)
    assert kept_runs(store) == [result.run_id]
    assert git(store, "rev-parse", f"dream/{result.run_id}") == result.commit
    assert git(store, "rev-parse", f"dream/{result.run_id}~1") == before
    text = "\n".join(result.problems)
    path = f"memory/sessions/summaries/{S1[0]}.md"
    assert f"{path}:" in text
    assert "DV101 name 'Gunther'" in text and "DV101 name 'Oslo'" in text
    assert "DV102 number '250'" in text and "DV103 date '3 April 2026'" in text
    assert "DV101 name 'Dana'" not in text  # a participant is a known name
    line = int(result.problems[0].split(":")[1])
    committed = git(store, "show", f"dream/{result.run_id}:{path}").splitlines()
    assert "Gunther" in committed[line - 1]
    # still pending: nothing landed
    assert [p.id for p in orient(store).pending] == [S1[0]]


def _broken_link_page(ctx: EngineContext, t: Transcript) -> None:
    body = "\n- Works on [[reefsong-project]].\n"
    text = f"---\nid: dana\ntitle: Dana\ntype: person\nupdated: {t.date}\n---\n{body}"
    atomic_write_text(ctx.memory / "knowledge/people/dana.md", text)


def test_a_validation_finding_leaves_its_page_out(store: Store, tmp_path: Path) -> None:
    add_sessions(store, tmp_path / "in", [S1])
    before = head(store)
    result = run_dream(store, ScriptedEngine(page=_broken_link_page))
    assert result.status == "committed" and result.exit_code == 0
    assert any("memory/knowledge/people/dana.md:" in p and "MF201" in p for p in result.problems)
    assert [x.split(":")[0] for x in result.left_out] == ["memory/knowledge/people/dana.md"]
    assert "MF201" in result.left_out[0] and result.left_out[0].endswith("(file left out)")
    # the summary landed without the page; the branch keeps the page for review
    assert git(store, "rev-parse", "HEAD~1") == before
    assert (store.memory / f"sessions/summaries/{S1[0]}.md").is_file()
    assert not (store.memory / "knowledge/people/dana.md").exists()
    assert validate_store(store) == [] and clean(store)
    assert kept_runs(store) == [result.run_id]
    branch = f"dream/{result.run_id}"
    assert git(store, "rev-parse", f"{branch}~1") == head(store)
    assert "Works on [[reefsong-project]]" in git(
        store, "show", f"{branch}:memory/knowledge/people/dana.md"
    )


def test_full_validation_finds_the_same(store: Store, tmp_path: Path) -> None:
    add_sessions(store, tmp_path / "in", [S1])
    result = run_dream(
        store, ScriptedEngine(page=_broken_link_page), RunOptions(full_validation=True)
    )
    assert any("MF201" in p for p in result.problems)


def test_main_moving_meanwhile_is_rebased_and_both_land(store: Store, tmp_path: Path) -> None:
    add_sessions(store, tmp_path / "in", [S1])
    ingested: list[str] = []

    def ingest_meanwhile(stage: Stage) -> None:
        ingested.append(add_sessions(store, tmp_path / "late", [S3]))

    result = run_dream(store, ScriptedEngine(), before_sync=ingest_meanwhile)
    assert result.status == "committed" and result.rebased == 1
    assert head(store) == result.commit
    assert git(store, "rev-parse", "HEAD~1") == ingested[0]  # the ingest landed first, then dream
    assert (store.memory / f"sessions/transcripts/{S3[0]}.md").is_file()
    assert result.pending_after == 1  # the late session waits for the next run
    # the rebased indexes list the late session too
    assert f"| {S3[0]} |" in (store.memory / "sessions/index.md").read_text()
    assert validate_store(store) == []
    assert clean(store)
    # both appended to today's receipts: Git's union merge kept the lines of each
    tiers = {(r.item, r.tier) for r in ReceiptLog(store_receipt_dir(store.root)).read()}
    assert {(session_item(S3[0]), "ingested"), (session_item(S1[0]), "committed")} <= tiers
    assert run_dream(store, ScriptedEngine()).sessions == (S3[0],)


def test_a_conflicting_move_starts_the_run_over(store: Store, tmp_path: Path) -> None:
    add_sessions(store, tmp_path / "in", [S1])
    calls: list[int] = []

    def edit_index(stage: Stage) -> None:
        calls.append(1)
        if len(calls) == 1:  # someone regenerates the index by hand while the run works
            with store.lock("write"):
                (store.memory / "sessions/index.md").write_text("# Sessions\n\nhand edit\n")
                store.commit("hand edit", ["memory/sessions/index.md"])

    result = run_dream(store, ScriptedEngine(), before_sync=edit_index)
    assert result.status == "committed" and result.restarted == 1 and len(calls) == 2
    assert "hand edit" in git(store, "log", "--format=%s", "-2")
    assert validate_store(store) == []


def test_local_edits_block_the_fast_forward_and_keep_the_branch(
    store: Store, tmp_path: Path
) -> None:
    add_sessions(store, tmp_path / "in", [S1])
    before = head(store)

    def edit_live(stage: Stage) -> None:
        (store.memory / "sessions/index.md").write_text("uncommitted edit\n")

    with pytest.raises(DreamError, match="was not moved"):
        run_dream(store, ScriptedEngine(), before_sync=edit_live)
    assert head(store) == before
    assert len(kept_runs(store)) == 1
    (store.memory / "sessions/index.md").unlink()
    git(store, "checkout", "--", "memory/sessions/index.md")
    result = apply_run(store, kept_runs(store)[0])
    assert result.status == "committed"


def test_a_second_concurrent_run_exits_with_a_clear_message(store: Store, tmp_path: Path) -> None:
    add_sessions(store, tmp_path / "in", [S1])
    with (
        store.lock("dream", timeout=0),
        pytest.raises(DreamError, match="another dream run is in progress"),
    ):
        run_dream(store, ScriptedEngine())
    assert run_dream(store, ScriptedEngine()).status == "committed"


def _lock_holder(store: Store) -> subprocess.Popen[str]:
    code = textwrap.dedent(
        f"""
        import sys, time
        from memoryfs.store.store import Store
        with Store.open({str(store.root)!r}).lock("dream", timeout=0):
            print("locked", flush=True)
            time.sleep(60)
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "locked"
    return proc


def test_a_crashed_run_never_leaves_the_lock_stuck(store: Store, tmp_path: Path) -> None:
    add_sessions(store, tmp_path / "in", [S1])
    holder = _lock_holder(store)
    try:
        with pytest.raises(DreamError, match=rf"in progress .*\(pid {holder.pid}\)"):
            run_dream(store, ScriptedEngine())
    finally:
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait()
    # and what a crash leaves in .dream/worktrees is cleaned by the next run
    leftover = store.dream_dir / "worktrees" / "20260101T0000-abcdef"
    git(store, "worktree", "add", "-q", "-b", "dream/20260101T0000-abcdef", str(leftover), "HEAD")
    assert run_dream(store, ScriptedEngine()).status == "committed"
    assert not leftover.exists() and kept_runs(store) == []


def test_review_then_apply(store: Store, tmp_path: Path) -> None:
    add_sessions(store, tmp_path / "in", [S1, S2])
    before = head(store)
    result = run_dream(store, ScriptedEngine(), RunOptions(review=True))
    assert result.status == "review" and head(store) == before
    assert kept_runs(store) == [result.run_id]
    pages = review_run(store, result.run_id)
    assert [p.path for p in pages][:2] == [
        f"memory/sessions/summaries/{S1[0]}.md",
        f"memory/sessions/summaries/{S2[0]}.md",
    ]
    assert all(p.diff.startswith("diff --git") for p in pages)
    assert pages[0].status == "A" and "+## Key points" in pages[0].diff
    # main moves before the human applies: apply rebases, with the same gates
    add_sessions(store, tmp_path / "late", [S3])
    applied = apply_run(store, result.run_id)
    assert applied.status == "committed" and applied.rebased == 1
    assert kept_runs(store) == []
    assert validate_store(store) == []
    assert "Dream-Run: " + result.run_id in git(store, "log", "-1", "--format=%B")
    with pytest.raises(RunNotFound):
        apply_run(store, result.run_id)


def test_apply_runs_the_gates_again(store: Store, tmp_path: Path) -> None:
    add_sessions(store, tmp_path / "in", [S1])
    before = head(store)
    failed = run_dream(store, ScriptedEngine(claim=_bad_claim))
    again = apply_run(store, failed.run_id)
    assert again.status == "gate-failed" and head(store) == before
    assert kept_runs(store) == [failed.run_id]


def test_discard(store: Store, tmp_path: Path) -> None:
    add_sessions(store, tmp_path / "in", [S1])
    before = head(store)
    result = run_dream(store, ScriptedEngine(), RunOptions(review=True))
    gone = discard_run(store, result.run_id)
    assert gone.status == "discarded" and kept_runs(store) == [] and head(store) == before
    with pytest.raises(RunNotFound):
        discard_run(store, result.run_id)
    with pytest.raises(RunNotFound):
        review_run(store, "not-a-run")


def test_dry_run_changes_nothing(store: Store, tmp_path: Path) -> None:
    add_sessions(store, tmp_path / "in", [S1])
    before = head(store)
    result = run_dream(store, ScriptedEngine(), RunOptions(dry_run=True))
    assert result.status == "dry-run" and "would commit 1 session summarized" in result.message
    assert head(store) == before and kept_runs(store) == []
    assert worktrees(store) == [".spare"]


def test_max_sessions_leaves_the_rest_pending(store: Store, tmp_path: Path) -> None:
    add_sessions(store, tmp_path / "in", [S3, S1, S2])
    result = run_dream(store, ScriptedEngine(), RunOptions(max_sessions=2))
    assert result.status == "committed" and result.stopped == "max-sessions"
    assert result.sessions == (S1[0], S2[0])  # oldest first
    assert result.pending_after == 1 and "still pending" in result.message
    assert validate_store(store) == []
    assert run_dream(store, ScriptedEngine()).sessions == (S3[0],)


def test_max_sessions_from_memory_toml(store: Store, tmp_path: Path) -> None:
    add_sessions(store, tmp_path / "in", [S1, S2])
    cfg = store.root / "memory.toml"
    cfg.write_text(cfg.read_text().replace("max_sessions = 0", "max_sessions = 1"))
    store.commit("config", ["memory.toml"])
    reopened = Store.open(store.root)
    assert run_dream(reopened, ScriptedEngine()).sessions == (S1[0],)


def test_a_deadline_ends_cleanly_with_the_rest_pending(store: Store, tmp_path: Path) -> None:
    add_sessions(store, tmp_path / "in", [S1, S2, S3])
    result = run_dream(store, ScriptedEngine(delay=0.05), RunOptions(deadline="0.01s"))
    assert result.status == "committed" and result.stopped == "deadline"
    assert result.sessions == (S1[0],) and result.pending_after == 2
    assert validate_store(store) == []


def test_status_lists_pending_runs_and_kept_branches(store: Store, tmp_path: Path) -> None:
    add_sessions(store, tmp_path / "in", [S1, S2])
    kept = run_dream(store, ScriptedEngine(), RunOptions(review=True))
    report = dream_status(store)
    assert report.pending == (S1[0], S2[0]) and report.sessions == 2
    assert report.kept[0]["runId"] == kept.run_id and report.kept[0]["status"] == "review"
    assert report.runs[0]["run_id"] == kept.run_id


def test_an_engine_error_removes_the_stage(store: Store, tmp_path: Path) -> None:
    add_sessions(store, tmp_path / "in", [S1])

    class Broken(ScriptedEngine):
        def consolidate(self, ctx: EngineContext) -> ConsolidationReport:
            (ctx.memory / "notes").mkdir(exist_ok=True)
            raise DreamError("engine gave up")

    with pytest.raises(DreamError, match="engine gave up"):
        run_dream(store, Broken())
    assert kept_runs(store) == [] and worktrees(store) == [".spare"]


def test_summary_hash_matches_what_orient_expects(store: Store, tmp_path: Path) -> None:
    add_sessions(store, tmp_path / "in", [S1])
    run_dream(store, ScriptedEngine())
    raw = (store.memory / f"sessions/transcripts/{S1[0]}.md").read_text()
    assert (
        f"transcript_hash: {content_hash(raw)}"
        in (store.memory / f"sessions/summaries/{S1[0]}.md").read_text()
    )
    assert ingest(store, [tmp_path / "in" / f"{S1[0]}.md"]).commit == ""


def test_runs_commit_content_free_receipts_with_what_they_describe(
    store: Store, tmp_path: Path
) -> None:
    add_sessions(store, tmp_path / "in", [S1])
    item = session_item(S1[0])
    failed = run_dream(store, ScriptedEngine(claim=_bad_claim))
    # a gate failure records its failure on the kept branch only: main never saw the run
    day = git(store, "ls-tree", "--name-only", f"dream/{failed.run_id}", ".dream/receipts/")
    kept, _ = parse_receipts(git(store, "show", f"dream/{failed.run_id}:{day}").encode())
    assert (failed.run_id, "validated", "failed") in [(r.run_id, r.tier, r.status) for r in kept]
    discard_run(store, failed.run_id)
    result = run_dream(store, ScriptedEngine())
    assert git(store, "status", "--porcelain", "--untracked-files=all") == ""
    receipts = ReceiptLog(store_receipt_dir(store.root)).read()
    transcript = (store.memory / f"sessions/transcripts/{S1[0]}.md").read_bytes()
    summary = (store.memory / f"sessions/summaries/{S1[0]}.md").read_bytes()
    session = [(r.tier, r.status) for r in receipts if r.item == item]
    assert session == [
        ("ingested", "committed"),
        ("summarized", "verified"),
        ("validated", "verified"),
        ("committed", "committed"),
    ]
    assert {r.run_id for r in receipts if r.item == item and r.tier != "ingested"} == {
        result.run_id
    }
    assert {r.version for r in receipts if r.item == item} == {content_hash(transcript)}
    page = [r for r in receipts if r.item == page_item(f"sessions/summaries/{S1[0]}.md")]
    assert [(r.tier, r.version) for r in page] == [
        ("validated", content_hash(summary)),
        ("committed", content_hash(summary)),
    ]
    assert {(r.user_scope, r.assistant_scope) for r in receipts} == {scope_ids("dana", "atlas")}
    text = (store_receipt_dir(store.root)).joinpath(receipts[0].at_utc[:10] + ".jsonl").read_text()
    assert "figures" not in text and "Reefsong" not in text and "dana" not in text


def _person_page(ctx: EngineContext, t: Transcript) -> None:
    """One page per session, citing it (so later runs leave earlier pages unchanged)."""
    turn = t.turns[0]
    text = (
        f"---\nid: p-{t.id}\ntitle: P {t.id}\ntype: person\nupdated: '{t.date}'\n"
        f"sources:\n  - id: 1\n    ref: sessions/transcripts/{t.id}.md#t1\n"
        f"    at: '{t.date}'\n    hash: {turn.hash}\n---\n\n- {turn.text} [cite:1]\n"
    )
    atomic_write_text(ctx.memory / f"knowledge/people/p-{t.id}.md", text)


def test_the_incremental_view_ignores_what_unchanged_pages_cite(
    store: Store, tmp_path: Path
) -> None:
    # regression: the view held every page but only the changed pages' transcripts,
    # so an unchanged page citing an older session failed with MF107
    add_sessions(store, tmp_path / "in", [S1])
    assert run_dream(store, ScriptedEngine(page=_person_page)).status == "committed"
    add_sessions(store, tmp_path / "in2", [S2])
    result = run_dream(store, ScriptedEngine(page=_person_page))
    assert result.status == "committed", result.problems
    assert validate_store(store) == []


def _static_page(rel: str, meta: str, body: str = "") -> str:
    return f"---\n{meta}\ntype: person\nupdated: '2026-01-05'\n---\n{body}"


ANA = _static_page("ana", "id: ana\ntitle: Ana\naliases:\n- Annie")
BEN = _static_page("ben", "id: ben\ntitle: Ben", "\nSee also: [[Annie]]\n")


def _writes(files: dict[str, str | None]) -> Callable[[EngineContext, Transcript], None]:
    def hook(ctx: EngineContext, t: Transcript) -> None:
        for rel, text in files.items():
            path = ctx.memory / rel
            if text is None:
                path.unlink()
            else:
                atomic_write_text(path, text)

    return hook


@pytest.mark.parametrize(
    ("second", "code", "where"),
    [
        ({"knowledge/people/ana.md": None}, "MF201", "ben.md"),  # deleted: Ben's link breaks
        ({"knowledge/people/ana.md": ANA.replace("- Annie", "- Ann")}, "MF201", "ben.md"),
        ({"knowledge/orgs/ana.md": ANA}, "MF007", "orgs/ana.md"),  # a second page with id ana
        ({"knowledge/people/cy.md": _static_page("cy", "id: annie\ntitle: Cy")}, "MF008", "ana.md"),
        (  # renamed: the new page keeps no alias, so Ben's [[Annie]] breaks
            {
                "knowledge/people/ana.md": None,
                "knowledge/people/anna.md": _static_page("anna", "id: anna\ntitle: Anna"),
            },
            "MF201",
            "ben.md",
        ),
        (  # the link target itself changed: an unchanged page's link into it must resolve
            {"knowledge/people/ana.md": _static_page("ana", "id: ana\ntitle: Ana")},
            "MF201",
            "ben.md",
        ),
    ],
)
def test_the_incremental_view_still_sees_cross_page_breakage(
    store: Store, tmp_path: Path, second: dict[str, str | None], code: str, where: str
) -> None:
    pages = {"knowledge/people/ana.md": ANA, "knowledge/people/ben.md": BEN}
    add_sessions(store, tmp_path / "in", [S1])
    assert run_dream(store, ScriptedEngine(page=_writes(pages))).status == "committed"
    add_sessions(store, tmp_path / "in2", [S2])
    dry = run_dream(store, ScriptedEngine(page=_writes(second)), RunOptions(dry_run=True))
    assert any(code in p and where in p.split(":")[0] for p in dry.problems), dry.problems
    full = run_dream(
        store, ScriptedEngine(page=_writes(second)), RunOptions(dry_run=True, full_validation=True)
    )
    assert {p.split(": ")[1].split()[0] for p in full.problems} == {
        p.split(": ")[1].split()[0] for p in dry.problems
    }
    # the run leaves out the page the breakage came from (a page the run changed, not the
    # unchanged one the finding is on), and the rest lands valid
    result = run_dream(store, ScriptedEngine(page=_writes(second)))
    assert result.status == "committed" and result.left_out, result.problems
    culprits = {x.split(":")[0] for x in result.left_out}
    assert culprits <= {f"memory/{rel}" for rel in second}, result.left_out
    assert result.sessions == (S2[0],) and validate_store(store) == []


def test_a_page_key_cache_that_cannot_be_read_gives_the_same_verdict(
    store: Store, tmp_path: Path
) -> None:
    pages = {"knowledge/people/ana.md": ANA, "knowledge/people/ben.md": BEN}
    add_sessions(store, tmp_path / "in", [S1])
    assert run_dream(store, ScriptedEngine(page=_writes(pages))).status == "committed"
    add_sessions(store, tmp_path / "in2", [S2])
    deleted: dict[str, str | None] = {"knowledge/people/ana.md": None}
    dry = RunOptions(dry_run=True)
    warm = run_dream(store, ScriptedEngine(page=_writes(deleted)), dry)
    assert any("MF201" in p for p in warm.problems)
    (store.cache_dir / "dream-page-keys.sqlite").write_bytes(b"not a database" * 64)
    rebuilt = run_dream(store, ScriptedEngine(page=_writes(deleted)), dry)
    assert (rebuilt.problems, rebuilt.left_out) == (warm.problems, warm.left_out)


def test_the_incremental_gate_catches_a_forgotten_page_coming_back(
    store: Store, tmp_path: Path
) -> None:
    from memoryfs.forget.remove import forget

    pages = {"knowledge/people/ana.md": ANA, "knowledge/people/ben.md": BEN}
    add_sessions(store, tmp_path / "in", [S1])
    assert run_dream(store, ScriptedEngine(page=_writes(pages))).status == "committed"
    forget(store, "page", "ana", "asked to")
    add_sessions(store, tmp_path / "in2", [S2])
    back = {"knowledge/people/ana.md": ANA}  # the deletion log itself is unchanged this run
    result = run_dream(store, ScriptedEngine(page=_writes(back)))
    assert any("MF502" in p and "ana.md" in p for p in result.problems), result.problems
    assert result.status == "committed" and not (store.memory / "knowledge/people/ana.md").exists()
    assert [x.split(": ")[1].split()[0] for x in result.left_out] == ["MF502"]


def test_unchanged_pages_are_known_by_blob_and_never_reread(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dream.gates import pagekeys

    pages = {"knowledge/people/ana.md": ANA, "knowledge/people/ben.md": BEN}
    add_sessions(store, tmp_path / "in", [S1])
    assert run_dream(store, ScriptedEngine(page=_writes(pages))).status == "committed"
    blob = git(store, "rev-parse", "HEAD:memory/knowledge/people/ben.md")
    with closing(sqlite3.connect(store.cache_dir / "dream-page-keys.sqlite")) as db:
        assert db.execute("SELECT id FROM pages WHERE blob = ?", (blob,)).fetchall() == [("ben",)]
        links = db.execute("SELECT name FROM links WHERE blob = ?", (blob,)).fetchall()
        assert links == [("Annie",)]  # learned when it changed
    read: list[str] = []
    real = pagekeys.read_keys
    monkeypatch.setattr(
        pagekeys, "read_keys", lambda root, rel: read.append(rel) or real(root, rel)
    )
    add_sessions(store, tmp_path / "in2", [S2])
    c = {"knowledge/people/cy.md": _static_page("cy", "id: cy\ntitle: Cy", "\n[[Ben]]\n")}
    assert run_dream(store, ScriptedEngine(page=_writes(c))).status == "committed"
    assert read == ["memory/knowledge/people/cy.md"]  # ana and ben came from the cache


def _hub(*sessions: tuple[str, str, str]) -> str:
    """A page citing turn 1 of each (session id, date, turn hash)."""
    sources = "".join(
        f"  - id: {i}\n    ref: sessions/transcripts/{sid}.md#t1\n    at: '{date}'\n    hash: {h}\n"
        for i, (sid, date, h) in enumerate(sessions, start=1)
    )
    body = "".join(f"- Said something [cite:{i}]\n" for i in range(1, len(sessions) + 1))
    meta = "id: hub\ntitle: Hub\ntype: topic\nupdated: '2026-01-06'\n"
    return f"---\n{meta}sources:\n{sources}---\n\n{body}"


def _first_turn_hash(session: tuple[str, str, list[str]]) -> str:
    return turn_hash(session[2][0])


@pytest.mark.parametrize(
    ("second", "expected"),
    [
        ("keep", ""),  # the unchanged S1 source needs no transcript in the view
        ("stale", "MF109"),  # a changed entry with a wrong hash is checked
        ("missing", "MF107"),  # a new entry naming no transcript is checked
    ],
)
def test_a_hub_page_is_checked_on_what_changed(
    store: Store, tmp_path: Path, second: str, expected: str
) -> None:
    one = (S1[0], S1[1], _first_turn_hash(S1))
    two = (S2[0], S2[1], _first_turn_hash(S2))
    add_sessions(store, tmp_path / "in", [S1])
    hub = "knowledge/topics/hub.md"
    assert run_dream(store, ScriptedEngine(page=_writes({hub: _hub(one)}))).status == "committed"
    add_sessions(store, tmp_path / "in2", [S2])
    first = {"keep": one, "stale": (one[0], one[1], "0badc0de"), "missing": one}[second]
    extra = ("2025-01-01-nowhere", "2025-01-01", "0badc0de") if second == "missing" else two
    result = run_dream(store, ScriptedEngine(page=_writes({hub: _hub(first, extra)})))
    assert result.status == "committed", result.problems
    assert validate_store(store) == []
    if expected:  # the hub page is left out as it was; the summary lands
        assert {p.split(": ")[1].split()[0] for p in result.problems} == {expected}
        assert [x.split(":")[0] for x in result.left_out] == [f"memory/{hub}"]
        assert (store.memory / hub).read_text() == _hub(one)


def test_the_gates_parse_each_staged_page_once(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Validation's plan, its checks, the keys it learns and verification share one parse
    of each changed page (the page memo, ``memoryfs.pages.page``); a page that does not
    parse is reported all the same."""
    import dream.runner
    import memoryfs.pages.page as page_mod

    pages = {"knowledge/people/ana.md": ANA, "knowledge/people/ben.md": BEN}
    add_sessions(store, tmp_path / "in", [S1])
    assert run_dream(store, ScriptedEngine(page=_writes(pages))).status == "committed"
    calls: dict[tuple[str, str], int] = {}
    parse, gates = page_mod._parse_page, dream.runner.run_gates
    gating = False

    def counting(text: str, path: str, *limits: Any) -> object:
        if gating:
            calls[(path, text)] = calls.get((path, text), 0) + 1
        return parse(text, path, *limits)

    def run_gates(*args: Any, **kwargs: Any) -> Any:
        nonlocal gating
        page_mod.clear_parse_cache()  # what the gates parse, not what the run parsed before
        gating = True
        try:
            return gates(*args, **kwargs)
        finally:
            gating = False

    monkeypatch.setattr(page_mod, "_parse_page", counting)
    monkeypatch.setattr(dream.runner, "run_gates", run_gates)
    add_sessions(store, tmp_path / "in2", [S2])
    changed = {"knowledge/people/ben.md": BEN.replace("See also:", "Related:")}
    assert run_dream(store, ScriptedEngine(page=_writes(changed))).status == "committed"
    staged = calls.get(("knowledge/people/ben.md", changed["knowledge/people/ben.md"]))
    assert staged == 1, calls
    broken = {"knowledge/people/ben.md": "---\nid: [ben\n---\n"}
    add_sessions(store, tmp_path / "in3", [S3])
    result = run_dream(store, ScriptedEngine(page=_writes(broken)))
    assert result.status == "committed"
    assert any("MF002" in p and "ben.md" in p for p in result.problems), result.problems
    assert [x.split(":")[0] for x in result.left_out] == ["memory/knowledge/people/ben.md"]


def test_a_copied_store_never_acts_on_the_originals_worktrees(tmp_path: Path) -> None:
    """A store copied with its .dream/ folder (cp -a, a restored backup) holds a parked
    worktree whose links still name the original's git entry: a run on the copy uses a
    worktree of its own and leaves the original's as they were."""
    orig = init_store(tmp_path / "orig", "dana", "atlas")
    add_sessions(orig, tmp_path / "in1", [S1])
    assert run_dream(orig, ScriptedEngine(), RunOptions(allow_unapproved=True)).status == (
        "committed"
    )
    spare = orig.dream_dir / "worktrees" / ".spare"
    git(orig, "worktree", "add", "--quiet", "--detach", str(tmp_path / "mine"))  # a user's own
    listed = git(orig, "worktree", "list", "--porcelain")
    admin = (spare / ".git").read_text()
    assert str(spare) in listed
    shutil.copytree(orig.root, tmp_path / "copy", symlinks=True)
    copy = Store.open(tmp_path / "copy")
    add_sessions(copy, tmp_path / "in2", [S2])
    assert run_dream(copy, ScriptedEngine(), RunOptions(allow_unapproved=True)).status == (
        "committed"
    )
    assert git(orig, "worktree", "list", "--porcelain") == listed
    assert (spare / ".git").read_text() == admin
    assert git(orig, "status", "--porcelain") == "" and head(orig) == git(orig, "rev-parse", "main")
    copied = (copy.dream_dir / "worktrees" / ".spare" / ".git").read_text()
    assert str(copy.root / ".git" / "worktrees") in copied  # the copy parks its own
    assert str(orig.root) not in git(copy, "worktree", "list", "--porcelain")
    add_sessions(orig, tmp_path / "in3", [S3])
    assert run_dream(orig, ScriptedEngine(), RunOptions(allow_unapproved=True)).status == (
        "committed"
    )
    assert "2026-01-06-marta" not in git(orig, "ls-tree", "-r", "--name-only", "HEAD")
    assert str(tmp_path / "mine") in git(orig, "worktree", "list", "--porcelain")
    assert str(tmp_path / "mine") in git(copy, "worktree", "list", "--porcelain")  # not Dream's


def test_the_files_a_run_wrote_come_merged_in_order_each_once() -> None:
    """The receipts hash a run's files as they are read, merged from its three sorted lists,
    in the order a sorted set gives."""
    from dream.landing.sync import changed_files

    sessions = ["s-1", "s1", "s2"]
    created = ["knowledge/people/ana.md", "notes/a/x.md"]
    updated = ["INDEX.md", "knowledge/people/bo.md"]
    got = list(changed_files(sessions, created, updated))
    summaries = [f"sessions/summaries/{sid}.md" for sid in sessions]
    assert got == sorted({*summaries, *created, *updated})
    assert list(changed_files([], [], [])) == []
