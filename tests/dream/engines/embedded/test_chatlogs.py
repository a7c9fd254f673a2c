"""Dream on ordinary chat logs: a ``user`` who never says their name, and their assistant."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from engine_fixtures import consolidate, write_session
from paths import FIXTURES
from typer.testing import CliRunner

from cli.dream_app import app as dream_app
from cli.memoryfs_app import app as memoryfs_app
from dream.engines.embedded.advice import question_in, recommended_items, request_in
from dream.engines.embedded.extract import extract_facts
from dream.engines.embedded.phrasing import third_person
from dream.engines.embedded.standalone import points_back, restates_name
from memoryfs.pages.claims import extract_claims
from memoryfs.pages.page import parse_page
from memoryfs.pages.transcript import Transcript, Turn
from memoryfs.read.recall import recall
from memoryfs.store.store import Store, init_store
from memoryfs.validate.rules import validate_store


def _jsonl(path: Path, day: str, turns: list[tuple[str, str]]) -> Path:
    with path.open("w", encoding="utf-8") as f:
        for i, (role, text) in enumerate(turns):
            line = {"role": role, "content": text, "ts": f"{day}T10:{i:02d}:00"}
            f.write(json.dumps(line) + "\n")
    return path


def _ok(result) -> str:  # type: ignore[no-untyped-def]
    assert result.exit_code == 0, result.output
    return str(result.stdout)


def test_the_issue_reproduction_commits_the_new_address(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    log = _jsonl(
        logs / "2025-03-05-move.jsonl",
        "2025-03-05",
        [
            ("user", "We signed the lease yesterday. From April we live at Kastanienallee 12."),
            ("assistant", "Congratulations on the new flat!"),
        ],
    )
    store_dir = tmp_path / "s"
    mfs, dream = CliRunner(), CliRunner()
    _ok(
        mfs.invoke(
            memoryfs_app, ["init", str(store_dir), "--user", "alex", "--assistant", "helper"]
        )
    )
    _ok(mfs.invoke(memoryfs_app, ["ingest", "--store", str(store_dir), str(log)]))
    _ok(dream.invoke(dream_app, ["skills", "approve", "--store", str(store_dir)]))
    run = json.loads(_ok(dream.invoke(dream_app, ["run", "--store", str(store_dir), "--json"])))
    assert run["status"] == "committed"
    assert not [r for r in run["rejected"] if "DV101" in r]
    store = Store.open(store_dir)
    page = (store.memory / "knowledge/people/alex.md").read_text(encoding="utf-8")
    assert "Alex" in page and "Kastanienallee 12. [cite:1]" in page
    assert validate_store(store) == []
    answer = recall(store, "where do I live now?", 300)
    assert "Kastanienallee 12" in answer.items[0].text


def test_a_hyphenated_id_is_written_as_a_name(tmp_path: Path) -> None:
    store = init_store(tmp_path / "s", "john-zhang", "atlas")
    write_session(
        store,
        "2026-04-02-bike",
        "2026-04-02T08:00",
        [("user", "I bought a used road bike from a colleague at Halden Robotics.")],
    )
    consolidate(store)
    page = parse_page((store.memory / "knowledge/people/john-zhang.md").read_text("utf-8"))
    assert page.title == "John Zhang"
    texts = [c.text for c in extract_claims(page)]
    assert any(t.startswith("John Zhang bought a used road bike") for t in texts), texts
    assert not any("John-zhang" in p.read_text("utf-8") for p in store.memory.rglob("*.md"))


def _session(
    turns: list[tuple[str, str]], user: str = "priya-s", day: str = "2026-05-11"
) -> Transcript:
    return Transcript(
        id=f"{day}-chat",
        started=f"{day}T09:00",
        participants=("user", "assistant"),
        scope={"user": user, "assistant": "pilot"},
        turns=tuple(Turn(i, who, f"{day}T09:00", text) for i, (who, text) in enumerate(turns, 1)),
    )


def _claims(t: Transcript) -> list[str]:
    return [f.text for f in extract_facts(t)]


@pytest.mark.parametrize(
    ("said", "claim"),
    [
        (
            "My brother Omar and I are renting a van.",
            "Priya S's brother Omar and Priya S are renting",
        ),
        ("I used to live in Bremen.", "Priya S used to live in Bremen."),
        ("I sold my car and I now walk everywhere.", "Priya S now walks everywhere"),
        ("My name is Priya and I teach chemistry.", "Priya S teaches chemistry."),
        ("Omar is getting married in May, and I have no idea what to give.", "and Priya S has no"),
    ],
)
def test_first_person_reads_right_in_the_third(said: str, claim: str) -> None:
    assert claim in third_person(said, "Priya S")


def test_only_a_name_is_no_claim() -> None:
    assert restates_name("My name is Priya.", "Priya S")
    assert restates_name("I'm Priya S, by the way!", "Priya S")
    assert not restates_name("I'm Priya's neighbour.", "Priya S")
    t = _session([("user", "Hi, I'm Priya S. My name is Priya."), ("assistant", "Hello Priya!")])
    assert _claims(t) == []


def test_an_assistant_offer_is_not_fused_into_the_answer() -> None:
    t = _session(
        [
            ("user", "My cousin Lina is visiting from Amman next week."),
            ("assistant", "How nice! Is there anything I can help you plan?"),
            ("user", "I enjoy cooking for guests."),
            ("assistant", "Would you like some menu ideas?"),
            ("user", "Lina is allergic to walnuts."),
        ]
    )
    claims = _claims(t)
    assert not [c for c in claims if "?" in c], claims
    assert any(c.startswith("Priya S enjoys cooking for guests") for c in claims), claims
    assert any(c.startswith("Lina is allergic to walnuts") for c in claims), claims


def test_a_sentence_naming_its_topic_only_by_a_pronoun_is_left_out() -> None:
    assert points_back("I'll pick them up from the library.", "Priya S")
    assert not points_back("I bought a kettle and I use it daily.", "Priya S")
    assert not points_back("It was a long week at the clinic.", "Priya S")
    t = _session(
        [
            ("assistant", "You could read Middlemarch or Persuasion."),
            ("user", "I'll pick them up from the library on Saturday."),
            ("user", "I bought a kettle from Tessa's shop and I use it daily."),
        ]
    )
    claims = _claims(t)
    assert not [c for c in claims if "pick them up" in c], claims
    assert any("uses it daily" in c for c in claims), claims
    assert "Pilot suggested: Priya S could read Middlemarch or Persuasion." in claims


def test_you_in_a_users_words_is_the_assistant() -> None:
    t = _session(
        [
            ("assistant", "A shakshuka would be quick."),
            ("user", "I made the shakshuka you suggested on Sunday for my flatmates."),
        ]
    )
    assert any("shakshuka Pilot suggested" in c for c in _claims(t)), _claims(t)


# -- what the assistant said -------------------------------------------------------------

_PODCASTS = """Happy to help! Since you like history, here are three to start with:

1. **Fall of Civilizations** by Paul Cooper – long, atmospheric episodes.
2. **The Rest Is History** – two hosts, lighter tone, short episodes.
3. **Hardcore History** by Dan Carlin – epic multi-part series.

If you only try one, start with Fall of Civilizations."""


def test_the_users_request_and_the_recommended_items_are_found() -> None:
    asking = Turn(1, "user", "2026-05-11T09:00", "I walk a lot. Any podcast recommendations?")
    assert request_in(asking) == "Any podcast recommendations?"
    assert request_in(Turn(2, "user", "x", "I walk a lot.")) == ""
    assert recommended_items(_PODCASTS) == [
        "Fall of Civilizations by Paul Cooper",
        "The Rest Is History",
        "Hardcore History by Dan Carlin",
    ]
    plain = "I'd go with **Lisbon** in May; *Porto* is a close second."
    assert recommended_items(plain) == ["Lisbon", "Porto"]
    steps = "Here is how:\n- **Step 1**: preheat the oven\n- **Tip**: use parchment"
    assert recommended_items(steps) == []
    assert recommended_items("**Subject: Readout on Friday**\n\nHi Marieke,") == []  # a label
    # a request ends with a question mark or says please; a plain statement asks nothing
    room = "We like lakes. A double room with a private bathroom, please."
    assert (
        question_in(Turn(1, "user", "x", room)) == "A double room with a private bathroom, please."
    )
    assert question_in(Turn(1, "user", "x", "I need to email my manager.")) == ""


def test_a_recommendation_is_a_claim_of_the_assistant_on_the_users_page(tmp_path: Path) -> None:
    store = init_store(tmp_path / "s", "priya-s", "pilot", user_name="Priya Shah")
    write_session(
        store,
        "2026-05-11-podcasts",
        "2026-05-11T09:00",
        [
            ("user", "I walk to work every day. Any podcast recommendations?"),
            ("assistant", _PODCASTS),
            ("user", "Great, thanks!"),
            ("assistant", "Enjoy! I'll remind you next Monday to tell me which one you liked."),
        ],
    )
    consolidate(store)
    page = parse_page((store.memory / "knowledge/people/priya-shah.md").read_text("utf-8"))
    claims = {c.text: c for c in extract_claims(page)}
    (rec,) = [c for c in claims if c.startswith("Pilot recommended")]
    assert "Fall of Civilizations by Paul Cooper" in rec and "to Priya Shah" in rec
    assert '(asked: "Any podcast recommendations?")' in rec
    cited = {s.ref.split("#")[1] for s in page.sources if s.id in claims[rec].citations}
    assert cited == {"t1", "t2"}
    assert any(c.startswith("Pilot will remind Priya Shah on 18 May 2026") for c in claims), claims
    assert validate_store(store) == []
    answer = recall(store, "Which podcast did you recommend to me?", 200)
    assert "Fall of Civilizations" in answer.items[0].text


def test_with_no_decision_the_outcome_is_what_the_assistant_recommended() -> None:
    from dream.engines.embedded.digest import summarize_session

    t = _session(
        [
            ("user", "I walk to work every day. Any podcast recommendations?"),
            ("assistant", _PODCASTS),
        ]
    )
    draft = summarize_session(t)
    assert draft.outcome.startswith("Pilot recommended Fall of Civilizations by Paul Cooper")
    assert draft.outcome_evidence is not None and draft.outcome_evidence.turn == 2


FIXTURE_USERS = sorted((FIXTURES / "chatlogs").glob("*/meta.json"))


@pytest.mark.parametrize("meta", FIXTURE_USERS, ids=lambda p: p.parent.name)
def test_dream_commits_every_users_chat_logs(meta: Path, tmp_path: Path) -> None:
    """Eight users no one here tuned for (terse, rambling, non-native, a coder, ...): every
    night commits, and no claim about the user is rejected for the user's name."""
    from dream.engines.embedded.engine import EmbeddedEngine
    from dream.runner import RunOptions, run_dream
    from memoryfs.ingest import ingest

    who = json.loads(meta.read_text(encoding="utf-8"))
    store = init_store(tmp_path / "s", who["user"], who["assistant"])
    ingest(store, sorted(meta.parent.glob("*.jsonl")))
    result = run_dream(store, EmbeddedEngine(), RunOptions(allow_unapproved=True))
    assert result.status == "committed", result.message
    assert result.problems == ()
    named = [r for r in result.rejected if "DV101" in r]
    assert named == [], named
    assert validate_store(store) == []
    # the user has a page of their own, titled with their name, citing their turns
    name = store.config.roster.user_name
    titles = {
        parse_page(p.read_text("utf-8")).title: p
        for p in (store.memory / "knowledge/people").glob("*.md")
    }
    assert name in titles, sorted(titles)
    assert "[cite:" in titles[name].read_text("utf-8")


def test_lower_case_chat_to_an_assistant_is_still_the_users_life() -> None:
    t = _session(
        [
            (
                "user",
                "change of plan. my flatmate read about lake bled and wants that instead of "
                "ljubljana.",
            ),
            ("assistant", "Roughly how long do you have there?"),
            ("user", "its a four day trip, we take the train."),
            ("user", "can you remind me on wednesday to book the hostel?"),
        ],
        day="2026-06-01",  # a Monday
    )
    claims = _claims(t)
    assert any("lake bled" in c for c in claims), claims
    # an assistant's question is not fused into an answer that stands on its own
    assert any(c.startswith("Its a four day trip") or "four day trip" in c for c in claims)
    assert not [c for c in claims if "how long" in c.lower()], claims
    # a request to be reminded is the user's plan, dated as it points: ahead
    assert any(
        'asked to be reminded on 3 June 2026 ("on wednesday") to book the hostel' in c
        for c in claims
    ), claims


def test_advice_without_a_question_is_said_as_advice() -> None:
    t = _session(
        [
            ("user", "booked the physio for thursday. my knee still hurts on stairs."),
            (
                "assistant",
                "Good call. Questions to ask:\n1. What is irritating it?\n\n**Until then**\n"
                "- **Isometric wall sits:** hold 45 seconds, 5 times.\n"
                "- **Cycling** on a flat route.",
            ),
        ]
    )
    claims = _claims(t)
    assert "Pilot advised Priya S: Isometric wall sits; Cycling on a flat route." in claims
    assert any('booked the physio for 14 May 2026 ("for thursday")' in c for c in claims)


def test_a_recommendation_is_filed_on_the_pages_of_what_it_names(tmp_path: Path) -> None:
    store = init_store(tmp_path / "s", "priya-s", "pilot")
    write_session(
        store,
        "2026-05-14-parks",
        "2026-05-14T09:00",
        [
            ("user", "We just moved to Leeds. Which parks would you suggest for a Sunday walk?"),
            (
                "assistant",
                "Lovely! Two easy favourites:\n\n- **Roundhay Park**: lakes and woodland.\n"
                "- **Golden Acre Park**: a gentle loop around the lake.",
            ),
        ],
    )
    consolidate(store)
    places = {p.stem: p.read_text("utf-8") for p in (store.memory / "knowledge").rglob("*.md")}
    assert "roundhay-park" in places, sorted(places)
    assert "Pilot recommended Roundhay Park; Golden Acre Park to Priya S" in places["roundhay-park"]
    assert "[[priya-s|Priya S]]" in places["roundhay-park"]
    assert validate_store(store) == []


def test_a_question_in_a_list_item_is_read_without_its_marker() -> None:
    from dream.engines.embedded.distill import asked

    text = "A few things to check:\n\n- **Start date**: permanent or fixed-term?\n"
    assert asked(text) == "Start date: permanent or fixed-term?"
    assert asked("That sounds fun. What kind of\npottery do you make?") == (
        "What kind of pottery do you make?"
    )
