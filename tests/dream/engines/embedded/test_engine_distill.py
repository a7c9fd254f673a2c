"""Distilling what people say into claims: glue dropped, filler trimmed, answers asked."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dream.engines.embedded.distill import (
    asked,
    glue,
    needs_question,
    question_claim,
    topic_of,
    trim,
    vague,
)
from dream.engines.embedded.extract import extract_facts
from memoryfs.pages.transcript import Transcript, Turn

GLUE = [
    "Thanks for letting me help.",
    "It made me think we can make a difference.",
    "You're always dreaming up ways to make a difference and I'm sure your drive will pay off.",
    "Let's make a difference.",
    "Glad you felt accepted and supported.",
    "Congrats on the promotion!",
    "It's one of my favorites.",
]
KEPT = [
    "I ran a charity race for mental health last Saturday.",
    "We had a great time throwing a small party and inviting some veterans.",
    "Thanks to my aunt, I got a scholarship to study in Spain.",
    "That's great, I love hiking too!",
    "It was great and helped clear my head.",
]


@pytest.mark.parametrize("said", GLUE)
def test_conversation_glue_is_not_a_claim(said: str) -> None:
    assert glue(said, "Maria")


@pytest.mark.parametrize("said", KEPT)
def test_facts_are_kept(said: str) -> None:
    assert not glue(said, "Maria")


def test_trim_drops_vocatives_openers_and_filler() -> None:
    assert trim("Wow, Melanie!", "Melanie") == ""
    assert trim("Hey Maria, I just started a really cool pottery class.", "Maria") == (
        "I started a cool pottery class."
    )
    assert trim("Since we last chatted, I've been blogging about politics.", "") == (
        "I've been blogging about politics."
    )
    assert trim("I ran 5K on Saturday, Maria!", "Maria") == "I ran 5K on Saturday!"
    # a short form of the name is a vocative too; a longer word that starts like it is not
    assert trim("Mel.", "Melanie") == ""
    assert trim("Hey Mel, I went home.", "Melanie") == "I went home."
    assert trim("I love Melbourne, Mel!", "Melanie") == "I love Melbourne!"
    # an opener that only asks for attention goes; what follows is the news
    assert trim("Gina, you won't believe it - I got mentored yesterday!", "Gina") == (
        "I got mentored yesterday!"
    )
    assert trim("Guess what? I got the job.", "Gina") == "I got the job."
    assert trim("You know what I mean.", "Gina") == "You know what I mean."


def test_the_news_after_an_attention_opener_is_a_dated_claim() -> None:
    t = _talk(
        [
            ("Maria", "Hi John!"),
            ("John", "Maria, you won't believe it - I got mentored by a chef yesterday!"),
        ]
    )
    [fact] = extract_facts(t)
    assert fact.text == 'John got mentored by a chef on 19 May 2023 ("yesterday").'


def test_the_question_a_short_answer_answers() -> None:
    assert asked("Great news John! How often do you all workout together?") == (
        "How often do you all workout together?"
    )
    assert asked("How are you?") == ""  # small talk
    assert asked("That's so cool. I went too.") == ""
    assert needs_question("Three times a week; it keeps us on track.")
    assert not needs_question("Thanks, that's so sweet.")
    claim = question_claim("How often do you all workout together?", "Three times a week.", "John")
    assert claim == "How often do John and others workout together? John: Three times a week."


def test_a_vague_question_gets_its_topic() -> None:
    q = "How did they react when they saw it?"
    assert vague(q)
    before = (
        "Last week, we had a meaningful experience at a military memorial. "
        "It made an impact on my kids."
    )
    assert topic_of([before, "That's so moving! " + q], {"john", "maria"}) == (
        "military memorial, kids"
    )
    assert question_claim(q, "They were awestruck.", "John", "military memorial, kids") == (
        "How did they react when they saw it? (re: military memorial, kids) John: "
        "They were awestruck."
    )


def _talk(turns: list[tuple[str, str]]) -> Transcript:
    started = "2023-05-20T10:00"
    return Transcript(
        id="2023-05-20-talk",
        started=started,
        participants=("John", "Maria"),
        scope={"user": "locomo", "assistant": "eval"},
        turns=tuple(Turn(i, who, started, text) for i, (who, text) in enumerate(turns, 1)),
    )


def test_answers_are_filed_with_their_question_and_glue_is_not() -> None:
    t = _talk(
        [
            ("Maria", "Great news John! How often do you all work out together?"),
            ("John", "Thanks, Maria! Three times a week; it keeps us on track."),
            ("Maria", "Awesome, keep it up!"),
            ("John", "We threw a small party for some veterans last Friday."),
        ]
    )
    texts = [f.text for f in extract_facts(t) if f.subject == "John"]
    assert "How often do John and others work out together? John: Three times a week; " in texts[0]
    # the question says what the answer does not ("work out"): its turn is cited too
    assert [e.turn for f in extract_facts(t) for e in f.evidence if f.text == texts[0]] == [2, 1]
    assert any(
        x.startswith("John and others threw a small party for some veterans on 19 May 2023")
        for x in texts
    )
    assert not any("keep it up" in f.text for f in extract_facts(t))


def test_a_dropped_sentences_date_carries_into_the_next_one_mid_sentence() -> None:
    t = _talk(
        [
            ("Maria", "Hi John!"),
            ("John", "Last night was amazing! The band played our wedding song."),
        ]
    )
    [fact] = extract_facts(t)
    assert fact.text == 'On 19 May 2023 ("Last night"), the band played John\'s wedding song.'


@given(st.text(max_size=200))
def test_never_raises(text: str) -> None:
    glue(text, "Maria")
    trim(text, "Maria")
    asked(text)
    topic_of([text], set())


def test_a_fused_claim_says_nothing_twice() -> None:
    # the answerer is named once in the question, then "their" / "them"
    assert question_claim(
        "How have your friends been helping you out with your move?",
        "They've been there for Dana every step of the way.",
        "Dana",
    ) == (
        "How have Dana's friends been helping them out with their move? Dana: They've been "
        "there for Dana every step of the way."
    )
    # ... unless the question already says "they" of others
    assert question_claim("Did they call you back?", "Nope.", "Dana") == (
        "Did they call Dana back? Dana: Nope."
    )
    # a later "you" after an auxiliary is a subject
    assert question_claim("Are you going? Do you like it?", "Yes.", "Dana") == (
        "Is Dana going? Do they like it? Dana: Yes."
    )
    assert question_claim("Is it yours, since you were there?", "Yes.", "Dana") == (
        "Is it Dana's, since they were there? Dana: Yes."
    )
    # no "Dana:" label before an answer that opens with Dana's name
    assert question_claim("What type of guitar?", "Dana plays acoustic guitar.", "Dana") == (
        "What type of guitar? Dana plays acoustic guitar."
    )
    assert question_claim("What type?", "Danaé plays.", "Dana") == "What type? Dana: Danaé plays."
    # topic words the question or the answer already say are not repeated
    assert question_claim("Did you make it?", "Dana made the bowl.", "Dana", "bowl, black") == (
        "Did Dana make it? (re: black) Dana made the bowl."
    )
    assert question_claim("Did you make it?", "Dana made bowls.", "Dana", "bowl") == (
        "Did Dana make it? Dana made bowls."
    )


def test_a_statement_with_a_question_tag_asks_nothing() -> None:
    assert asked("I opened my own online store last month - pretty cool, huh?") == ""
    assert asked("Nature sure seems to refresh us, right?") == ""
    assert asked("I finished another pottery project - want to see a pic?") == ""
    assert asked("Did you go to the park or the beach, or no?") != ""
    assert asked("Is it right to leave early?") == "Is it right to leave early?"


def test_so_far_so_good_is_kept_whole() -> None:
    assert trim("So far, so good - customers love the new offers.") == (
        "So far, so good - customers love the new offers."
    )
    assert trim("So, I went home.") == "I went home."
    assert trim("It was so good.") == "It was good."


def test_the_question_of_a_fused_claim_names_the_answerer_once() -> None:
    t = _talk(
        [
            ("Maria", "Which book do you remember from your childhood?"),
            ("John", "Loved reading Charlotte's Web as a kid."),
        ]
    )
    texts = [f.text for f in extract_facts(t) if f.subject == "John"]
    assert texts == [
        "Which book does John remember from their childhood? John loved reading Charlotte's "
        "Web as a kid."
    ]


def test_a_remark_on_what_was_shown_answers_no_question() -> None:
    for remark in ("That photo's amazing.", "That's stunning.", "Great to hear from Maria."):
        assert not needs_question(remark, "Maria")
    for answer in ("This is Oscar.", "That's my sister.", "This one is mine.", "Three times."):
        assert needs_question(answer, "Maria")
    t = _talk(
        [
            ("Maria", "What have you been up to lately, artistically?"),
            ("John", "That's stunning! I've been trying out abstract stuff recently."),
        ]
    )
    assert [f.text for f in extract_facts(t) if f.subject == "John"] == [
        "What has John been up to lately, artistically? John has been trying out abstract "
        "stuff recently."
    ]
