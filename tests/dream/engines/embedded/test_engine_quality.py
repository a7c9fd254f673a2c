"""The embedded engine on the sample memory and on LoCoMo conv-26: quality, supersession, cost.

The quality figure is measured, not tuned: for each question of
``sample_memory/questions.jsonl`` the answer (each part of "A and B", "A, B") must appear,
case-insensitively, in a claim line of a page under ``knowledge/`` or ``notes/`` whose
citation points to one of the question's evidence turns. No code knows the questions.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from engine_fixtures import (
    CHATLOGS,
    SAMPLE,
    chatlog_store,
    consolidate,
    quality,
    sample_store,
)
from paths import LOCOMO

from dream.engines.embedded.extract import claim_slot
from memoryfs.ingest import ingest
from memoryfs.pages.claims import extract_claims, resolve_claim_sources
from memoryfs.pages.page import parse_page
from memoryfs.store.store import init_store
from memoryfs.validate.rules import validate_store

pytestmark = pytest.mark.skipif(
    not (SAMPLE / "questions.jsonl").is_file(), reason="sample_memory is not there"
)


@pytest.fixture(scope="module")
def consolidated(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    store = sample_store(tmp_path_factory.mktemp("quality"))
    consolidate(store)
    return store


def test_answers_are_in_cited_claims(consolidated) -> None:  # type: ignore[no-untyped-def]
    score, misses = quality(consolidated, SAMPLE / "questions.jsonl")
    print(f"\nsample quality: {score:.1%} of questions answered by a claim citing their evidence")
    for miss in misses:
        print("  miss:", miss)
    assert score >= 0.80


@pytest.fixture(scope="module")
def chatlogs(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    store = chatlog_store(tmp_path_factory.mktemp("chatlogs"))
    consolidate(store)
    return store


def test_chat_log_answers_are_in_cited_claims(chatlogs) -> None:  # type: ignore[no-untyped-def]
    """The second sample: the user never says their name; a fifth of its questions ask what
    the assistant recommended or answered."""
    score, misses = quality(chatlogs, CHATLOGS / "questions.jsonl")
    print(f"\nchat-log quality: {score:.1%} of questions answered by a claim citing their evidence")
    for miss in misses:
        print("  miss:", miss)
    assert score >= 0.90


def test_chat_log_user_page_and_recall(chatlogs) -> None:  # type: ignore[no-untyped-def]
    page = chatlogs.memory / "knowledge/people/noor-haddad.md"
    text = page.read_text(encoding="utf-8")
    assert "title: Noor Haddad" in text and "moved into the Lombok flat" in text
    assert validate_store(chatlogs) == []


def test_chat_log_sample_through_the_gates(tmp_path: Path) -> None:
    """The whole night through both gates: it commits, no claim about the user is rejected
    for the user's name, and "where do I live now?" finds the move."""
    from dream.engines.embedded.engine import EmbeddedEngine
    from dream.runner import RunOptions, run_dream
    from memoryfs.read.recall import recall

    store = chatlog_store(tmp_path)
    result = run_dream(store, EmbeddedEngine(), RunOptions(allow_unapproved=True))
    assert result.status == "committed" and not result.left_out, result.message
    assert not [r for r in result.rejected if "DV101" in r and "Noor" in r], result.rejected
    answer = recall(store, "where do I live now?", 300)
    assert any("moved into the Lombok flat" in item.text for item in answer.items[:5]), answer.text


def test_role_change_supersedes_and_both_stay_cited(consolidated) -> None:  # type: ignore[no-untyped-def]
    page = parse_page(
        (consolidated.memory / "knowledge/people/dana.md").read_text(encoding="utf-8")
    )
    roles = [
        (c, resolve_claim_sources(page, c))
        for c in extract_claims(page)
        if claim_slot(c.text, [page.title, "We"]) == "role"
    ]
    current = [(c, s) for c, s in roles if not c.superseded]
    old = [(c, s) for c, s in roles if c.superseded]
    assert len(current) == 1 and "staff scientist" in current[0][0].text
    assert current[0][1] and current[0][1][0].ref.startswith("sessions/transcripts/2026-02-11")
    assert any("postdoc" in c.text and "superseded on 2026-02-11" in c.text for c, _ in old)
    assert all(sources for _, sources in old)
    assert "## History" in page.body


def test_sample_store_validates(consolidated) -> None:  # type: ignore[no-untyped-def]
    assert validate_store(consolidated) == []


@pytest.mark.slow
@pytest.mark.skipif(not (LOCOMO / "conv-26.json").is_file(), reason="LoCoMo data not there")
def test_locomo_conv26_is_fast_and_valid(tmp_path: Path) -> None:
    store = init_store(tmp_path / "locomo", "caroline", "atlas")
    ingest(store, [LOCOMO / "conv-26.json"])
    started = time.perf_counter()
    report = consolidate(store)
    seconds = time.perf_counter() - started
    pages = sorted(
        p.relative_to(store.memory / "knowledge").parts[0]
        for p in (store.memory / "knowledge").rglob("*.md")
    )
    notes = list((store.memory / "notes").rglob("*.md"))
    by_folder = ", ".join(f"{f} {pages.count(f)}" for f in sorted(set(pages)))
    print(
        f"\nLoCoMo conv-26: {len(report.sessions_summarized)} sessions in {seconds:.1f}s, "
        f"{len(pages)} knowledge pages ({by_folder}), {len(notes)} notes, "
        f"{report.claims_added} claims added, {report.claims_merged} merged"
    )
    assert len(report.sessions_summarized) == 19
    assert seconds < 60
    assert validate_store(store) == []
