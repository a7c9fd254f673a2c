"""A question asking where someone works (lives, reports) now: the current value first.

Regression: ``recall "Where does Dana work now?"`` on the demo store did not show the claim
that she started at Tidewater Analytics: the claim shares no word with the question but
the name (which every unit holds, so it weighs nothing), "now" is a stopword, and the
search for "work" found the superseded claim of her old job and every turn saying "work"
first (memoryfs.read.situation).
"""

from __future__ import annotations

import pytest
from engine_fixtures import consolidate, write_session

from memoryfs.read.recall import RecallResult, recall
from memoryfs.read.situation import asked_names, asked_slot, asks_current, states_slot
from memoryfs.store.store import Store, init_store

USER, BOT = "user", "assistant"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    """Mara works at Harbour Labs, then starts at Northwind Bank; Jo works at a school."""
    store = init_store(tmp_path_factory.mktemp("situation") / "store", "mara", "atlas")
    sessions = [
        (
            "2025-09-10-intro",
            [
                (USER, "I work at Harbour Labs as a data analyst, mostly on shipping forecasts."),
                (BOT, "Sounds interesting. What do you forecast?"),
                (USER, "Container volumes for the port, weekly."),
            ],
        ),
        (
            "2025-10-02-hike",
            [
                (USER, "We went hiking in the Peak District with my sister Jo."),
                (BOT, "Lovely."),
                (USER, "Jo works at a school in Sheffield."),
            ],
        ),
        (
            "2025-11-05-late",
            [
                (USER, "Another late night at Harbour Labs, the forecasts broke again."),
                (BOT, "That sounds draining."),
            ],
        ),
        (
            "2026-01-20-news",
            [
                (USER, "Big news: I started as a data scientist at Northwind Bank on Monday."),
                (BOT, "Congratulations on the new role!"),
            ],
        ),
        (
            "2026-02-15-team",
            [
                (USER, "The team at Northwind is tiny, four people, and I like it."),
                (BOT, "Small teams are nice."),
            ],
        ),
    ]
    for sid, turns in sessions:
        write_session(store, sid, f"{sid[:10]}T09:00", turns)
    consolidate(store)
    return store


def _lines(r: RecallResult) -> list[str]:
    return r.text.splitlines()


def _claim_first(r: RecallResult, employer: str) -> None:
    first = r.items[0]
    assert first.kind in ("claim", "summary") and employer in first.text, r.text
    assert "superseded" not in _lines(r)[0]


def test_the_current_employer_comes_first_and_the_old_one_is_not_current(store: Store) -> None:
    for question in (
        "Where does Mara work now?",
        "Where does Mara work?",
        "Who does Mara work for these days?",
    ):
        r = recall(store, question, 400)
        _claim_first(r, "Northwind Bank")
        for line in _lines(r):
            if "Mara works at Harbour Labs" in line:  # the old value, as a claim
                assert "(superseded" in line, line
        old = [i for i, item in enumerate(r.items) if "Harbour Labs" in item.text]
        assert all(i > 0 for i in old)


def test_the_mechanism_is_what_puts_it_first(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("memoryfs.read.recall.asked_slot", lambda question: "")
    monkeypatch.setattr("memoryfs.read.situation.asked_slot", lambda question: "")
    # nor a superseded claim bringing up what superseded it (memoryfs.read.recall)
    monkeypatch.setattr("memoryfs.read.recall._replaced_first", lambda idx, scored: scored)
    r = recall(store, "Where does Mara work now?", 400)
    assert "Northwind Bank" not in r.items[0].text  # lexically, "work" finds the old job


def test_a_question_about_the_past_keeps_the_old_value(store: Store) -> None:
    r = recall(store, "Where did Mara work before Northwind Bank?", 400)
    assert any("Harbour Labs" in item.text for item in r.items[:3]), r.text


def test_another_person_s_job_is_not_the_answer(store: Store) -> None:
    r = recall(store, "Where does Jo work now?", 400)
    assert "school in Sheffield" in r.items[0].text, r.text


def test_what_asks_for_a_slot_and_what_states_it() -> None:
    assert asked_slot("Where does Dana work now?") == "work"
    assert asked_slot("What company does Sam work for?") == "work"
    assert asked_slot("Where is Priya living these days?") == "home"
    assert asked_slot("Who does Jonas report to?") == "manager"
    assert asked_slot("What did Dana eat in Lisbon?") == ""
    assert asks_current("Where does Dana work now?")
    assert asks_current("Where does Dana work?")
    assert asks_current("Where is Dana currently based?")
    assert not asks_current("Where did Dana work before Tidewater?")
    assert not asks_current("Where has Dana worked?")
    assert asked_names("Where does Dana Weber work now?") == ["Dana", "Weber"]
    assert asked_names("Who is Sam's manager?") == ["Sam"]
    assert states_slot("work", "Dana started as staff scientist at Tidewater Analytics.")
    assert states_slot("work", "Dana is a postdoc in the acoustics group at the Marlow Institute.")
    assert states_slot("home", "Dana and others live together in Eimsbüttel.")
    assert states_slot("home", "Noor moved into the Lombok flat on 25 April 2026.")
    assert not states_slot("home", "Dana is moving Reefsong from Zenodo to Archiva.")
    assert not states_slot("work", "Jonas is the ML engineer Dana will work with most.")
