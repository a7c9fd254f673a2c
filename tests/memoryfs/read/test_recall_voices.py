"""A question naming several speakers (memoryfs.read.voice) on a real store and index."""

from __future__ import annotations

import pytest
from read_fixtures import searched, source, write_page, write_transcript

from memoryfs.read.voice import NAMED_TURN, OTHER_VOICE, named_speakers, voice_weights
from memoryfs.store.store import Store, init_store

S1 = "2023-01-20-studio-s01"
TURNS = [
    ("Jon", "Gina, I won't quit. Your words keep me going, Gina."),
    ("Gina", "Proud of you, Jon! Keep going."),
    ("Jon", "When work piles up I put music on and dance to destress."),
    ("Gina", "Same here, dancing clears my head."),
]
QUESTION = "How do Jon and Gina both like to destress?"
# Other people's talk, so the names are rarer than "destress" (as in a long store).
S2 = "2023-01-22-book-club-s01"
OTHERS = [
    ("Ann", "I read Dune last week; a book in the evening helps me destress."),
    ("Bob", "A long walk helps me destress."),
] + [
    ("Bob", f"My {thing} is finally fixed, what a week.")
    for thing in ("car", "sink", "roof", "bike")
]
S3 = "2023-01-27-studio-s02"
CHAT = [("Jon", "Hey Gina, the lease is signed.")]  # names in a third of the units


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    store = init_store(tmp_path_factory.mktemp("voices") / "store", "jon", "atlas")
    write_transcript(store, S1, "2023-01-20T16:04", TURNS)
    write_transcript(store, S2, "2023-01-22T10:00", OTHERS)
    write_transcript(store, S3, "2023-01-27T18:00", CHAT)
    write_page(
        store,
        "knowledge/people/jon.md",
        {
            "id": "jon",
            "title": "Jon",
            "type": "person",
            "updated": "2023-01-20",
            "sources": [source(1, S1, 1, TURNS[0][1], "2023-01-20")],
        },
        "# Jon\n\n## Facts\n\n- Jon won't quit - Gina's words keep Jon going, Gina. [cite:1]\n",
    )
    write_page(
        store,
        "knowledge/people/gina.md",
        {
            "id": "gina",
            "title": "Gina",
            "type": "person",
            "updated": "2023-01-20",
            "sources": [source(1, S1, 2, TURNS[1][1], "2023-01-20")],
        },
        "# Gina\n\n## Facts\n\n- Gina is proud of Jon - Jon should keep going. [cite:1]\n",
    )
    return store


def test_named_speakers_are_every_speaker_the_question_names() -> None:
    people = {"Jon", "Gina", "John Smith"}
    assert named_speakers(QUESTION, people) == {"Jon", "Gina"}
    assert named_speakers("Did John meet Gina?", people) == {"John Smith", "Gina"}
    assert named_speakers("Who dances?", people) == frozenset()


def test_several_named_speakers_are_all_heard(store: Store) -> None:
    with searched(store, QUESTION) as (hits, speaker_of):
        weights = dict(
            zip((h.ref for h in hits), voice_weights(QUESTION, hits, speaker_of), strict=True)
        )
        claims = [h for h in hits if h.kind == "claim"]
        assert {h.title for h in claims} == {"Jon", "Gina"}
        for h in claims:  # each cites a named speaker's turn: theirs, left as search ranked it
            assert weights[h.ref] == 1.0
        turns = {h.speaker: weights[h.ref] for h in hits if h.kind == "turn"}
        assert turns == {
            "Jon": NAMED_TURN,
            "Gina": NAMED_TURN,
            "Ann": OTHER_VOICE,
            "Bob": OTHER_VOICE,
        }
        # One speaker named: the other's page's claims are others' voice.
        one = dict(
            zip(
                (h.ref for h in hits),
                voice_weights("How does Jon like to destress?", hits, speaker_of),
                strict=True,
            )
        )
        assert {h.title: one[h.ref] for h in claims} == {"Jon": 1.0, "Gina": OTHER_VOICE}
