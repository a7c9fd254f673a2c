"""Scrubbing pages against the deletion log: what ``forget`` and the purge do to them.

Pure functions of (text, path, deletions); no I/O. ``memoryfs.forget.remove`` applies
them to the live tree and ``memoryfs.forget.purge`` to every version in history, so both
forget the same way (transcripts: ``memoryfs.forget.redact``):

- a page (knowledge/, notes/) or summary whose id is forgotten, or whose id,
  title or aliases hold a forgotten phrase, is removed;
- in other pages, every claim that cites a forgotten session or whose words hold
  a forgotten phrase is removed (its whole paragraph, list item text or table
  row), with the ``sources`` entries only those claims used; a ``summary``
  holding the phrase is dropped; a surviving citation of a redacted turn gets
  the turn's new hash (only when it matched the old one);
- a page that loses every source it had is removed (all it knew, its id, title
  and summary included, came from what is forgotten); a page that loses a claim
  loses its ``summary`` (made of its claims) and any heading left with nothing
  under it; a "Related" list item that only links a removed page goes;
- "forgotten words" are the phrases of the log and the ``traces`` of forgotten
  pages and sessions (``memoryfs.forget.traces``): derived text that repeats them
  is found even where no citation says where it came from;
- INDEX.md and sessions/index.md (old versions only; the live tree regenerates
  them) lose the lines naming forgotten ids or holding forgotten words; any other
  file has forgotten words redacted.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from markdown_it import MarkdownIt

from memoryfs.errors import PageError
from memoryfs.forget.deletions import Deletions, find_phrases, has_phrase, redact
from memoryfs.pages.links import WIKILINK_RE, extract_citations, extract_links
from memoryfs.pages.page import Page, parse_page, render_meta
from memoryfs.validate.tombstones import normalize_words

__all__ = [
    "PageScrub",
    "scrub_page",
    "scrub_generated",
    "scrub_other",
    "unlink_pages",
    "ref_session",
    "spoken",
]

_REF_SESSION_RE = re.compile(r"^sessions/transcripts/([^/#]+)\.md(?:#|$)")


@dataclass(frozen=True)
class PageScrub:
    text: str | None  # None: remove the file
    lines_removed: int = 0
    rehashed: int = 0
    keys: frozenset[str] = frozenset()  # id and aliases of a removed page (to unlink)

    @property
    def removed(self) -> bool:
        return self.text is None


def ref_session(ref: object) -> str:
    """The session id a source ref names ("" when it names none)."""
    if not isinstance(ref, str):
        return ""
    m = _REF_SESSION_RE.match(ref)
    return m.group(1) if m else ""


def _stem(rel: str) -> str:
    return rel.rsplit("/", 1)[-1].removesuffix(".md")


def _removed(page: Page | None, stem: str) -> PageScrub:
    keys = {stem, stem.lower()}
    if page is not None:
        keys |= {page.id, page.id.lower(), *(a.lower() for a in page.aliases)}
    return PageScrub(text=None, keys=frozenset(k for k in keys if k))


def _with_body(text: str, page: Page, body: str) -> str:
    """``text`` with its body replaced, the frontmatter bytes untouched."""
    return text[: len(text) - len(page.body)] + body


def scrub_page(
    text: str,
    rel: str,
    deletions: Deletions,
    rehash: Mapping[str, tuple[str, str]] | None = None,
    gone: frozenset[str] = frozenset(),
    said: str | None = None,
) -> PageScrub:
    """Scrub a page, note or summary (``rel`` relative to ``memory/``); ``gone``: the
    lower-cased ids of other pages the scrub removes (their links go too); ``said``:
    the surviving transcripts' words (``spoken``), when known, so an alias no surviving
    turn or line uses goes with the claims that used it."""
    result = _scrub_page(text, rel, deletions, rehash, said)
    if result.text is None or not (deletions.pages or gone) or "[[" not in result.text:
        return result
    # links to forgotten pages (by id: all an old version can know) go as a forget leaves them
    keys = frozenset(p.lower() for p in deletions.pages) | gone
    unlinked, changed = unlink_pages(result.text, rel, keys, drop_items=True)
    return dataclasses.replace(result, text=unlinked) if changed else result


def _scrub_page(
    text: str,
    rel: str,
    deletions: Deletions,
    rehash: Mapping[str, tuple[str, str]] | None,
    said: str | None = None,
) -> PageScrub:
    stem = _stem(rel)
    forgotten_ids = deletions.sessions if rel.startswith("sessions/summaries/") else deletions.pages
    try:
        page = parse_page(text, rel)
    except PageError:  # malformed: ids by file name, phrases by plain redaction
        if stem in forgotten_ids:
            return _removed(None, stem)
        return PageScrub(text=redact(text, deletions, traces=True))
    if {stem, page.id} & forgotten_ids:
        return _removed(page, stem)
    wording = bool(deletions.phrases or deletions.traces)  # forgotten words to look for
    if wording and any(
        has_phrase(s, deletions, traces=True) for s in (page.id, page.title, *page.aliases)
    ):
        return _removed(page, stem)
    lines = page.body.split("\n")
    drop: set[int] = set()
    cites = extract_citations(page.body) if "[cite" in page.body else []
    raw_sources = page.meta.get("sources")
    forgotten_src = {s.id for s in page.sources if ref_session(s.ref) in deletions.sessions}
    blocks = _blocks(page.body) if cites or wording else []
    for cite in cites:
        if cite.n in forgotten_src:
            drop.add(cite.line - 1)
    drop = _expand(drop, blocks)
    if wording:
        drop |= _phrase_lines(lines, drop, deletions, blocks)
    if drop:
        drop |= _emptied_sections(lines, drop)
    body = "\n".join(line for i, line in enumerate(lines) if i not in drop) if drop else page.body
    meta = dict(page.meta)
    actions: dict[int, str | None] = {}  # source entry index -> None (drop) or its new hash
    had_sources = False
    if isinstance(raw_sources, list):
        before = {c.n for c in cites}
        after = {c.n for c in extract_citations(body)} if drop else before
        kept: list[Any] = []
        for i, entry in enumerate(raw_sources):
            if isinstance(entry, dict):
                had_sources = True
                sid = entry.get("id")
                gone = ref_session(entry.get("ref")) in deletions.sessions or (
                    isinstance(sid, int) and sid in before and sid not in after
                )
                if gone:
                    actions[i] = None
                    continue
                new_entry = _rehashed(entry, rehash)
                if new_entry is not entry:
                    actions[i] = str(new_entry["hash"])
                    entry = new_entry
            kept.append(entry)
        if actions:
            meta["sources"] = kept
        if had_sources and not any(isinstance(e, dict) for e in kept):
            # everything the page knew came from what is forgotten: its id, title and
            # summary were made of it too
            return _removed(page, stem)
    summary = meta.get("summary")
    # a summary is made of the page's claims: one that lost claims loses it
    drop_summary = isinstance(summary, str) and (
        bool(drop) or (wording and has_phrase(summary, deletions, traces=True))
    )
    if drop_summary:
        del meta["summary"]
    # other keys made of what went: a first date that was the forgotten evidence's, an
    # alias only forgotten text used
    gone_words = spoken([lines[i] for i in drop]) if drop and said is not None else None
    reworded = _redate(meta, raw_sources, actions) | _realias(meta, page, body, said, gone_words)
    if not drop and not actions and not drop_summary:
        return PageScrub(text=text)
    if reworded:
        new_text = "---\n" + render_meta(meta) + "---\n" + body
    elif actions or drop_summary:
        raw = _edit_raw_meta(page.raw_meta or "", meta, actions, drop_summary)
        new_text = "---\n" + (raw if raw is not None else render_meta(meta)) + "---\n" + body
    else:
        new_text = _with_body(text, page, body)
    rehashed = sum(1 for a in actions.values() if a is not None)
    if has_phrase(new_text, deletions, traces=True):  # in metadata we do not edit: the page goes
        return _removed(page, stem)
    return PageScrub(text=new_text, lines_removed=len(drop), rehashed=rehashed)


_HEADING_RE = re.compile(r"^(#{1,6})\s")


def spoken(texts: list[str]) -> str:
    """Words of ``texts`` as one string, `` w1 w2 … ``: what ``said`` expects."""
    return " " + " ".join(" ".join(normalize_words(t)) for t in texts) + " "


def _redate(meta: dict[str, Any], raw_sources: Any, actions: dict[int, str | None]) -> bool:
    """``created`` moved to the first kept source's date when it was only a dropped one's."""
    created = meta.get("created")
    if created is None or not isinstance(raw_sources, list) or None not in actions.values():
        return False
    entries = [(i, e) for i, e in enumerate(raw_sources) if isinstance(e, dict) and e.get("at")]
    dropped = {str(e["at"]) for i, e in entries if i in actions and actions[i] is None}
    kept = sorted((str(e["at"]), e["at"]) for i, e in entries if actions.get(i, "") is not None)
    if str(created) not in dropped or not kept or kept[0][0] <= str(created):
        return False
    meta["created"] = kept[0][1]
    return True


def _realias(
    meta: dict[str, Any], page: Page, body: str, said: str | None, gone: str | None
) -> bool:
    """Aliases only the removed lines used (no surviving turn, title or line) go."""
    aliases = meta.get("aliases")
    if said is None or gone is None or not isinstance(aliases, list) or body == page.body:
        return False
    here = spoken([page.title, body])

    def only_forgotten(alias: object) -> bool:
        if not isinstance(alias, str) or not normalize_words(alias):
            return False
        words = f" {' '.join(normalize_words(alias))} "
        return words in gone and words not in said and words not in here

    kept = [a for a in aliases if not only_forgotten(a)]
    if kept == aliases:
        return False
    if kept:
        meta["aliases"] = kept
    else:
        del meta["aliases"]
    return True


def _emptied_sections(lines: list[str], drop: set[int]) -> set[int]:
    """Headings (and their blank lines) whose section lost every line to ``drop``:
    a dated heading left with nothing under it still says when the forgotten
    thing happened."""
    out: set[int] = set()
    heads = [(i, len(m.group(1))) for i, line in enumerate(lines) if (m := _HEADING_RE.match(line))]
    for k in range(len(heads) - 1, -1, -1):
        i, level = heads[k]
        end = next((j for j, lv in heads[k + 1 :] if lv <= level), len(lines))
        section = range(i + 1, end)
        gone = drop | out
        if any(j in drop for j in section) and all(
            j in gone or not lines[j].strip() for j in section
        ):
            out.add(i)
            out.update(j for j in section if not lines[j].strip())
    return out


_TOP_KEY_RE = re.compile(r"^([A-Za-z_][\w-]*)\s*:")
_ITEM_RE = re.compile(r"^(\s*)- ")
_HASH_LINE_RE = re.compile(r"^(\s*(?:- )?hash\s*:\s*).*$")


def _edit_raw_meta(
    raw: str, meta: dict[str, Any], actions: dict[int, str | None], drop_summary: bool
) -> str | None:
    """The frontmatter with only the changed lines edited, so the diff shows just them.

    Works on block-style YAML; returns None (the caller re-renders canonically)
    unless the edited text parses to exactly ``meta``.
    """
    lines = raw.split("\n")
    blocks: dict[str, tuple[int, int]] = {}  # top-level key -> [start, end) line range
    starts = [(i, m.group(1)) for i, line in enumerate(lines) if (m := _TOP_KEY_RE.match(line))]
    for k, (i, key) in enumerate(starts):
        blocks[key] = (i, starts[k + 1][0] if k + 1 < len(starts) else len(lines))
    out = list(lines)
    removed: set[int] = set()
    if drop_summary and "summary" in blocks:
        removed.update(range(*blocks["summary"]))
    if actions:
        if "sources" not in blocks:
            return None
        first, end = blocks["sources"]
        matches = [(i, m) for i in range(first + 1, end) if (m := _ITEM_RE.match(lines[i]))]
        indent = len(matches[0][1].group(1)) if matches else 0
        items = [i for i, m in matches if len(m.group(1)) == indent]
        spans = [(i, items[k + 1] if k + 1 < len(items) else end) for k, i in enumerate(items)]
        for idx, action in actions.items():
            if idx >= len(spans):
                return None
            lo, hi = spans[idx]
            if action is None:
                removed.update(range(lo, hi))
                continue
            hits = [(j, m) for j in range(lo, hi) if (m := _HASH_LINE_RE.match(lines[j]))]
            if len(hits) != 1:
                return None
            out[hits[0][0]] = hits[0][1].group(1) + f"'{action}'"
        if all(j in removed for lo, hi in spans for j in range(lo, hi)):
            out[first] = "sources: []"
    text = "\n".join(line for i, line in enumerate(out) if i not in removed).rstrip("\n") + "\n"
    try:
        parsed = parse_page(f"---\n{text}---\n")
    except PageError:
        return None
    return text if parsed.meta == meta else None


def _rehashed(
    entry: dict[str, Any], rehash: Mapping[str, tuple[str, str]] | None
) -> dict[str, Any]:
    ref = entry.get("ref")
    if not rehash or not isinstance(ref, str) or ref not in rehash:
        return entry
    old, new = rehash[ref]
    if str(entry.get("hash", "")) != old or old == new:
        return entry  # a citation that was already stale stays stale: never launder it
    return {**entry, "hash": new}


@lru_cache(maxsize=1)
def _md() -> MarkdownIt:
    return MarkdownIt("commonmark").enable("table")


def _blocks(body: str) -> list[tuple[int, int]]:
    """0-based ``[start, end)`` line ranges of paragraphs, headings and table rows.

    A claim is the whole block holding it: a list item's text wrapped over two
    lines goes as one.
    """
    try:
        tokens = _md().parse(body)
    except Exception:  # noqa: BLE001 - like links.text_segments: never raise on a body
        return []
    kinds = ("paragraph_open", "heading_open", "tr_open")
    return [(t.map[0], t.map[1]) for t in tokens if t.type in kinds and t.map]


def _expand(drop: set[int], blocks: list[tuple[int, int]]) -> set[int]:
    out = set(drop)
    for lo, hi in blocks:
        if any(lo <= i < hi for i in drop):
            out.update(range(lo, hi))
    return out


def _phrase_lines(
    lines: list[str], drop: set[int], deletions: Deletions, blocks: list[tuple[int, int]]
) -> set[int]:
    """Indexes of the blocks' lines a forgotten phrase touches, once ``drop`` is gone.

    Removing a line can join its neighbours into a new match, so this repeats
    until the remaining lines are clean.
    """
    hit: set[int] = set()
    for _ in range(len(lines) + 1):
        idx = [i for i in range(len(lines)) if i not in drop and i not in hit]
        starts: list[int] = []
        pos = 0
        for i in idx:
            starts.append(pos)
            pos += len(lines[i]) + 1
        spans = find_phrases("\n".join(lines[i] for i in idx), deletions, traces=True)
        if not spans:
            break
        for start, end in spans:
            first = _line_at(starts, start)
            last = _line_at(starts, end - 1)
            hit.update(idx[first : last + 1])
        hit = _expand(hit, blocks)
    return hit


def _line_at(starts: list[int], offset: int) -> int:
    lo, hi = 0, len(starts) - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if starts[mid] <= offset:
            lo = mid
        else:
            hi = mid - 1
    return lo


_LINK_ITEM_RE = re.compile(r"^\s*[-*+]\s+\[\[[^\]]*\]\]\s*$")


def unlink_pages(
    text: str, rel: str, keys: frozenset[str], drop_items: bool = False
) -> tuple[str, int]:
    """Replace ``[[links]]`` to removed pages by their label; returns (text, links changed).

    With ``drop_items`` (a forget), a list item that is only such a link goes, and a
    heading left with nothing under it: the forgotten page's name is not kept as text.
    """
    if not keys or "[[" not in text:
        return text, 0
    try:
        page = parse_page(text, rel)
    except PageError:
        return text, 0

    def gone(target: str) -> bool:
        t = target.split("#", 1)[0].strip()
        return t in keys or t.lower() in keys

    lines_to_fix = {link.line - 1 for link in extract_links(page.body) if gone(link.target)}
    if not lines_to_fix:
        return text, 0
    lines = page.body.split("\n")
    count = 0

    def plain(m: re.Match[str]) -> str:
        nonlocal count
        if not gone(m.group(1)):
            return m.group(0)
        count += 1
        return (m.group(2) or m.group(1)).strip()

    removed: set[int] = set()
    for i in sorted(lines_to_fix):
        if 0 <= i < len(lines):
            link = WIKILINK_RE.search(lines[i])
            if drop_items and _LINK_ITEM_RE.match(lines[i]) and link and gone(link.group(1)):
                removed.add(i)  # a "Related" entry that is only the link: nothing left to say
                count += 1
                continue
            lines[i] = WIKILINK_RE.sub(plain, lines[i])
    if removed:
        removed |= _emptied_sections(lines, removed)
    kept = [line for i, line in enumerate(lines) if i not in removed]
    return _with_body(text, page, "\n".join(kept)), count


def scrub_generated(text: str, deletions: Deletions, gone: frozenset[str] = frozenset()) -> str:
    """INDEX.md or sessions/index.md (or a commit message listing files): drop the lines
    naming forgotten ids (or the ``gone`` pages the scrub removes), redact phrases.

    The live tree regenerates these files; this is for their old versions.
    """
    names = "|".join(re.escape(n) for n in sorted({*deletions.pages, *deletions.sessions, *gone}))
    if names:  # entries name files ("/<id>.md") and sessions index rows ("| <id> |")
        pattern = re.compile(rf"/(?:{names})\.md\b|^\| (?:{names}) \|")
        text = "\n".join(line for line in text.split("\n") if not pattern.search(line))
    if deletions.traces:  # an entry made of a forgotten page's or session's words
        text = "\n".join(
            line
            for line in text.split("\n")
            if not has_phrase(line, deletions, traces=True) or not line.startswith(("-", "|"))
        )
    return redact(text, deletions, traces=True)


def scrub_other(data: bytes, deletions: Deletions) -> bytes:
    """Any other file (or commit message): forgotten phrases redacted, bytes kept otherwise."""
    if not (deletions.phrases or deletions.traces):
        return data
    text = data.decode("utf-8", errors="surrogateescape")
    new = redact(text, deletions, traces=True)
    return data if new == text else new.encode("utf-8", errors="surrogateescape")
