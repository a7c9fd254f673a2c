"""Search: units, ranking, hostile queries, incremental and concurrent refresh, CLI."""

from __future__ import annotations

import json
import multiprocessing
import os
import sqlite3
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from paths import FIXTURES
from read_fixtures import S1, S2, build_store, write_page, write_transcript
from typer.testing import CliRunner

from cli.memoryfs_app import app
from memoryfs.errors import PageError
from memoryfs.index.units import human_date, units_of
from memoryfs.pages.claims import extract_claims
from memoryfs.pages.links import extract_links
from memoryfs.pages.page import parse_page
from memoryfs.read.ranking import fts_query, query_terms, recency_prior, title_boost
from memoryfs.read.search import INDEX_NAME, SearchIndex
from memoryfs.store.store import Store

MELANIE = "knowledge/people/melanie.md"


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Store:
    """A read-only store shared by the tests that only search."""
    return build_store(tmp_path_factory.mktemp("search") / "store")


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return build_store(tmp_path / "store")


def _search(store: Store, query: str, k: int = 10, layers: list[str] | None = None) -> list:
    with SearchIndex.open(store) as idx:
        idx.refresh()
        return idx.search(query, k=k, layers=layers)


# -- units ---------------------------------------------------------------------


def test_claims_are_units_with_resolved_citations_dates_and_lines(shared: Store) -> None:
    text = (shared.memory / MELANIE).read_text(encoding="utf-8")
    info, units = units_of(MELANIE, text)
    assert (
        info is not None
        and info.keys == ("melanie", "mel")
        and info.links == ("pottery", "community-studio")
    )
    head, *body = units
    assert head.kind == "head" and head.title == "Melanie" and "Mel" in head.aliases
    race = next(u for u in body if "charity race" in u.body)
    assert race.kind == "claim"
    assert race.citations == (f"sessions/transcripts/{S2}.md#t1",)
    assert race.date == "2023-05-25"
    assert text.split("\n")[race.line - 1].startswith("- Melanie ran a charity race")
    assert "[cite:" not in race.body and race.body.startswith("Melanie")
    pottery = next(u for u in body if "destresses" in u.body)
    assert pottery.body == "Melanie destresses with pottery."  # link shown as its label
    old = next(u for u in body if "marathon" in u.body)
    assert old.superseded and not race.superseded


def test_turns_are_units_with_speaker_date_and_neighbours(shared: Store) -> None:
    rel = f"sessions/transcripts/{S1}.md"
    info, units = units_of(rel, (shared.memory / rel).read_text(encoding="utf-8"))
    assert info is not None and info.kind == "transcript" and info.date == "2023-05-08"
    third = units[2]
    assert third.kind == "turn" and third.anchor == "t3" and third.speaker == "Caroline"
    assert third.citations == (f"{rel}#t3",)
    assert third.context.startswith("Caroline 8 May 2023")
    assert "swamped" in third.context  # the previous turn finds it too


def test_code_is_never_indexed_and_malformed_files_yield_nothing(shared: Store) -> None:
    assert _search(shared, "zanzibar") == []
    pottery = "knowledge/topics/pottery.md"
    info, _ = units_of(pottery, (shared.memory / pottery).read_text(encoding="utf-8"))
    assert info is not None and info.links == ()  # the [[melanie]] in the code block
    assert units_of("knowledge/x.md", "no frontmatter here") == (None, [])
    assert units_of("knowledge/x.md", "---\n[unclosed\n---\nbody\n") == (None, [])
    assert units_of("INDEX.md", "---\nid: x\n---\n") == (None, [])


def test_human_date() -> None:
    assert human_date("2023-05-08T13:56") == "8 May 2023"
    assert human_date("nonsense") == ""


# -- ranking and queries --------------------------------------------------------


def test_question_words_are_dropped_and_terms_quoted() -> None:
    assert query_terms("When did Melanie run the charity race?") == [
        "melanie",
        "run",
        "charity",
        "race",
    ]
    assert query_terms("the who") == ["the", "who"]  # all stopwords: keep them
    assert query_terms("What did she do in May 2023?") == ["may", "2023"]
    assert fts_query(['a"b', "c"]) == '"a""b" OR "c"'


def test_title_boost_tolerates_typos_and_recency_is_small() -> None:
    assert title_boost(["melany", "race"], ["Melanie"]) == pytest.approx(1.5)
    assert title_boost(["pottery"], ["Melanie", "mel"]) == 1.0
    assert 1.0 < recency_prior("2023-05-25", "2023-05-25") <= 1.05
    assert recency_prior("2020-01-01", "2023-05-25") < recency_prior("2023-05-01", "2023-05-25")
    assert recency_prior("", "2023-05-25") == 1.0


def test_hits_carry_path_line_layer_snippet_citations_date(shared: Store) -> None:
    hits = _search(shared, "When did Melanie run the charity race?")
    best = hits[0]
    assert (best.path, best.layer, best.kind) == (MELANIE, "knowledge", "claim")
    assert best.citations == (f"sessions/transcripts/{S2}.md#t1",) and best.date == "2023-05-25"
    assert "charity race" in best.snippet and best.title == "Melanie"
    turn = next(h for h in hits if h.kind == "turn")
    assert turn.ref == f"sessions/transcripts/{S2}.md#t1" and turn.snippet.startswith("Melanie: ")
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_title_and_alias_weigh_more_than_body(shared: Store) -> None:
    hits = _search(shared, "pottery")
    assert hits[0].path == "knowledge/topics/pottery.md" and hits[0].kind == "head"
    assert _search(shared, "Mel")[0].path == MELANIE  # an alias


def test_fuzzy_title_match_boosts_a_misspelled_subject(shared: Store) -> None:
    hits = _search(shared, "Melany charity race")
    assert hits[0].path == MELANIE


def test_superseded_claims_rank_below_current_ones(shared: Store) -> None:
    hits = _search(shared, "Melanie marathon charity race", layers=["knowledge"])
    kinds = [(h.superseded, h.text[:20]) for h in hits if h.kind == "claim"]
    assert kinds[0][0] is False and any(s for s, _ in kinds)


def test_layer_filter(shared: Store) -> None:
    assert {h.layer for h in _search(shared, "support group", layers=["notes"])} == {"notes"}
    assert {h.layer for h in _search(shared, "support group", layers=["sessions"])} == {"sessions"}
    assert _search(shared, "support group", layers=[]) == []


HOSTILE = [
    'AND OR NOT "*( ^ :',
    '"unbalanced',
    "NEAR(a b, 2)",
    "col:value -x +y",
    "*",
    "''",
    "",
    "   ",
    "?!",
    "\x00\x01",
    "a" * 5000,
    "рыба 魚 🐟",
    "melanie) OR (",
    "{title}: race",
]


@pytest.mark.parametrize("query", HOSTILE)
def test_hostile_queries_never_error(shared: Store, query: str) -> None:
    assert isinstance(_search(shared, query), list)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.text(max_size=80))
def test_any_query_searches_without_error(shared: Store, query: str) -> None:
    with SearchIndex.open(shared) as idx:
        hits = idx.search(query, k=5)
    assert len(hits) <= 5


# -- refresh ---------------------------------------------------------------------


def test_refresh_is_incremental(store: Store) -> None:
    idx = SearchIndex.open(store)
    first = idx.refresh()
    assert first.rebuilt and first.added == 8 and first.units > 0
    again = idx.refresh()
    assert (again.added, again.changed, again.removed, again.units) == (0, 0, 0, 0)
    page = store.memory / MELANIE
    page.write_text(page.read_text(encoding="utf-8").replace("charity race", "fun run"))
    os.utime(store.memory / "knowledge/topics/pottery.md")  # touched, same content
    (store.memory / "notes/support/group.md").unlink()
    write_transcript(store, "2023-06-01-friends-s03", "2023-06-01T10:00", [("Mel", "Hi there")])
    stats = idx.refresh()
    assert (stats.added, stats.changed, stats.removed) == (1, 1, 1)
    assert stats.touched <= 1 and not stats.rebuilt
    assert idx.search("fun run")[0].path == MELANIE
    assert not idx.search("charity", layers=["knowledge"])
    assert not idx.search("support group", layers=["notes"])
    idx.close()


def test_deleted_or_corrupt_cache_is_rebuilt(store: Store) -> None:
    with SearchIndex.open(store) as idx:
        idx.refresh()
    db = store.cache_dir / INDEX_NAME
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    db.write_bytes(b"this is not a database" * 100)
    with SearchIndex.open(store) as idx:
        stats = idx.refresh()
        assert stats.rebuilt and stats.added == 8
        assert idx.search("charity race")


def test_older_schema_is_dropped_and_rebuilt(store: Store) -> None:
    with SearchIndex.open(store) as idx:
        idx.refresh()
    conn = sqlite3.connect(store.cache_dir / INDEX_NAME)
    conn.execute("PRAGMA user_version = 1")
    conn.close()
    with SearchIndex.open(store) as idx:
        assert idx.refresh().added == 8


def test_cache_is_git_ignored(store: Store) -> None:
    with SearchIndex.open(store) as idx:
        idx.refresh()
    assert not store.repo.is_dirty(untracked_files=True)


def test_symlinks_are_never_followed(store: Store, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("---\nid: secret\ntitle: Secret\n---\n- launch codes\n")
    os.symlink(outside / "secret.md", store.memory / "knowledge" / "topics" / "secret.md")
    os.symlink(outside, store.memory / "notes" / "linked")
    assert _search(store, "launch codes") == []


def _refresh_in_child(root: str) -> tuple[int, int]:
    with SearchIndex.open(Store.open(root)) as idx:
        stats = idx.refresh()
        return stats.added, stats.changed


def test_concurrent_refresh_from_two_processes(store: Store) -> None:
    for i in range(60):
        write_page(
            store,
            f"notes/bulk/n{i}.md",
            {"id": f"n{i}", "title": f"Note {i}", "type": "note", "updated": "2023-06-01"},
            f"- bulk fact number {i} about kayaks\n",
        )
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(2) as pool:
        results = pool.map(_refresh_in_child, [str(store.root)] * 2)
    assert all(changed == 0 for _, changed in results)
    with SearchIndex.open(store) as idx:
        assert idx.count()[0] == 68
        assert idx.refresh().added == 0
        hits = idx.search("kayaks", k=100)
    assert len({h.path for h in hits}) == 60  # every note once, none twice


# -- CLI ----------------------------------------------------------------------------


def test_cli_search_human_and_json(shared: Store) -> None:
    runner = CliRunner()
    r = runner.invoke(app, ["search", "charity race", "--store", str(shared.root), "-k", "3"])
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines()[0].startswith(f"{MELANIE}:")
    r = runner.invoke(
        app, ["search", "race", "--store", str(shared.root), "--json", "--layer", "knowledge"]
    )
    assert r.exit_code == 0
    data = json.loads(r.stdout)
    assert data["hits"] and {h["layer"] for h in data["hits"]} == {"knowledge"}
    assert set(data["hits"][0]) >= {
        "path",
        "line",
        "layer",
        "snippet",
        "citations",
        "date",
        "score",
    }


def test_cli_search_errors_are_one_line(shared: Store, tmp_path: Path) -> None:
    runner = CliRunner()
    r = runner.invoke(app, ["search", "x", "--store", str(shared.root), "--layer", "bogus"])
    assert r.exit_code == 2 and "unknown layer" in r.stderr and "Traceback" not in r.output
    r = runner.invoke(app, ["search", "x", "--store", str(tmp_path / "nowhere")])
    assert r.exit_code == 2 and r.stderr.startswith("error:")
    r = runner.invoke(app, ["search", '"((', "--store", str(shared.root), "--json"])
    assert r.exit_code == 0 and json.loads(r.stdout)["hits"] == []


TRICKY = """# Subject

## Facts

- Plain claim. [cite:1]
- Code `[cite:2] [[hidden]]` span, real [[shown]] link. [cite:1]

    indented code [cite:1] [[indented]]

```
fenced [cite:1] [[fenced]]
```

## History

### Older

- Old claim. [cite:1]
- ~~Struck~~ claim. [cite:1]

## Now

- Current again (superseded by the above). [cite:1]
"""


def _agree(rel: str, text: str) -> None:
    page = parse_page(text, rel)
    claims = {c.line: c for c in extract_claims(page)}
    info, units = units_of(rel, text)
    assert info is not None
    assert set(info.links) == {link.target.lower() for link in extract_links(page.body)}
    by_line = {u.line: u for u in units}
    assert {u.line for u in units if u.citations} <= set(claims), rel
    for line, claim in claims.items():
        assert by_line[line].superseded == claim.superseded, (rel, line)
        if {src.id for src in page.sources} & set(claim.citations):
            assert by_line[line].citations, (rel, line)


def test_claims_and_links_agree_with_the_validator() -> None:
    """The index's fast line scanner sees the claims and links memoryfs.pages.claims/links see."""
    meta = "---\nid: subject\ntitle: Subject\ntype: topic\nupdated: 2023-01-01\n"
    sources = (
        "sources:\n- id: 1\n  ref: sessions/transcripts/s.md#t1\n"
        "- id: 2\n  ref: sessions/transcripts/s.md#t2\n"
    )
    _agree("knowledge/topics/subject.md", meta + sources + "---\n" + TRICKY)
    fixtures = FIXTURES
    checked = 0
    for path in sorted(fixtures.rglob("*.md")):
        parts = path.parts
        if "memory" not in parts:
            continue
        rel = "/".join(parts[parts.index("memory") + 1 :])
        if rel.startswith(("knowledge/", "notes/", "sessions/summaries/")):
            try:
                parse_page(path.read_text(encoding="utf-8"), rel)
            except (PageError, UnicodeDecodeError):
                continue
            _agree(rel, path.read_text(encoding="utf-8"))
            checked += 1
    assert checked >= 10


def test_large_index_matches_rare_terms_and_lets_common_ones_boost(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    import memoryfs.read.search as search_mod

    turns = [("Mel", f"The weather was fine on day {i}.") for i in range(30)]
    turns += [("Mel", "A heron by the canal."), ("Mel", "The weather and a heron by the canal.")]
    write_transcript(store, "2023-06-01-birds", "2023-06-01T10:00", turns)
    monkeypatch.setattr(search_mod, "_ROW_BUDGET", 10)
    monkeypatch.setattr(search_mod, "_COMMON_CAP", 8)
    with SearchIndex.open(store) as idx:
        idx.refresh()
        match, extra, _floor = idx._selective(["weather", "heron"])
        assert match == '"heron"' and set(extra) == {"weather"}
        hits = idx.search("weather heron", k=5)
        assert [h.anchor for h in hits[:2]] == ["t32", "t31"]  # both words beat the rare one alone
        # only common words: the newest rows holding about _ROW_BUDGET matches
        match, extra, floor = idx._selective(["weather", "fine"])
        assert (match, extra) == ('"weather" OR "fine"', {}) and floor > 0
        hits = idx.search("weather fine", k=30)
        assert 0 < len(hits) <= 12
        assert idx.search("weather zzzunknown", k=3)  # nothing rare matches: any word runs


def test_inbound_link_counts_follow_edits(store: Store) -> None:
    with SearchIndex.open(store) as idx:
        idx.refresh()
        inbound = {f.path: f.inbound for f in idx.files()}
        assert inbound["knowledge/topics/pottery.md"] == 1
        assert inbound["knowledge/places/community-studio.md"] == 1
        assert inbound[MELANIE] == 0
        picked = {f.path for f in idx.candidates(10)}
        assert "knowledge/preferences/figures.md" in picked and MELANIE in picked
        (store.memory / MELANIE).unlink()
        idx.refresh()
        assert {f.path: f.inbound for f in idx.files()}["knowledge/topics/pottery.md"] == 0
