"""The validation gate's page keys in SQLite (``dream.gates.pagekeys``): the same
findings as the keys held in a dict (``memoryfs.validate.keys.KnownPages``), warm or
cold, and a cache that cannot be read is rebuilt, never a failed gate."""

from __future__ import annotations

import sqlite3
import subprocess
from contextlib import closing
from pathlib import Path

import pytest
from dream_fixtures import cache_behind_symlink, damage_cache
from read_fixtures import write_transcript

from dream.gates import source_entries
from dream.gates.pagekeys import CACHE_NAME, PageKeyCache, with_page_keys
from dream.wiki.cited_names import CitedNames
from memoryfs.errors import PageError
from memoryfs.index.facts_cache import IndexCache
from memoryfs.pages.page import parse_page
from memoryfs.store.store import Store, init_store
from memoryfs.validate.findings import Finding
from memoryfs.validate.keys import KnownPages, OtherPages, PageKeys
from memoryfs.validate.rules import page_keys, validate_files, validate_store


def _page(pid: str, aliases: tuple[str, ...] = (), body: str = "") -> str:
    listed = "".join(f"\n- {a}" for a in aliases)
    meta = f"id: {pid}\ntitle: {pid.title()}\ntype: person\nupdated: '2026-01-05'"
    return f"---\n{meta}\naliases:{listed or ' []'}\n---\n{body}\n"


# (Bodies are lines of links: a sentence would be an uncited line, MF110.)
# The base: ids that differ in case only, an alias that is another page's id, a page
# linking by stem, by alias, by id with a section, through an unsafe target, and a
# page that does not parse (it takes no part, as an unreadable page never did).
BASE = {
    "knowledge/people/ana.md": _page("ana", ("Annie",)),
    "knowledge/people/ben.md": _page("ben", (), "See also: [[Annie]] and [[cy#work]]"),
    "knowledge/people/cy.md": _page("cy", ("Cyrus",), "See [[../etc/passwd]] and [[dora]]."),
    "knowledge/people/dora.md": _page("dora", ("ANA",), "Related: [[Ben]]"),
    "knowledge/people/Eve.md": _page("Eve", (), "See also: [[eve]]"),
    "knowledge/orgs/eve.md": _page("eve", (), "See also: [[Eve]]"),
    "notes/fay.md": _page("fay", (), "About: [[ghost]]"),  # dangling in the base already
    "notes/hal.md": _page("hal", ("EVE",)),  # the id of Eve or of eve?
    "notes/broken.md": "---\nid: [broken\n---\n",
}
# The run: ana deleted (ben's [[Annie]] and dora's alias owner change), a new page
# whose id another page has, one whose alias is an unchanged page's id, and cy renamed.
CHANGES: dict[str, str | None] = {
    "knowledge/people/ana.md": None,
    "knowledge/orgs/ben.md": _page("ben", (), "See also: [[cyrus]]"),
    "knowledge/people/gus.md": _page(
        "gus", ("Fay", "dora", "eve"), "See also: [[Dora]] and [[EVE]]"
    ),
    "knowledge/people/cy.md": _page("cy", (), "See [[dora]]."),
}


def _git(root: Path, *args: str) -> str:
    out = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True)
    return out.stdout.strip()


@pytest.fixture
def staged(tmp_path: Path) -> tuple[Store, str, list[str]]:
    """A store whose HEAD holds ``BASE`` and whose tree holds ``CHANGES`` on top; the
    changed paths (relative to the root)."""
    store = init_store(tmp_path / "store", "dana", "atlas")
    for rel, text in BASE.items():
        (store.root / "memory" / rel).parent.mkdir(parents=True, exist_ok=True)
        (store.root / "memory" / rel).write_text(text)
    _git(store.root, "add", "-A")
    _git(store.root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base")
    base = _git(store.root, "rev-parse", "HEAD")
    for rel, changed in CHANGES.items():
        path = store.root / "memory" / rel
        if changed is None:
            path.unlink()
        else:
            path.write_text(changed)
    return store, base, [f"memory/{rel}" for rel in CHANGES]


def _files(changed: list[str]) -> list[str]:
    rels = [p.removeprefix("memory/") for p in changed if p.removeprefix("memory/") in BASE]
    rels = [r for r in rels if CHANGES[r] is not None] + [
        p.removeprefix("memory/") for p in changed if p.removeprefix("memory/") not in BASE
    ]
    return [*rels, "deletions.jsonl"]


def _known(store: Store, changed: list[str]) -> dict[str, PageKeys]:
    """The unchanged pages' keys in a dict, in ls-tree order (unreadable ones left out)."""
    listing = _git(store.root, "ls-tree", "-r", "--name-only", "HEAD", "--", "memory/")
    others = {}
    for path in listing.splitlines():
        rel = path.removeprefix("memory/")
        if path in changed or not rel.startswith(("knowledge/", "notes/")):
            continue
        try:
            page = parse_page((store.root / path).read_text(), rel)
        except PageError:
            continue
        others[rel] = page_keys(page)
    return others


def _with_dict(store: Store, changed: list[str]) -> list[Finding]:
    return validate_files(store, store.root, _files(changed), _known(store, changed))


def _with_sqlite(store: Store, base: str, changed: list[str]) -> list[Finding]:
    def work(keys: PageKeyCache) -> list[Finding]:
        keys.list_tree(store, base, store.root, set(changed))
        found = validate_files(store, store.root, _files(changed), keys)
        keys.save()
        return found

    return with_page_keys(store, work)


def test_sqlite_keys_give_the_findings_of_keys_in_a_dict(
    staged: tuple[Store, str, list[str]],
) -> None:
    store, base, changed = staged
    expected = _with_dict(store, changed)
    codes = {(f.path.removeprefix("memory/"), f.code) for f in expected}
    assert {
        ("knowledge/people/ben.md", "MF201"),  # [[Annie]]: ana is gone
        ("knowledge/people/ben.md", "MF007"),  # unchanged, its id taken by a new page
        ("knowledge/orgs/ben.md", "MF007"),
        ("knowledge/orgs/ben.md", "MF201"),  # cy dropped its alias Cyrus
        ("knowledge/people/gus.md", "MF008"),  # alias 'Fay' is fay's id
        ("notes/hal.md", "MF008"),  # unchanged, read for it
        ("notes/fay.md", "MF201"),  # dangling in the base: still reported
    } <= codes, codes
    cold = _with_sqlite(store, base, changed)
    warm = _with_sqlite(store, base, changed)  # every page's keys from the cache now
    assert cold == expected and warm == expected


def test_sqlite_keys_answer_as_keys_in_a_dict(staged: tuple[Store, str, list[str]]) -> None:
    store, base, changed = staged
    names = ["Ben", "ben", "ANNIE", "annie", "Cyrus", "cyrus", "eve", "Eve", "EVE", "dora", "x"]

    def answers(others: OtherPages) -> list[object]:
        out: list[object] = [
            others.with_ids({"eve", "Eve", "dora"}),
            others.with_ids({"eve", "fay"}, lower=True),
            [others.known(n) for n in names],
            others.duplicated({"ben"}),
            others.duplicated(set()),
            others.aliased({"cyrus"}),
            others.aliased(set()),
            others.dangling(set()),
            others.dangling({"ghost"}),
            "knowledge/people/dora.md" in others,
        ]
        others.discard(["knowledge/people/dora.md", "notes/fay.md"])
        out += [others.dangling(set()), others.known("dora"), others.aliased(set())]
        return out + ["knowledge/people/dora.md" in others]

    expected = answers(KnownPages(_known(store, changed)))
    assert expected[7] == {"knowledge/people/ben.md", "notes/fay.md"}  # [[Annie]], [[ghost]]
    assert expected[10] == {"knowledge/people/ben.md"}

    def work(keys: PageKeyCache) -> list[object]:
        keys.list_tree(store, base, store.root, set(changed))
        return answers(keys)

    assert with_page_keys(store, work) == expected


def test_the_incremental_findings_are_the_full_ones(
    staged: tuple[Store, str, list[str]],
) -> None:
    store, base, changed = staged
    full = {
        (f.path, f.line, f.code)
        for f in validate_store(store)
        if f.code in {"MF007", "MF008", "MF201"} and "broken" not in f.path
    }
    found = {(f.path, f.line, f.code) for f in _with_sqlite(store, base, changed)}
    assert found == full


@pytest.mark.parametrize("damage", ["garbage", "empty", "other-version", "missing"])
def test_a_cache_that_cannot_be_read_is_rebuilt(
    staged: tuple[Store, str, list[str]], damage: str
) -> None:
    store, base, changed = staged
    expected = _with_sqlite(store, base, changed)
    path = store.cache_dir / CACHE_NAME
    damage_cache(path, damage)
    assert _with_sqlite(store, base, changed) == expected
    with closing(sqlite3.connect(path)) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == 1
        assert db.execute("SELECT count(*) FROM pages").fetchone()[0] > 0


def test_a_symlinked_cache_folder_is_never_written_through(
    staged: tuple[Store, str, list[str]], tmp_path: Path
) -> None:
    store, base, changed = staged
    expected = _with_dict(store, changed)
    elsewhere = cache_behind_symlink(store, tmp_path)
    assert _with_sqlite(store, base, changed) == expected
    assert not (elsewhere / CACHE_NAME).exists()


def test_old_keys_are_dropped_once_they_outnumber_the_tree(
    staged: tuple[Store, str, list[str]],
) -> None:
    store, base, changed = staged
    _with_sqlite(store, base, changed)
    path = store.cache_dir / CACHE_NAME
    with closing(sqlite3.connect(path)) as db:
        db.executemany(
            "INSERT INTO pages VALUES (?, ?, ?)", [(f"{i:040x}", "x", "x") for i in range(100)]
        )
        db.commit()
    present = [rel for rel in changed if (store.root / rel).is_file()]

    def work(keys: PageKeyCache) -> None:  # as the gate does: the changed pages learned too
        keys.list_tree(store, base, store.root, set(changed))
        keys.add_changed(store.root, present)
        keys.save()

    with_page_keys(store, work)
    with closing(sqlite3.connect(path)) as db:
        blobs = {b for (b,) in db.execute("SELECT blob FROM pages")}
    assert _git(store.root, "rev-parse", "HEAD:memory/notes/fay.md") in blobs  # the tree's
    assert {_git(store.root, "hash-object", rel) for rel in present} <= blobs  # learned
    assert not any(b.startswith("0000000000") for b in blobs)


@pytest.mark.parametrize(
    "sources",
    [
        "sources:\n- id: 1\n  ref: a.md#t1\n  hash: 0badc0de\n- id: 2\n  ref: b.md#t2\n",
        "sources:\n- id: 1\n  ref: a.md#t1\n  hash: 12345678\n- id: true\n  ref: x\n",
        "sources:\n- id: 1\n  ref: a.md#t1\n  hash: 2023-01-01\n- 7\n- id: 2\n- ref: c\n",
        "sources:\n- id: 1\n  ref: a.md#t1\n- id: 1\n  ref: b.md#t1\n  hash: null\n",
        "sources: not a list\n",
        "",
    ],
)
def test_source_entries_are_the_sources_a_page_keeps(sources: str) -> None:
    page = parse_page(f"---\nid: p\n{sources}---\nbody\n", "knowledge/p.md")
    assert list(source_entries(page)) == [(s.id, s.ref, s.hash) for s in page.sources]


def test_the_run_caches_keep_a_bounded_sqlite_page_cache(tmp_path: Path) -> None:
    """The SQLite files a run opens (page keys, turn keys, index facts) cache 256 KiB of
    pages each, not SQLite's 2 MiB: a cache that grows with its file grew a run's peak
    memory with the store (issue 3)."""
    store = init_store(tmp_path / "s", "dana", "atlas")

    def sizes(db: sqlite3.Connection) -> tuple[int, int]:
        return db.execute("PRAGMA cache_size").fetchone()[0], db.execute(
            "PRAGMA temp.cache_size"
        ).fetchone()[0]

    assert with_page_keys(store, lambda keys: sizes(keys.db)) == (-256, -256)
    turns = CitedNames(lambda rel: None, store.cache_dir / "turnkeys-test.sqlite")
    try:
        assert turns._db is not None and sizes(turns._db) == (-256, -256)
    finally:
        turns.close()
    index = IndexCache(store)
    try:
        assert index.on_disk and sizes(index.db) == (-256, -256)
    finally:
        index.close()


def _cited_note(nid: str, turn: str, digest: str, body: str = "") -> str:
    meta = f"id: {nid}\ntitle: {nid}\ntype: topic\nupdated: '2026-01-12'"
    source = (
        f"  - id: 1\n    ref: sessions/transcripts/2026-01-12-lisbon.md#{turn}\n"
        f"    at: 2026-01-12\n    hash: '{digest}'\n"
    )
    return f"---\n{meta}\nsources:\n{source}---\n{body or nid} [cite:1].\n"


def test_a_run_validated_in_slices_gives_the_findings_of_one_pass(
    staged: tuple[Store, str, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full run is validated ``SLICE_FILES`` at a time (issue 3: a flat peak): the pages
    of the other slices take part through their keys, each transcript is read once, and
    the findings are those of validating every file at once."""
    from dream.gates import validation
    from dream.landing.staging import Change
    from memoryfs.store.hashing import turn_hash

    store, _, changed = staged
    texts = ["Hi.", "The conference is in Lisbon in May.", "We fly on Friday."]
    write_transcript(store, "2026-01-12-lisbon", "2026-01-12T10:00", [("dana", t) for t in texts])
    _git(store.root, "add", "memory/sessions")
    _git(store.root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "talk")
    base = _git(store.root, "rev-parse", "HEAD")
    good, fly = turn_hash(texts[1]), turn_hash(texts[2])
    run = {  # new pages citing one transcript from several slices; an id two of them take;
        # a link that only a page of another slice resolves (its alias)
        "notes/a/dup.md": _cited_note("dup", "t2", good),
        "notes/b/dup.md": _cited_note("dup", "t3", fly),
        "notes/c/stale.md": _cited_note("stale", "t2", fly),  # MF109
        "notes/d/gone.md": _cited_note("gone", "t9", good),  # MF108
        "knowledge/people/ivy.md": _page("ivy", ("Ivy Lee",), "Ivy flies [[dup]]."),
        "notes/e/trip.md": _cited_note("trip", "t3", fly, "With [[Ivy Lee]] and [[nobody]]"),
        # ids equal but for case, in different slices, and an alias that is both of them
        "notes/f/kai.md": _cited_note("kai", "t2", good),
        "notes/g/Kai.md": _cited_note("Kai", "t3", fly),
        "knowledge/people/lu.md": _page("lu", ("KAI",)),
    }
    for rel, text in run.items():
        (store.memory / rel).parent.mkdir(parents=True, exist_ok=True)
        (store.memory / rel).write_text(text)
    changes = [
        Change("D" if CHANGES.get(p.removeprefix("memory/"), "") is None else "M", p)
        if p.removeprefix("memory/") in BASE
        else Change("A", p)
        for p in changed
    ] + [Change("A", f"memory/{rel}") for rel in run]

    def problems(slice_files: int) -> list[tuple[str, int, str, str]]:
        monkeypatch.setattr(validation, "SLICE_FILES", slice_files)
        report = validation.validate_stage(store, store.root, changes, base=base)
        return [(p.path, p.line, p.code, p.message) for p in report.problems]

    whole = problems(1_000)
    codes = {(path.removeprefix("memory/"), code) for path, _, code, _ in whole}
    assert {
        ("notes/a/dup.md", "MF007"),
        ("notes/b/dup.md", "MF007"),
        ("notes/c/stale.md", "MF109"),
        ("notes/d/gone.md", "MF108"),
        ("notes/e/trip.md", "MF201"),  # [[nobody]]; [[Ivy Lee]] resolves
        ("knowledge/orgs/ben.md", "MF007"),
        ("knowledge/people/gus.md", "MF008"),
    } <= codes, codes
    assert not any("Ivy Lee" in message for *_, message in whole)
    alias = [m for path, _, code, m in whole if code == "MF008" and path.endswith("/lu.md")]
    assert len(alias) == 1 and alias[0].startswith("alias 'KAI' is the id of memory/notes/f/kai.md")
    for size in (1, 2, 3, 4, 5):
        assert problems(size) == whole, size
    # and what ``memoryfs validate`` says of the whole tree
    from memoryfs.validate.rules import validate_store

    tree = {(f.path, f.line, f.code, f.message) for f in validate_store(store)}
    ours = [(path, line, code, m) for path, line, code, m in whole if path[7:] in run]
    assert ours and all(
        any(m.startswith(f[3]) and f[:3] == tuple(p) for f in tree) for *p, m in ours
    )
