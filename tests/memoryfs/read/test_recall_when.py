"""A question asking when prefers items that state a date (memoryfs.read.when), on a real store."""

from __future__ import annotations

import pytest
from read_fixtures import source, write_page, write_transcript

from memoryfs.read.recall import recall
from memoryfs.read.search import SearchIndex
from memoryfs.read.when import asks_when, states_date, when_weights
from memoryfs.store.store import Store, init_store

S1 = "2022-01-23-pets-s01"
TURNS = [
    ("Nate", "My turtles are the best, I feed my turtles every day and the turtles love it."),
    ("Joanna", "How long have you had them?"),
    ("Nate", "I've had them for 3 years now!"),
]
UNDATED = "Nate feeds Nate's turtles every day and the turtles love it."
DATED = "Nate has had the turtles for 3 years now (since 2019)."


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    store = init_store(tmp_path_factory.mktemp("when") / "store", "nate", "atlas")
    write_transcript(store, S1, "2022-01-23T10:00", TURNS)
    write_page(
        store,
        "knowledge/people/nate.md",
        {
            "id": "nate",
            "title": "Nate",
            "type": "person",
            "updated": "2022-01-23",
            "sources": [
                source(1, S1, 1, TURNS[0][1], "2022-01-23"),
                source(2, S1, 3, TURNS[2][1], "2022-01-23"),
            ],
        },
        f"# Nate\n\n## Facts\n\n- {UNDATED} [cite:1]\n- {DATED} [cite:2]\n",
    )
    return store


def _claims(question: str, store: Store) -> list[str]:
    r = recall(store, question, 1000, exclude_layers=("sessions",))
    return [i.text for i in r.items if i.kind == "claim"]


def test_a_question_asking_when_puts_the_dated_claim_first(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    question = "When did Nate get the turtles?"
    with SearchIndex.open(store) as idx:
        idx.refresh_for_read()
        hits = [h.text for h in idx.search(question, k=10, layers=("knowledge",))]
    assert hits.index(UNDATED) < hits.index(DATED)  # lexically, "turtles" three times wins
    monkeypatch.setattr("memoryfs.read.when.WHEN_DATED", 1.0)
    assert _claims(question, store)[0] == UNDATED
    monkeypatch.undo()
    assert _claims(question, store)[0] == DATED
    # a question that does not ask when keeps the lexical order
    assert _claims("How does Nate look after the turtles?", store)[0] == UNDATED


def test_what_asks_when_and_what_states_a_date() -> None:
    for q in (
        "When did Nate get the turtles?",
        "What year did Tim go to Japan?",
        "In which month did John score 40 points?",
        "which week was the flood?",
    ):
        assert asks_when(q), q
    for q in (
        "What did Nate do in 2019?",
        "How long has Nate had the turtles?",
        "Why did Joanna write when she was sad?",
    ):
        assert not asks_when(q), q
    assert states_date('on 20 May 2023 ("last Saturday")') and states_date("(since 2019)")
    assert states_date("in June 2023") and not states_date("scored 40 points in 3 games")
    assert when_weights("When was it?", ["in 2019", "no date"]) == [1.3, 1.0]
    assert when_weights("What was it?", ["in 2019", "no date"]) == [1.0, 1.0]
