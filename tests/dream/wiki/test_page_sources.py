"""A page's sources list numbers citations from its entries alone, open or read again."""

from __future__ import annotations

import copy
import datetime

from dream.records import Evidence
from dream.wiki.sources import Sources


def _ev(turn: int) -> Evidence:
    return Evidence("2024-03-01-a", turn, f"h{turn:07d}", "2024-03-01")


def test_a_page_kept_open_numbers_like_one_read_again_after_sources_were_dropped() -> None:
    held = Sources([])
    for turn in (1, 2, 3):
        held.cite(_ev(turn))
    held.keep_only({1})  # turns 2 and 3 were cited only by claims moved to an archive
    reread = Sources(copy.deepcopy(held.as_meta()))
    for page in (held, reread):
        assert page.cite(_ev(3)) == 2  # the next id after what the page says
        assert page.cite(_ev(9)) == 3
    assert held.as_meta() == reread.as_meta()
    assert list(held.ids()) == [1, 2, 3]


def test_citing_a_dropped_turn_again_adds_its_entry_back() -> None:
    sources = Sources([])
    n = sources.cite(_ev(4))
    sources.cite(_ev(5))
    sources.keep_only({2})
    again = sources.cite(_ev(4))
    entry = sources.entry(again)
    assert entry is not None and entry["ref"].endswith("#t4")
    assert sources.ref_of(again).endswith("#t4")
    assert again != n and sources.ref_of(n) == ""  # the dropped id names nothing now


def test_entries_read_come_back_equal_and_odd_ones_untouched() -> None:
    day = datetime.date(2024, 3, 1)
    odd = {"id": 3, "ref": "sessions/transcripts/x.md#t1", "at": day, "hash": "h", "note": "kept"}
    read = [
        {"id": 1, "ref": "sessions/transcripts/2024-03-01-a.md#t1", "at": day, "hash": "h0000001"},
        {"hash": "h0000002", "at": day, "ref": "sessions/transcripts/2024-03-01-a.md#t2", "id": 2},
        odd,
        "not an entry",
    ]
    given = copy.deepcopy(read)
    sources = Sources(given)
    back = sources.as_meta()
    assert back == read and not sources.changed
    assert back[2] is given[2] and back[3] == "not an entry"  # kept as they were read
    assert list(back[1]) == ["id", "ref", "at", "hash"]  # Dream's shape in Dream's order
    assert sources.ref_of(2).endswith("#t2") and sources.ref_of(3).endswith("x.md#t1")
    assert sources.cite(_ev(2)) == 2 and not sources.changed  # already cited
    assert sources.cite(_ev(7)) == 4 and sources.changed


def test_a_turn_cited_again_with_a_new_hash_gets_an_entry_of_its_own() -> None:
    sources = Sources([])
    first = sources.cite(_ev(1))
    changed = Evidence("2024-03-01-a", 1, "hchanged", "2024-03-01")
    second = sources.cite(changed)
    assert second != first
    assert sources.cite(changed) == second and sources.cite(_ev(1)) == first
    assert [e["hash"] for e in sources.as_meta()] == ["h0000001", "hchanged"]
