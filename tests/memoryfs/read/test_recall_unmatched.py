"""Items that matched only words most units hold: profile lines first (recall.UNMATCHED)."""

from __future__ import annotations

import pytest
from read_fixtures import source, write_page, write_transcript

from memoryfs.read.recall import UNMATCHED, recall
from memoryfs.read.search import SearchIndex
from memoryfs.store.store import Store, init_store

S1 = "2023-05-08-friends-s01"
TURNS = [
    ("Melanie", "Hi Caroline, I went swimming with the kids this morning."),
    ("Caroline", "Nice, Melanie! How was the water?"),
    ("Melanie", "Cold, but fun. Later I painted a sunset."),
    ("Caroline", "Melanie, you always make time for painting."),
    ("Melanie", "And I bake bread on Sundays."),
]
PAGE = "knowledge/people/melanie.md"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    store = init_store(tmp_path_factory.mktemp("unmatched") / "store", "caroline", "atlas")
    write_transcript(store, S1, "2023-05-08T13:56", TURNS)
    write_page(
        store,
        PAGE,
        {
            "id": "melanie",
            "title": "Melanie",
            "type": "person",
            "updated": "2023-05-08",
            "sources": [source(n, S1, n, TURNS[n - 1][1], "2023-05-08") for n in (1, 3, 5)],
        },
        "# Melanie\n\n## Profile\n\n"
        "- Sports and arts (hobbies, activities): swimming [cite:1], painting [cite:3]\n\n"
        "## 2023-05-08\n\n"
        "- Melanie went swimming with the kids. [cite:1]\n"
        "- Melanie painted a sunset. [cite:3]\n"
        "- Melanie bakes bread on Sundays. [cite:5]\n",
    )
    with SearchIndex.open(store) as idx:
        idx.refresh()
    store.commit("test store")
    return store


def test_a_name_held_by_most_units_scores_below_unmatched(store: Store) -> None:
    with SearchIndex.open(store) as idx:
        hits = idx.search("Melanie")
    assert hits and all(h.score < UNMATCHED for h in hits)


def test_nothing_asked_matches_so_the_profile_line_comes_first(store: Store) -> None:
    res = recall(store, "What does Melanie do to unwind?", budget_tokens=300)
    assert res.items[0].kind == "profile" and res.items[0].path == PAGE
    assert any(it.kind == "claim" for it in res.items[1:])  # the rest still follows


def test_what_matches_comes_before_the_profile_line(store: Store) -> None:
    res = recall(store, "What does Melanie bake?", budget_tokens=300)
    kinds = [it.kind for it in res.items]
    assert "bread" in res.items[0].text and res.items[0].score >= UNMATCHED
    first_unmatched = next(i for i, it in enumerate(res.items) if it.score < UNMATCHED)
    assert kinds[first_unmatched] == "profile"
