"""INDEX.md counts notes by folder as they stream past: the same links, counts and folders as
the pages loaded whole."""

from __future__ import annotations

import re
from pathlib import Path

from memoryfs.index.index_md import build_entries, inbound_links, render_index
from memoryfs.pages.listing import iter_pages
from memoryfs.store.store import Store, init_store


def _page(store: Store, rel: str, pid: str, body: str, aliases: str = "") -> None:
    path = store.memory / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    extra = f"aliases: [{aliases}]\n" if aliases else ""
    path.write_text(
        f"---\nid: {pid}\ntitle: {pid.title()}\ntype: person\n{extra}updated: 2026-01-05\n"
        f"---\n\n{body}\n"
    )


def test_streamed_notes_give_the_links_and_counts_of_whole_pages(tmp_path: Path) -> None:
    store = init_store(tmp_path / "s", "dana", "atlas")
    _page(store, "knowledge/people/ana.md", "ana", "Knows [[bob]] and [[Bobby]].", "Ana R")
    _page(store, "knowledge/people/bob.md", "bob", "Self [[bob]], [[ANA R]].", "Bobby, ana")
    _page(store, "knowledge/topics/cello.md", "cello", "Played by [[ana]].")
    for i in range(5):  # notes link to their subject, one twice, one to a missing page
        _page(store, f"notes/ana/ana-{i}.md", f"ana-{i}", "About [[ana]] and [[ana|her]].")
    for i in range(3):
        _page(store, f"notes/bob/bob-{i}.md", f"bob-{i}", "About [[Bobby]], [[nobody]].")
    _page(store, "notes/loose.md", "loose", "About [[cello]] and [[ana-1]].")
    text = render_index(store)

    pages = [*iter_pages(store, "knowledge"), *iter_pages(store, "notes")]
    links = inbound_links(pages)
    assert links["ana"] == 7 and links["bob"] == 4 and links["ana-1"] == 1
    for page in iter_pages(store, "knowledge"):
        m = re.search(rf"\]\({re.escape(str(page.path))}\).*\((\d+) links\)", text)
        assert m is not None and int(m.group(1)) == links[page.id], page.path
    assert "3 knowledge pages, 9 notes, 0 sessions" in text
    assert text.endswith("## Notes\n\n- notes/ana/\n- notes/bob/\n")
    # the whole-entries view is kept for its callers: every page and note, same counts
    entries = build_entries(store)
    assert len(entries) == 12
    assert {e.id: e.links for e in entries if e.links} == dict(links)
