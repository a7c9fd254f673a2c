"""Leaving out what the gates reject: one bad claim never costs the night.

A run whose gates find problems leaves those parts out (``dream.landing.leaveout``) and lands
the rest: a bad page from an external agent (``--engine command``), one unsupported
claim of a page, a page left out that another page linked to, a summary left out (its
session stays pending), main moving under the run. What was left out is named in the
commit message, ``--json``, ``dream status --json``, content-free receipts and
``dream review``, and ``dream health`` neither raises a false alarm over it nor hides
it. A run with nothing valid left exits 1 and leaves main untouched.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import io
import json
import shlex
import subprocess
import sys
import tarfile
from collections.abc import Callable
from pathlib import Path

import pytest
from dream_fixtures import ScriptedEngine, add_sessions
from forkrun import fork_cli
from killpoints import KillPoint, kill_when
from typer.testing import CliRunner, Result

from cli.dream_app import app
from dream.engines.base import EngineContext
from dream.health.verdicts import check_health
from dream.landing.kept_runs import apply_run, discard_run, left_out_of, review_run
from dream.landing.runlog import read_record
from dream.landing.staging import Stage, kept_runs
from dream.landing.sync import ChangeSummary, commit_message
from dream.phases.orient import orient
from dream.runner import RunOptions, run_dream
from dream.skills import approve
from memoryfs.pages.transcript import Transcript
from memoryfs.receipts.records import opaque_item, page_item
from memoryfs.store.atomic import atomic_write_text
from memoryfs.store.hashing import content_hash, turn_hash
from memoryfs.store.store import Store, init_store
from memoryfs.validate.rules import validate_store

S1 = (
    "2026-01-05-figures",
    "2026-01-05",
    ["I need the figures as PDF for Reefsong. Three of them.", "Sure, PDF it is."],
)
S2 = ("2026-01-06-marta", "2026-01-06", ["Marta is a nurse at the UKE in Hamburg.", "Noted."])
S3 = ("2026-01-07-lisbon", "2026-01-07", ["The Lisbon workshop is on 12 March.", "Great."])

AGENT = """
import json, os, shutil, sys
from pathlib import Path
from memoryfs.store.hashing import content_hash
from memoryfs.pages.page import Page, render_page
from memoryfs.pages.transcript import parse_transcript

for p in json.loads(Path(os.environ["DREAM_PENDING_FILE"]).read_text()):
    raw = Path("memory", p["path"]).read_text()
    t = parse_transcript(raw, p["path"])
    turn = t.turns[0]
    meta = {"id": t.id, "title": f"Session {t.id}", "type": "summary", "updated": t.date,
            "transcript_hash": content_hash(raw), "turns": len(t.turns),
            "sources": [{"id": 1, "ref": f"sessions/transcripts/{t.id}.md#t1",
                         "at": t.date, "hash": turn.hash}]}
    claim = "Met Gunther in Oslo." if sys.argv[2] == "bad" else turn.text
    body = f"\\n## Key points\\n\\n- {claim} [cite:1]\\n\\n## Outcome\\n\\nnone recorded\\n"
    Path("memory/sessions/summaries", f"{t.id}.md").write_text(render_page(Page(meta, body)))
pages = Path(sys.argv[1])
for src in sorted(pages.rglob("*.md")):
    dest = Path("memory", src.relative_to(pages))
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dest)
"""


def _source(n: int, session: tuple[str, str, list[str]], turn: int = 1) -> str:
    sid, date, texts = session
    return (
        f"  - id: {n}\n    ref: sessions/transcripts/{sid}.md#t{turn}\n"
        f"    at: '{date}'\n    hash: {turn_hash(texts[turn - 1])}\n"
    )


def _page(pid: str, title: str, kind: str, body: str, sources: str = "", **extra: str) -> str:
    meta = f"id: {pid}\ntitle: {title}\ntype: {kind}\nupdated: '2026-01-05'\n"
    meta += "".join(f"{k}: {v}\n" for k, v in extra.items())
    return f"---\n{meta}" + (f"sources:\n{sources}" if sources else "") + f"---\n{body}"


REEFSONG = _page(
    "reefsong",
    "Reefsong",
    "project",
    "\n# Reefsong\n\n## 2026-01-05 (5 January 2026)\n\n"
    "- Dana needs the figures as PDF for Reefsong [cite:1]\n",
    _source(1, S1),
)
# id and file name differ (MF006), and its one claim names what the turn does not (DV101)
GUNTHER = _page(
    "gunter",
    "Gunther",
    "person",
    "\n# Gunther\n\n- Gunther reviews the figures in Oslo [cite:1]\n",
    _source(1, S1),
)


def git(store: Store, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=store.root, capture_output=True, text=True, check=True
    ).stdout.strip()


def head(store: Store) -> str:
    return git(store, "rev-parse", "HEAD")


def dream(store: Store, *args: str) -> Result:
    return CliRunner().invoke(app, [*args, "--store", str(store.root)])


def receipts(store: Store, ref: str = "HEAD") -> list[dict[str, str]]:
    """Every receipt committed at ``ref``, as JSON objects."""
    out: list[dict[str, str]] = []
    for name in git(store, "ls-tree", "--name-only", ref, ".dream/receipts/").splitlines():
        out += [json.loads(x) for x in git(store, "show", f"{ref}:{name}").splitlines() if x]
    return out


@pytest.fixture
def store(tmp_path: Path) -> Store:
    s = init_store(tmp_path / "store", "dana", "atlas")
    approve(s, by="tests")
    return s


def _agent(tmp_path: Path, pages: dict[str, str], summaries: str = "good") -> list[str]:
    """``--engine command`` arguments for an agent writing summaries (``good``: citing what
    their turn says; ``bad``: what it does not) and ``pages``."""
    script = tmp_path / "agent.py"
    script.write_text(AGENT)
    folder = tmp_path / "pages"
    for rel, text in pages.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text)
    folder.mkdir(exist_ok=True)
    cmd = shlex.join([sys.executable, str(script), str(folder), summaries])
    return ["--engine", "command", "--agent-cmd", cmd]


def _writes(files: dict[str, str]) -> Callable[[EngineContext, Transcript], None]:
    def hook(ctx: EngineContext, t: Transcript) -> None:
        for rel, text in files.items():
            atomic_write_text(ctx.memory / rel, text)

    return hook


# -- a bad page from an external agent ----------------------------------------------------


def test_a_bad_page_from_the_agent_is_left_out_and_everything_else_lands(
    store: Store, tmp_path: Path
) -> None:
    add_sessions(store, tmp_path / "in", [S1, S2])
    before = head(store)
    bad = "knowledge/people/gunther.md"
    pages = {"knowledge/projects/reefsong.md": REEFSONG, bad: GUNTHER}
    r = dream(store, "run", *_agent(tmp_path, pages), "--json")
    assert r.exit_code == 0, r.stdout + r.stderr
    out = json.loads(r.stdout)
    assert out["status"] == "committed" and out["engine"] == "command/1"
    assert set(out["sessions"]) == {S1[0], S2[0]}
    assert out["pagesCreated"] == ["knowledge/projects/reefsong.md"]
    (item,) = out["leftOut"]
    assert item.startswith(f"memory/{bad}:") and item.endswith("(file left out)")
    assert "MF006" in item
    assert any("DV101" in p and "Oslo" in p for p in out["problems"])
    assert "1 left out" in out["message"] and f"dream review {out['runId']}" in out["message"]
    # main: one commit with everything else, valid, the bad page absent
    assert git(store, "rev-parse", "HEAD~1") == before and head(store) == out["commit"]
    assert not (store.memory / bad).exists()
    assert (store.memory / "knowledge/projects/reefsong.md").read_text() == REEFSONG
    assert validate_store(store) == [] and orient(store).pending == ()
    assert "gunther" not in (store.memory / "INDEX.md").read_text().lower()
    message = git(store, "log", "-1", "--format=%B")
    assert message.startswith("dream: 2 sessions summarized, 1 page created")
    assert "; 1 left out" in message.splitlines()[0]
    left = message.split("Left out:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert left == [f"- {item}"]
    # dream status --json: the last run names it
    status = json.loads(dream(store, "status", "--json").stdout)
    assert status["runs"][0]["leftOut"] == [item] and status["runs"][0]["status"] == "committed"
    assert status["kept"][0]["runId"] == out["runId"]
    # a content-free receipt: the page's opaque item, failed at validated, the code
    found = [x for x in receipts(store) if x.get("reason")]
    assert found == [
        {
            **found[0],
            "item": page_item(bad),
            "tier": "validated",
            "status": "failed",
            "reason": "MF006",
            "version": content_hash(GUNTHER),
        }
    ]
    raw = "\n".join(json.dumps(x) for x in receipts(store))
    assert "Gunther" not in raw and "Oslo" not in raw and "gunther" not in raw


def test_a_run_where_everything_fails_exits_1_and_leaves_main_untouched(
    store: Store, tmp_path: Path
) -> None:
    add_sessions(store, tmp_path / "in", [S1, S2])
    before = head(store)
    r = dream(store, "run", *_agent(tmp_path, {"knowledge/people/gunther.md": GUNTHER}, "bad"))
    assert r.exit_code == 1
    last = r.stdout.splitlines()[-1]
    assert "gate problems, nothing valid left to commit" in last and "main untouched" in last
    assert any(
        line.startswith(f"memory/sessions/summaries/{S1[0]}.md:") for line in r.stdout.splitlines()
    )
    assert head(store) == before and len(orient(store).pending) == 2
    status = json.loads(dream(store, "status", "--json").stdout)
    run = status["runs"][0]
    assert run["status"] == "gate-failed" and run["leftOut"] == []
    assert status["kept"][0]["status"] == "gate-failed"
    # the branch keeps what the engine wrote, whole, for review
    branch = f"dream/{run['runId']}"
    assert git(store, "rev-parse", f"{branch}~1") == before
    assert "Met Gunther in Oslo." in git(
        store, "show", f"{branch}:memory/sessions/summaries/{S1[0]}.md"
    )
    assert "Oslo" in git(store, "show", f"{branch}:memory/knowledge/people/gunther.md")
    validated = [x for x in receipts(store, branch) if x["tier"] == "validated"]
    assert {x["status"] for x in validated} == {"failed"} and len(validated) == 5
    assert not any("reason" in x for x in validated)  # a gate failure, not a part left out


# -- one claim of a page ------------------------------------------------------------------


def test_one_unsupported_claim_is_left_out_of_its_page(store: Store, tmp_path: Path) -> None:
    add_sessions(store, tmp_path / "in", [S1])
    page = "knowledge/projects/reefsong.md"
    body = (
        "\n# Reefsong\n\n## 2026-01-04 (4 January 2026)\n\n"
        "- Gunther sent the figures from Oslo [cite:2]\n"
        "\n## 2026-01-05 (5 January 2026)\n\n"
        "- Dana needs the figures as PDF for Reefsong [cite:1]\n"
        "- Dana needs 250 figures [cite:1]\n"
        "- Three figures are needed [cite:1]\n"
    )
    text = _page("reefsong", "Reefsong", "project", body, _source(1, S1) + _source(2, S1, 2))
    result = run_dream(store, ScriptedEngine(page=_writes({page: text})))
    assert result.status == "committed" and result.exit_code == 0
    assert sorted(x.split(": ")[1].split()[0] for x in result.left_out) == ["DV101", "DV102"]
    assert all(x.endswith("(claim left out)") for x in result.left_out)
    lines = text.split("\n")
    for item in result.left_out:  # numbered as the engine wrote the page
        n = int(item.split(":")[1])
        assert ("Gunther" if "DV101" in item else "250") in lines[n - 1]
    landed = (store.memory / page).read_text()
    assert "Gunther" not in landed and "250" not in landed
    assert "- Dana needs the figures as PDF for Reefsong [cite:1]" in landed
    assert "- Three figures are needed [cite:1]" in landed
    # the dated section left empty goes, and so does the source only it cited
    assert "2026-01-04" not in landed and "#t2" not in landed
    assert result.pages_created == (page,) and validate_store(store) == []
    # the kept branch puts the claims back on top of what landed
    branch = f"dream/{result.run_id}"
    assert git(store, "show", f"{branch}:memory/{page}") == text.rstrip("\n")
    assert git(store, "rev-parse", f"{branch}~1") == head(store)
    items = {x["item"] for x in receipts(store) if x.get("reason")}
    assert items == {
        opaque_item("claim", f"{page}#{content_hash(line)}")
        for line in lines
        if "Gunther" in line or "250" in line
    }


def test_a_claim_the_base_held_is_never_dropped_alone(store: Store, tmp_path: Path) -> None:
    porto = ("2026-01-02-porto", "2026-01-02", ["I live in Porto.", "Nice."])
    lisbon = ("2026-01-08-move", "2026-01-08", ["I live in Lisbon now.", "Great."])
    add_sessions(store, tmp_path / "in", [porto])
    page = "knowledge/people/dana.md"
    before = _page(
        "dana", "Dana", "person", "\n# Dana\n\n- Dana lives in Porto [cite:1]\n", _source(1, porto)
    )
    assert run_dream(store, ScriptedEngine(page=_writes({page: before}))).status == "committed"
    add_sessions(store, tmp_path / "in2", [lisbon])
    # a new claim above the committed one contradicts it: the gate names the later line,
    # the committed claim; dropping it would drop a committed fact for an unverified one
    body = "\n# Dana\n\n- Dana lives in Lisbon [cite:2]\n- Dana lives in Porto [cite:1]\n"
    after = _page("dana", "Dana", "person", body, _source(1, porto) + _source(2, lisbon))
    result = run_dream(store, ScriptedEngine(page=_writes({page: after})))
    assert result.status == "committed", result.problems
    assert any("DV201" in p for p in result.problems)
    assert [x.split(":")[0] for x in result.left_out] == [f"memory/{page}"]
    assert result.left_out[0].endswith("(file left out)")
    assert (store.memory / page).read_text() == before  # as on the base
    assert result.sessions == (lisbon[0],) and validate_store(store) == []


def test_a_summary_left_out_keeps_its_session_pending(store: Store, tmp_path: Path) -> None:
    add_sessions(store, tmp_path / "in", [S1, S2])

    def claim(t: Transcript, turn: object) -> str:
        return "Met Gunther in Oslo." if t.id == S2[0] else "Dana needs the figures as PDF."

    result = run_dream(store, ScriptedEngine(claim=claim))
    assert result.status == "committed" and result.sessions == (S1[0],)
    assert [x.split(":")[0] for x in result.left_out] == [f"memory/sessions/summaries/{S2[0]}.md"]
    assert [p.id for p in orient(store).pending] == [S2[0]] and result.pending_after == 1
    index = (store.memory / "sessions/index.md").read_text()
    assert f"| {S2[0]} |" in index and f"summaries/{S2[0]}.md" not in index
    assert validate_store(store) == []
    again = run_dream(store, ScriptedEngine())
    assert again.status == "committed" and again.sessions == (S2[0],) and not again.left_out


# -- what leaving out breaks --------------------------------------------------------------


def test_a_page_left_out_that_another_page_linked_to_still_gives_a_valid_tree(
    store: Store, tmp_path: Path
) -> None:
    add_sessions(store, tmp_path / "in", [S1])
    linking = REEFSONG.replace(
        "for Reefsong [cite:1]\n",
        "for [[reefsong|Reefsong]] [cite:1]\n- Dana asked [[gunther|Gunther]] for them [cite:1]\n"
        "\n## Related\n\n- [[gunther|Gunther]]\n",
    )
    bad = GUNTHER.replace("id: gunter", "id: gunther")  # only its claim is bad now
    pages = {"knowledge/projects/reefsong.md": linking, "knowledge/people/gunther.md": bad}
    result = run_dream(store, ScriptedEngine(page=_writes(pages)))
    assert result.status == "committed", result.problems
    kinds = sorted(
        (x.split(":")[0].rsplit("/", 1)[1], x.rsplit("(", 1)[1]) for x in result.left_out
    )
    assert kinds == [
        ("gunther.md", "file left out)"),
        ("reefsong.md", "claim left out)"),  # "Dana asked Gunther": Gunther is not in the turn
        ("reefsong.md", "link left out)"),  # the Related line
    ]
    assert validate_store(store) == []
    landed = (store.memory / "knowledge/projects/reefsong.md").read_text()
    assert "[[gunther" not in landed and landed.endswith("## Related\n\n- Gunther\n")  # as forget
    assert "for [[reefsong|Reefsong]] [cite:1]" in landed
    assert "gunther" not in (store.memory / "INDEX.md").read_text().lower()


def test_a_link_in_a_kept_claim_keeps_its_label(store: Store, tmp_path: Path) -> None:
    add_sessions(store, tmp_path / "in", [S1])
    linking = REEFSONG.replace("for Reefsong [cite:1]", "for [[bad-page|Reefsong]] [cite:1]")
    bad = _page("bad-page", "Bad", "topic", "\n- Gunther was in Oslo [cite:1]\n", _source(1, S1))
    hub = _page("hub", "Hub", "topic", "\nSee [[bad-page]] and [[reefsong]].\n")  # no claims
    pages = {
        "knowledge/projects/reefsong.md": linking,
        "knowledge/topics/bad-page.md": bad,
        "knowledge/topics/hub.md": hub,
    }
    result = run_dream(store, ScriptedEngine(page=_writes(pages)))
    assert result.status == "committed", result.problems
    assert (store.memory / "knowledge/projects/reefsong.md").read_text() == REEFSONG
    hub_text = (store.memory / "knowledge/topics/hub.md").read_text()
    assert hub_text.endswith("\nSee bad-page and [[reefsong]].\n")
    assert validate_store(store) == []


# -- review, apply, discard, health ---------------------------------------------------------


def test_review_shows_what_was_left_out(store: Store, tmp_path: Path) -> None:
    add_sessions(store, tmp_path / "in", [S1])
    bad = "knowledge/people/gunther.md"
    pages = {"knowledge/projects/reefsong.md": REEFSONG, bad: GUNTHER}
    result = run_dream(store, ScriptedEngine(page=_writes(pages)))
    r = dream(store, "review", result.run_id)
    assert r.exit_code == 0, r.stderr
    out = r.stdout.splitlines()
    assert out[0] == f"left out: {result.left_out[0]}"
    assert f"== memory/{bad} (added) ==" in out
    assert "+- Gunther reviews the figures in Oslo [cite:1]" in out
    assert out[-1] == f"2 files changed in run {result.run_id}"  # what landed is not shown
    data = json.loads(dream(store, "review", result.run_id, "--json").stdout)
    assert data["leftOut"] == list(result.left_out)
    assert [p["path"] for p in data["pages"]] == [f"memory/{bad}", "memory/INDEX.md"]
    assert [p.path for p in review_run(store, result.run_id)][0] == f"memory/{bad}"


def test_apply_is_all_or_nothing_and_lands_a_fixed_page(store: Store, tmp_path: Path) -> None:
    add_sessions(store, tmp_path / "in", [S1])
    bad = "knowledge/people/gunther.md"
    pages = {"knowledge/projects/reefsong.md": REEFSONG, bad: GUNTHER}
    result = run_dream(store, ScriptedEngine(page=_writes(pages)))
    landed = head(store)
    again = apply_run(store, result.run_id)  # not fixed: the gates say no, nothing left out
    assert again.status == "gate-failed" and head(store) == landed and not again.left_out
    # a human fixes the page on the branch, then applies
    fix = tmp_path / "fix"
    git(store, "worktree", "add", "-q", str(fix), f"dream/{result.run_id}")
    fixed = GUNTHER.replace("id: gunter", "id: gunther").replace(" in Oslo", "")
    fixed = fixed.replace("Gunther reviews the figures", "Dana needs the figures as PDF")
    (fix / "memory" / bad).write_text(fixed)
    subprocess.run(["git", "commit", "-qam", "fix"], cwd=fix, check=True)
    git(store, "worktree", "remove", str(fix))
    applied = apply_run(store, result.run_id)
    assert applied.status == "committed", applied.problems
    assert (store.memory / bad).read_text() == fixed and validate_store(store) == []
    assert kept_runs(store) == []
    committed = [x for x in receipts(store) if x["item"] == page_item(bad)]
    assert [(x["tier"], x["status"]) for x in committed] == [
        ("validated", "failed"),
        ("attached", "verified"),
        ("validated", "verified"),
        ("committed", "committed"),
    ]
    report = check_health(store)
    verdict = {lv.item: lv.verdict for lv in report.lineages}
    assert verdict[page_item(bad)] == "healthy" and report.ok, report.to_json()


def test_a_review_run_keeps_what_would_land_and_lists_what_was_left_out(
    store: Store, tmp_path: Path
) -> None:
    add_sessions(store, tmp_path / "in", [S1])
    before = head(store)
    bad = "knowledge/people/gunther.md"
    pages = {"knowledge/projects/reefsong.md": REEFSONG, bad: GUNTHER}
    result = run_dream(store, ScriptedEngine(page=_writes(pages)), RunOptions(review=True))
    assert result.status == "review" and head(store) == before and len(result.left_out) == 1
    assert "1 left out" in result.message
    shown = dream(store, "review", result.run_id).stdout.splitlines()
    assert shown[0] == f"left out: {result.left_out[0]}"
    assert f"== memory/{bad} (added) ==" not in shown
    applied = apply_run(store, result.run_id)
    assert applied.status == "committed" and not (store.memory / bad).exists()
    assert (store.memory / "knowledge/projects/reefsong.md").is_file()
    assert validate_store(store) == [] and left_out_of(store, result.run_id) == result.left_out


def test_health_neither_alarms_over_nor_hides_what_was_left_out(
    store: Store, tmp_path: Path
) -> None:
    add_sessions(store, tmp_path / "in", [S1])
    bad = "knowledge/people/gunther.md"
    pages = {"knowledge/projects/reefsong.md": REEFSONG, bad: GUNTHER}
    result = run_dream(store, ScriptedEngine(page=_writes(pages)))
    item = page_item(bad)
    later = dt.datetime.now(dt.UTC) + dt.timedelta(days=30)  # past due and past max-age
    for now in (None, later):
        report = check_health(store, now=now)
        lineage = next(lv for lv in report.lineages if lv.item == item)
        assert (lineage.verdict, lineage.layer) == ("waiting", "validated"), report.to_json()
        assert "MF006" in lineage.reason and "awaits review" in lineage.reason
        assert report.overall == "waiting" and report.exit_code == 3
    r = dream(store, "health", "--json")
    assert r.exit_code == 3 and json.loads(r.stdout)["item"] == item
    discard_run(store, result.run_id)  # reviewed: decided
    for now in (None, later):
        report = check_health(store, now=now)
        lineage = next(lv for lv in report.lineages if lv.item == item)
        assert lineage.verdict == "healthy" and "MF006" in lineage.reason
        assert report.ok, report.to_json()
    assert dream(store, "health").exit_code == 0


# -- main moving under the run, the message's bound, dry runs --------------------------------


def test_main_moving_meanwhile_lands_the_rest_and_the_branch_follows(
    store: Store, tmp_path: Path
) -> None:
    add_sessions(store, tmp_path / "in", [S1])
    bad = "knowledge/people/gunther.md"
    pages = {"knowledge/projects/reefsong.md": REEFSONG, bad: GUNTHER}
    ingested: list[str] = []

    def ingest_meanwhile(stage: Stage) -> None:
        ingested.append(add_sessions(store, tmp_path / "late", [S3]))

    result = run_dream(store, ScriptedEngine(page=_writes(pages)), before_sync=ingest_meanwhile)
    assert result.status == "committed" and result.rebased == 1 and len(result.left_out) == 1
    assert git(store, "rev-parse", "HEAD~1") == ingested[0] and validate_store(store) == []
    branch = f"dream/{result.run_id}"
    assert git(store, "rev-parse", f"{branch}~1") == head(store)
    changed = git(store, "diff", "--name-only", "HEAD", branch, "--", "memory").splitlines()
    assert changed == ["memory/INDEX.md", f"memory/{bad}"]


def test_the_left_out_section_is_bounded() -> None:
    summary = ChangeSummary(["s"], [], [], [], 0)
    items = [f"memory/notes/n{i}.md:3: DV101 name {'x' * 300} (claim left out)" for i in range(45)]
    message = commit_message(summary, "20260101T0000-abcdef", "e/1", "s", left_out=items)
    assert message.splitlines()[0].endswith("; 45 left out")
    section = message.split("Left out:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert len(section) == 41 and section[-1] == "- ... and 5 more (45 in all)"
    assert all(len(line) <= 202 for line in section)


def test_a_dry_run_says_what_it_would_leave_out(store: Store, tmp_path: Path) -> None:
    add_sessions(store, tmp_path / "in", [S1])
    before = head(store)
    pages = {"knowledge/people/gunther.md": GUNTHER}
    result = run_dream(store, ScriptedEngine(page=_writes(pages)), RunOptions(dry_run=True))
    assert result.status == "dry-run" and len(result.left_out) == 1
    assert "gates pass with 1 left out" in result.message
    assert head(store) == before and kept_runs(store) == []


# -- killed mid-run ---------------------------------------------------------------------------


class BadPageEngine(ScriptedEngine):
    """A summary that passes and two pages, one of which the gates reject."""

    def __init__(self) -> None:
        pages = {"knowledge/projects/reefsong.md": REEFSONG, "knowledge/people/gunther.md": GUNTHER}
        super().__init__(page=_writes(pages))


def _observer(event: str, root: Path, base: str) -> Callable[[], bool]:
    heads = root / ".git/refs/heads"

    def read(path: Path) -> str:
        try:
            return path.read_text().strip()
        except OSError:
            return ""

    def main_moved() -> bool:
        return read(heads / "main") not in ("", base)

    if event == "main-moved":
        return main_moved
    if event == "put-back":  # the branch moved past what landed on main

        def put_back() -> bool:
            with contextlib.suppress(OSError):
                tips = [read(b) for b in (heads / "dream").iterdir()]
                return main_moved() and any(t not in ("", base, read(heads / "main")) for t in tips)
            return False

        return put_back
    runs = root / ".dream/runs"
    return lambda: runs.is_dir() and any(runs.iterdir())


def _valid_at(root: Path, rev: str, scratch: Path) -> None:
    data = subprocess.run(
        ["git", "-C", str(root), "archive", "--format=tar", rev], capture_output=True, check=True
    ).stdout
    scratch.mkdir(parents=True)
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(scratch, filter="data")
    assert validate_store(Store.open(scratch)) == []


@pytest.mark.parametrize(
    "point",
    [
        KillPoint("main-moved", 0.0, False),
        KillPoint("main-moved", 0.0, True),
        KillPoint("main-moved", 0.003, True),
        KillPoint("put-back", 0.0, True),
        KillPoint("record", 0.0, False),
        KillPoint("timer", 0.4, True),
    ],
    ids=lambda p: p.label(),
)
def test_a_run_killed_while_leaving_out_leaves_main_valid_and_the_next_run_recovers(
    store: Store, tmp_path: Path, point: KillPoint
) -> None:
    add_sessions(store, tmp_path / "in", [S1])
    base = head(store)
    engine = "tests.dream.landing.test_leave_out:BadPageEngine"
    args = ["run", "--store", str(store.root), "--engine", engine]
    pid = fork_cli(args, app=app, prog_name="dream")
    fired = (lambda: True) if point.event == "timer" else _observer(point.event, store.root, base)
    kill_when(pid, fired, point)
    fsck = subprocess.run(["git", "-C", str(store.root), "fsck"], capture_output=True, text=True)
    assert fsck.returncode == 0 or "worktrees/" in fsck.stderr, fsck.stderr
    main = git(store, "rev-parse", "main")
    assert main == base or git(store, "rev-parse", "main~1") == base
    _valid_at(store.root, "main", tmp_path / "scratch")
    assert not (store.memory / "knowledge/people/gunther.md").exists() or main == base
    # the next run lands it once (or finds it landed), and leaves nothing stale behind
    result = run_dream(Store.open(store.root), BadPageEngine())
    assert result.status in ("committed", "nothing-pending"), result
    assert git(store, "rev-parse", "main~1") == base and validate_store(store) == []
    assert not (store.memory / "knowledge/people/gunther.md").exists()
    assert git(store, "status", "--porcelain", "--untracked-files=all") == ""
    # a branch stays only when it holds what main does not: what a run left out
    for rid in kept_runs(store):
        tip = git(store, "rev-parse", f"dream/{rid}")
        assert git(store, "merge-base", tip, "main") != tip
        assert read_record(store, rid) is not None or rid != result.run_id
    assert result.status == "nothing-pending" or result.run_id in kept_runs(store)
    assert sorted(p.name for p in (store.dream_dir / "worktrees").iterdir()) in ([], [".spare"])
