"""Receipts and health end to end on the sample store: every tier writes its receipts,
none carries content, ``dream canary`` is healthy, and forced faults are never green."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from paths import SAMPLE
from typer.testing import CliRunner

from cli.dream_app import app as dream_app
from dream.engines import load_engine
from dream.health.lineage import CHAINS
from dream.health.verdicts import check_health
from dream.phases.recheck import UNSUPPORTED
from dream.runner import RunOptions, run_dream
from dream.skills import approve
from memoryfs.ingest import ingest
from memoryfs.pages.page import parse_page
from memoryfs.pages.transcript import Turn, parse_transcript, render_transcript
from memoryfs.read.materialize import materialize
from memoryfs.read.recall import recall
from memoryfs.receipts.log import (
    ReceiptLog,
    local_receipt_dir,
    sandbox_receipt_dir,
    store_receipt_dir,
)
from memoryfs.receipts.reads import record_use
from memoryfs.receipts.records import (
    READ_TIERS,
    RECEIPT_VOCABULARY,
    format_utc,
    page_item,
    session_item,
)
from memoryfs.store.store import Store, init_store
from memoryfs.validate.rules import validate_store

pytest.importorskip("dream.engines.embedded.engine")

GROWN = "2026-01-26-dinner-for-marta"
_WORD_RE = re.compile(r"[^\W\d_]{4,}")
_TOKEN_RE = re.compile(r"[^\W\d_]+")
_HEX_LETTERS = set("abcdef")


def git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=root, capture_output=True, text=True, check=True
    ).stdout.strip()


@pytest.fixture(scope="module")
def dreamed(tmp_path_factory: pytest.TempPathFactory) -> Store:
    store = init_store(tmp_path_factory.mktemp("health-e2e") / "store", "dana", "atlas")
    ingest(store, sorted(SAMPLE.glob("*.md")))
    approve(store, by="tests")
    result = run_dream(store, load_engine())
    assert result.status == "committed", result.problems
    return store


def clone(store: Store, dest: Path) -> Store:
    """A scratch copy of the dreamed store (its committed state: receipts included)."""
    git(dest.parent, "clone", "--quiet", "--local", str(store.root), dest.name)
    return Store.open(dest)


def verdicts(store: Store, *extra: Path) -> dict[str, str]:
    return {lv.item: lv.verdict for lv in check_health(store, extra_receipt_dirs=extra).lineages}


# -- every tier, no content ----------------------------------------------------------


def test_every_tier_writes_receipts_and_none_carries_content(
    dreamed: Store, tmp_path: Path
) -> None:
    store = clone(dreamed, tmp_path / "store")
    sandbox = tmp_path / "sandbox"
    materialize(store, sandbox)
    recall(store, "Where does Tiago Ferreira work?", into=sandbox)
    recall(store, "What colours does Dana use for figures?")  # no sandbox: the store's log
    summary = f"sessions/summaries/{GROWN}.md"
    record_use(store, sandbox, [summary], outcome="test:pass")
    folders = [store_receipt_dir(store.root), sandbox_receipt_dir(sandbox)]
    folders.append(local_receipt_dir(store.root))
    receipts = [r for folder in folders for r in ReceiptLog(folder).read()]
    assert {r.tier for r in receipts} == set(CHAINS["session"]) | {"attached", *READ_TIERS, "used"}

    words = set()
    for path in SAMPLE.glob("*.md"):
        words |= {w.lower() for w in _WORD_RE.findall(path.read_text(encoding="utf-8"))}
    assert {"dana", "atlas", "reefsong", "lisbon", "marta"} <= words  # the search is real
    text = "\n".join(p.read_text() for f in folders for p in ReceiptLog(f).files())
    tokens = {t.lower() for t in _TOKEN_RE.findall(text)}
    # Hex digits are the one way letters enter a receipt besides the fixed vocabulary:
    # a word spelled with a-f only could be part of a hash by chance and is skipped.
    leaked = {t for t in tokens & words if not set(t) <= _HEX_LETTERS}
    assert leaked <= RECEIPT_VOCABULARY, sorted(leaked - RECEIPT_VOCABULARY)
    # stronger: nothing of 4+ letters but the vocabulary at all (scopes are hashes too)
    wordy = {t for t in tokens if len(t) >= 4 and not set(t) <= _HEX_LETTERS}
    assert wordy <= RECEIPT_VOCABULARY, sorted(wordy - RECEIPT_VOCABULARY)


def test_the_dreamed_sample_store_is_healthy_and_its_tree_clean(dreamed: Store) -> None:
    report = check_health(dreamed)
    assert report.overall == "healthy", [lv for lv in report.lineages if lv.verdict != "healthy"]
    assert report.counts == {"healthy": len(report.lineages)} and len(report.lineages) > 100
    assert git(dreamed.root, "status", "--porcelain", "--untracked-files=all") == ""


def test_canary_is_healthy_and_leaves_the_store_as_it_was(dreamed: Store) -> None:
    head, status = dreamed.head(), git(dreamed.root, "status", "--porcelain")
    branches = git(dreamed.root, "branch", "--list")
    r = CliRunner().invoke(dream_app, ["canary", "--store", str(dreamed.root), "--json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert data["verdict"] == "healthy" and all(step["ok"] for step in data["steps"])
    assert {lv["verdict"] for lv in data["lineages"]} == {"healthy"}
    assert len(data["lineages"]) >= 2  # the session and its summary at least
    assert dreamed.head() == head and git(dreamed.root, "status", "--porcelain") == status
    assert git(dreamed.root, "branch", "--list") == branches
    assert data["session"] not in git(dreamed.root, "log", "--all", "--format=%B")


def test_canary_refuses_a_changed_skill_to_an_engine_that_acts_on_it(
    dreamed: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = tmp_path / "skill.md"
    other.write_text("# a changed dream skill\n")
    monkeypatch.setenv("DREAM_SKILL", str(other))
    canary = ["canary", "--store", str(dreamed.root)]
    acting = ["--engine", "dream_fixtures:ScriptedEngine"]  # follows the skill, as llm does
    r = CliRunner().invoke(dream_app, [*canary, *acting])
    assert r.exit_code == 1 and "changed since it was approved" in r.stderr
    ok = CliRunner().invoke(dream_app, [*canary, *acting, "--allow-unapproved"])
    assert ok.exit_code == 0, ok.output
    # the embedded engine reads no skill: the changed one does not stop it
    embedded = CliRunner().invoke(dream_app, canary)
    assert embedded.exit_code == 0, embedded.output


# -- forced faults ------------------------------------------------------------------------


def test_a_page_deleted_behind_dreams_back_is_source_at_risk(
    dreamed: Store, tmp_path: Path
) -> None:
    store = clone(dreamed, tmp_path / "store")
    rel = "knowledge/people/amara-osei.md"
    git(store.root, "rm", "--quiet", f"memory/{rel}")
    git(store.root, "commit", "--quiet", "-m", "oops")
    report = check_health(store)
    assert verdicts(store)[page_item(rel)] == "source_at_risk"
    assert report.overall == "source_at_risk" and report.exit_code == 8


def _next_receipt_second() -> None:
    """Receipts carry whole UTC seconds, and a read in the second of a commit counts as
    after it; a fast Dream run (well under a second) could land in the copy's second."""
    start = format_utc()
    while format_utc() == start:
        time.sleep(0.05)


def test_an_agent_relying_on_an_old_materialized_copy_is_stale_retrieval(
    dreamed: Store, tmp_path: Path
) -> None:
    store = clone(dreamed, tmp_path / "store")
    sandbox = tmp_path / "sandbox"
    summary = f"sessions/summaries/{GROWN}.md"
    materialize(store, sandbox)
    assert (sandbox / "memory" / summary).is_file()
    assert verdicts(store, sandbox)[page_item(summary)] == "healthy"
    # the session grows and Dream commits a new summary; the sandbox is not refreshed
    t = parse_transcript(store.transcript_path(GROWN).read_text(encoding="utf-8"))
    extra = Turn(len(t.turns) + 1, "user", t.turns[-1].ts, "Marta starts at Altona in April.")
    longer = tmp_path / f"{GROWN}.md"
    longer.write_text(render_transcript(t.__class__(**{**t.__dict__, "turns": (*t.turns, extra)})))
    _next_receipt_second()  # the commit must be later than the copy, to the second
    ingest(store, [longer])
    assert run_dream(store, load_engine()).status == "committed"
    record_use(store, sandbox, [summary], outcome="test:pass")
    report = check_health(store, extra_receipt_dirs=(sandbox,))
    lineage = {lv.item: lv for lv in report.lineages}[page_item(summary)]
    assert lineage.verdict == "stale_retrieval" and lineage.layer == "used"
    assert report.overall == "stale_retrieval" and report.exit_code == 7
    # a fresh materialize, then a use of what it copied, is not stale
    fresh = tmp_path / "fresh"
    materialize(store, fresh)
    record_use(store, fresh, [summary])
    assert verdicts(store, fresh)[page_item(summary)] == "healthy"


def test_a_session_copied_into_another_users_store_is_scope_conflict(
    dreamed: Store, tmp_path: Path
) -> None:
    erin = init_store(tmp_path / "erin", "erin", "atlas")
    sid = "2026-01-12-lisbon-prep"
    rel = f"memory/sessions/transcripts/{sid}.md"
    shutil.copy(dreamed.root / rel, erin.root / rel)
    erin.commit("copied by hand")
    assert verdicts(erin)[session_item(sid)] == "scope_conflict"  # its own scope says dana
    # its receipts copied along: receipts of another scope
    lines = [
        line
        for path in ReceiptLog(store_receipt_dir(dreamed.root)).files()
        for line in path.read_text().splitlines()
        if session_item(sid) in line
    ]
    log = store_receipt_dir(erin.root) / "2026-01-01.jsonl"
    log.parent.mkdir(parents=True)
    log.write_text("\n".join(lines) + "\n")
    report = check_health(erin)
    lineage = {lv.item: lv for lv in report.lineages}[session_item(sid)]
    assert lineage.verdict == "scope_conflict"
    assert {f.layer for f in lineage.findings if f.verdict == "scope_conflict"} >= {"committed"}
    assert report.overall == "scope_conflict" and report.exit_code == 9


def _cited(store: Store, rel: str, n: int) -> tuple[str, str]:
    """(transcript path relative to memory/, anchor) of citation ``n`` of page ``rel``."""
    page = parse_page((store.memory / rel).read_text(encoding="utf-8"), rel)
    src = {s.id: s for s in page.sources}[n]
    return src.path, src.anchor


def _rewrite_turn(store: Store, path: str, anchor: str, text: str) -> None:
    """Change a turn behind ingest's back (a hand edit) and commit it."""
    t = parse_transcript((store.memory / path).read_text(encoding="utf-8"), path)
    turns = tuple(
        Turn(x.n, x.speaker, x.ts, text if x.anchor == anchor else x.text) for x in t.turns
    )
    (store.memory / path).write_text(
        render_transcript(t.__class__(**{**t.__dict__, "turns": turns}))
    )
    store.commit("hand edit")


def test_a_changed_cited_turn_is_source_at_risk_then_dream_reverifies_it(
    dreamed: Store, tmp_path: Path
) -> None:
    store = clone(dreamed, tmp_path / "store")
    rel = "knowledge/people/amara-osei.md"
    path, anchor = _cited(store, rel, 1)
    _rewrite_turn(store, path, anchor, "Nothing much to report today, I forgot the details.")
    report = check_health(store)
    risks = {(c.page, c.citation, c.reason) for c in report.citations_at_risk}
    assert (rel, 1, "hash changed") in risks
    assert verdicts(store)[page_item(rel)] == "source_at_risk"
    assert report.overall == "source_at_risk"
    human = CliRunner().invoke(dream_app, ["health", "--store", str(store.root)])
    assert human.exit_code == 8 and f"citation at risk: {rel} [cite:1] hash changed" in human.stdout

    result = run_dream(store, load_engine())
    assert result.status == "committed", result.problems
    assert any(r.startswith(f"memory/{rel}:") and UNSUPPORTED in r for r in result.rejected)
    text = (store.memory / rel).read_text(encoding="utf-8")
    assert "Amara Osei is based in Berlin. (unsupported)" in text  # not carried forward
    # the pages are fine again; the transcript stays reported until the turn is restored
    assert [(f.path, f.code) for f in validate_store(store)] == [(f"memory/{path}", "MF405")]
    after = check_health(store)
    assert after.citations_at_risk == ()
    # what the engine drew from the edited turn alone cites nothing and is left out (a
    # note whose title nothing supports, say): it waits for review; every other page is fine
    left = {page_item(x.split(":", 1)[0].removeprefix("memory/")) for x in result.left_out}
    pages = {i: v for i, v in verdicts(store).items() if i.startswith("page:")}
    assert {v for i, v in pages.items() if i not in left} == {"healthy"}
    assert {v for i, v in pages.items() if i in left} <= {"waiting"}
    # the hand edit changed an ingested turn: the session's source is at risk (issue #31)
    assert verdicts(store)[session_item(Path(path).stem)] == "source_at_risk"


def test_a_cited_turn_edited_by_hand_is_not_recited_even_where_it_still_supports(
    dreamed: Store, tmp_path: Path
) -> None:
    """A turn a person changed after ingest is no evidence (issue #31): Dream does not move
    the citation's hash to it, though its text still says what the claim says."""
    store = clone(dreamed, tmp_path / "store")
    rel = "knowledge/people/amara-osei.md"
    path, anchor = _cited(store, rel, 1)
    t = parse_transcript((store.memory / path).read_text(encoding="utf-8"), path)
    old = t.turn(anchor)
    assert old is not None
    _rewrite_turn(store, path, anchor, old.text + " (Typed on the train.)")
    assert run_dream(store, load_engine()).status == "committed"
    new = parse_transcript((store.memory / path).read_text(encoding="utf-8"), path).turn(anchor)
    assert new is not None and new.hash != old.hash
    after = parse_page((store.memory / rel).read_text(encoding="utf-8"), rel)
    assert all(s.hash != new.hash for s in after.sources)  # not re-cited
    assert UNSUPPORTED in after.body
    report = check_health(store)
    assert report.citations_at_risk == ()
    assert verdicts(store)[session_item(Path(path).stem)] == "source_at_risk"


def test_a_forgotten_phrase_keeps_the_lineage_proven(dreamed: Store, tmp_path: Path) -> None:
    from memoryfs.forget.remove import forget

    store = clone(dreamed, tmp_path / "store")
    result = forget(store, "phrase", "Blue Horizon Fund", "test")
    assert result.redacted
    report = check_health(store)
    changed = {session_item(Path(rel).stem) for rel in result.redacted}
    got = {lv.item: lv.verdict for lv in report.lineages if lv.item in changed}
    # a new transcript version, receipted by the forget; Dream has not re-summarized it yet
    assert set(got.values()) == {"waiting"}, got
    assert report.citations_at_risk == ()
    assert run_dream(store, load_engine(), RunOptions()).status == "committed"
    assert {verdicts(store)[i] for i in changed} == {"healthy"}
