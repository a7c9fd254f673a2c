"""The embedded engine's reading of one session: names, facts, slots, summaries."""

from __future__ import annotations

from dream.engines import load_engine
from dream.engines.embedded.engine import EmbeddedEngine
from dream.engines.embedded.extract import claim_slot, extract_facts
from dream.language.entities import EntityTable
from dream.records import Fact
from memoryfs.pages.transcript import Transcript, Turn

SCOPE = {"user": "dana", "assistant": "atlas"}


def session(turns: list[tuple[str, str]], started: str = "2026-01-23T18:40") -> Transcript:
    return Transcript(
        id=f"{started[:10]}-test",
        started=started,
        participants=("dana", "atlas"),
        scope=SCOPE,
        turns=tuple(Turn(i, who, started, text) for i, (who, text) in enumerate(turns, 1)),
    )


def by_subject(facts: list[Fact]) -> dict[str, list[Fact]]:
    out: dict[str, list[Fact]] = {}
    for f in facts:
        out.setdefault(f.subject, []).append(f)
    return out


def test_names_are_typed_from_cues() -> None:
    table = EntityTable(
        [
            "I had an interview at Tidewater Analytics, an ocean-data company.",
            "I'd report to Priya Natarajan, their head of research.",
            "My partner Sam lives with me; we moved to Eimsbüttel last year.",
            "My main project is Reefsong.",
            "Priya said yes.",
            "Thanks, Sam!",
        ],
        speakers=("Dana",),
    )
    assert table.types["Tidewater Analytics"] == "org"
    assert table.types["Priya Natarajan"] == "person"
    assert table.canonical["Priya"] == "Priya Natarajan"
    assert table.types["Sam"] == "person"
    assert table.types["Eimsbüttel"] == "place"
    assert table.types["Reefsong"] == "project"
    assert table.mentions("Thanks, Sam!") == []  # said to Sam, not about Sam


def test_facts_cite_their_turn_and_resolve_dates() -> None:
    t = session(
        [
            ("user", "I had a job interview yesterday at Tidewater Analytics."),
            ("assistant", "How did it go?"),
            ("user", "Sam is my partner. He teaches music at a Gymnasium."),
        ]
    )
    subjects = by_subject(extract_facts(t))
    (interview,) = [f for f in subjects["Dana"] if "interview" in f.text]
    assert interview.text == (
        'Dana had a job interview on 22 January 2026 ("yesterday") at Tidewater Analytics.'
    )
    assert interview.kind == "event" and interview.date == "2026-01-22"
    assert interview.evidence[0].turn == 1 and interview.evidence[0].hash == t.turns[0].hash
    assert any("Tidewater" in f.subject for f in extract_facts(t) if f.text == interview.text)
    teaches = [f for f in subjects["Sam"] if "teaches" in f.text]
    # the turn's two sentences about Sam are one claim, in the order said
    assert teaches and teaches[0].text == "Sam is Dana's partner. Sam teaches music at a Gymnasium."
    assert not any(f.evidence[0].turn == 2 for f in extract_facts(t))  # the assistant's question


def test_one_claim_per_turn_and_subject_but_preferences_apart() -> None:
    said = (
        "I ran a 10K race last Saturday. My sister and I raised 500 euros for a cancer "
        "charity. I really love running in the rain."
    )
    t = session([("dana", said), ("atlas", "Well done!"), ("dana", "I went to the coast.")])
    dana = by_subject(extract_facts(t))["Dana"]  # the user, by the name the store gives them
    race = [f for f in dana if "10K" in f.text]
    assert len(race) == 1 and race[0].text.endswith("raised 500 euros for a cancer charity.")
    assert race[0].kind == "event" and race[0].date == "2026-01-17"
    assert [f.kind for f in dana if "loves running" in f.text] == ["preference"]
    assert [f.evidence[0].turn for f in dana] == [1, 1, 3]


def test_pronoun_resolved_claim_also_cites_the_naming_turn() -> None:
    t = session(
        [
            ("user", "Marta is coming for dinner on Saturday."),
            ("assistant", "Any constraints?"),
            ("user", "She's a nurse at the UKE, on the cardiology ward."),
        ]
    )
    (nurse,) = [f for f in extract_facts(t) if f.subject == "Marta" and "nurse" in f.text]
    assert nurse.text.startswith("Marta is a nurse at the UKE")
    assert [e.turn for e in nurse.evidence] == [3, 1]
    assert nurse.slot == "role"


def test_preferences_go_to_the_speakers_preferences() -> None:
    t = session(
        [
            ("user", "Please always give me figures as PDF, not PNG."),
            ("user", 'For my emails in general: keep them short. Sign off with "Best, Dana".'),
            ("user", "Give me a pyproject template."),  # a request, not a preference
        ]
    )
    prefs = [f for f in extract_facts(t) if f.subject_type == "preference"]
    assert [f.text for f in prefs] == [
        "Please always give Dana figures as PDF, not PNG.",
        "For Dana's emails in general: keep them short.",
        'Sign off with "Best, Dana".',
    ]
    assert prefs[0].slot == "preference:figure"
    assert not any("template" in f.text for f in extract_facts(t))


def test_claim_slots() -> None:
    names = ["Dana", "We"]
    assert claim_slot("Dana is a postdoc at the Marlow Institute.", names) == "role"
    assert claim_slot("Dana started as staff scientist at Tidewater Analytics.", names) == "role"
    assert claim_slot("Dana works at Tidewater Analytics.", names) == "role"
    assert claim_slot("Dana is no longer a postdoc.", names) == ""
    assert claim_slot("Dana is first author, Dana gets to decide.", names) == ""
    assert claim_slot("We live together in Eimsbüttel.", names) == "city"
    assert claim_slot("Dana moved to Lisbon.", names) == "city"
    assert claim_slot("Dana now reports to Priya Natarajan.", names) == "manager"
    assert claim_slot("Dana would report to Priya.", names) == ""
    assert claim_slot("Dana prefers polars over pandas.", names, "preference") == "preference:polar"
    # a later clause about the same subject fills its slot too; one with its own subject does not
    assert claim_slot("Dana moved to Lisbon, now works at Acme.", names) == "city+role"
    assert claim_slot("Dana moved to Porto and she works at Acme now.", names) == "city+role"
    assert claim_slot("Dana moved to Lisbon, where Bo works at Acme.", names) == "city"
    assert claim_slot("Dana met Priya, who works at Acme.", names) == ""
    assert claim_slot("Dana moved to Lisbon, no longer works at Acme.", names) == "city"


def test_summary_draft() -> None:
    t = session(
        [
            ("user", "I had a job interview yesterday at Tidewater Analytics in Hamburg."),
            ("assistant", "Tell me more."),
            ("user", "The role is staff scientist on their Ocean Signals team, 60 people."),
            ("user", "Sam says I should take it. Sam is my partner."),
            ("user", "We decided I'll accept the offer from Tidewater Analytics."),
            ("user", "I still need to talk to Henrik next week."),
        ]
    )
    engine = load_engine("embedded")
    assert isinstance(engine, EmbeddedEngine) and engine.label == "embedded/1"
    draft = engine.summarize(t)
    assert 3 <= len(draft.key_points) <= 8
    assert all(p.evidence.hash == t.turns[p.evidence.turn - 1].hash for p in draft.key_points)
    assert "accept the offer" in draft.outcome and draft.outcome_evidence is not None
    assert any("Henrik" in p.text for p in (*draft.key_points, *draft.open_threads))
    quiet = engine.summarize(session([("user", "I moved to Lisbon in 2019 with my cat Mia.")]))
    assert quiet.outcome == "" and quiet.outcome_evidence is None


def test_summary_points_of_a_two_person_talk_name_the_other_person() -> None:
    started = "2023-05-20T10:00"
    said = [
        ("Maria", "Hi John! What's new?"),
        ("John", "Hey Maria, last Saturday I ran a charity race for your school."),
        ("Maria", "I painted a mural at the school in 2021 with my students."),
        ("John", "I adopted two cats from the shelter near your office in 2022."),
    ]
    t = Transcript(
        id="2023-05-20-talk",
        started=started,
        participants=("John", "Maria"),
        scope={"user": "locomo", "assistant": "eval"},
        turns=tuple(Turn(i, who, started, text) for i, (who, text) in enumerate(said, 1)),
    )
    points = [p.text for p in load_engine("embedded").summarize(t).key_points]
    assert 'On 13 May 2023 ("Last Saturday") John ran a charity race for Maria\'s school.' in points
    assert not any("Hey" in p or " your " in p for p in points)


def test_same_session_same_facts() -> None:
    t = session([("user", "I ran a charity race last Saturday with Melanie and Caroline.")])
    assert extract_facts(t) == extract_facts(t)


def test_a_sentence_opening_with_my_is_first_person() -> None:
    # "My" capitalized opens the sentence: the speaker's own news, not chat
    t = session([("dana", "Hi! My old area was hit by a nasty flood last week.")])
    (flood,) = [f for f in extract_facts(t) if "flood" in f.text]
    assert flood.subject == "Dana"
    assert flood.text == (
        'Dana\'s old area was hit by a nasty flood in the week of 12 January 2026 ("last week").'
    )


def test_a_dated_sentence_without_a_subject_is_kept() -> None:
    # chat drops "I": the date is what makes it an event worth keeping, and it is the speaker's
    t = session(
        [
            ("dana", "Been hectic. Started hitting the gym last week to stay on track."),
            ("atlas", "Nice!"),
            ("dana", "Last week was wild. I got an endorsement from a big brand."),
            ("atlas", "Wow."),
            ("dana", "Enjoy the good feels tomorrow, you earned it! See you tomorrow!"),
        ]
    )
    facts = extract_facts(t)
    texts = [f.text for f in facts]
    assert any(
        'Dana started hitting the gym in the week of 12 January 2026 ("last week")' in x
        for x in texts
    )
    # a date that is the sentence's subject still passes to the next sentence
    (endorsement,) = [x for x in texts if "endorsement" in x]
    assert endorsement.startswith('In the week of 12 January 2026 ("Last week"), Dana got')
    assert not [f for f in facts if f.evidence[0].turn == 5]  # said to the listener


def test_a_photo_after_a_dropped_dated_sentence_gets_its_date() -> None:
    t = session(
        [
            (
                "dana",
                "They were great. But something not so great happened yesterday...\n\n"
                "[shared a photo: a photography of a car that has been damaged]",
            ),
            ("atlas", "Oh no."),
            ("dana", "Tomorrow will be busy.\n\n[shared a photo: a photo of a desk]"),
        ]
    )
    facts = extract_facts(t)
    (car,) = [f for f in facts if "car" in f.text]
    assert car.text.endswith(
        'shared a photography of a car that has been damaged, from 22 January 2026 ("yesterday")'
    )
    assert car.date == "2026-01-22"
    (desk,) = [f for f in facts if "desk" in f.text]  # not a thing done: no date
    assert desk.text == "Dana shared a photo of a desk" and desk.date == "2026-01-23"


def test_things_named_like_people_are_not_people() -> None:
    table = EntityTable(
        [
            "Ask Jonas where the webhook URL lives, he knows.",
            "The DOIs said nothing useful, and Zenodo keeps them.",
            "Okabe-Ito colours for the East Atlantic recordings; the East Atlantic needs a fifth.",
            "I start at the Marlow Institute for Ocean Research in May.",
            "We flew to Berlin in March. Berlin Hbf runs trains to Berlin Ostkreuz.",
            "Lena Hoffmann said yes.",
        ],
        speakers=("Dana",),
    )
    assert "URL" not in table.types or table.types["URL"] != "person"  # an acronym
    assert table.types.get("DOIs") != "person"
    assert table.types.get("East Atlantic") != "person"  # "the East Atlantic": no one's name
    assert table.types["Marlow Institute for Ocean Research"] == "org"  # head noun before "for"
    assert table.types["Berlin"] == "place"
    assert table.types["Berlin Hbf"] == "place"  # named after a place of the session
    assert table.types["Lena Hoffmann"] == "person"
    assert table.types["Jonas"] == "person"


def test_a_name_whose_head_word_is_a_common_noun_is_not_a_person() -> None:
    """Two capitalized words no one uses in lower case look like "Priya Natarajan"; a
    compass word opening a region's name, a common noun's ending on the head word (a
    field, a journal, a company) or a place's head noun say otherwise."""
    table = EntityTable(
        [
            "We're submitting to Applied Acoustics next week.",
            "Nordic Instruments quote about 40 days at 48 kHz.",
            "South Pacific needs a sixth colour.",
            "One of the sites is fine, but the Marquesas Keys sheets cross the switch.",
            "Anna Clement said yes, and Priya Natarajan agreed.",
            "He has four sites around Maio island.",
        ],
        speakers=("Dana",),
    )
    assert table.types["Applied Acoustics"] == "topic"  # a field or a journal
    assert table.types["Nordic Instruments"] == "org"
    assert table.types["South Pacific"] == "place"
    assert table.types["Marquesas Keys"] == "place"
    assert table.types["Maio"] == "place"  # a place noun after it, in lower case
    assert table.types["Anna Clement"] == "person"  # "Clement": no stem before "ment"
    assert table.types["Priya Natarajan"] == "person"


def test_a_turn_edited_in_the_middle_is_read_again_in_the_same_process() -> None:
    """A session's analysis is shared within a process: a turn forgotten or edited in the
    middle (same turn count, same last turn) must not be served from the old text."""
    before = session(
        [
            ("dana", "My sister Mara moved to Porto last month."),
            ("atlas", "Noted."),
            ("dana", "Thanks."),
        ]
    )
    assert any("Porto" in f.text for f in extract_facts(before))
    edited = session(
        [
            ("dana", "My sister Mara moved to Bergen last month."),
            ("atlas", "Noted."),
            ("dana", "Thanks."),
        ]
    )
    texts = [f.text for f in extract_facts(edited)]
    assert any("Bergen" in t for t in texts)
    assert not any("Porto" in t for t in texts)


def test_she_never_stands_for_a_name_said_as_where() -> None:
    """With no person among the recent names, "she" falls back to a name the session types
    a topic (people it has no cue for); a name said after "in", "at", "from" is where, not
    who: "in Wellington. She joined ..." made Wellington a person."""
    facts = extract_facts(
        session(
            [
                ("dana", "My cousin works at Radio NZ in Wellington. She joined it last year."),
                ("dana", "I had coffee with Marisol yesterday. She starts at the zoo in May."),
            ]
        )
    )
    typed = {(f.subject, f.subject_type) for f in facts}
    assert ("Wellington", "person") not in typed
    assert ("Marisol", "person") in typed
    assert any(f.subject == "Marisol" and "starts at the zoo" in f.text for f in facts)
