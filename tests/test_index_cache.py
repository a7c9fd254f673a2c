"""The index facts cache: same bytes with and without it, and it never serves stale facts."""

from __future__ import annotations

from pathlib import Path

from memoryfs.index import render_index, render_sessions_index, session_rows, write_indexes
from memoryfs.ingest import ingest
from memoryfs.store import Store, init_store

SAMPLE = sorted(
    (Path(__file__).resolve().parents[1] / "sample_memory" / "transcripts").glob("*.md")
)

PAGE = """---
id: ana-ruiz
title: {title}
type: person
summary: {summary}
updated: 2026-01-05
---

Works with [[bob]].
"""


def _store(tmp_path: Path) -> Store:
    store = init_store(tmp_path / "s", "dana", "atlas")
    ingest(store, SAMPLE[:3])
    (store.memory / "knowledge/people/ana-ruiz.md").write_text(
        PAGE.format(title="Ana Ruiz", summary="one")
    )
    (store.memory / "knowledge/people/bob.md").write_text(
        PAGE.format(title="Bob", summary="b")
        .replace("ana-ruiz", "bob")
        .replace("[[bob]]", "[[ana-ruiz]]")
    )
    return store


def test_cached_and_uncached_index_are_identical(tmp_path: Path) -> None:
    store = _store(tmp_path)
    cold = render_index(store)
    assert (store.cache_dir / "index-facts.sqlite").is_file()
    warm = render_index(store)
    (store.cache_dir / "index-facts.sqlite").unlink()
    assert cold == warm == render_index(store)


def test_a_changed_file_is_never_served_from_the_cache(tmp_path: Path) -> None:
    store = _store(tmp_path)
    assert "Ana Ruiz" in render_index(store)
    page = store.memory / "knowledge/people/ana-ruiz.md"
    page.write_text(PAGE.format(title="Ana Ruiz-Ortega", summary="moved to Porto"))
    text = render_index(store)
    assert "Ana Ruiz-Ortega" in text and "moved to Porto" in text
    rows_before = {r.id: r.turns for r in session_rows(store)}
    ingest(store, SAMPLE[:4])
    rows_after = {r.id: r.turns for r in session_rows(store)}
    assert len(rows_after) == len(rows_before) + 1


def test_a_corrupt_cache_is_ignored(tmp_path: Path) -> None:
    store = _store(tmp_path)
    expected = render_index(store)
    (store.cache_dir / "index-facts.sqlite").write_text("{not json")
    assert render_index(store) == expected
    write_indexes(store)
    assert (store.memory / "sessions/index.md").read_text() == render_sessions_index(
        session_rows(store)
    )


def test_a_cache_kept_elsewhere_gives_the_same_files(tmp_path: Path) -> None:
    """Dream's staged worktree keeps its cache in the live store's .memoryfs/ (the
    worktree's own is cleaned each run): same bytes cold and warm, and a symlinked
    folder or a changed page is still read afresh."""
    store = _store(tmp_path)
    write_indexes(store)
    expected = (store.memory / "INDEX.md").read_text()
    elsewhere = tmp_path / "other-cache" / "facts.sqlite"
    elsewhere.parent.mkdir()
    (store.memory / "INDEX.md").unlink()
    write_indexes(store, cache_path=elsewhere)
    assert elsewhere.is_file()
    assert (store.memory / "INDEX.md").read_text() == expected
    (store.memory / "INDEX.md").unlink()
    write_indexes(store, cache_path=elsewhere)  # warm
    assert (store.memory / "INDEX.md").read_text() == expected
    page = store.memory / "knowledge/people/ana-ruiz.md"
    page.write_text(PAGE.format(title="Ana Ruiz-Ortega", summary="moved to Porto"))
    write_indexes(store, cache_path=elsewhere)
    assert "Ana Ruiz-Ortega" in (store.memory / "INDEX.md").read_text()
    # a folder that is a symlink inside the store resolves as before
    (store.memory / "knowledge/teams").symlink_to(store.memory / "knowledge/people")
    warm = render_index(store)
    (store.cache_dir / "index-facts.sqlite").unlink()
    assert render_index(store) == warm


def test_a_stamp_whose_facts_are_gone_is_read_again(tmp_path: Path) -> None:
    import sqlite3

    store = _store(tmp_path)
    expected = render_index(store)
    db = sqlite3.connect(store.cache_dir / "index-facts.sqlite")
    db.execute("DELETE FROM facts")  # the stamps still match, their facts are gone
    db.commit()
    db.close()
    assert render_index(store) == expected


def test_batched_lookups_give_what_one_by_one_lookups_give(tmp_path: Path) -> None:
    """``pages``/``transcripts`` (facts fetched a chunk at a time) against ``page``/
    ``transcript`` one file at a time: cold, warm, with changed files, a stamp whose facts
    are gone, an unparsable page and a missing file, over more than one chunk."""
    import random
    import sqlite3

    from memoryfs import index_cache
    from memoryfs.index_cache import IndexCache

    store = _store(tmp_path)
    folder = store.memory / "notes/misc"
    folder.mkdir(parents=True)
    for i in range(40):
        (folder / f"n{i}.md").write_text(
            PAGE.format(title=f"Note {i}", summary=f"s{i}").replace("ana-ruiz", f"n{i}")
        )
    (folder / "broken.md").write_text("no frontmatter\n")
    rels = [*store.files("knowledge"), *store.files("notes"), "notes/misc/gone.md"]
    sessions = store.files("sessions/transcripts")
    rnd = random.Random(3)
    old_chunk = index_cache._CHUNK
    index_cache._CHUNK = 7
    try:
        for round_ in range(6):
            for i in rnd.sample(range(40), 5):  # change some files
                (folder / f"n{i}.md").write_text(
                    PAGE.format(title=f"Note {i} r{round_}", summary=f"s{i}").replace(
                        "ana-ruiz", f"n{i}"
                    )
                )
            if round_ == 3:  # stamps still match, some facts are gone
                db = sqlite3.connect(store.cache_dir / "index-facts.sqlite")
                db.execute("DELETE FROM facts WHERE rowid % 2 = 0")
                db.commit()
                db.close()
            one = IndexCache(store)
            expected = {rel: f for rel in rels if (f := one.page(rel)) is not None}
            expected_t = {rel: t for rel in sessions if (t := one.transcript(rel)) is not None}
            many = IndexCache(store)
            assert many.pages(rels) == expected
            assert many.transcripts(sessions) == expected_t
            assert len(expected) == 42 and len(expected_t) == 3
            (one.save(), many.save())
    finally:
        index_cache._CHUNK = old_chunk
