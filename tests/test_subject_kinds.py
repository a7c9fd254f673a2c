"""A subject's kind from weak cues: a service a dataset moves to, a joint project, an event.

"Moved to X" types X a place, but data and releases move to services too; "the A–B
project" names a joint project, not B; "the X dataset citations" are citations; "the
Y Conference in Z" is an event (a topic: the page types have no event).
"""

from __future__ import annotations

from engine_fixtures import consolidate, write_session

from dream.entities import EntityTable
from memoryfs.page import parse_page
from memoryfs.store import Store
from memoryfs.validate import validate_store

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
