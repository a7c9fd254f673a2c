"""A subject's kind from weak cues: a service a dataset moves to, a joint project, an event.

"Moved to X" types X a place, but data and releases move to services too; "the A–B
project" names a joint project, not B; "the X dataset citations" are citations; "the
Y Conference in Z" is an event (a topic: the page types have no event).
"""

from __future__ import annotations

from engine_fixtures import consolidate, write_session

from dream.language.entities import EntityTable
from memoryfs.pages.page import parse_page
from memoryfs.store.store import Store
from memoryfs.validate.rules import validate_store

USER, BOT = "user", "assistant"


def test_weak_cues_type_no_place_project_or_event_of_their_own() -> None:
    table = EntityTable(
        [
            "Every release gets a Datavault DOI and a changelog.",
            "We're moving Kelpdata from Strandbox to Datavault this week.",
            "The docs moved to Datavault too.",
            "I'm flying out to Porto tomorrow.",
            "I'll go to the Coral Acoustics Conference in Tromso in June.",
            "The Halden–Brightwave project starts in May.",
            "The two Strandbox dataset citations lost their prefix.",
            "I sent Ada's CV to the lab.",
        ],
        speakers=("Dana",),
    )
    assert "Datavault DOI" not in table.types  # the DOI is Datavault's
    assert table.canonical["Datavault"] == "Datavault"
    assert "Ada" in table.types and "Ada's CV" not in table.types and "Ada's" not in table.types
    assert table.weak == {"Datavault", "Strandbox"}  # "moving Kelpdata from X", "moved to Y"
    assert table.types["Porto"] == "place"  # travel is a place cue of its own
    assert table.types["Coral Acoustics Conference"] == "topic"
    assert table.types["Tromso"] == "place"
    assert table.types.get("Brightwave") != "project"
    assert table.types.get("Strandbox") != "project"


def test_a_folded_short_form_keeps_its_weak_place_cue_to_itself() -> None:
    table = EntityTable(
        ["The data went straight to Datavault.", "Datavault Labs sent the invoice."],
        speakers=("Dana",),
    )
    assert table.canonical["Datavault"] == "Datavault Labs"
    assert table.types["Datavault Labs"] == "org"
    table = EntityTable(
        ["The data went straight to Kelp.", "Kelp Pier sent the invoice."], speakers=("Dana",)
    )
    assert table.types["Kelp Pier"] != "place"  # "to Kelp" says nothing of "Kelp Pier"


def _two_turns(store: Store, sid: str, text: str) -> None:
    write_session(store, sid, f"{sid[:10]}T09:00", [(USER, text), (BOT, "Noted.")])


def test_a_service_data_moves_to_is_no_place(tmp_store: Store) -> None:
    _two_turns(tmp_store, "2026-04-01-a", "Ada Lindqvist works at the Datavault Foundation now.")
    _two_turns(tmp_store, "2026-04-03-b", "The old Kelpdata versions stay on Strandbox.")
    _two_turns(
        tmp_store,
        "2026-04-06-c",
        "We're moving Kelpdata from Strandbox to Datavault, and the docs moved to Datavault too.",
    )
    _two_turns(tmp_store, "2026-04-08-d", "The Strandbox record is frozen, with a pointer.")
    _two_turns(tmp_store, "2026-04-09-e", "I moved to Porto last year, the rent is fine.")
    consolidate(tmp_store)
    knowledge = tmp_store.memory / "knowledge"
    assert not (knowledge / "places" / "datavault.md").exists()
    assert not (knowledge / "places" / "strandbox.md").exists()
    org = parse_page((knowledge / "orgs" / "datavault-foundation.md").read_text())
    assert "Datavault" in org.aliases
    assert any("2026-04-06-c" in s.ref for s in org.sources)
    assert (knowledge / "topics" / "strandbox.md").exists()  # untyped in most of its sessions
    assert (knowledge / "places" / "porto.md").exists()  # a weak cue still types a new name
    assert validate_store(tmp_store) == []


def test_a_joint_project_does_not_retype_an_org(tmp_store: Store) -> None:
    _two_turns(tmp_store, "2026-04-01-a", "I got an offer from Brightwave Analytics today.")
    _two_turns(tmp_store, "2026-04-04-b", "The Halden–Brightwave project starts in May.")
    _two_turns(tmp_store, "2026-04-07-c", "The new hydrophones are paid by Brightwave.")
    consolidate(tmp_store)
    knowledge = tmp_store.memory / "knowledge"
    assert not (knowledge / "projects" / "brightwave.md").exists()
    org = parse_page((knowledge / "orgs" / "brightwave-analytics.md").read_text())
    assert "Brightwave" in org.aliases
    assert {s.ref.split("#")[0].rsplit("/", 1)[-1] for s in org.sources} >= {
        "2026-04-04-b.md",
        "2026-04-07-c.md",
    }


def test_only_an_acronym_that_names_a_thing_is_trimmed_off_a_name() -> None:
    """A closing DOI or API is a thing of the name ("the Datavault API"); "Team USA" and
    "Radio NZ" are whole names: trimmed, they left subjects named "Team" and "Radio"."""
    table = EntityTable(
        [
            "I watched Team USA win the relay. Team USA has been great all season.",
            "My cousin joined Radio NZ last year. Radio NZ is hiring again.",
            "The Datavault API is down again, and the Datavault API docs are stale.",
        ],
        speakers=("Dana",),
    )
    assert "Team" not in table.types and "Radio" not in table.types
    assert "Team USA" in table.types and "Radio NZ" in table.types
    assert "Datavault API" not in table.types and "Datavault" in table.types


def test_place_cues_win_over_the_shape_of_a_name(tmp_store: Store) -> None:
    """Regression: a quarter of town said after "near" in one session, "cycled over to" in
    another and with no cue in a third was filed under people (two capitalized words no
    one uses in lower case), and a district described as one ("X is a lively district")
    was a person or no subject at all."""
    _two_turns(tmp_store, "2026-04-01-a", "The new studio is near Finzels Reach, by the river.")
    _two_turns(tmp_store, "2026-04-02-b", "I cycled over to Finzels Reach after lunch.")
    _two_turns(tmp_store, "2026-04-03-c", "Finzels Reach was packed with food stalls tonight.")
    _two_turns(tmp_store, "2026-04-04-d", "Stokes Croft is a lively district full of murals.")
    _two_turns(tmp_store, "2026-04-05-e", "Cotham is a quiet neighbourhood up the hill.")
    _two_turns(tmp_store, "2026-04-06-f", "I had lunch with Imogen Clarke at Finzels Reach.")
    consolidate(tmp_store)
    knowledge = tmp_store.memory / "knowledge"
    for place in ("finzels-reach", "stokes-croft", "cotham"):
        assert (knowledge / "places" / f"{place}.md").exists(), place
        assert not (knowledge / "people" / f"{place}.md").exists(), place
    assert (knowledge / "people" / "imogen-clarke.md").exists()  # "lunch with X" is someone
    assert validate_store(tmp_store) == []


def test_place_cues_in_one_session() -> None:
    table = EntityTable(
        [
            "We met outside Castle Mews before the gig.",
            "Hartcliffe is a big suburb south of the river.",
            "The flat is near Lowther Gardens.",
            "I had dinner with Aurelie Fontaine.",
            "Dinner at Ravi's was lovely.",
        ],
        speakers=("Dana",),
    )
    assert table.types["Castle Mews"] == "place"
    assert table.types["Hartcliffe"] == "place"
    assert table.types["Lowther Gardens"] == "place"
    assert table.types["Aurelie Fontaine"] == "person"
    assert table.types.get("Ravi") != "place"  # "at Ravi's" is someone's home


def test_a_short_form_resolves_to_the_org_or_person_it_is_short_for(tmp_store: Store) -> None:
    """Regression: "I work at X Energy" once, later "back at X" and "X's office", made a
    place page "X" beside the organisation's page."""
    _two_turns(tmp_store, "2026-04-07-a", "I started a new job at Lumen Freight on Monday.")
    _two_turns(tmp_store, "2026-04-07-b", "My manager Odile Brandt signed off the budget.")
    consolidate(tmp_store)
    _two_turns(
        tmp_store, "2026-04-10-c", "I was back at Lumen after a week off, the canteen reopened."
    )
    _two_turns(tmp_store, "2026-04-12-d", "I walked over to Odile to ask about the rota.")
    consolidate(tmp_store)
    knowledge = tmp_store.memory / "knowledge"
    assert not (knowledge / "places" / "lumen.md").exists()
    assert not (knowledge / "places" / "odile.md").exists()
    org = parse_page((knowledge / "orgs" / "lumen-freight.md").read_text())
    assert "Lumen" in org.aliases
    assert any("2026-04-10-c" in s.ref for s in org.sources)
    person = parse_page((knowledge / "people" / "odile-brandt.md").read_text())
    assert any("2026-04-12-d" in s.ref for s in person.sources)


def test_a_short_form_said_first_resolves_to_a_new_subject_of_the_same_run(
    tmp_store: Store,
) -> None:
    _two_turns(tmp_store, "2026-05-01-a", "Back at Kestrel today, the lifts work again.")
    _two_turns(tmp_store, "2026-05-02-b", "I got a job at Kestrel Robotics as a test engineer.")
    _two_turns(tmp_store, "2026-05-03-c", "Lunch at Kestrel was a curry, not bad.")
    consolidate(tmp_store)
    knowledge = tmp_store.memory / "knowledge"
    assert sorted(p.name for p in knowledge.rglob("kestrel*.md")) == ["kestrel-robotics.md"]
    org = parse_page((knowledge / "orgs" / "kestrel-robotics.md").read_text())
    assert {"2026-05-01-a", "2026-05-02-b"} <= {
        s.ref.split("/")[-1].split(".")[0] for s in org.sources
    }
