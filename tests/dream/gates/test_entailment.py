"""The deterministic floor of entailment: coverage (DV105), polarity (DV106) and who does
what (DV107), claim by claim against a cited turn spoken by the user, Dana."""

from __future__ import annotations

import pytest

from dream.gates.entailment import key
from dream.gates.support import Support, check_claim, support_for
from memoryfs.pages.transcript import Transcript, Turn


def support(text: str, speaker: str = "user", subject: tuple[str, ...] = ()) -> Support:
    turn = Turn(n=1, speaker=speaker, ts="2026-01-05T10:00", text=text)
    t = Transcript(
        id="s", started="2026-01-05T10:00", participants=("dana", "atlas"),
        scope={"user": "dana", "assistant": "atlas"}, turns=(turn,),
    )  # fmt: skip
    return support_for([(t, turn)], subject)


def codes(claim: str, turn: str, speaker: str = "user") -> list[str]:
    return [code for code, _ in check_claim(claim, support(turn, speaker))]


PDF = "PDF. Please always give me figures as PDF, not PNG. Our LaTeX setup eats PDF directly."
HIRED = "I hired Jonas last week; he starts on Monday as our ML engineer."
BEER = "Jonas and I finally had the beer. He ran last week's release with the checklist."
DINNER = "Sam is vegetarian, Marta eats everything but hates coriander."
BOULDER = "Marta is a nurse. Marta is also the one who got me into bouldering."

ENTAILED = [
    ("Dana wants figures as PDF, not PNG.", PDF),
    ("Dana prefers figures as PDF rather than PNG.", PDF),
    ("Dana hired Jonas as an ML engineer.", HIRED),
    ("Jonas starts on Monday.", HIRED),
    ("Jonas ran the release with the checklist.", BEER),
    ("Marta hates coriander.", DINNER),
    ("Sam is vegetarian.", DINNER),
    ("Works as a nurse.", "I'm a nurse at the UKE."),  # a page's subject left out
    ("Dana and others keep the 14 classes.", "We keep the 14 classes."),
    ("Dana is not sure they keep 14 classes.", "I'm not sure we keep 14 classes."),
    ("Did Dana dress up? Dana didn't dress up.", "I didn't dress up, I wore my scarf."),
    ("Atlas recommended the train.", "I'd recommend the train, it's faster door to door."),
    ("No doubt Dana will ace the exam.", "No doubt I'll ace the exam!"),
    ("Dana takes the train rather than flying.", "I take the train rather than flying."),
    # "like" as a preposition is no liking
    (
        "Dana can't stand coriander, it tastes like soap.",
        "I can't stand coriander, tastes like soap.",
    ),
]


@pytest.mark.parametrize(("claim", "turn"), ENTAILED)
def test_what_the_turn_says_passes(claim: str, turn: str) -> None:
    speaker = "assistant" if claim.startswith("Atlas") else "user"
    assert codes(claim, turn, speaker) == []


UNSUPPORTED = [
    ("Dana hates coffee and adores cats.", PDF, "DV105"),  # unrelated
    ("Dana plays the cello in an amateur orchestra.", PDF, "DV105"),
    ("Dana wants figures as PNG, not PDF.", PDF, "DV106"),  # inverted
    ("Dana does not want figures as PDF.", PDF, "DV106"),
    ("Dana no longer wants figures as PDF.", PDF, "DV106"),
    ("Marta loves coriander.", DINNER, "DV106"),
    ("Dana likes meetings before 10:00.", "I don't do meetings before 10:00.", "DV106"),
    ("Jonas hired Dana last week.", HIRED, "DV107"),  # swapped
    ("Dana ran the release with the checklist.", BEER, "DV107"),  # "he" is Jonas
    ("Tiago sent the agreement this morning.", "Lena sent the agreement this morning.", "DV107"),
    ("Jonas owes Dana a beer.", "Jonas says I owe him a beer.", "DV107"),
]


@pytest.mark.parametrize(("claim", "turn", "code"), UNSUPPORTED)
def test_what_the_turn_does_not_say_is_rejected(claim: str, turn: str, code: str) -> None:
    assert codes(claim, turn) == [code]


def test_a_who_points_to_the_name_before_it() -> None:
    assert codes("Dana brought Marta into bouldering.", BOULDER.replace("got", "brought")) == [
        "DV107"
    ]
    # a light verb with a person after it: who got whom into bouldering
    assert codes("Dana got Marta into bouldering.", BOULDER) == ["DV107"]
    assert codes("Marta got Dana into bouldering.", BOULDER) == []
    assert codes("Dana got the flat in Altona.", "I got the flat in Altona!") == []


def test_stems_meet_across_inflections() -> None:
    assert key("meetings") == key("meeting") == "meet"
    assert key("moved") == key("moving") == key("moves") == "mov"
    assert key("told") == "tell" and key("went") == "go" and key("studies") == "study"
    assert key("planned") == key("planning") == "plan"


def test_a_reason_names_the_missing_words() -> None:
    found = check_claim("Dana hates coffee and adores cats.", support(PDF))
    assert found[0][0] == "DV105" and "'coffee'" in found[0][1] and "'cats'" in found[0][1]


def test_a_number_goes_with_what_the_turn_counts_with_it() -> None:
    turn = "Validate: 2,880 new clips, 12 failed, all because the hydrophone id is missing."
    assert codes("Validate found 2,880 new clips and 12 failed.", turn) == []
    assert codes("Validate found 12 new clips, and 2,880 of them failed.", turn) == [
        "DV102",
        "DV102",
    ]
    assert codes("Dana has three figures to redo.", "I have 3 figures to redo.") == []
    assert codes("Dana has twelve figures to redo.", "I have 3 figures to redo.") == ["DV102"]


def test_a_number_is_said_of_what_its_sentence_is_about() -> None:
    turn = (
        "Tidewater is an ocean-data company in HafenCity. About 60 people. The role is on "
        "their Ocean Signals team."
    )
    assert codes("Tidewater has about 60 people.", turn) == []
    assert codes("The Ocean Signals team has about 60 people.", turn) == ["DV102"]
    # a fragment goes on from the sentence before it
    talk = "My talk is on Wednesday and the slides are a mess. Twenty minutes with questions."
    assert codes("Dana's talk is 20 minutes long, questions included.", talk) == []
    # a name is said as "he" in the turn's sentence: no anchor
    tiago = "The important one is Tiago. He has about 80 hours of recordings."
    assert codes("Tiago has about 80 hours of recordings.", tiago) == []


def test_a_date_goes_with_the_sentence_that_dates_it() -> None:
    # the session is on 5 January 2026: "yesterday" is the 4th, not the day of the session
    turn = "Posted. Other news: I signed the Tidewater contract yesterday."
    assert codes('Dana signed the Tidewater contract on 4 January 2026 ("yesterday").', turn) == []
    assert codes("Dana signed the Tidewater contract on 5 January 2026.", turn) == ["DV103"]
    # a sentence the turn dates not at all may take the session's date
    assert codes("Dana posted the notes on 5 January 2026.", "I posted the notes.") == []
