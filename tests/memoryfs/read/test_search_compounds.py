"""Hyphenated words match their one-word spelling ("de-stress" / "destress"), both ways."""

from __future__ import annotations

from pathlib import Path

import pytest
from read_fixtures import write_transcript

from memoryfs.read.ranking import compounds, query_terms
from memoryfs.read.search import SearchIndex
from memoryfs.store.store import Store, init_store

S1 = "2023-05-08-friends-s01"
S2 = "2023-05-25-friends-s02"


@pytest.fixture
def store(tmp_path: Path) -> Store:
    store = init_store(tmp_path / "store", "caroline", "atlas")
    write_transcript(
        store,
        S1,
        "2023-05-08T13:56",
        [
            ("Melanie", "Running is how I de-stress after work."),
            ("Caroline", "Nice. I sent you an e-mail about the trip on 2023-05-08."),
        ],
    )
    write_transcript(
        store,
        S2,
        "2023-05-25T13:14",
        [
            ("Caroline", "Painting is my selfcare these days."),
            ("Melanie", "The score was 3-2 in the end."),
        ],
    )
    return store


def _refs(store: Store, query: str) -> list[str]:
    with SearchIndex.open(store) as idx:
        idx.refresh()
        return [h.ref for h in idx.search(query, k=5)]


def test_compounds_join_letters_only() -> None:
    assert compounds("De-stress, self-care and e-mail; mother-in-law") == [
        "destress",
        "selfcare",
        "email",
        "motherinlaw",
    ]
    assert compounds("on 2023-05-08 it was 3-2, a well - known B-52") == []
    assert query_terms("How does Melanie de-stress?") == ["melanie", "de", "stress", "destress"]


def test_one_word_finds_the_hyphenated_spelling(store: Store) -> None:
    assert _refs(store, "How does Melanie destress?")[0] == f"sessions/transcripts/{S1}.md#t1"
    assert _refs(store, "email")[0] == f"sessions/transcripts/{S1}.md#t2"


def test_hyphenated_question_finds_the_one_word_spelling(store: Store) -> None:
    assert _refs(store, "What is Caroline's self-care?")[0] == f"sessions/transcripts/{S2}.md#t1"


def test_dates_and_scores_are_not_words(store: Store) -> None:
    assert _refs(store, "20230508") == [] and _refs(store, "32") == []


def test_an_edited_turn_leaves_no_old_compound(store: Store) -> None:
    assert _refs(store, "destress")
    write_transcript(
        store, S1, "2023-05-08T13:56", [("Melanie", "Running is how I relax after work.")]
    )
    assert _refs(store, "destress") == []
    assert _refs(store, "relax") == [f"sessions/transcripts/{S1}.md#t1"]
