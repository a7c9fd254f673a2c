"""The named-speaker prior (memoryfs.read.voice) on a real store and index."""

from __future__ import annotations

import pytest
from read_fixtures import searched, source, write_page, write_transcript

from memoryfs.read.recall import recall
from memoryfs.read.search import SearchIndex
from memoryfs.read.voice import NAMED_TURN, OTHER_VOICE, named_speakers, voice_weights, voices
from memoryfs.store.store import Store, init_store

S1 = "2023-06-01-hikes-s01"
TURNS = [
    ("Caroline", "Melanie, which hiking trail do you love most? I love hiking the ridge trail."),
    ("Melanie", "The river trail! We go hiking there with the kids every week."),
    ("Caroline", "Sounds lovely."),
]
CAROLINE_TURN = f"sessions/transcripts/{S1}.md#t1"
MELANIE_TURN = f"sessions/transcripts/{S1}.md#t2"
QUESTION = "Which hiking trail does Melanie love?"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    store = init_store(tmp_path_factory.mktemp("voice") / "store", "caroline", "atlas")
    write_transcript(store, S1, "2023-06-01T10:00", TURNS)
    write_page(
        store,
        "knowledge/topics/trails.md",
        {
            "id": "trails",
            "title": "Trails",
            "type": "topic",
            "updated": "2023-06-01",
            "sources": [
                source(1, S1, 1, TURNS[0][1], "2023-06-01"),
                source(2, S1, 2, TURNS[1][1], "2023-06-01"),
            ],
        },
        "# Trails\n\n## Facts\n\n"
        "- Caroline loves hiking the ridge trail. [cite:1]\n"
        "- Melanie goes hiking on the river trail with the kids every week. [cite:2]\n",
    )
    return store


def _turn_order(r: object) -> list[str]:
    return [
        c
        for i in getattr(r, "items", ())
        if i.kind == "turn"
        for c in i.citations
        if c in (CAROLINE_TURN, MELANIE_TURN)
    ]


def test_the_named_speakers_turn_outranks_the_other_speakers_question(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Lexically, Caroline's question (it holds "Melanie", "love", "hiking", "trail") wins.
    with SearchIndex.open(store) as idx:
        idx.refresh_for_read()
        turns = [h.ref for h in idx.search(QUESTION, k=10, layers=("sessions",))]
    assert turns.index(CAROLINE_TURN) < turns.index(MELANIE_TURN)
    monkeypatch.setattr("memoryfs.read.voice.OTHER_VOICE", 1.0)
    assert _turn_order(recall(store, QUESTION, 1000, exclude_layers=("knowledge",)))[0] == (
        CAROLINE_TURN
    )
    monkeypatch.undo()
    # The question names Melanie: what Melanie said comes first, with or without the wiki.
    assert _turn_order(recall(store, QUESTION, 1000, exclude_layers=("knowledge",)))[0] == (
        MELANIE_TURN
    )
    r = recall(store, QUESTION, 1000)
    assert r.items[0].citations == (MELANIE_TURN,)


def test_a_claims_voice_is_the_speaker_of_the_turns_it_cites(store: Store) -> None:
    with searched(store, QUESTION) as (hits, speaker_of):
        claims = {h.citations: h for h in hits if h.kind == "claim"}
        assert voices(claims[(MELANIE_TURN,)], speaker_of) == {"Melanie"}
        assert voices(claims[(CAROLINE_TURN,)], speaker_of) == {"Caroline"}
        weights = dict(
            zip((h.ref for h in hits), voice_weights(QUESTION, hits, speaker_of), strict=True)
        )
        assert weights[claims[(CAROLINE_TURN,)].ref] < 1.0
        assert weights[claims[(MELANIE_TURN,)].ref] == 1.0
        turns = {h.ref: weights[h.ref] for h in hits if h.kind == "turn"}
        assert turns[MELANIE_TURN] == NAMED_TURN > 1.0  # a turn has no title to boost
        assert turns[CAROLINE_TURN] == OTHER_VOICE < 1.0
        assert all(weights[h.ref] == 1.0 for h in hits if h.kind == "head")
        # Both named: what either said is theirs (no page here is a person's); nobody: no prior.
        both = "Which trail do Melanie and Caroline love?"
        assert set(voice_weights(both, hits, speaker_of)) == {1.0, NAMED_TURN}
        assert set(voice_weights("Which trail is loved?", hits, speaker_of)) == {1.0}


def test_a_speaker_is_named_by_their_first_name_as_a_word() -> None:
    people = {"Melanie", "Caroline", "John Smith"}
    assert named_speakers("What does Melanie's son like?", people) == {"Melanie"}
    assert named_speakers("Where did John move?", people) == {"John Smith"}
    assert named_speakers("Did Melanie meet Caroline?", people) == {"Melanie", "Caroline"}
    assert named_speakers("What do Melanies like?", people) == frozenset()
    assert named_speakers("Who runs?", people) == frozenset()
