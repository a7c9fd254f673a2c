"""Live citations: claims whose cited turn changed are re-checked, never carried forward."""

from __future__ import annotations

from dream.phases.recheck import UNSUPPORTED, ReciteReport, recite_page
from memoryfs.pages.page import parse_page
from memoryfs.pages.transcript import Transcript, Turn

REF = "sessions/transcripts/2026-01-06-marta.md"


def _transcript(*texts: str) -> Transcript:
    turns = tuple(Turn(i + 1, "user", "2026-01-06T10:00", t) for i, t in enumerate(texts))
    return Transcript("2026-01-06-marta", "2026-01-06T10:00", ("dana",), {}, turns)


def _page(hashes: tuple[str, str], body: str) -> str:
    return (
        "---\nid: marta\ntitle: Marta\ntype: person\nupdated: '2026-01-06'\nsources:\n"
        f"- id: 1\n  ref: {REF}#t1\n  at: '2026-01-06'\n  hash: {hashes[0]}\n"
        f"- id: 2\n  ref: {REF}#t2\n  at: '2026-01-06'\n  hash: {hashes[1]}\n"
        f"---\n{body}"
    )


def test_a_claim_the_changed_turn_still_supports_is_recited() -> None:
    old = _transcript("Marta is a nurse at the UKE in Hamburg.", "She cycles.")
    new = _transcript("Marta is a nurse at the UKE in Hamburg, since 2019.", "She cycles.")
    text = _page((old.turns[0].hash, old.turns[1].hash), "- Marta works at the UKE. [cite:1]\n")
    report = ReciteReport()
    fixed = recite_page(parse_page(text, "knowledge/people/marta.md"), {REF: new}, report)
    assert fixed is not None and report.recited == 1 and report.unsupported == []
    assert {s.id: s.hash for s in fixed.sources} == {1: new.turns[0].hash, 2: old.turns[1].hash}
    assert fixed.body == "- Marta works at the UKE. [cite:1]\n"


def test_a_claim_the_changed_turn_no_longer_supports_is_marked_unsupported() -> None:
    old = _transcript("Marta is a nurse at the UKE in Hamburg.", "She cycles to the Elbe.")
    new = _transcript("Marta is a nurse.", "She cycles to the Elbe.")
    body = "- Marta works at the UKE. [cite:1]\n- Marta cycles to the Elbe. [cite:1][cite:2]\n"
    text = _page((old.turns[0].hash, old.turns[1].hash), body)
    report = ReciteReport()
    fixed = recite_page(parse_page(text, "knowledge/people/marta.md"), {REF: new}, report)
    assert fixed is not None
    # the first claim lost its only evidence; the second is still supported by both turns
    assert fixed.body == (
        f"- Marta works at the UKE. {UNSUPPORTED}\n- Marta cycles to the Elbe. [cite:1][cite:2]\n"
    )
    assert {s.id: s.hash for s in fixed.sources} == {1: new.turns[0].hash, 2: old.turns[1].hash}
    assert len(report.unsupported) == 1 and report.recited == 1


def test_a_gone_turn_unsupports_its_claims_and_an_unchanged_page_is_left_alone() -> None:
    old = _transcript("Marta is a nurse at the UKE.", "She cycles.")
    text = _page((old.turns[0].hash, old.turns[1].hash), "- Marta works at the UKE. [cite:1]\n")
    page = parse_page(text, "knowledge/people/marta.md")
    assert recite_page(page, {REF: old}, ReciteReport()) is None
    report = ReciteReport()
    gone = recite_page(page, {REF: None}, report)
    assert gone is not None and gone.body == f"- Marta works at the UKE. {UNSUPPORTED}\n"
    assert gone.sources == [] and "is gone" in report.unsupported[0]
    # a claim that also rests on a turn still there keeps that citation only
    two = _page((old.turns[0].hash, "0badc0de"), "- Marta works at the UKE. [cite:1][cite:2]\n")
    short = _transcript("Marta is a nurse at the UKE.")  # turn 2 is gone
    report = ReciteReport()
    fixed = recite_page(parse_page(two, "knowledge/people/marta.md"), {REF: short}, report)
    assert fixed is not None and fixed.body == "- Marta works at the UKE. [cite:1]\n"
    assert [s.id for s in fixed.sources] == [1] and report.dropped == 1
