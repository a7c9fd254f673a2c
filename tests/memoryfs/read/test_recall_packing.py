"""Recall packing (memoryfs.read.packing): each line shown adds evidence or words."""

from __future__ import annotations

from pathlib import Path

import pytest
from read_fixtures import build_store, source, write_page, write_transcript

from memoryfs.index.index_md import write_indexes
from memoryfs.read.packing import ELISION, Packer, content_words, elide, says_nothing
from memoryfs.read.recall import recall
from memoryfs.read.search import Hit
from memoryfs.store.store import Store
from memoryfs.store.tokens import count_tokens

SID = "2023-06-27-trip-s04"
TURNS = [
    ("Caroline", "This necklace is from my grandma in Sweden, a friend made the bowl for my 18th."),
    ("Melanie", "It's lovely! Did you go to the LGBTQ conference?"),
    ("Caroline", "Yes, I went to an LGBTQ conference last week and met activists from all over."),
    ("Melanie", "I took the kids camping in the mountains and we saw the Perseid meteor shower."),
    (
        "Caroline",
        "Woodhaven has an odd past full of sailors. The old harbour sparked my next script!",
    ),
]
REF = f"sessions/transcripts/{SID}.md#t"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    s = build_store(tmp_path_factory.mktemp("packing") / "store")
    write_transcript(s, SID, "2023-06-27T10:00", TURNS)
    sources = [
        source(n, SID, t, TURNS[t - 1][1], "2023-06-27")
        for n, t in enumerate((1, 3, 4, 5), start=1)
    ]
    write_page(
        s,
        "knowledge/people/caroline.md",
        {"id": "caroline", "title": "Caroline", "type": "person", "updated": "2023-06-27",
         "sources": sources},
        "# Caroline\n\n## Facts\n\n"
        "- A friend made the bowl for Caroline's 18th birthday; the necklace is from "
        "Caroline's grandma in Sweden. [cite:1]\n"
        "- Caroline went to an LGBTQ conference in the week of 19 June 2023 "
        '("last week") and met activists from all over. [cite:2]\n'
        "- Caroline went to an LGBTQ conference. [cite:2]\n"
        "- The old harbour sparked Caroline's next script. [cite:4]\n",
    )  # fmt: skip
    write_page(
        s,
        f"sessions/summaries/{SID}.md",
        {"id": SID, "title": "Keepsakes and a conference", "type": "summary",
         "date": "2023-06-27", "updated": "2023-06-27", "sources": sources},
        "## Key points\n\n"
        "- A friend made the bowl for Caroline's 18th birthday. [cite:1]\n"
        "- Melanie saw the Perseid meteor shower. [cite:3]\n\n"
        "## Outcome\n\nOutcome: none recorded\n",
    )  # fmt: skip
    write_indexes(s)
    s.commit("packing store")
    return s


def test_a_short_claim_gives_way_to_the_claim_that_says_it_all(store: Store) -> None:
    r = recall(store, "Who made the bowl for Caroline's 18th birthday?", 400)
    bowl = [i for i in r.items if "made the bowl" in i.text]
    # the summary's key point and the page claim holding it in full: one line, the longer
    assert len(bowl) == 1 and "grandma in Sweden" in bowl[0].text
    assert bowl[0].citations == (REF + "1",)
    assert r.text.count("made the bowl") == 1


def test_a_turn_the_claim_above_already_says_is_not_printed(store: Store) -> None:
    r = recall(store, "Who made the bowl for Caroline's 18th birthday?", 400)
    assert "This necklace is from my grandma" not in r.text  # the claim cites it and says it
    assert any(REF + "1" in i.citations for i in r.items)


def test_a_turn_that_adds_words_is_still_printed_under_its_claim(store: Store) -> None:
    r = recall(store, "Which meteor shower did Melanie see?", 400)
    claim, turn = r.items[:2]
    assert "Perseid" in claim.text and claim.citations == (REF + "4",)
    assert turn.kind == "turn" and "camping in the mountains" in turn.text
    assert r.text.splitlines()[1].startswith("  ↳ Melanie: I took the kids camping")


def test_a_turn_shows_only_the_sentences_its_claim_left_out(store: Store) -> None:
    r = recall(store, "What sparked Caroline's next script?", 400)
    claim, turn = r.items[:2]
    assert "harbour sparked" in claim.text and claim.citations == (REF + "5",)
    assert (
        turn.kind == "turn" and turn.text == "Caroline: Woodhaven has an odd past full of sailors."
    )
    assert r.text.count("harbour sparked") == 1


def test_elide_keeps_what_is_not_said() -> None:
    said = content_words("The old harbour sparked Caroline's next script.")
    text = "Woodhaven has an odd past. The old harbour sparked my next script! And it rained."
    assert elide(text, said) == f"Woodhaven has an odd past.{ELISION}And it rained."
    assert elide("The old harbour sparked my next script!", said) == ""
    assert elide(text, frozenset()) == text
    assert elide("Nothing said here. Nor here.", said) == "Nothing said here. Nor here."
    assert elide("So did I! The old harbour sparked my next script!", said) == ""


def test_a_repeat_on_the_same_evidence_is_dropped(store: Store) -> None:
    r = recall(store, "When did Caroline go to the LGBTQ conference?", 400)
    lines = [i for i in r.items if "LGBTQ conference" in i.text and i.kind == "claim"]
    assert len(lines) == 1 and "19 June 2023" in lines[0].text


def test_nothing_recorded_is_never_a_line(store: Store) -> None:
    r = recall(store, "What was the outcome of the conference session?", 2000)
    assert "none recorded" not in r.text and r.items
    assert says_nothing("Outcome: none recorded") and says_nothing("- none recorded")
    assert not says_nothing("Outcome: Caroline adopted none of the kittens")


def _hit(line: int, text: str, cites: tuple[str, ...], kind: str = "claim") -> Hit:
    return Hit(
        path="knowledge/people/caroline.md", line=line, layer="knowledge", title="Caroline",
        snippet="", score=1.0, citations=cites, date="2023-06-27", kind=kind, text=text,
    )  # fmt: skip


def _render(hit: Hit) -> str:
    return f"{hit.text} [{', '.join(hit.citations)}]"


def test_a_repeat_with_more_evidence_lends_its_citation_to_the_shown_claim() -> None:
    pack = Packer(200)
    first = _hit(3, "Caroline went to an LGBTQ conference and met activists.", ("a#t1",))
    again = _hit(9, "Caroline met activists at an LGBTQ conference.", ("a#t1", "b#t4"))
    for h in (first, again):
        pack.offer(h, h.text, content_words(h.text), 1.0, _render)
    assert [p.hit.line for p in pack.lines] == [3]
    assert pack.lines[0].hit.citations == ("a#t1", "b#t4")
    assert pack.used == count_tokens(pack.lines[0].line)
    # a profile line lists a person's things: never folded into a claim, nor a host
    profile = _hit(12, "Community: LGBTQ, conference, activists", ("a#t1", "c#t2"), "profile")
    assert pack.offer(profile, profile.text, content_words(profile.text), 0.5, _render)
    assert pack.lines[0].hit.citations == ("a#t1", "b#t4") and len(pack.lines) == 2


def test_never_over_budget_when_lines_grow(tmp_path: Path) -> None:
    short = _hit(3, "Caroline met activists.", ("a#t1",))
    text = "Caroline met activists from Boston and Denver at an LGBTQ conference."
    long = _hit(5, text, ("a#t1",))
    budget = count_tokens(_render(short)) + 2
    pack = Packer(budget)
    assert pack.offer(short, short.text, content_words(short.text), 1.0, _render)
    assert pack.offer(long, long.text, content_words(long.text), 0.9, _render) is False
    assert [p.hit.line for p in pack.lines] == [3] and pack.used <= budget
