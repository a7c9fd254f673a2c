"""Refresh sees every change to memory/ at once: atomic and in-place writes, renames,
removals, symlinks, with or without a commit; folder stamps stay true to the rows,
also when refreshers interleave."""

from __future__ import annotations

import os
import random
import shutil
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from read_fixtures import build_store, write_page

import memoryfs.index.refresh as refresh_mod
from memoryfs.read.search import INDEX_NAME, SearchIndex
from memoryfs.store.atomic import atomic_write_text
from memoryfs.store.scan import FileBytes, inode_key, list_folder, name_bucket, walk
from memoryfs.store.store import Store

MELANIE = "knowledge/people/melanie.md"
POTTERY = "knowledge/topics/pottery.md"
TICK = 0.02  # longer than a file-system clock tick


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return build_store(tmp_path / "store")


@pytest.fixture
def no_racy(monkeypatch: pytest.MonkeyPatch) -> None:
    """Record every stamp at once (the tests wait a clock tick between writes instead)."""
    monkeypatch.setattr(refresh_mod, "_RACY_NS", -(10**18))


def _refreshed(idx: SearchIndex) -> refresh_mod.RefreshStats:
    stats = idx.refresh()
    time.sleep(TICK)  # the next write gets a later time stamp than anything seen here
    return stats


def _paths(idx: SearchIndex, query: str) -> set[str]:
    return {h.path for h in idx.search(query, k=50)}


def _edit_in_place(path: Path, old: str, new: str, keep_mtime: bool = False) -> None:
    """Rewrite a file through the same inode (an editor that truncates and writes)."""
    before = os.stat(path)
    with open(path, "r+", encoding="utf-8") as fh:
        text = fh.read()
        assert old in text
        fh.seek(0)
        fh.write(text.replace(old, new))
        fh.truncate()
    if keep_mtime:
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
        after = os.stat(path)
        assert (after.st_mtime_ns, after.st_size, after.st_ino) == (
            before.st_mtime_ns,
            before.st_size,
            before.st_ino,
        )


def _add_remove_rename(store: Store) -> None:
    """A page added in a new folder, a folder removed, a page renamed: two added, two gone."""
    write_page(
        store,
        "knowledge/topics/deep/kayak.md",
        {"id": "kayak", "title": "Kayak", "type": "topic", "updated": "2023-06-01"},
        "- Sea kayaking on Sundays.\n",
    )
    shutil.rmtree(store.memory / "notes" / "support")
    studio = store.memory / "knowledge/places/community-studio.md"
    studio.rename(studio.with_name("studio.md"))


def _folder_stamps(store: Store) -> dict[str, tuple[int, int]]:
    """What the index records per folder and bucket, checked against its rows."""
    conn = sqlite3.connect(store.cache_dir / INDEX_NAME)
    try:
        recorded = {str(p): (int(n), int(x)) for p, n, x in conn.execute("SELECT * FROM dirs")}
        buckets = {
            (str(f), int(b)): (int(n), int(x), int(xi))
            for f, b, n, x, xi in conn.execute("SELECT folder, b, n, x, xi FROM buckets")
        }
        expected: dict[str, tuple[int, int]] = {}
        expected_buckets: dict[tuple[str, int], tuple[int, int, int]] = {}
        for path, folder, bucket, stamp, ikey in conn.execute(
            "SELECT path, folder, bucket, stamp, ikey FROM files"
        ):
            assert (folder, bucket) == (path.rpartition("/")[0], name_bucket(path.split("/")[-1]))
            n, x = expected.get(folder, (0, 0))
            expected[folder] = (n + 1, x ^ int(stamp))
            n, x, xi = expected_buckets.get((folder, bucket), (0, 0, 0))
            expected_buckets[(folder, bucket)] = (n + 1, x ^ int(stamp), xi ^ int(ikey))
    finally:
        conn.close()
    assert recorded == expected and buckets == expected_buckets
    return recorded


def test_every_kind_of_change_is_seen_by_the_next_refresh_without_a_commit(
    store: Store, no_racy: None
) -> None:
    with SearchIndex.open(store) as idx:
        first = _refreshed(idx)
        assert first.added == 8 and first.scanned == 8
        quiet = _refreshed(idx)
        assert (quiet.scanned, quiet.compared, quiet.added, quiet.changed) == (8, 0, 0, 0)

        # Atomic replace (what memoryfs, Dream and git do).
        page = store.memory / MELANIE
        atomic_write_text(page, page.read_text(encoding="utf-8").replace("charity race", "fun run"))
        stats = _refreshed(idx)
        assert (stats.changed, stats.compared) == (1, 1)  # only knowledge/people compared
        assert _paths(idx, "fun run") == {MELANIE}

        # In place, same size, mtime put back: only the ctime moved.
        _edit_in_place(store.memory / POTTERY, "Thursdays", "Quokkaday", keep_mtime=True)
        stats = _refreshed(idx)
        assert stats.changed == 1 and _paths(idx, "Quokkaday") == {POTTERY}
        assert POTTERY not in _paths(idx, "Thursdays")

        # Added in a new folder, a folder removed, a file renamed.
        _add_remove_rename(store)
        stats = _refreshed(idx)
        assert (stats.added, stats.changed, stats.removed) == (2, 0, 2)
        assert _paths(idx, "kayaking") == {"knowledge/topics/deep/kayak.md"}
        assert not idx.search("support group", layers=["notes"])
        assert _paths(idx, "electric kilns") == {"knowledge/places/studio.md"}
        assert idx.count()[0] == 8


def test_two_files_swapping_names_are_both_reindexed(store: Store, no_racy: None) -> None:
    a = store.memory / "knowledge/preferences/figures.md"
    b = write_page(
        store,
        "knowledge/preferences/tables.md",
        {"id": "tables", "title": "Tables", "type": "preference", "updated": "2023-05-08"},
        "- Caroline wants tables as Markdown.\n",
    )
    with SearchIndex.open(store) as idx:
        _refreshed(idx)
        tmp = a.with_name("swap.tmp")
        a.rename(tmp)
        b.rename(a)
        tmp.rename(b)
        stats = _refreshed(idx)
        assert stats.changed == 2
        assert _paths(idx, "Markdown") == {"knowledge/preferences/figures.md"}
        assert _paths(idx, "PDF") == {"knowledge/preferences/tables.md"}


def test_a_touched_file_is_hashed_not_reindexed(store: Store, no_racy: None) -> None:
    with SearchIndex.open(store) as idx:
        _refreshed(idx)
        os.utime(store.memory / POTTERY)
        stats = _refreshed(idx)
        assert (stats.touched, stats.changed, stats.units) == (1, 0, 0)
        assert _refreshed(idx).compared == 0


def test_full_refresh_compares_every_file(store: Store, no_racy: None) -> None:
    with SearchIndex.open(store) as idx:
        _refreshed(idx)
        stats = idx.refresh(full=True)
        assert stats.full and stats.compared == stats.scanned == 8
        assert (stats.added, stats.changed, stats.removed, stats.touched) == (0, 0, 0, 0)


def test_a_file_changed_within_the_clock_tick_is_read_again(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Git's racy-timestamp rule: a stamp taken within ``_RACY_NS`` of its change may not
    move on the next change (same clock tick), so it is recorded as unknown (0)."""
    with SearchIndex.open(store) as idx:
        idx.refresh()  # the fixture's files are seconds old at most: all recorded as 0
        conn = sqlite3.connect(store.cache_dir / INDEX_NAME)
        stamps = dict(conn.execute("SELECT path, stamp FROM files").fetchall())
        assert set(stamps.values()) == {0}
        again = idx.refresh()
        assert again.compared == 8 and (again.changed, again.touched) == (0, 0)
        # Changed at once, keeping size and mtime (maybe within the very same tick).
        _edit_in_place(store.memory / POTTERY, "Thursdays", "Quokkaday", keep_mtime=True)
        assert idx.refresh().changed == 1 and _paths(idx, "Quokkaday") == {POTTERY}
        # Seconds later the real stamps are recorded and a quiet refresh compares nothing.
        later = time.time_ns() + 3 * 10**9
        monkeypatch.setattr(refresh_mod, "_clock", lambda: later)
        assert idx.refresh().touched == 8
        assert 0 not in dict(conn.execute("SELECT path, stamp FROM files").fetchall()).values()
        assert idx.refresh().compared == 0
        conn.close()
        _folder_stamps(store)


def _race_first_read(
    monkeypatch: pytest.MonkeyPatch, target: str, meanwhile: Callable[[], None]
) -> None:
    """Refresher A reads ``target``; before it commits, ``meanwhile`` runs (refresher B)."""
    real = refresh_mod.read_file
    state = {"raced": False}

    def racing_read(root: Path, rel: str, limit: int) -> FileBytes | None:
        got = real(root, rel, limit)
        if rel == target and not state["raced"]:
            state["raced"] = True
            meanwhile()
        return got

    monkeypatch.setattr(refresh_mod, "read_file", racing_read)


def test_a_slow_refresher_installing_an_older_version_is_corrected_next_time(
    store: Store, no_racy: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reads version 1; the file becomes version 2 and B indexes it; then A commits
    version 1 over it. A's row carries version 1's stamp, so the next refresh reads again."""
    with SearchIndex.open(store) as idx:
        _refreshed(idx)
    page = store.memory / POTTERY
    atomic_write_text(page, page.read_text(encoding="utf-8").replace("Thursdays", "Mondays"))

    def b_refreshes() -> None:
        time.sleep(TICK)
        atomic_write_text(page, page.read_text(encoding="utf-8").replace("Mondays", "Fridays"))
        with SearchIndex.open(store) as other:
            assert other.refresh().changed == 1  # B indexes version 2
            assert _paths(other, "Fridays") == {POTTERY}

    _race_first_read(monkeypatch, POTTERY, b_refreshes)
    with SearchIndex.open(store) as idx:
        assert idx.refresh().changed == 1  # A installs version 1 over version 2
        assert _paths(idx, "Mondays") == {POTTERY}
        _folder_stamps(store)
        stats = idx.refresh()
        assert stats.changed == 1 and stats.compared >= 1
        assert _paths(idx, "Fridays") == {POTTERY} and not _paths(idx, "Mondays")


def test_a_file_another_refresher_indexed_meanwhile_is_not_counted_again(
    store: Store, no_racy: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A and B both find a new file; B indexes it first with another stamp (its clock
    said racy); A, with the same content, only moves the stamp: nothing added or changed
    twice (two processes refreshing a fresh store at once found this under load)."""
    with SearchIndex.open(store) as idx:
        _refreshed(idx)
    new = "notes/bulk/kayak.md"
    write_page(store, new, {"id": "kayak", "title": "Kayak", "type": "note"}, "- kayaks\n")

    def b_refreshes() -> None:
        monkeypatch.setattr(refresh_mod, "_RACY_NS", 10**18)  # B records stamp 0
        with SearchIndex.open(store) as other:
            assert other.refresh().added == 1
        monkeypatch.setattr(refresh_mod, "_RACY_NS", -(10**18))

    _race_first_read(monkeypatch, new, b_refreshes)
    with SearchIndex.open(store) as idx:
        stats = idx.refresh()
        assert (stats.added, stats.changed, stats.touched) == (0, 0, 1)
        assert _paths(idx, "kayaks") == {new}
        _folder_stamps(store)
        assert idx.refresh().compared == 0  # A's stamp stands: nothing to read again


@pytest.mark.parametrize("quick", [False, True])
def test_folder_stamps_stay_true_to_the_rows_through_random_changes(
    store: Store, no_racy: None, quick: bool
) -> None:
    """Quick refreshes get only changes of names and inodes (what they promise to see)."""
    rng = random.Random(7)
    ops = ["add", "edit", "remove", "rename"] + ([] if quick else ["inplace", "touch"])
    with SearchIndex.open(store) as idx:
        _refreshed(idx)
        for round_ in range(12):
            files = [
                f.rel + "/" + n
                for f in walk(store.memory, refresh_mod.WALK_DIRS)
                for n, _, _ in f.files
            ]
            for _ in range(3):
                op = rng.choice(ops)
                rel = rng.choice(files) if files else ""
                path = store.memory / rel
                if op == "add" or not files:
                    folder = rng.choice(["notes/a", "notes/b/c", "knowledge/topics"])
                    write_page(
                        store,
                        f"{folder}/r{round_}-{rng.randrange(10**6)}.md",
                        {"id": f"r{round_}", "title": "R", "type": "note", "updated": "2023-06-01"},
                        f"- random fact {rng.randrange(10**6)}\n",
                    )
                elif not path.exists():
                    continue
                elif op == "edit":
                    atomic_write_text(path, path.read_text(encoding="utf-8") + "- more.\n")
                elif op == "inplace":
                    with open(path, "a", encoding="utf-8") as fh:
                        fh.write("- appended in place.\n")
                elif op == "remove":
                    path.unlink()
                elif op == "rename":
                    path.rename(path.with_name(f"moved-{round_}-{path.name}"))
                else:
                    os.utime(path)
            stats = idx.refresh(max_stale=3600 if quick else None)
            assert stats.quick == quick
            time.sleep(TICK)
            _folder_stamps(store)
            check = idx.refresh(full=True)
            assert (check.added, check.changed, check.removed, check.touched) == (0, 0, 0, 0)
            indexed = {f.path for f in idx.files()}
            on_disk = {
                f"{f.rel}/{n}"
                for f in walk(store.memory, refresh_mod.WALK_DIRS)
                for n, _, _ in f.files
            }
            assert indexed == on_disk


def test_a_file_or_folder_replaced_by_a_symlink_drops_out(
    store: Store, no_racy: None, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "group.md").write_text("---\nid: secret\ntitle: Secret\n---\n- launch codes\n")
    with SearchIndex.open(store) as idx:
        _refreshed(idx)
        (store.memory / POTTERY).unlink()
        os.symlink(outside / "group.md", store.memory / POTTERY)
        shutil.rmtree(store.memory / "notes" / "support")
        os.symlink(outside, store.memory / "notes" / "support")
        stats = _refreshed(idx)
        assert stats.removed == 2 and stats.added == 0
        assert not idx.search("launch codes") and POTTERY not in _paths(idx, "Thursdays")
        assert not idx.search("support group", layers=["notes"])


def test_the_threaded_walk_sees_what_the_sequential_one_sees_in_the_same_order(
    store: Store,
) -> None:
    for i in range(30):
        write_page(
            store,
            f"notes/n{i % 7}/deep{i % 3}/x{i}.md",
            {"id": f"x{i}", "title": f"X {i}", "type": "note", "updated": "2023-06-01"},
            f"- fact {i}\n",
        )
    (store.memory / "notes" / "n1" / "not-markdown.txt").write_text("ignored")
    (store.memory / "notes" / "n1" / ".hidden.md").write_text("ignored")
    one = walk(store.memory, refresh_mod.WALK_DIRS, workers=1)
    four = walk(store.memory, refresh_mod.WALK_DIRS, workers=4)
    assert one == four
    assert sum(f.count for f in one) == 38
    assert all(
        not name.startswith(".") and name.endswith(".md") for f in one for name, _, _ in f.files
    )


def test_a_change_in_a_large_folder_compares_only_its_name_bucket(
    store: Store, no_racy: None
) -> None:
    for i in range(600):
        (store.memory / "notes" / "bulk").mkdir(exist_ok=True)
        (store.memory / "notes" / "bulk" / f"n{i}.md").write_text(
            f"---\nid: n{i}\ntitle: N {i}\ntype: note\nupdated: 2023-06-01\n---\n- bulk fact {i}\n"
        )
    with SearchIndex.open(store) as idx:
        _refreshed(idx)
        target = store.memory / "notes" / "bulk" / "n123.md"
        with open(target, "a", encoding="utf-8") as fh:
            fh.write("- and a walrus\n")
        stats = _refreshed(idx)
        assert stats.changed == 1 and _paths(idx, "walrus") == {"notes/bulk/n123.md"}
        bucket = name_bucket("n123.md")
        in_bucket = sum(1 for i in range(600) if name_bucket(f"n{i}.md") == bucket)
        assert stats.compared == in_bucket < 20


def test_a_quick_refresh_sees_names_at_once_and_in_place_edits_by_the_next_full_walk(
    store: Store, no_racy: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``max_stale``: the bounded-staleness rule, opt-in."""
    with SearchIndex.open(store) as idx:
        assert not _refreshed(idx).quick  # no full walk yet: the first one is full
        quiet = idx.refresh(max_stale=300)
        assert quiet.quick and (quiet.scanned, quiet.compared) == (0, 0)
        page = store.memory / MELANIE
        atomic_write_text(page, page.read_text(encoding="utf-8").replace("charity race", "fun run"))
        _add_remove_rename(store)
        stats = idx.refresh(max_stale=300)
        time.sleep(TICK)
        assert stats.quick and (stats.added, stats.changed, stats.removed) == (2, 1, 2)
        assert _paths(idx, "fun run") == {MELANIE}
        assert _paths(idx, "kayaking") == {"knowledge/topics/deep/kayak.md"}
        assert _paths(idx, "electric kilns") == {"knowledge/places/studio.md"}
        assert not idx.search("support group", layers=["notes"])
        _folder_stamps(store)
        # An in-place edit leaves its folder's times alone: a quick refresh misses it...
        _edit_in_place(store.memory / POTTERY, "Thursdays", "Quokkaday", keep_mtime=True)
        assert idx.refresh(max_stale=300).changed == 0 and not _paths(idx, "Quokkaday")
        # ...the default refresh sees it at once, and so does the first quick one after
        # ``max_stale`` seconds (it walks in full).
        later = time.time_ns() + 301 * 10**9
        monkeypatch.setattr(refresh_mod, "_clock", lambda: later)
        late = idx.refresh(max_stale=300)
        assert not late.quick and late.changed == 1 and _paths(idx, "Quokkaday") == {POTTERY}
        assert idx.refresh(max_stale=300).quick
        _folder_stamps(store)


def test_a_folder_listing_keys_names_and_inodes_like_the_index(store: Store) -> None:
    listed = list_folder(store.memory, "knowledge/preferences")
    assert listed is not None
    folder = store.memory / "knowledge/preferences"
    expected = {
        (p.name, inode_key(p.name, os.lstat(p).st_ino), name_bucket(p.name))
        for p in folder.iterdir()
        if p.suffix == ".md"
    }
    assert set(listed.files) == expected and expected
    buckets: dict[int, tuple[int, int]] = {}
    for _name, key, b in listed.files:
        n, x = buckets.get(b, (0, 0))
        buckets[b] = (n + 1, x ^ key)
    assert listed.buckets == buckets


def test_reads_walk_small_stores_in_full_and_go_quick_on_large_ones(
    store: Store, no_racy: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``refresh_for_read``: the policy search, recall and materialize share."""
    import memoryfs.read.search as search_mod

    with SearchIndex.open(store) as idx:
        assert not _refreshed(idx).quick
        # A small store: every read walks, so an in-place edit is seen at once.
        _edit_in_place(store.memory / POTTERY, "Thursdays", "Quokkaday", keep_mtime=True)
        small = idx.refresh_for_read()
        time.sleep(TICK)
        assert not small.quick and _paths(idx, "Quokkaday") == {POTTERY}
        # A large store: quick while the last walk is under READ_STALE seconds old.
        monkeypatch.setattr(search_mod, "QUICK_MIN_FILES", 1)
        page = store.memory / MELANIE
        atomic_write_text(page, page.read_text(encoding="utf-8").replace("charity race", "fun run"))
        _edit_in_place(store.memory / POTTERY, "Quokkaday", "Wombatday", keep_mtime=True)
        large = idx.refresh_for_read()
        time.sleep(TICK)
        assert large.quick and large.changed == 1 and _paths(idx, "fun run") == {MELANIE}
        assert not _paths(idx, "Wombatday")  # the in-place edit waits...
        later = time.time_ns() + int((search_mod.READ_STALE + 1) * 10**9)
        monkeypatch.setattr(refresh_mod, "_clock", lambda: later)
        late = idx.refresh_for_read()  # ...for the first read after READ_STALE seconds
        assert not late.quick and _paths(idx, "Wombatday") == {POTTERY}
