"""Supersession by slot: which current claim a new claim retires, end to end.

A claim filling a functional slot (role and employer, city, manager) retires the current
claim of that slot on the subject's page; a claim saying a value no longer holds ("no
longer works at X", "my manager is no longer X") retires the claim naming that value.
Each test writes its own transcripts, consolidates them with the embedded engine and
reads the pages (and, where it says so, recall and the gates) back.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from engine_fixtures import consolidate, write_session

from dream.engines import load_engine
from dream.engines.embedded.extract import extract_facts
from dream.gates.slots import slot_of
from dream.language.cues import claim_slot
from dream.runner import RunOptions, run_dream
from memoryfs.ingest import ingest
from memoryfs.pages.claims import Claim, extract_claims
from memoryfs.pages.page import parse_page
from memoryfs.pages.transcript import Transcript, Turn
from memoryfs.read.recall import recall
from memoryfs.store.store import Store, init_store
from memoryfs.validate.rules import validate_store

USER, BOT = "user", "assistant"


def _say(store: Store, sid: str, *said: str) -> None:
    turns: list[tuple[str, str]] = []
    for text in said:
        turns += [(USER, text), (BOT, "Noted.")]
    write_session(store, sid, f"{sid[:10]}T09:00", turns)


def _claims(store: Store, rel: str) -> list[Claim]:
    text = (store.memory / rel).read_text(encoding="utf-8")
    return extract_claims(parse_page(text, rel))


def _current(claims: list[Claim], words: str) -> list[str]:
    return [c.text for c in claims if not c.superseded and words in c.text]


def _history(claims: list[Claim], words: str) -> list[str]:
    return [c.text for c in claims if c.superseded and c.section == "History" and words in c.text]


# -- a move to an organisation is a change of employer, not of city ----------------------


def _rui_lives_and_works(store: Store) -> None:
    _say(
        store,
        "2026-01-05-rui",
        "Rui Matos lives in Braga with his two cats.",
        "Rui works at the Douro Research Centre.",
    )


def test_moving_to_an_organisation_supersedes_the_employer_not_the_city(tmp_store: Store) -> None:
    _rui_lives_and_works(tmp_store)
    consolidate(tmp_store)
    _say(
        tmp_store,
        "2026-02-11-rui",
        "Rui moved to the Minho Biology Institute and no longer works at the Douro Research "
        "Centre.",
    )
    consolidate(tmp_store)
    claims = _claims(tmp_store, "knowledge/people/rui-matos.md")
    assert _current(claims, "lives in Braga"), claims  # a new employer, the same home
    assert _current(claims, "moved to the Minho Biology Institute")
    assert _history(claims, "works at the Douro Research Centre. (superseded on 2026-02-11)")
    assert not _history(claims, "Braga")
    assert validate_store(tmp_store) == []


def test_no_longer_working_somewhere_supersedes_that_employer_claim(tmp_store: Store) -> None:
    _rui_lives_and_works(tmp_store)
    consolidate(tmp_store)
    said = "Rui Matos no longer works at the Douro Research Centre, he freelances now."
    _say(tmp_store, "2026-02-11-rui", said)
    report = consolidate(tmp_store)
    claims = _claims(tmp_store, "knowledge/people/rui-matos.md")
    assert report.claims_superseded >= 1
    assert _history(claims, "Rui works at the Douro Research Centre")
    assert _current(claims, "no longer works at the Douro Research Centre")
    assert _current(claims, "lives in Braga")
    # the copy filed on the organisation's page is retired with it
    org = _claims(tmp_store, "knowledge/orgs/douro-research-centre.md")
    assert _history(org, "Rui works at the Douro Research Centre")


def test_a_move_to_a_city_still_supersedes_the_city(tmp_store: Store) -> None:
    _rui_lives_and_works(tmp_store)
    consolidate(tmp_store)
    _say(tmp_store, "2026-02-11-rui", "Rui moved to Coimbra last month.")
    consolidate(tmp_store)
    claims = _claims(tmp_store, "knowledge/people/rui-matos.md")
    assert _history(claims, "lives in Braga")
    assert _current(claims, "Rui works at the Douro Research Centre")


@pytest.mark.parametrize(
    ("text", "slot"),
    [
        ("Rui moved to the Minho Biology Institute.", "role"),
        ("Rui relocated to Kestrel Analytics last spring.", "role"),
        ("Rui moved to Coimbra.", "city"),
        ("Rui moved to Zento.", "city"),  # a bare name, typed by nothing: a place
    ],
)
def test_the_slot_of_a_move_follows_what_the_destination_is(text: str, slot: str) -> None:
    assert claim_slot(text, ["Rui Matos", "Rui"]) == slot


def test_a_move_to_a_name_the_session_typed_as_an_organisation_fills_the_employer() -> None:
    def kind_of(name: str) -> str:
        return {"Zento": "org"}.get(name, "")

    assert claim_slot("Rui moved to Zento.", ["Rui"], kind_of=kind_of) == "role"


def test_the_contradiction_gate_reads_a_move_to_an_organisation_as_employer() -> None:
    assert slot_of("Rui moved to the Minho Biology Institute.", ["Rui"]) == (
        "employer",
        "minho biology institute",
    )
    assert slot_of("Rui moved to Coimbra.", ["Rui"]) == ("city", "coimbra")


def test_a_move_of_employer_passes_the_gates_beside_the_city(tmp_store: Store) -> None:
    _rui_lives_and_works(tmp_store)
    options = RunOptions(allow_unapproved=True)
    assert run_dream(tmp_store, load_engine(), options).status == "committed"
    _say(tmp_store, "2026-02-11-rui", "Rui moved to the Minho Biology Institute.")
    result = run_dream(tmp_store, load_engine(), options)
    assert result.status == "committed" and not result.problems, result.problems
    claims = _claims(tmp_store, "knowledge/people/rui-matos.md")
    assert _current(claims, "lives in Braga") and _current(claims, "Minho Biology Institute")
    assert _history(claims, "Douro Research Centre")


# -- the manager slot ---------------------------------------------------------------------

NEW_MANAGER = [
    "Quick update: my manager is no longer Ines; since last Monday I report to Marco Bellini.",
    "Since the reorg I report to Marco Bellini.",
    "Marco Bellini is my new team lead.",
    "My new boss is Marco Bellini, the reorg is done.",
    "Big change at work: my manager is no longer Ines, I report to Marco Bellini now.",
]


def _manager_history(store: Store, person: str) -> tuple[list[Claim], str]:
    claims = _claims(store, f"knowledge/people/{person}.md")
    return claims, "\n".join(c.text for c in claims)


@pytest.mark.parametrize("said", NEW_MANAGER)
def test_a_new_manager_supersedes_the_old_one_and_recall_puts_it_first(
    tmp_store: Store, said: str
) -> None:
    _say(tmp_store, "2026-01-05-team", "My manager is Ines Duarte, she runs the data team.")
    consolidate(tmp_store)
    _say(tmp_store, "2026-03-10-team", said)
    consolidate(tmp_store)
    claims, text = _manager_history(tmp_store, "dana")
    assert _history(claims, "manager is Ines Duarte"), text
    assert _current(claims, "Marco Bellini"), text
    assert not _current(claims, "manager is Ines Duarte"), text
    assert validate_store(tmp_store) == []
    result = recall(tmp_store, "who is my manager now?")
    named = [i.text for i in result.items if "Marco" in i.text or "Ines" in i.text]
    assert named and "Marco Bellini" in named[0], result.text


def test_reporting_to_someone_new_supersedes_reporting_to_the_old_one(tmp_store: Store) -> None:
    _say(tmp_store, "2026-01-05-team", "I report to Ines Duarte.")
    consolidate(tmp_store)
    _say(tmp_store, "2026-03-10-team", "Marco Bellini is my new boss.")
    consolidate(tmp_store)
    claims, text = _manager_history(tmp_store, "dana")
    assert _history(claims, "reports to Ines Duarte"), text
    assert _current(claims, "Marco Bellini"), text


def test_a_manager_who_no_longer_is_one_goes_to_history(tmp_store: Store) -> None:
    _say(tmp_store, "2026-01-05-team", "My manager is Ines Duarte.")
    consolidate(tmp_store)
    _say(tmp_store, "2026-03-10-team", "My manager is no longer Ines, the team was split.")
    consolidate(tmp_store)
    claims, text = _manager_history(tmp_store, "dana")
    assert _history(claims, "manager is Ines Duarte"), text
    assert _current(claims, "no longer Ines"), text


def _chat_log(folder: Path, name: str, day: str, said: str) -> Path:
    path = folder / f"{name}.jsonl"
    lines = [
        {"role": "user", "content": said, "ts": f"{day}T09:00:00"},
        {"role": "assistant", "content": "Got it, thanks.", "ts": f"{day}T09:01:00"},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def test_the_manager_slot_in_plain_chat_logs_of_a_user_who_says_i(tmp_path: Path) -> None:
    store = init_store(tmp_path / "store", "alex", "helper")
    logs = tmp_path / "logs"
    logs.mkdir()
    ingest(store, [_chat_log(logs, "2026-01-05-standup", "2026-01-05", "I report to Ines Duarte.")])
    consolidate(store)
    said = "My manager is no longer Ines; since last Monday I report to Marco Bellini."
    ingest(store, [_chat_log(logs, "2026-03-10-standup", "2026-03-10", said)])
    consolidate(store)
    (user_page,) = [
        p.relative_to(store.memory).as_posix()
        for p in (store.memory / "knowledge/people").glob("*.md")
        if "Ines Duarte" in p.read_text(encoding="utf-8")
        and "Marco" in p.read_text()
        and not p.stem.startswith(("ines", "marco"))
    ]
    claims = _claims(store, user_page)
    assert _history(claims, "Ines Duarte"), claims
    assert _current(claims, "Marco Bellini"), claims
    result = recall(store, "who is my manager now?")
    named = [i.text for i in result.items if "Marco" in i.text or "Ines" in i.text]
    assert named and "Marco Bellini" in named[0], result.text


def test_a_move_to_a_name_this_session_types_as_an_organisation_fills_the_role() -> None:
    started = "2026-02-11T09:00"
    said = ["Rui Matos interviewed at Zento, a startup in Porto.", "Rui Matos moved to Zento."]
    t = Transcript(
        id="2026-02-11-zento",
        started=started,
        participants=("dana", "atlas"),
        scope={"user": "dana", "assistant": "atlas"},
        turns=tuple(Turn(i, USER, started, text) for i, text in enumerate(said, 1)),
    )
    moved = [f for f in extract_facts(t) if f.subject == "Rui Matos" and "moved" in f.text]
    assert [f.slot for f in moved] == ["role"]
