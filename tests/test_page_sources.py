"""A page's sources list numbers citations from its entries alone, open or read again."""

from __future__ import annotations

import copy

from dream.pagewriter import Sources
from dream.records import Evidence


def _ev(turn: int) -> Evidence:
    return Evidence("2024-03-01-a", turn, f"h{turn:07d}", "2024-03-01")


def test_a_page_kept_open_numbers_like_one_read_again_after_sources_were_dropped() -> None:
    held = Sources([])
    for turn in (1, 2, 3):
        held.cite(_ev(turn))
    held.keep_only({1})  # turns 2 and 3 were cited only by claims moved to an archive
    reread = Sources(copy.deepcopy(held.entries))
    for page in (held, reread):
        assert page.cite(_ev(3)) == 2  # the next id after what the page says
        assert page.cite(_ev(9)) == 3
    assert held.entries == reread.entries
    assert [e["id"] for e in held.entries] == [1, 2, 3]


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
