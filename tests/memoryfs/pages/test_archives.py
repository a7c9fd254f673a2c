"""A page and its archives are one page to recall (memoryfs.pages.archives)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from read_fixtures import source, write_page, write_transcript

from memoryfs.index.index_md import write_indexes
from memoryfs.pages.archives import Families, main_stem, page_title
from memoryfs.read.expand import feedback_terms
from memoryfs.read.ranking import query_terms
from memoryfs.read.recall import recall
from memoryfs.read.search import SearchIndex
from memoryfs.store.store import Store, init_store

DANA = "knowledge/people/dana.md"
RAVI = "knowledge/people/ravi.md"
KIM = "knowledge/people/kim.md"
SID = "2023-01-02-trips-s01"
DAYS = ("2023-01-02", "2023-02-03", "2023-03-04")
TRAILS = ("Skyline", "Ridge", "Lakeside")
TURNS = [
    ("Dana", f"I hiked the {TRAILS[0]} trail with my dog."),
    ("Dana", f"We did the {TRAILS[1]} trail today, long climb."),
    ("Dana", f"The {TRAILS[2]} trail was flat and muddy."),
    ("Dana", "I adopted a greyhound from the shelter."),
    ("Kim", "I adopted a greyhound too, a rescue."),
    ("Dana", "Started a pottery class on Mondays."),
]


def archive(day: str) -> str:
    return f"knowledge/people/dana-archive-{day}.md"


def test_families_fold_archives_under_their_indexed_page() -> None:
    paths = [DANA, archive(DAYS[1]), archive(DAYS[0]), RAVI, "knowledge/people/lee-archive-2023.md"]
    paths += ["notes/x/dana-archive-2023-01-02.md", "knowledge/people/dana-archive-plans.md"]
    fam = Families(paths)
    assert main_stem(archive(DAYS[0])) == DANA
    assert main_stem("knowledge/people/lee-archive-2023-04.md") == "knowledge/people/lee.md"
    assert main_stem("knowledge/people/dana-archive-plans.md") is None  # no date: a page
    assert fam.main_of(archive(DAYS[0])) == DANA and fam.is_archive(archive(DAYS[1]))
    assert fam.members(archive(DAYS[1])) == [DANA, archive(DAYS[0]), archive(DAYS[1])]
    # an archive whose page is not indexed, or in another folder, stands for itself
    for alone in ("knowledge/people/lee-archive-2023.md", "notes/x/dana-archive-2023-01-02.md"):
        assert fam.main_of(alone) == alone and not fam.is_archive(alone)
    assert page_title(archive(DAYS[0]), "Dana (2023-01-02 archive)") == "Dana"
    # only an archive's qualifier goes: other titles keep their parentheses
    assert (
        page_title(DANA, 'Dana ran on 20 May ("last Saturday")')
        == 'Dana ran on 20 May ("last Saturday")'
    )
    assert fam.with_archives([RAVI, archive(DAYS[0]), DANA]) == [
        RAVI,
        DANA,
        archive(DAYS[0]),
        archive(DAYS[1]),
    ]


@pytest.fixture(scope="module")
def split(tmp_path_factory: pytest.TempPathFactory) -> Store:
    """Dana's page rolled over three times: her hikes live in the archives only."""
    store = init_store(tmp_path_factory.mktemp("archives") / "store", "dana", "atlas")
    write_transcript(store, SID, "2023-01-02T10:00", TURNS)
    at = "2023-01-02"
    links = "".join(f"- [[dana-archive-{d}|Dana ({d} archive)]]\n" for d in DAYS)
    write_page(
        store,
        DANA,
        {
            "id": "dana",
            "title": "Dana",
            "type": "person",
            "aliases": ["Dee"],
            "summary": "Keeps a greyhound; takes a pottery class.",
            "updated": "2023-04-01",
            "sources": [source(1, SID, 6, TURNS[5][1], at)],
        },
        "# Dana\n\n## 2023-04-01\n\n- Dana started a pottery class on Mondays. [cite:1]\n\n"
        f"## Related\n\n{links}- [[ravi|Ravi]]\n",
    )
    for n, day in enumerate(DAYS):
        write_page(
            store,
            archive(day),
            {
                "id": f"dana-archive-{day}",
                "title": f"Dana ({day} archive)",
                "type": "person",
                "updated": day,
                "sources": [
                    source(1, SID, n + 1, TURNS[n][1], at),
                    source(2, SID, 4, TURNS[3][1], at),
                ],
            },
            f"# Dana ({day} archive)\n\n## {day}\n\n"
            f"- Hiked the {TRAILS[n]} trail. [cite:1]\n"
            + ("- Adopted a greyhound from the shelter. [cite:2]\n" if n == 0 else "")
            + "\n## Related\n\n- [[dana|Dana]]\n",
        )
    write_page(
        store,
        RAVI,
        {
            "id": "ravi",
            "title": "Ravi",
            "type": "person",
            "summary": "A pilot based in Oslo.",
            "updated": "2023-01-02",
        },
        "# Ravi\n\nFlies cargo planes.\n",
    )
    write_page(
        store,
        KIM,
        {
            "id": "kim",
            "title": "Kim",
            "type": "person",
            "updated": "2023-01-02",
            "sources": [source(1, SID, 5, TURNS[4][1], at)],
        },
        "# Kim\n\n## 2023-01-02\n\n- Adopted a greyhound from the shelter. [cite:1]\n",
    )
    write_indexes(store)
    store.commit("test store")
    return store


def test_an_archived_claim_weighs_as_its_page_named_by_an_alias(split: Store) -> None:
    # "Dee" names Dana's page (an alias), not the archive's own title or id: the
    # archived claim still gets the page's title boost, Kim's same claim does not.
    with SearchIndex.open(split) as idx:
        idx.refresh()
        hits = idx.search("What did Dee adopt?", k=10)
    claims = [h for h in hits if h.kind == "claim"]
    dana, kim = claims[0], claims[1]
    assert (dana.path, kim.path) == (archive(DAYS[0]), KIM)
    assert dana.score > 1.2 * kim.score  # x1.5 for the name; Kim's title is shorter (BM25)


def test_the_best_page_is_the_family_so_its_links_are_followed(
    split: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    question = "Which trails did Dana hike?"
    with SearchIndex.open(split) as idx:
        idx.refresh()
        hits = idx.search(question, k=100)
    # the three best pages are Dana's archives; Ravi matches no word of the question
    assert {h.path for h in hits[:3]} == {archive(d) for d in DAYS}
    assert RAVI not in {h.path for h in hits}
    monkeypatch.setattr("memoryfs.read.recall.feedback_terms", lambda *_a, **_k: [])
    r = recall(split, question, 600)
    shown = {i.path for i in r.items}
    assert {archive(d) for d in DAYS} <= shown
    # Dana's page links to Ravi (the archives link only to Dana's page): one hop
    item = next(i for i in r.items if i.path == RAVI)
    assert item.kind == "summary" and "pilot" in item.text
    # an archive is searched as part of its page, never shown as a bare linked head
    assert not any(i.kind == "summary" and "archive" in i.path for i in r.items)


def test_a_title_qualifier_is_not_a_feedback_word(split: Store) -> None:
    question = "Which trails did Dana hike?"
    with SearchIndex.open(split) as idx:
        idx.refresh()
        hits = idx.search(question, k=100)
    assert sum("archive" in h.title for h in hits[:8]) >= 2
    assert "archive" not in feedback_terms(hits, query_terms(question))


def test_a_deleted_page_leaves_its_archives_standing(split: Store, tmp_path: Path) -> None:
    copy = tmp_path / "store"
    shutil.copytree(split.root, copy)
    store = Store.open(copy)
    (store.memory / DANA).unlink()
    r = recall(store, "Which trails did Dana hike?", 600)
    assert {archive(d) for d in DAYS} <= {i.path for i in r.items}
