"""The indexes rendered from a cache refreshed pass after pass (only changed files read)
are byte for byte those of a fresh cache and those worked out from every page parsed
whole: random edits, additions, deletions, renames, id and alias moves, broken pages."""

from __future__ import annotations

import os
import random
import shutil
import sqlite3
from pathlib import Path

import paths
import pytest
from dream_fixtures import git_out

from memoryfs.index import facts_cache
from memoryfs.index.index_md import (
    GENERATED,
    RECENT_SESSIONS,
    IndexEntry,
    SessionRow,
    inbound_links,
    render_sessions_index,
    write_indexes,
)
from memoryfs.ingest import ingest
from memoryfs.pages.listing import iter_pages
from memoryfs.pages.transcript import parse_transcript
from memoryfs.store.store import KNOWLEDGE_FOLDERS, Store, init_store

SAMPLE = sorted(paths.SAMPLE.glob("*.md"))
IDS = [f"p{i}" for i in range(14)]
# ties in case only, and in case outside ASCII (which SQLite's own lower() would not fold)
TITLES = ["", "a|b", "Zoë", "Émile", "éa", "emile", "eMILE"]
FOLDERS = [
    "knowledge/people",
    "knowledge/topics",
    "knowledge/preferences",
    "knowledge",
    "notes/p1",
    "notes/p2",
    "notes",
]


def _page(rnd: random.Random, pid: str) -> str:
    aliases = rnd.sample(["Al", "al", "P3", "Bee", "bee", "ZED", "p4", "Ünï"], rnd.randint(0, 2))
    targets = rnd.sample([*IDS, "P1", "AL", "bee", "zed", "ünï", "nobody", "P4"], rnd.randint(0, 5))
    body = " ".join(f"[[{t}]]" if rnd.random() < 0.7 else f"[[{t}|x]]" for t in targets)
    kind = rnd.choice(["person", "topic", "preference"])
    day = rnd.choice(["2026-01-05", "2026-02-01", "2025-12-31", "", "2026-02"])
    return (
        f"---\nid: {pid}\ntitle: {rnd.choice(TITLES + [pid.upper()])}\ntype: {kind}\n"
        f"aliases: [{', '.join(aliases)}]\nsummary: s {rnd.randint(0, 3)}  x\n"
        f"updated: '{day}'\n---\n\n{body}\n"
    )


def _edit(store: Store, rnd: random.Random) -> list[Path]:
    """Random edits; the files written."""
    written: list[Path] = []
    for _ in range(rnd.randint(1, 6)):
        files = [*store.files("knowledge"), *store.files("notes")]
        action = rnd.random()
        if action < 0.4 or not files:  # a new or rewritten page, maybe an id taken before
            rel = f"{rnd.choice(FOLDERS)}/{rnd.choice(IDS)}.md"
            path = store.memory / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(_page(rnd, rnd.choice(IDS)))
            written.append(path)
        elif action < 0.6:
            (store.memory / rnd.choice(files)).unlink()
        elif action < 0.75:
            old = store.memory / rnd.choice(files)
            new = store.memory / rnd.choice(FOLDERS) / f"r{rnd.randint(0, 99)}.md"
            new.parent.mkdir(parents=True, exist_ok=True)
            old.rename(new)
        elif action < 0.85:
            written.append(store.memory / rnd.choice(files))
            written[-1].write_text("no frontmatter\n")
        else:  # a summary, its title changed, or gone
            sid = parse_transcript(rnd.choice(SAMPLE).read_text(), "").id
            path = store.memory / "sessions/summaries" / f"{sid}.md"
            path.parent.mkdir(parents=True, exist_ok=True)
            if path.exists() and rnd.random() < 0.3:
                path.unlink()
            else:
                path.write_text(f"---\nid: {sid}\ntitle: Sum {rnd.randint(0, 9)}\n---\n\nx\n")
                written.append(path)
    return written


def _age(written: list[Path], rnd: random.Random) -> None:
    """A file rewritten within one tick of the clock can keep its size, mtime and inode
    (the stamp the cache trusts, as before): give each file written a later mtime."""
    for path in written:
        if not path.exists():
            continue
        st = path.stat()
        later = st.st_mtime_ns + rnd.randint(1, 10**9)
        os.utime(path, ns=(later, later))


def _reference(store: Store) -> tuple[str, str]:
    """Both files from every page parsed whole (the rule, not the cache)."""
    knowledge = list(iter_pages(store, "knowledge"))
    notes = list(iter_pages(store, "notes"))
    links = inbound_links([*knowledge, *notes])
    entries = [
        IndexEntry(
            path=p.path,
            id=p.id,
            title=p.title or p.id,
            type=p.type,
            summary=" ".join(p.summary.split()),
            links=links.get(p.id, 0),
            updated=p.updated,
            preference=p.path.startswith("knowledge/preferences/") or p.type == "preference",
        )
        for p in knowledge
    ]
    summaries: dict[str, tuple[str, str]] = {}
    for p in iter_pages(store, "sessions/summaries"):
        summaries.setdefault(p.id, (p.path, p.title))
    rows = []
    for rel in store.files("sessions/transcripts"):
        t = parse_transcript((store.memory / rel).read_text(), rel)
        path, title = summaries.get(t.id, ("", ""))
        title = title or str(t.meta.get("title") or "") or t.id
        rows.append(SessionRow(t.id, t.date, " ".join(title.split()), len(t.turns), path))
    rows.sort(key=lambda r: (r.date, r.id))
    by_folder: dict[str, int] = {}
    for p in notes:
        folder = p.path.split("/")[1] if p.path.count("/") >= 2 else ""
        by_folder[folder] = by_folder.get(folder, 0) + 1
    recent = list(reversed(rows))[:RECENT_SESSIONS]
    return _index_rule(store, entries, recent, len(rows), by_folder), render_sessions_index(rows)


def _index_rule(
    store: Store,
    entries: list[IndexEntry],
    recent: list[SessionRow],
    sessions: int,
    notes: dict[str, int],
) -> str:
    """INDEX.md as its rule reads, sorted in Python (the code sorts in SQLite)."""

    def cell(text: str) -> str:
        return text.replace("|", "\\|")

    def ranked(group: list[IndexEntry]) -> list[str]:
        def newest(date: str) -> tuple[int, ...]:
            return tuple(-int(x) for x in date[:10].split("-") if x.isdigit())

        key = lambda e: (-e.links, newest(e.updated), e.title.lower(), e.path)  # noqa: E731
        return [
            f"- [{cell(e.title)}]({e.path})"
            + (f" — {e.summary}" if e.summary else "")
            + f" ({e.links} links)"
            for e in sorted(group, key=key)
        ]

    knowledge = sorted(entries, key=lambda e: e.path)
    sections = [("Preferences", ranked([e for e in knowledge if e.preference]))]
    rest = [e for e in knowledge if not e.preference]
    for folder in (f for f in KNOWLEDGE_FOLDERS if f != "preferences"):
        sections.append(
            (folder.capitalize(), ranked([e for e in rest if e.path.split("/")[1:2] == [folder]]))
        )
    sections.append(
        ("Other pages", ranked([e for e in rest if e.path.split("/")[1] not in KNOWLEDGE_FOLDERS]))
    )
    sections.append(
        (
            "Recent sessions",
            [
                f"- {r.date} [{cell(r.title)}](sessions/summaries/{r.id}.md)"
                if r.summary_path
                else f"- {r.date} {r.id} (transcript only: sessions/transcripts/{r.id}.md)"
                for r in recent
            ],
        )
    )
    folders = sorted((f for f in notes if f), key=lambda f: (-notes[f], f))
    sections.append(("Notes", [f"- notes/{f}/" for f in folders]))
    out = [
        "# Memory index",
        "",
        GENERATED,
        "",
        f"Scope: user `{store.config.user}`, assistant `{store.config.assistant}`. "
        f"{len(entries)} knowledge pages, {sum(notes.values())} notes, {sessions} sessions. "
        "Paths are relative to `memory/`; grep `notes/` for quick facts, read `knowledge/` for "
        "subjects, follow `[cite:N]` to `sessions/transcripts/`.",
    ]
    for title, lines in sections:
        if lines:
            out += ["", f"## {title}", "", *lines]
    return "\n".join(out) + "\n"


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_refreshed_cache_gives_the_bytes_of_a_fresh_one_and_of_the_rule(
    tmp_path: Path, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(facts_cache, "_CHUNK", 5)  # several chunks, gaps between them
    rnd = random.Random(seed)
    store = init_store(tmp_path / "s", "dana", "atlas")
    ingest(store, SAMPLE[:4])
    for _ in range(16):
        written = _edit(store, rnd)
        if rnd.random() < 0.3:
            ingest(store, SAMPLE[: rnd.randint(4, 8)])
        _age(written, rnd)
        write_indexes(store)  # the store's own cache, refreshed pass after pass
        db = sqlite3.connect(store.cache_dir / "index-facts.sqlite")
        recorded = dict(db.execute("SELECT name, value FROM meta").fetchall())
        counted = {t: db.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in recorded}
        db.close()
        assert recorded == counted and len(recorded) == 6  # else every pass starts anew
        got = (
            (store.memory / "INDEX.md").read_text(),
            (store.memory / "sessions/index.md").read_text(),
        )
        fresh = tmp_path / f"fresh-{rnd.random()}.sqlite"
        write_indexes(store, cache_path=fresh)
        again = (
            (store.memory / "INDEX.md").read_text(),
            (store.memory / "sessions/index.md").read_text(),
        )
        assert got == again
        assert got == _reference(store)


def test_links_follow_an_alias_to_its_next_claimant(tmp_path: Path) -> None:
    """``[[AL]]`` names the first page (by path) with alias ``al``; when that page goes or
    comes back, or an id ``AL`` appears, the link moves though the linking page did not
    change."""
    store = init_store(tmp_path / "s", "dana", "atlas")
    people = store.memory / "knowledge/people"
    people.mkdir(parents=True, exist_ok=True)

    def page(name: str, pid: str, alias: str = "", body: str = "") -> None:
        (people / f"{name}.md").write_text(
            f"---\nid: {pid}\ntitle: {pid}\ntype: person\naliases: [{alias}]\n---\n\n{body}\n"
        )

    page("b", "bo", "al")
    page("x", "xi", body="Met [[AL]].")
    linked = []
    for step in range(4):
        if step in (0, 2):
            page("a", "ana", "Al")
        if step == 1:
            (people / "a.md").unlink()
        if step == 3:
            page("c", "AL")
        write_indexes(store)
        text = (store.memory / "INDEX.md").read_text()
        assert text == _reference(store)[0]
        linked += [line.split("]")[0][3:] for line in text.splitlines() if "(1 links)" in line]
    assert linked == ["ana", "bo", "ana", "AL"]


def _both(store: Store) -> tuple[str, str]:
    return (
        (store.memory / "INDEX.md").read_text(),
        (store.memory / "sessions/index.md").read_text(),
    )


@pytest.mark.parametrize("seed", [5, 6, 7])
def test_a_cache_refreshed_by_git_gives_the_bytes_of_a_fresh_one(
    tmp_path: Path, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Passes that look only at what Git says changed since the last one (commits,
    uncommitted and ignored edits, checkouts of older commits, files reverted by hand)
    give the bytes of a fresh cache and of the rule; after the first, no pass lists the
    store."""
    monkeypatch.setattr(facts_cache, "_CHUNK", 5)
    cache = tmp_path / "stage.sqlite"
    full = {"passes": 0}
    scan_all = facts_cache.IndexCache._scan_all

    def counting(self: facts_cache.IndexCache) -> None:
        full["passes"] += self.path == cache
        scan_all(self)

    monkeypatch.setattr(facts_cache.IndexCache, "_scan_all", counting)
    rnd = random.Random(seed)
    store = init_store(tmp_path / "s", "dana", "atlas")
    with (store.root / ".gitignore").open("a") as fh:
        fh.write("memory/knowledge/r1*.md\n")  # renames to r1x.md: ignored pages
    ingest(store, SAMPLE[:4])
    commits = [git_out(store, "rev-parse", "HEAD")]
    for step in range(16):
        written = _edit(store, rnd)
        if rnd.random() < 0.3:
            ingest(store, SAMPLE[: rnd.randint(4, 8)])  # commits its transcripts
        action = rnd.random()
        if action < 0.35:
            git_out(store, "add", "-A")
            git_out(store, "commit", "-q", "--allow-empty", "-m", f"step {step}")
            commits.append(git_out(store, "rev-parse", "HEAD"))
        elif action < 0.5:  # back to an earlier commit, the edits thrown away
            git_out(store, "checkout", "-q", "-f", rnd.choice(commits))
            git_out(store, "clean", "-q", "-fd", "--", "memory")
        elif action < 0.6 and written:  # a committed file put back by hand
            git_out(store, "checkout", "-q", "HEAD", "--", "memory")
        _age(written, rnd)
        write_indexes(store, cache_path=cache, by_git=True)
        got = _both(store)
        write_indexes(store, cache_path=tmp_path / f"fresh-{step}.sqlite")
        assert got == _both(store)
        assert got == _reference(store)
        assert full["passes"] == 1  # the first pass looked at every file, no other did


def test_a_pass_without_git_drops_the_anchor(tmp_path: Path) -> None:
    """A pass that looked at the files without Git's word leaves no anchor: a file it saw
    edited and that is put back afterwards is read again by the next pass by Git."""
    store = init_store(tmp_path / "s", "dana", "atlas")
    ingest(store, SAMPLE[:2])
    page = store.memory / "knowledge/people/ana.md"
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text("---\nid: ana\ntitle: Ana\ntype: person\nupdated: '2026-01-01'\n---\n\nx\n")
    git_out(store, "add", "-A")
    git_out(store, "commit", "-q", "-m", "ana")
    cache = tmp_path / "c.sqlite"
    write_indexes(store, cache_path=cache, by_git=True)
    committed = _both(store)
    page.write_text(page.read_text().replace("title: Ana", "title: Anabel"))
    write_indexes(store, cache_path=cache)  # by stat: sees Anabel
    assert "Anabel" in _both(store)[0]
    git_out(store, "checkout", "-q", "HEAD", "--", "memory")  # Ana again, Git sees no change
    write_indexes(store, cache_path=cache, by_git=True)
    assert _both(store) == committed


def test_a_cache_refreshed_by_git_outside_a_repository_looks_at_every_file(
    tmp_path: Path,
) -> None:
    store = init_store(tmp_path / "s", "dana", "atlas")
    ingest(store, SAMPLE[:2])
    cache = tmp_path / "c.sqlite"
    write_indexes(store, cache_path=cache, by_git=True)
    shutil.rmtree(store.root / ".git")  # Git cannot tell any more
    (store.memory / "sessions/transcripts" / SAMPLE[0].name).unlink()
    write_indexes(store, cache_path=cache, by_git=True)
    assert _both(store) == _reference(store)
    db = sqlite3.connect(cache)
    assert db.execute("SELECT COUNT(*) FROM anchor").fetchone()[0] == 0
    db.close()


def test_ignored_and_untracked_pages_count_by_git(tmp_path: Path) -> None:
    """Git-ignored and untracked pages are listed like any other: each edit is seen."""
    store = init_store(tmp_path / "s", "dana", "atlas")
    with (store.root / ".gitignore").open("a") as fh:
        fh.write("memory/knowledge/people/secret*.md\n")
    git_out(store, "add", "-A")
    git_out(store, "commit", "-q", "-m", "ignore")
    ingest(store, SAMPLE[:2])
    cache = tmp_path / "c.sqlite"
    write_indexes(store, cache_path=cache, by_git=True)
    people = store.memory / "knowledge/people"
    people.mkdir(parents=True, exist_ok=True)
    for name in ("secret-a.md", "plain.md"):
        for title in ("First", "Second", None):
            path = people / name
            if title is None:
                path.unlink()
            else:
                path.write_text(f"---\nid: {name[:-3]}\ntitle: {title}\ntype: person\n---\n\nx\n")
                _age([path], random.Random(len(title)))
            write_indexes(store, cache_path=cache, by_git=True)
            assert _both(store) == _reference(store)


def test_a_version_3_cache_is_taken_over_without_reading_a_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Version 4 only adds the anchor tables: a version 3 cache is kept, no file parsed."""
    store = init_store(tmp_path / "s", "dana", "atlas")
    ingest(store, SAMPLE[:4])
    write_indexes(store)
    path = store.cache_dir / "index-facts.sqlite"
    db = sqlite3.connect(path)
    db.execute("DROP TABLE anchor")
    db.execute("DROP TABLE dirty")
    db.execute("PRAGMA user_version = 3")
    db.commit()
    db.close()
    parsed: list[str] = []
    facts_of = facts_cache.facts_of
    monkeypatch.setattr(
        facts_cache,
        "facts_of",
        lambda text, rel, kind: parsed.append(rel) or facts_of(text, rel, kind),
    )
    before = _both(store)
    assert write_indexes(store) == [] and _both(store) == before
    assert parsed == []
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == 4
    db.close()
