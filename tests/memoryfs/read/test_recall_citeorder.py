"""An item citing several sessions cites first the turns the question names (read.citeorder)."""

from __future__ import annotations

from pathlib import Path

import pytest
from read_fixtures import S1, S1_TURNS, S2, S2_TURNS, source, two_sessions, write_page

from memoryfs.index.units import units_of
from memoryfs.read.citeorder import order_citations
from memoryfs.read.recall import recall
from memoryfs.read.search import SearchIndex
from memoryfs.store.store import Store

HELLO = f"sessions/transcripts/{S1}.md#t2"  # Melanie: "Hey Caroline! I'm swamped..." (S1)
GROUP = f"sessions/transcripts/{S1}.md#t3"  # the support group (S1)
STORIES = f"sessions/transcripts/{S1}.md#t5"  # transgender stories, counseling (S1)
RACE = f"sessions/transcripts/{S2}.md#t1"  # the charity race (S2)
POTTERY = f"sessions/transcripts/{S2}.md#t3"  # pottery after a race (S2)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    store = two_sessions(tmp_path_factory.mktemp("citeorder") / "store")
    write_page(
        store,
        "knowledge/people/caroline.md",
        {
            "id": "caroline",
            "title": "Caroline",
            "type": "person",
            "updated": "2023-05-25",
            "sources": [
                source(1, S1, 3, S1_TURNS[2][1], "2023-05-08"),
                source(2, S1, 5, S1_TURNS[4][1], "2023-05-08"),
                source(3, S2, 1, S2_TURNS[0][1], "2023-05-25"),
                source(4, S2, 3, S2_TURNS[2][1], "2023-05-25"),
                source(5, S1, 2, S1_TURNS[1][1], "2023-05-08"),
            ],
        },
        "# Caroline\n\n## Profile\n\n"
        "- Friends and causes (events): support group [cite:1], stories [cite:2], "
        "charity race [cite:3], pottery [cite:4]\n"
        "- Work and family (job): work [cite:5], race [cite:3]\n",
    )
    with SearchIndex.open(store) as idx:
        idx.refresh()
    store.commit("test store")
    return store


def test_a_profile_line_cites_first_the_sessions_the_question_names(store: Store) -> None:
    res = recall(store, "Which charity race did Caroline's friends run?", budget_tokens=400)
    profile = next(it for it in res.items if it.kind == "profile")
    # Written order: the support group (S1) first; the race turn (S2) names the question.
    assert profile.citations[0] == RACE
    assert set(profile.citations) == {GROUP, STORIES, RACE, POTTERY}  # none lost
    assert "[caroline cites s02#t1, " in res.text


def test_a_speakers_name_in_a_turn_is_an_address_not_the_topic(store: Store) -> None:
    # "Hey Caroline!" holds a query word too, but the race turn holds what is asked.
    res = recall(store, "Did Caroline's family race?", budget_tokens=400)
    line = next(it for it in res.items if it.kind == "profile" and HELLO in it.citations)
    assert line.citations == (RACE, HELLO)


def test_order_citations_is_stable_among_equals_and_keeps_every_ref() -> None:
    text = {GROUP: "a support group", STORIES: "stories", RACE: "a race", POTTERY: "pottery race"}
    cites = (GROUP, STORIES, RACE, POTTERY)
    assert order_citations(cites, ["race"], text.__getitem__) == (RACE, POTTERY, GROUP, STORIES)
    assert order_citations(cites, ["pottery", "race"], text.__getitem__)[0] == POTTERY
    assert order_citations(cites, ["zebra"], text.__getitem__) == cites
    assert order_citations(cites, [], text.__getitem__) == cites


def test_one_sessions_citations_keep_their_written_order() -> None:
    text = {GROUP: "a support group", STORIES: "stories"}
    assert order_citations((GROUP, STORIES), ["stories"], text.__getitem__) == (GROUP, STORIES)


def test_a_profile_line_cites_each_things_first_mention_first(tmp_path: Path) -> None:
    # Written thing by thing (group: S1 twice; race: S2 twice), a profile line is read
    # first mention of each thing first, so its first two citations name two sessions.
    store = two_sessions(tmp_path / "store")
    write_page(
        store,
        "knowledge/people/melanie.md",
        {
            "id": "melanie",
            "title": "Melanie",
            "type": "person",
            "updated": "2023-05-25",
            "sources": [
                source(1, S1, 2, S1_TURNS[1][1], "2023-05-08"),
                source(2, S1, 4, S1_TURNS[3][1], "2023-05-08"),
                source(3, S2, 1, S2_TURNS[0][1], "2023-05-25"),
                source(4, S2, 3, S2_TURNS[2][1], "2023-05-25"),
            ],
        },
        "# Melanie\n\n## Profile\n\n"
        "- Friends (hobbies, activities): kids [cite:1] [cite:2], race [cite:3][cite:4]\n",
    )
    rel = "knowledge/people/melanie.md"
    _, units = units_of(rel, (store.memory / rel).read_text(encoding="utf-8"))
    profile = next(u for u in units if u.kind == "profile")
    first, second = f"sessions/transcripts/{S1}.md#t", f"sessions/transcripts/{S2}.md#t"
    assert profile.citations == (f"{first}2", f"{second}1", f"{first}4", f"{second}3")
    with SearchIndex.open(store) as idx:
        idx.refresh()
        hit = next(h for h in idx.search("What activities does Melanie do?") if h.kind == "profile")
    assert hit.citations == profile.citations
