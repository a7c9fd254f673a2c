"""Health: the golden fixture cases, store facts, and the ``dream health`` command."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import paths
import pytest
import typer
from dream_fixtures import ScriptedEngine
from typer.testing import CliRunner

import dream.health.lineage
from cli.dream_health_cmds import register
from dream.engines import load_engine
from dream.errors import DreamError
from dream.health.lineage import PRECEDENCE, StoreFacts
from dream.health.store_facts import gather_store_facts, summary_outcome
from dream.health.verdicts import EXIT_CODES, check_health, classify, parse_age
from dream.runner import RunOptions, run_dream
from dream.skills import SKILL_ENV, approve
from memoryfs.ingest import ingest
from memoryfs.pages.page import parse_page
from memoryfs.pages.transcript import Transcript, Turn, render_transcript
from memoryfs.receipts.log import ReceiptLog, parse_receipts, store_receipt_dir
from memoryfs.receipts.records import (
    Receipt,
    format_utc,
    page_item,
    parse_utc,
    scope_ids,
    session_item,
    source_version,
)
from memoryfs.store.hashing import content_hash
from memoryfs.store.store import Store

FIXTURES = paths.FIXTURES / "health"
DANA, ATLAS = scope_ids("dana", "atlas")
CASES = sorted(p.name for p in FIXTURES.iterdir() if p.is_dir())


@pytest.fixture(autouse=True)
def _repo_skill(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(SKILL_ENV, raising=False)


def _run_case(name: str) -> tuple[dict, object]:
    folder = FIXTURES / name
    receipts, problems = parse_receipts((folder / "receipts.jsonl").read_bytes(), "receipts.jsonl")
    inputs = json.loads((folder / "facts.json").read_text())
    report = classify(
        receipts,
        StoreFacts.from_json(inputs["facts"]),
        now=parse_utc(inputs["now"]),
        max_age=parse_age(inputs["maxAge"]),
        problems=[p.format() for p in problems],
    )
    return json.loads((folder / "expected.json").read_text()), report


@pytest.mark.parametrize("name", CASES)
def test_fixture_case(name: str) -> None:
    expected, report = _run_case(name)
    got = report.to_json()  # type: ignore[attr-defined]
    assert got["overall"] == expected["overall"]
    if "layer" in expected:
        assert got["layer"] == expected["layer"]
    assert {lv["item"]: lv["verdict"] for lv in got["lineages"]} == expected["lineages"]
    assert [c["kind"] for c in got["checks"]] == expected["checks"]
    assert got["exitCode"] == expected["exitCode"]


def test_fixtures_cover_every_verdict_check_and_precedence_pair() -> None:
    assert len(CASES) >= 12
    overall, checks = set(), set()
    for name in CASES:
        expected = json.loads((FIXTURES / name / "expected.json").read_text())
        overall.add(expected["overall"])
        checks.update(expected["checks"])
    assert overall == set(PRECEDENCE)
    assert checks == {"outcomeless_episode", "unsafe_procedure"}
    # Each adjacent pair of PRECEDENCE has a case where both verdicts are found
    # in one lineage and the worse one decides.
    for worse, better in zip(PRECEDENCE[:-2], PRECEDENCE[1:-1], strict=True):
        _, report = _run_case(f"precedence_{worse}_over_{better}")
        (lineage,) = report.lineages  # type: ignore[attr-defined]
        assert lineage.verdict == worse
        assert better in {f.verdict for f in lineage.findings}, (worse, better)


def test_precedence_is_documented_in_the_same_order() -> None:
    doc = dream.health.lineage.__doc__ or ""
    positions = [doc.index(f"``{v}``") for v in PRECEDENCE]
    assert positions == sorted(positions)
    assert list(EXIT_CODES) == list(reversed(PRECEDENCE))


def test_no_evidence_is_never_green() -> None:
    facts = StoreFacts(user_scope=DANA, assistant_scope=ATLAS, active_skill="none")
    report = classify([], facts, now=dt.datetime(2026, 1, 20, tzinfo=dt.UTC))
    assert report.overall == "uncertain" and report.exit_code == EXIT_CODES["uncertain"]


def test_parse_age() -> None:
    assert parse_age("7d") == dt.timedelta(days=7)
    assert parse_age("1d12h") == dt.timedelta(hours=36)
    assert parse_age("2w") == dt.timedelta(days=14)
    for bad in ("", "7", "d", "-1d", "7 days", "0s"):
        with pytest.raises(DreamError):
            parse_age(bad)


@pytest.mark.parametrize(
    ("body", "outcome"),
    [
        (
            "## Key points\n- a\n\nOutcome: Dana will send the draft [cite:3].\n",
            "Dana will send the draft",
        ),
        ("**Outcome:** chose Polars\n", "chose Polars"),
        ("- **Outcome**: merged\n", "merged"),
        ("## Outcome\n\nShipped 1.0.\n", "Shipped 1.0"),
        ("Outcome: none recorded\n", ""),
        ("Outcome: (none recorded)\n", ""),
        ("## Outcome\n\n## Open threads\n- x\n", ""),
        ("## Key points\n- outcomes were discussed\n", ""),
        # as Dream writes summaries (dream.wiki.render.render_summary)
        ("## Outcome\n\nOutcome: none recorded\n\n## Open threads\n", ""),
        ("## Outcome\n\nOutcome: chose Polars [cite:2]\n", "chose Polars"),
        ("## Outcome\n\n- **Outcome:** n/a\n", ""),
        ("## Outcome\n\n\n", ""),
    ],
)
def test_summary_outcome(body: str, outcome: str) -> None:
    page = parse_page(
        f"---\nid: s\ntitle: s\ntype: session-summary\nupdated: 2026-01-05\n---\n{body}"
    )
    assert summary_outcome(page) == outcome


# -- a real store --------------------------------------------------------------------


def _transcript(store: Store, sid: str, texts: list[str], user: str = "dana") -> str:
    t = Transcript(
        id=sid,
        started="2026-01-05T09:30",
        participants=("dana", "atlas"),
        scope={"user": user, "assistant": "atlas"},
        turns=tuple(
            Turn(i + 1, "dana", f"2026-01-05T09:{30 + i:02d}", text) for i, text in enumerate(texts)
        ),
    )
    path = store.transcript_path(sid)
    path.write_text(render_transcript(t))
    return content_hash(path.read_bytes())


def _page(store: Store, rel: str, body: str, sources: list[tuple[int, str, str]]) -> str:
    src = "".join(
        f"  - id: {n}\n    ref: {ref}\n    at: 2026-01-05\n    hash: {h}\n" for n, ref, h in sources
    )
    head = f"id: {Path(rel).stem}\ntitle: T\ntype: topic\nupdated: 2026-01-05\n"
    text = f"---\n{head}sources:\n{src}---\n{body}"
    path = store.memory / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return content_hash(text.encode())


def test_gather_store_facts_reads_sources_outcomes_scope_and_deletions(tmp_store: Store) -> None:
    from memoryfs.store.hashing import turn_hash

    v_a = _transcript(tmp_store, "2026-01-05-a", ["We chose Polars.", "Figures as PDF."])
    _transcript(tmp_store, "2026-01-06-copied", ["Hello."], user="erin")
    _transcript(tmp_store, "2026-01-07-gone", ["Bye."])
    ref = "sessions/transcripts/2026-01-05-a.md"
    _page(
        tmp_store,
        "knowledge/topics/figures.md",
        "PDF [cite:1]. Polars [cite:2]. Gone [cite:3]. Lost [cite:4].\n",
        [
            (1, f"{ref}#t2", turn_hash("Figures as PDF.")),
            (2, f"{ref}#t1", "deadbeef"),
            (3, f"{ref}#t9", "deadbeef"),
            (4, "sessions/transcripts/nowhere.md#t1", "deadbeef"),
        ],
    )
    _page(tmp_store, "sessions/summaries/2026-01-05-a.md", "Outcome: chose Polars\n", [])
    _page(tmp_store, "sessions/summaries/2026-01-07-gone.md", "Outcome: none recorded\n", [])
    (tmp_store.memory / "deletions.jsonl").write_text(
        '{"kind": "session", "id": "2026-01-07-gone"}\n'
    )
    tmp_store.commit("fixture")

    facts = gather_store_facts(tmp_store, skill_path=tmp_store.root / "missing.md")
    a = session_item("2026-01-05-a")
    assert facts.versions[a] == v_a and a in facts.transcripts and a in facts.summarized
    assert facts.foreign == {session_item("2026-01-06-copied")}
    assert facts.outcomeless == {session_item("2026-01-07-gone")}
    assert session_item("2026-01-07-gone") in facts.forgotten
    risks = {(r.page, r.citation, r.reason) for r in facts.citations_at_risk}
    assert risks == {
        ("knowledge/topics/figures.md", 2, "hash changed"),
        ("knowledge/topics/figures.md", 3, "turn gone"),
        ("knowledge/topics/figures.md", 4, "transcript gone"),
    }
    assert facts.head == tmp_store.head() and facts.active_skill == "none"

    report = check_health(tmp_store, skill_path=tmp_store.root / "missing.md")
    verdicts = {lv.item: lv.verdict for lv in report.lineages}
    assert verdicts[page_item("knowledge/topics/figures.md")] == "source_at_risk"
    assert verdicts[session_item("2026-01-06-copied")] == "scope_conflict"
    assert verdicts[a] == "uncertain"  # summarized, but no receipts prove it
    assert report.overall == "scope_conflict" and not report.ok


def test_a_store_without_receipts_is_never_healthy(tmp_store: Store) -> None:
    _transcript(tmp_store, "2026-01-05-a", ["We chose Polars."])
    tmp_store.commit("fixture")
    report = check_health(tmp_store)
    assert report.overall in ("waiting", "uncertain") and report.exit_code != 0


def _full_lineage(store: Store, now: dt.datetime) -> None:
    sid = "2026-01-05-a"
    version = _transcript(store, sid, ["We chose Polars."])
    approve(store, by="tester")  # the packaged skills/dream/SKILL.md
    store.commit("fixture")
    sv = source_version("3f9a2c1e5b7d9e01", "embedded/1")
    at = format_utc(now - dt.timedelta(hours=1))
    item = session_item(sid)
    ReceiptLog(store_receipt_dir(store.root)).append(
        Receipt("dream-0a1b", DANA, ATLAS, item, tier, version, sv, status, at)
        for tier, status in [
            ("ingested", "committed"),
            ("summarized", "committed"),
            ("validated", "verified"),
            ("committed", "committed"),
        ]
    )


def test_health_command_json_and_exit_codes(tmp_store: Store) -> None:
    app = typer.Typer()
    app.command("version")(lambda: None)  # a second command keeps 'health' a subcommand
    register(app)
    runner = CliRunner()
    now = dt.datetime.now(dt.UTC)
    _full_lineage(tmp_store, now)
    result = runner.invoke(app, ["health", "--store", str(tmp_store.root), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["overall"] == "healthy" and data["exitCode"] == 0
    assert [lv["verdict"] for lv in data["lineages"]] == ["healthy"]

    human = runner.invoke(app, ["health", "--store", str(tmp_store.root)])
    assert human.exit_code == 0
    assert human.stdout.splitlines()[-1].startswith("overall: healthy")
    assert "2026-01-05-a" not in human.stdout  # lineage lines are content-free

    # A page deleted behind Dream's back is a failed layer, not green.
    ReceiptLog(store_receipt_dir(tmp_store.root)).append(
        [
            Receipt(
                "dream-0a1b", DANA, ATLAS, page_item("knowledge/topics/x.md"), "committed",
                "c3d4e5f607182930", source_version(), "committed", format_utc(now),
            )
        ]
    )  # fmt: skip
    broken = runner.invoke(app, ["health", "--store", str(tmp_store.root), "--max-age", "7d"])
    assert broken.exit_code == EXIT_CODES["source_at_risk"]
    assert "overall: source_at_risk" in broken.stdout

    bad = runner.invoke(app, ["health", "--store", str(tmp_store.root), "--max-age", "soon"])
    assert bad.exit_code == 1 and "bad age" in bad.stderr


def _chat(folder: Path, sid: str, said: str, answer: str) -> Path:
    """A chat log of one exchange, as a user's client would hand it to ``memoryfs ingest``."""
    path = folder / f"{sid}.jsonl"
    day = sid[:10]
    lines = [
        {"role": "user", "content": said, "ts": f"{day}T09:00:00"},
        {"role": "assistant", "content": answer, "ts": f"{day}T09:01:00"},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_a_dreamed_session_with_no_outcome_is_an_outcomeless_episode_not_a_failed_lineage(
    tmp_store: Store, tmp_path: Path
) -> None:
    """End to end: Dream writes "Outcome: none recorded" for a session that decided nothing;
    health warns of an outcomeless episode for it, and its lineage stays as its receipts
    make it (``dream.health.lineage`` reads no outcome): healthy, exit code 0."""
    decided, chatted = "2026-01-05-stack", "2026-01-06-weekend"
    said = [
        (decided, "We decided to go with Polars for the ingest pipeline.", "Good, Polars it is."),
        (
            chatted,
            "My sister Noor visited Leipzig last weekend and loved the zoo.",
            "That sounds like a lovely trip.",
        ),
    ]
    ingest(tmp_store, [_chat(tmp_path, *one) for one in said])
    approve(tmp_store, by="tester")
    assert run_dream(tmp_store, load_engine()).status == "committed"
    summaries = tmp_store.memory / "sessions" / "summaries"
    assert "Outcome: none recorded" in (summaries / f"{chatted}.md").read_text()
    assert "Outcome: none recorded" not in (summaries / f"{decided}.md").read_text()

    app = typer.Typer()
    app.command("version")(lambda: None)  # a second command keeps 'health' a subcommand
    register(app)
    runner = CliRunner()
    result = runner.invoke(app, ["health", "--store", str(tmp_store.root), "--json"])
    data = json.loads(result.stdout)
    assert [(c["kind"], c["item"]) for c in data["checks"]] == [
        ("outcomeless_episode", session_item(chatted))
    ]
    verdicts = {lv["item"]: lv["verdict"] for lv in data["lineages"]}
    assert verdicts[session_item(chatted)] == "healthy"
    assert verdicts[session_item(decided)] == "healthy"
    assert data["overall"] == "healthy" and data["exitCode"] == 0 and result.exit_code == 0

    human = runner.invoke(app, ["health", "--store", str(tmp_store.root)])
    assert human.exit_code == 0
    lines = human.stdout.splitlines()
    assert f"check outcomeless_episode  {session_item(chatted)}: " in human.stdout
    assert lines[-1].startswith("overall: healthy")
    assert chatted not in human.stdout  # the check names the opaque item, not the session


def test_a_skill_never_approved_is_unsafe_only_once_a_run_acted_on_it(
    tmp_store: Store, tmp_path: Path
) -> None:
    """The embedded engine needs no approval, so a store that never approved the skill and
    only ran it is healthy; a run of an engine that follows the skill, let through with
    ``allow_unapproved``, makes it ``unsafe_procedure`` (its receipts name the skill)."""
    said = ("2026-01-05-stack", "We decided to go with Polars.", "Good, Polars it is.")
    ingest(tmp_store, [_chat(tmp_path, *said)])
    assert run_dream(tmp_store, load_engine()).status == "committed"
    report = check_health(tmp_store)
    assert "unsafe_procedure" not in {c.kind for c in report.checks}
    assert report.exit_code == 0, report.to_json()

    acting = ScriptedEngine()  # follows the skill (Engine.acts_on_skill), as llm does
    ingest(tmp_store, [_chat(tmp_path, "2026-01-06-tea", "I drink green tea.", "Noted.")])
    assert run_dream(tmp_store, acting, RunOptions(allow_unapproved=True)).status == "committed"
    report = check_health(tmp_store)
    (check,) = [c for c in report.checks if c.kind == "unsafe_procedure"]
    assert "never approved" in check.detail and report.exit_code == 10
    # approving the skill it acted on settles it
    approve(tmp_store, by="tester")
    assert "unsafe_procedure" not in {c.kind for c in check_health(tmp_store).checks}
