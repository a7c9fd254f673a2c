"""Evaluation scores: ranked sessions, evidence (direct/cited), answer tokens, BM25 packing."""

from __future__ import annotations

import pytest

from dream.errors import DreamError
from dream.evaluation.baseline import Bm25Turns, human_date
from dream.evaluation.harness import parse_arms, parse_budgets, score_output
from dream.evaluation.records import ArmItem, ArmOutput, Question
from dream.evaluation.scoring import (
    answer_token_recall,
    answer_tokens,
    evidence_recall,
    exact_containment,
    item_sessions,
    mrr,
    normalize_text,
    p95,
    ranked_sessions,
    recall_at_k,
    text_refs,
    words,
)
from memoryfs.pages.transcript import Transcript, Turn
from memoryfs.store.tokens import count_tokens

R1 = "sessions/transcripts/s1.md#t3"
R2 = "sessions/transcripts/s2.md#t1"


def test_item_sessions_own_session_first_then_citations_deduped() -> None:
    assert item_sessions("sessions/transcripts/s1.md", [R2, R1]) == ["s1", "s2"]
    assert item_sessions("sessions/summaries/s2.md", [R1]) == ["s2", "s1"]
    assert item_sessions("knowledge/people/ann.md", [R2, R1, R2]) == ["s2", "s1"]
    assert item_sessions("notes/pets/biscuit.md", []) == []


def test_ranked_sessions_keep_item_order() -> None:
    items = [("knowledge/people/ann.md", [R2]), ("sessions/summaries/s3.md", [R1]), ("x.md", [R2])]
    assert ranked_sessions(items) == ["s2", "s3", "s1"]


def test_recall_at_k_and_mrr() -> None:
    ranked = ["a", "b", "c", "d", "e", "f"]
    assert recall_at_k(ranked, ["f", "b"], 5) == 0.5
    assert recall_at_k(ranked, ["f", "b"], 10) == 1.0
    assert recall_at_k(ranked, [], 5) is None
    assert mrr(ranked, ["c", "f"]) == pytest.approx(1 / 3)
    assert mrr(ranked, ["z"]) == 0.0
    assert mrr(ranked, []) is None


def test_evidence_direct_needs_the_text_cited_accepts_a_citation() -> None:
    gold = {R1: "I went to the  pottery class\nyesterday.", R2: "I ran a race."}
    out = normalize_text("Notes: i went to the pottery class yesterday. And more.")
    assert evidence_recall(gold, out, set()) == (0.5, 0.5, [R2])
    assert evidence_recall(gold, out, {R2}) == (0.5, 1.0, [])
    assert evidence_recall({}, out, set()) == (None, None, [])
    assert evidence_recall({R1: ""}, out, set())[0] == 0.0  # an empty turn is never "found"


def test_answer_tokens_drop_stopwords_and_keep_months_and_numbers() -> None:
    assert answer_tokens("7 May 2023") == {"7", "may", "2023"}
    assert answer_tokens("The week before June 9, 2023") == {"week", "june", "9", "2023"}
    assert answer_tokens("No") == {"no"}  # all stopwords: keep them
    # a number glued to a word is two tokens; an ordinal or a unit stays one
    assert answer_tokens("The week before 3June, 2022") == {"week", "3", "june", "2022"}
    assert answer_tokens("October 13th at 10am") == {"october", "13th", "10am"}
    assert words("covid19 s01") == ["covid", "19", "s01"]
    assert answer_tokens("") == frozenset()


def test_answer_token_recall_compares_numbers_as_strings() -> None:
    out = frozenset(words("On 7 May 2023 she ran 26th of a marathon"))
    assert answer_token_recall("7 May 2023", out) == 1.0
    assert answer_token_recall("April 26, 2023", out) == pytest.approx(1 / 3)
    assert answer_token_recall("", out) is None


def test_exact_containment_normalizes_case_space_and_trailing_punctuation() -> None:
    out = normalize_text("She went on 7 May\n2023, yes.")
    assert exact_containment("7 may 2023.", out) is True
    assert exact_containment("May 7, 2023", out) is False
    assert exact_containment("  ", out) is None


def test_text_refs_and_p95() -> None:
    assert text_refs(f"a [{R1}] b ({R2})") == {R1, R2}
    assert p95(range(1, 101)) == 95
    assert p95([3.0]) == 3.0
    assert p95([]) is None


def test_parse_options_reject_bad_values_with_dream_errors() -> None:
    assert parse_budgets("1000, 2000,1000") == (1000, 2000)
    assert parse_arms("bm25-turns,wiki") == ("bm25-turns", "wiki")
    for bad in ("x", "0", ""):
        with pytest.raises(DreamError):
            parse_budgets(bad)
    with pytest.raises(DreamError, match="unknown arm"):
        parse_arms("wiki,grep")


def _q(gold: dict[str, str], answer: str = "Lisbon") -> Question:
    sessions = tuple(dict.fromkeys(r.split("/")[-1].split(".md")[0] for r in gold))
    return Question("c", 0, "q?", answer, 4, gold, sessions)


def test_score_output_cuts_an_over_budget_output_and_drops_items_past_the_cut() -> None:
    first = ArmItem("sessions/transcripts/s2.md", "sessions", "alpha beta gamma", (R2,))
    second = ArmItem("sessions/transcripts/s1.md", "sessions", "Lisbon " * 10, (R1,))
    out = ArmOutput(text=first.text + "\n" + second.text, items=(first, second))
    s = score_output(_q({R1: "Lisbon " * 10}), out, "wiki", 5, 1.0)
    assert s.over_budget and s.tokens == 5
    assert s.sessions == ("s2",)  # the second item is not shown within the budget
    assert s.ev_direct == 0.0 and s.ev_cited == 0.0 and s.session_r5 == 0.0
    assert s.answer_tokens == 1.0  # "Lisbon" made it in before the cut
    within = score_output(_q({R1: "Lisbon " * 10}), out, "wiki", 100, 1.0)
    assert not within.over_budget and within.ev_direct == 1.0 and within.sessions == ("s2", "s1")


def _transcripts() -> list[Transcript]:
    def t(sid: str, started: str, turns: list[tuple[str, str]]) -> Transcript:
        return Transcript(
            id=sid,
            started=started,
            participants=("Ann", "Ben"),
            scope={},
            turns=tuple(
                Turn(n=i, speaker=s, ts=started, text=x) for i, (s, x) in enumerate(turns, 1)
            ),
        )

    return [
        t(
            "s1",
            "2023-05-08T13:56",
            [("Ann", "My sister Clara moved to Lisbon."), ("Ben", "Nice!")],
        ),
        t(
            "s2",
            "2023-06-20T10:00",
            [("Ben", "I adopted a puppy named Biscuit."), ("Ann", "A puppy!")],
        ),
    ]


def test_bm25_turns_prefix_speaker_and_date_and_rank_by_bm25() -> None:
    index = Bm25Turns(_transcripts())
    assert len(index) == 4
    out = index.search("What is the puppy's name?", 1000)
    assert [i.citations for i in out.items] == [
        ("sessions/transcripts/s2.md#t1",),  # puppy + named (porter: name)
        ("sessions/transcripts/s2.md#t2",),
    ]
    assert out.text.splitlines()[0] == "[20 June 2023] Ben: I adopted a puppy named Biscuit."
    assert index.search("a", 1000).items  # all stopwords: search them anyway
    assert index.search("?!", 1000).items == ()
    assert index.search("zebra", 1000).text == ""


def test_bm25_turns_pack_whole_turns_best_first_within_the_budget() -> None:
    index = Bm25Turns(_transcripts())
    top = "[20 June 2023] Ben: I adopted a puppy named Biscuit."
    small = "[20 June 2023] Ann: A puppy!"
    assert count_tokens(top) == 14 and count_tokens(small) == 10
    assert index.search("puppy named", 14).text == top
    # the best turn does not fit; the next one does
    assert index.search("puppy named", 13).text == small
    assert index.search("puppy named", 9).text == ""
    assert index.search("puppy named", 24).text == top + "\n" + small


def test_human_date() -> None:
    assert human_date("2023-05-08T13:56") == "8 May 2023"
    assert human_date("soon") == "soon"
