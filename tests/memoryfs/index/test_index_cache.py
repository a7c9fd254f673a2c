"""The index facts cache: same bytes with and without it, and it never serves stale facts."""

from __future__ import annotations

from pathlib import Path

import paths

from memoryfs.index.index_md import render_index, render_sessions_index, session_rows, write_indexes
from memoryfs.ingest import ingest
from memoryfs.store.store import Store, init_store

SAMPLE = sorted(paths.SAMPLE.glob("*.md"))

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


def test_rows_lost_behind_the_caches_back_are_noticed(tmp_path: Path) -> None:
    """Row counts that are not those the cache recorded: it starts anew, not trusting them."""
    import sqlite3

    store = _store(tmp_path)
    expected = render_index(store)
    for table in ("page", "edge", "session", "stats"):
        db = sqlite3.connect(store.cache_dir / "index-facts.sqlite")
        db.execute(f"DELETE FROM {table} WHERE rel = (SELECT MIN(rel) FROM {table})")
        db.commit()
        db.close()
        assert render_index(store) == expected, table


def test_an_old_cache_version_is_started_anew(tmp_path: Path) -> None:
    import sqlite3

    store = _store(tmp_path)
    expected = render_index(store)
    (store.cache_dir / "index-facts.sqlite").unlink()
    db = sqlite3.connect(store.cache_dir / "index-facts.sqlite")
    db.execute("CREATE TABLE stats (rel TEXT PRIMARY KEY, size, mtime, ino, key)")
    db.execute("PRAGMA user_version = 2")
    db.commit()
    db.close()
    assert render_index(store) == expected


def test_a_linked_or_locked_cache_is_not_used(tmp_path: Path) -> None:
    """A cache file that is a symlink is never written through, and one another pass holds
    locked is not waited on past its timeout: both passes work in memory, same bytes."""
    import sqlite3

    store = _store(tmp_path)
    expected = render_index(store)
    cache = store.cache_dir / "index-facts.sqlite"
    outside = tmp_path / "outside.sqlite"
    cache.rename(outside)
    before = outside.read_bytes()
    cache.symlink_to(outside)
    assert render_index(store) == expected
    assert outside.read_bytes() == before and cache.is_symlink()
    cache.unlink()
    outside.rename(cache)
    holder = sqlite3.connect(cache, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        assert render_index(store) == expected
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert cache.is_file()


def test_the_sessions_index_is_compared_and_written_a_line_at_a_time(tmp_path: Path) -> None:
    """Rewritten exactly when its text (as ``read_text`` reads it) differs: a cut file, a
    line too many, one changed character, bytes that are not UTF-8; left alone (and not
    reported) when it reads the same, CRLF line ends included."""
    store = _store(tmp_path)
    write_indexes(store)
    path = store.memory / "sessions/index.md"
    want = render_sessions_index(session_rows(store))
    assert path.read_text() == want and write_indexes(store) == []
    for damage in (
        want.encode()[:-40],
        want.encode() + b"| extra |\n",
        want.replace("| id |", "| iD |", 1).encode(),
        want.encode()[:-1],
        b"\xff" + want.encode()[1:],
    ):
        path.write_bytes(damage)
        assert write_indexes(store) == ["sessions/index.md"]
        assert path.read_bytes() == want.encode()
    path.write_bytes(want.replace("\n", "\r\n").encode())
    assert write_indexes(store) == []  # the same text, as read
    assert path.read_bytes() == want.replace("\n", "\r\n").encode()


def test_index_pages_rank_by_links_then_newest_then_title_as_python_folds_it(
    tmp_path: Path,
) -> None:
    """Within a section: most inbound links first, then the newest ``updated`` (its numbers
    compared), then the title lower-cased as Python does (SQLite's lower() leaves É as it
    is); an empty title is the id."""
    store = init_store(tmp_path / "s", "dana", "atlas")
    people = store.memory / "knowledge/people"
    people.mkdir(parents=True, exist_ok=True)
    pages = {  # id: (title, updated, links out)
        "p1": ("Émile", "2026-01-05", ""),
        "p2": ("éa", "2026-01-05", ""),
        "p3": ("Zed", "2026-01-05", ""),
        "p4": ("", "2026-01-05", ""),
        "p5": ("Old", "2026-1-9", ""),
        "p6": ("New", "2026-01-10", ""),
        "p7": ("Linked", "2020-01-01", ""),
        "p8": ("Linker", "2026-01-05", "[[p7]]"),
    }
    for pid, (title, updated, body) in pages.items():
        (people / f"{pid}.md").write_text(
            f"---\nid: {pid}\ntitle: '{title}'\ntype: person\nupdated: '{updated}'\n---\n\n{body}\n"
        )
    lines = [line for line in render_index(store).splitlines() if line.startswith("- [")]
    order = [line.split("](knowledge/people/")[1].split(".md")[0] for line in lines]
    # p7 has a link; then by date as numbers (2026-01-10, 2026-1-9, 2026-01-05: as strings
    # 2026-1-9 would come first); the 2026-01-05 pages by folded title: "linker" < "p4" (no
    # title) < "zed" < "éa" < "émile" (SQLite's lower() would put "Émile" before "éa")
    assert order == ["p7", "p6", "p5", "p8", "p4", "p3", "p2", "p1"]
