"""One file of memory by name, cut to what a reader asked for: ``memoryfs show``.

A name is what a person or an agent has at hand: a path under ``memory/`` (``.md`` may
be left off; ``#tN`` for one turn), a page id (``sam``), an alias or a title in any case
(``Sam Lee``), or a session id (its summary, else its transcript). A name that fits
several pages is refused with their paths, never guessed.

``section`` keeps the parts of a page under the headings that equal it, or else that
start with it (any case: ``2026-02`` is every February heading), each with its
subheadings. ``max_tokens`` cuts at a line, never inside one, and says in the text
where the rest starts (an HTML comment, unseen where Markdown is rendered, plain to an
agent). When a page is cut, by either, its long ``sources`` list is replaced by the
sources the shown lines cite, as reference lines under them (``[cite:3]:
2026-03-02-moving#t4``, a name ``show`` takes), so every ``[cite:N]`` in what is shown still
says which turn it came from.
"""

from __future__ import annotations

import re
from dataclasses import replace

from memoryfs.errors import MemoryFSError
from memoryfs.pages.links import CITE_RE, headings
from memoryfs.pages.page import Page, Source, parse_page, render_meta, split_frontmatter
from memoryfs.read.file_text import FileText, read_file
from memoryfs.store.store import Store
from memoryfs.store.tokens import count_tokens

__all__ = ["resolve_name", "show"]

_SPACES = re.compile(r"\s+")
_TRANSCRIPTS = "sessions/transcripts/"


def resolve_name(store: Store, name: str) -> str:
    """The path (relative to ``memory/``, with its ``#tN`` anchor) that ``name`` means."""
    from memoryfs.index.facts import SUMMARY
    from memoryfs.index.facts_cache import IndexCache

    ref = name.strip()
    key, _, anchor = ref.partition("#")
    if not key:
        raise MemoryFSError("give a page: a path under memory/, a page id, a title or a session id")
    if "/" in key or "\\" in key or key.endswith(".md"):
        rel = key.removeprefix("memory/")
        return (rel if rel.endswith(".md") else f"{rel}.md") + (f"#{anchor}" if anchor else "")

    def named(cache: IndexCache) -> list[str]:
        db = cache.db
        queries: list[tuple[str, tuple[str, ...]]] = [
            ("SELECT rel FROM page WHERE id = ? AND kind < 2", (key,)),
            ("SELECT DISTINCT rel FROM alias WHERE alias = ?", (key.lower(),)),
            ("SELECT rel FROM page WHERE kind < 2 AND title = ? COLLATE NOCASE", (key,)),
        ]
        if not anchor:  # a turn is in the transcript, not the summary
            queries.append(("SELECT rel FROM page WHERE kind = ? AND id = ?", (str(SUMMARY), key)))
        queries.append(("SELECT rel FROM session WHERE id = ?", (key,)))
        for sql, args in queries:
            rows = sorted(str(r[0]) for r in db.execute(sql, args))
            if rows:
                return rows
        return []

    found = IndexCache.use(store, None, named)
    if not found:
        raise MemoryFSError(
            f"no page, alias, title or session named {key[:200]!r} "
            f"(find one with: memoryfs search {key[:60]!r})"
        )
    if len(found) > 1:
        shown = ", ".join(found[:10]) + (", ..." if len(found) > 10 else "")
        raise MemoryFSError(f"{key[:200]!r} names {len(found)} files: {shown}; give a path")
    return found[0] + (f"#{anchor}" if anchor else "")


def show(
    store: Store,
    name: str,
    section: str | None = None,
    max_tokens: int | None = None,
    lines: str | None = None,
) -> FileText:
    """The file ``name`` means (see the module's doc), whole or the ``lines``, the
    ``section`` or the turn asked for, cut to ``max_tokens`` when given."""
    if max_tokens is not None and max_tokens < 1:
        raise MemoryFSError("max tokens must be at least 1")
    if section is not None and not section.strip():
        raise MemoryFSError("the section must not be blank")
    ref = resolve_name(store, name)
    if section is not None and (lines or "#" in ref):
        raise MemoryFSError("give a section, lines or a turn (#tN), not more than one")
    got = read_file(store, ref, lines)
    if section is None and (max_tokens is None or count_tokens(got.text) <= max_tokens):
        return got
    view = _View.of(got, section)
    return view.cut(got, max_tokens)


class _View:
    """The lines a cut chooses from: a page's header (its frontmatter without
    ``sources``), then its body lines (by file line number), and its sources by id."""

    def __init__(
        self, header: list[str], body: list[tuple[int, str]], sources: dict[int, str], label: str
    ) -> None:
        self.header = header
        self.body = body
        self.sources = sources
        self.label = label  # the section asked for, as the result names it

    @classmethod
    def of(cls, got: FileText, section: str | None) -> _View:
        numbered = list(enumerate(got.text.split("\n"), got.start))
        if numbered and numbered[-1][1] == "" and got.text.endswith("\n"):
            numbered.pop()
        page = _page(got) if got.start == 1 and not got.turn else None
        if section is not None and got.path.startswith("sessions/transcripts/"):
            raise MemoryFSError(f"{got.path}: a transcript's parts are its turns: give PATH#tN")
        if page is None:
            if section is not None:
                raise MemoryFSError(f"{got.path}: a section is a part of a page with frontmatter")
            return cls([], numbered, {}, "")
        if "sources" in page.meta:
            meta = {k: v for k, v in page.meta.items() if k != "sources"}
            header = ["---", *render_meta(meta).rstrip("\n").split("\n"), "---"]
        else:
            header = [t for n, t in numbered if n < page.body_line]
        sources = {s.id: _source_line(s) for s in page.sources}
        body = [(n, t) for n, t in numbered if n >= page.body_line]
        label = ""
        if section is not None:
            body, label = _sections(got.path, page, body, section)
            header = []
        return cls(header, body, sources, label)

    def cut(self, got: FileText, max_tokens: int | None) -> FileText:
        """The lines that fit ``max_tokens`` (all when None), in order, the sources they
        cite under them and, when anything is left out, what. The header goes whole or
        not at all: a reader on a tight budget gets the body rather than metadata."""
        body = self.body
        first = body[0][0] if body else got.start
        last = body[-1][0] if body else got.end
        # what the note of a cut costs, at its longest (line numbers are one token each)
        marker = count_tokens(_marker(max_tokens or 0, bool(self.header), (first, last)))
        header = sum(count_tokens(line) for line in self.header)
        headed = max_tokens is None or header + (marker if body else 0) <= max_tokens
        shown: list[str] = list(self.header) if headed else []
        spent = header if headed else 0
        reserve = 0 if headed else marker  # dropping the header is itself a cut to note
        cited: dict[int, None] = {}
        taken = 0
        for i, (_, line) in enumerate(body):
            new = [int(m.group(1)) for m in CITE_RE.finditer(line)]
            new = [c for c in dict.fromkeys(new) if c in self.sources and c not in cited]
            cost = count_tokens(line) + sum(count_tokens(self.sources[c]) for c in new)
            after = marker if i + 1 < len(body) else reserve
            if max_tokens is not None and spent + cost + after > max_tokens:
                break
            shown.append(line)
            cited.update(dict.fromkeys(new))
            spent += cost
            taken += 1
        if not headed:
            while shown and not shown[0].strip():
                shown.pop(0)  # a body's leading blank lines, with no header above them
        left_out = taken < len(body)
        while (cited or left_out) and shown and not shown[-1].strip():
            shown.pop()  # blank lines before what is added under the lines
        if cited:
            shown += ["", *(self.sources[c] for c in sorted(cited))]
        left = (body[taken][0], last) if taken < len(body) else None
        dropped = bool(self.header) and not headed
        if left or dropped:
            shown.append(_marker(max_tokens or 0, dropped, left))
        start, end = (first, body[taken - 1][0]) if taken else (first, first - 1)
        text = "\n".join(shown) + "\n" if shown else ""
        return replace(
            got, text=text, start=start, end=end, section=self.label, cut=bool(left or dropped)
        )


def _source_line(source: Source) -> str:
    """``[cite:N]: <session id>#tN (date)``: a transcript turn by the name ``show`` takes,
    without the path (six tokens a source) and without a date its id begins with."""
    ref = source.ref
    if ref.startswith(_TRANSCRIPTS) and ".md#" in ref:
        ref = ref.removeprefix(_TRANSCRIPTS).replace(".md#", "#", 1)
    dated = source.at and not ref.startswith(source.at)
    return f"[cite:{source.id}]: {ref}" + (f" ({source.at})" if dated else "")


def _page(got: FileText) -> Page | None:
    if split_frontmatter(got.text) is None:
        return None
    try:
        return parse_page(got.text, got.path, memo=False)
    except (MemoryFSError, ValueError):
        return None


def _norm(text: str) -> str:
    return _SPACES.sub(" ", text.strip().strip("#").strip()).casefold()


def _sections(
    path: str, page: Page, body: list[tuple[int, str]], section: str
) -> tuple[list[tuple[int, str]], str]:
    """The body lines under the headings ``section`` names, each heading with its part."""
    heads = headings(page.body)
    want = _norm(section)
    chosen = [h for h in heads if _norm(h.text) == want] or [
        h for h in heads if _norm(h.text).startswith(want)
    ]
    if not chosen:
        names = "; ".join(dict.fromkeys(h.text for h in heads)) or "none"
        raise MemoryFSError(
            f"{path}: no section {section.strip()[:100]!r} (sections: {names[:400]})"
        )
    offset = page.body_line - 1  # body line -> file line
    keep: set[int] = set()
    for h in chosen:
        after = [g.start for g in heads if g.start > h.start and g.level <= h.level]
        end = (after[0] if after else len(page.body.split("\n")) + 1) + offset
        keep.update(range(h.start + offset, end))
    lines = [(n, t) for n, t in body if n in keep]
    while lines and not lines[-1][1].strip():
        lines.pop()
    return lines, "; ".join(h.text for h in chosen)


def _marker(budget: int, header: bool, lines: tuple[int, int] | None) -> str:
    """The note a cut leaves: what of the file is not shown."""
    parts = (["the frontmatter"] if header else []) + (
        [f"lines {lines[0]}-{lines[1]}"] if lines else []
    )
    return f"<!-- cut to {budget} tokens; not shown: {', '.join(parts)} -->"
