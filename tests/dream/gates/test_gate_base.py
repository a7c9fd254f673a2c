"""The base side of a run's changed pages, read with one ``git cat-file`` (``dream.gates``):
the same pages as read one at a time, for files, missing paths, folders and bytes that
are not UTF-8; let go when the gates end."""

from __future__ import annotations

import subprocess
from pathlib import Path

from dream import gates
from dream.gates import base_page, prefetch_base, release_base
from memoryfs.pages.page import clear_parse_cache
from memoryfs.store.store import Store, init_store

PAGE = "---\nid: {0}\ntitle: {0}\ntype: person\nupdated: '2026-01-01'\n---\n\nAbout {0}.\n"


def _commit(store: Store) -> str:
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@x"]
    subprocess.run([*git, "add", "-A"], cwd=store.root, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "pages"], cwd=store.root, check=True)
    out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=store.root, capture_output=True)
    return out.stdout.decode().strip()


def test_prefetched_pages_are_those_read_one_at_a_time(tmp_path: Path) -> None:
    store = init_store(tmp_path / "s", "dana", "atlas")
    people = store.memory / "knowledge/people"
    people.mkdir(parents=True, exist_ok=True)
    for name in ("ana", "bo"):
        (people / f"{name}.md").write_text(PAGE.format(name))
    (people / "latin1.md").write_bytes(PAGE.format("caf\xe9").encode("latin-1"))
    (people / "broken.md").write_text("no frontmatter\n")
    base = _commit(store)
    paths = [
        "memory/knowledge/people/ana.md",
        "memory/knowledge/people/missing.md",
        "memory/knowledge/people",  # a folder
        "memory/knowledge/people/latin1.md",
        "memory/knowledge/people/broken.md",
        "memory/knowledge/people/bo.md",
    ]
    alone = []
    for path in paths:
        clear_parse_cache()
        page = base_page(store, base, path)
        alone.append(None if page is None else (page.id, page.body))
    prefetch_base(store, base, paths)
    assert len(gates._base_texts) == len(paths)  # every answer was read
    got = [base_page(store, base, p) for p in paths]
    assert [None if p is None else (p.id, p.body) for p in got] == alone
    assert alone[0] == ("ana", "\nAbout ana.\n") and alone[-1] == ("bo", "\nAbout bo.\n")
    assert alone[1:5] == [None, None, None, None]
    release_base()
    assert gates._base_texts == {}
    page = base_page(store, base, paths[0])  # read on its own again
    assert page is not None and page.id == "ana"
