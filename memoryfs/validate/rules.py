"""``memoryfs validate``: the deterministic gate over a store tree (the rules; reading the
tree is ``memoryfs.validate.read``).

One pass over ``memory/`` reads and parses every file once (transcripts are kept
for the citation checks), then the cross-file rules run on what was parsed. A
malformed file is a finding, never a traceback. ``root`` lets Dream validate a
staged worktree with the live store's config. Findings are sorted by (path, line,
code); each has a stable code (the table is in ``memoryfs.validate.findings``), a message
and a one-line fix hint. The deletion log's rules live in ``memoryfs.validate.tombstones``.

``deletions.jsonl`` lines: ``{"kind": "page"|"session", "id": ...}`` or
``{"kind": "phrase", "hash": H, "words": N}`` with H = ``phrase_hash`` of the N
``normalize_words``. Transcripts are not searched for phrases: ``forget`` redacts
them in its own commit, and validation guards what Dream writes.
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from memoryfs.pages.factlines import FactLine, holds_facts, uncited_lines
from memoryfs.pages.links import extract
from memoryfs.pages.page import REQUIRED_KEYS, Page
from memoryfs.store.store import Store
from memoryfs.store.transcript_edits import transcript_edits
from memoryfs.validate.findings import CODES, Finding
from memoryfs.validate.keys import KnownPages, OtherPages
from memoryfs.validate.keys import unsafe as _unsafe
from memoryfs.validate.read import TRANSCRIPTS as _TRANSCRIPTS
from memoryfs.validate.read import PageKeys, ReadPage, TurnHashes
from memoryfs.validate.read import Run as _Run
from memoryfs.validate.read import check_scope as _check_scope
from memoryfs.validate.read import key_line as _key_line
from memoryfs.validate.read import stem as _stem
from memoryfs.validate.read import visit as _visit
from memoryfs.validate.read import visit_files as _visit_files
from memoryfs.validate.read import walk as _walk
from memoryfs.validate.tombstones import normalize_words, phrase_hash, tombstone_findings

__all__ = [
    "CODES",
    "Finding",
    "PageKeys",
    "page_keys",
    "validate_store",
    "validate_files",
    "normalize_words",
    "phrase_hash",
]

_REF_RE = re.compile(r"^sessions/transcripts/([^/#]+)\.md#(t\d+)$")
_HASH_RE = re.compile(r"^[0-9a-f]{4,64}$")
_WORD_RE = re.compile(r"\w+")
_STATUSES = ("current", "superseded")


def page_keys(page: Page) -> PageKeys:
    return PageKeys(
        id=page.id,
        aliases=tuple(page.aliases),
        links=tuple(link.target for link in extract(page.body)[0]),
    )


def validate_store(store: Store, root: Path | None = None) -> list[Finding]:
    """Validate the store's tree (or the same layout under ``root``) and return the findings."""
    run = _Run(store=store, root=Path(root) if root is not None else store.root)
    run.on_page = _check_page
    mem = run.root / "memory"
    if mem.is_symlink():
        run.findings.append(Finding("memory", 0, "MF302", "memory/ is a symlink", CODES["MF302"]))
        return run.findings
    if not mem.is_dir():
        run.findings.append(Finding("memory", 0, "MF306", "no memory/ folder", CODES["MF306"]))
        return run.findings
    _walk(run, mem)
    _check_pages(run)
    if run.deletions:
        _check_deletions(run, run.deletions)
    if root is None or Path(root).resolve() == store.root.resolve():
        _check_transcript_edits(run)  # the store's own history (a staged tree adds none)
    return sorted(run.findings, key=lambda f: (f.path, f.line, f.code, f.message))


def _check_transcript_edits(run: _Run) -> None:
    """MF405: a turn whose text is not what was ingested (``memoryfs.store.transcript_edits``)."""
    for edit in transcript_edits(run.root, "HEAD", worktree=True):
        run.add(edit.path, edit.line, "MF405", edit.describe())


def validate_files(
    store: Store,
    root: Path,
    files: Iterable[str],
    others: Mapping[str, PageKeys] | OtherPages,
    unread_refs: Iterable[str] = (),
    transcripts: dict[str, TurnHashes | None] | None = None,
) -> list[Finding]:
    """Validate ``files`` (paths relative to ``memory/`` of the tree at ``root``) as
    ``validate_store`` would, with the pages ``others`` (the rest of ``knowledge/`` and
    ``notes/``: ``PageKeys`` by path, or an ``OtherPages``) taking part in the
    cross-page rules without being read: their ids, stems and aliases are link targets
    and can clash. One of them whose own links no longer resolve, whose id is taken
    twice or whose alias is another page's id is read and validated whole, so its
    findings carry their lines. The caller vouches that ``others`` describe the pages as
    they are and that nothing else changed (the deletion log, the transcripts the files
    cite, ``memory.toml``). ``unread_refs``: source refs whose transcripts are left
    out of ``files`` on purpose (checked before): a source naming one is checked but for
    its transcript. ``transcripts``: the transcripts read by an earlier call on the same
    tree, shared so that a caller validating its files in slices reads each once (a
    transcript already there is not read again, nor reported on again)."""
    run = _Run(store=store, root=Path(root), unread_refs=frozenset(unread_refs))
    if transcripts is not None:
        run.transcripts = transcripts
    run.on_page = _check_page
    mem = run.root / "memory"
    if mem.is_symlink() or not mem.is_dir():
        return validate_store(store, root)
    _visit_files(run, mem, files)
    run.others = KnownPages(others) if isinstance(others, Mapping) else others
    run.others.discard(run.page_files)
    for rel in sorted(_implicated(run)):
        run.others.discard([rel])
        _visit(run, mem / rel, rel)
    _check_pages(run)
    if run.deletions:
        _check_deletions(run, run.deletions)
    return sorted(run.findings, key=lambda f: (f.path, f.line, f.code, f.message))


def _implicated(run: _Run) -> set[str]:
    """The pages of ``run.others`` a cross-page rule has something to say about: an id
    taken twice, an alias that is another page's id, a link that resolves to no page."""
    ids = {page.id for page in run.pages.values()}
    found = run.others.duplicated(ids)
    aliased = run.others.aliased({pid.lower() for pid in ids})
    if aliased:
        owners = _owners(run, {alias.lower() for _, alias in aliased})
        found |= {rel for rel, alias in aliased if _other_owner(owners, alias, rel)}
    return found | run.others.dangling(_local_keys(run))


def _source_lines(text: str, count: int) -> list[int]:
    """File lines of the first ``count`` entries of a block-style ``sources`` list."""
    lines = text.split("\n")
    start = _key_line(text, "sources")
    out: list[int] = []
    indent: int | None = None
    for i in range(start, len(lines)):
        line = lines[i].rstrip("\r")
        if line == "---" or (line and not line[0].isspace() and not line.startswith("-")):
            break
        m = re.match(r"^(\s*)- ", line)
        if m and (indent is None or len(m.group(1)) == indent):
            indent = len(m.group(1))
            out.append(i + 1)
    return (out + [start] * count)[:count]


# -- pass 2: page rules and cross-file rules -----------------------------------


def _by_id(run: _Run) -> dict[str, list[str]]:
    """The paths of each id of a page read, those of ``run.others`` last."""
    by_id: dict[str, list[str]] = {}
    for rel, page in run.pages.items():
        by_id.setdefault(page.id, []).append(rel)
    for pid, rel in run.others.with_ids(set(by_id)):
        by_id[pid].append(rel)
    return by_id


def _owners(run: _Run, lowered: set[str]) -> dict[str, list[str]]:
    """Of the ids lower-cased in ``lowered``, every page whose id lower-cases to it (pages
    read and ``run.others`` alike), by path: the answer does not depend on which pages were
    read, so validating a tree in parts finds what one pass does."""
    owners: dict[str, set[str]] = {}
    for rel, page in run.pages.items():
        if page.id and page.id.lower() in lowered:
            owners.setdefault(page.id.lower(), set()).add(rel)
    for pid, rel in run.others.with_ids(lowered, lower=True):
        if pid:
            owners.setdefault(pid.lower(), set()).add(rel)
    return {key: sorted(rels) for key, rels in owners.items()}


def _other_owner(owners: dict[str, list[str]], alias: str, rel: str) -> str:
    """The first page (by path) other than ``rel`` whose id is ``alias`` but for case;
    "" when there is none."""
    return next((o for o in owners.get(alias.lower(), ()) if o != rel), "")


def _local_keys(run: _Run) -> set[str]:
    """What a ``[[link]]`` may name among the pages read: ids (any case), file stems
    and aliases (``run.others`` adds its own)."""
    ids = {page.id for page in run.pages.values()}
    keys = ids | {pid.lower() for pid in ids}
    keys |= {_stem(rel).lower() for rel in run.page_files}
    for page in run.pages.values():
        keys |= {a.lower() for a in page.aliases}
    return keys


class _LinkKeys:
    """``_local_keys`` and, asked once each, those of ``run.others``."""

    def __init__(self, run: _Run) -> None:
        self.local = _local_keys(run)
        self.others = run.others
        self.asked: dict[str, bool] = {}

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        if name in self.local:
            return True
        if name not in self.asked:
            self.asked[name] = self.others.known(name)
        return self.asked[name]


def _check_page(run: _Run, rel: str, page: Page, kind: str) -> ReadPage:
    """The rules of one page or summary, as it is read (the transcripts it cites were
    read before it); what the cross-page rules need of it is kept."""
    _check_meta(run, rel, page.meta)
    if kind == "summary" and f"{_TRANSCRIPTS}{_stem(rel)}.md" not in run.transcripts:
        run.add(rel, 0, "MF404", f"no transcript {_TRANSCRIPTS}{_stem(rel)}.md")
    links = _check_body(run, rel, page)
    if holds_facts(rel):
        for fact in uncited_lines(page):
            run.add(rel, page.body_line - 1 + fact.line, "MF110", _uncited(fact, page.body_line))
    aliases = tuple(page.aliases) if kind == "page" else ()
    return ReadPage(id=page.id if kind == "page" else "", aliases=aliases, links=links)


def _uncited(fact: FactLine, body_line: int) -> str:
    text = fact.text if len(fact.text) <= 60 else fact.text[:57].rstrip() + "..."
    if fact.claim_line:
        return f"line wraps the claim on line {body_line - 1 + fact.claim_line}, uncited: {text!r}"
    return f"uncited factual line: {text!r}"


def _check_pages(run: _Run) -> None:
    """The cross-page rules: duplicate ids, an alias that is another page's id, links
    that resolve to no page."""
    by_id = _by_id(run)
    for pid, rels in by_id.items():
        if pid and len(rels) > 1:
            for rel in rels:
                if rel in run.others:
                    continue  # not read: _implicated made sure this never happens
                others = ", ".join(sorted(f"memory/{r}" for r in rels if r != rel))
                run.at_key(rel, "id", "MF007", f"duplicate id {pid!r} (also {others})")
    owners = _owners(run, {a.lower() for page in run.pages.values() for a in page.aliases})
    for rel, page in run.pages.items():
        for alias in page.aliases:
            owner = _other_owner(owners, alias, rel)
            if owner:
                run.at_key(rel, "aliases", "MF008", f"alias {alias!r} is the id of memory/{owner}")
    keys = _LinkKeys(run)
    for rel, page in [*run.pages.items(), *run.summaries.items()]:
        for line, target in page.links:
            name = target.split("#", 1)[0].strip()
            if name not in keys and name.lower() not in keys:
                run.add(rel, line, "MF201", f"link [[{target}]] resolves to no page")


def _check_meta(run: _Run, rel: str, meta: dict[str, Any]) -> None:
    for key in REQUIRED_KEYS:
        if meta.get(key) in (None, "", [], {}):
            run.add(rel, 1, "MF004", f"missing required key {key!r}")
    pid = meta.get("id")
    if pid is not None and not isinstance(pid, str):
        run.at_key(rel, "id", "MF005", f"id must be a string, not {pid!r}")
    elif pid and pid != _stem(rel):
        run.at_key(rel, "id", "MF006", f"id {pid!r} differs from file name {_stem(rel)!r}")
    for key in ("updated", "created"):
        if meta.get(key) not in (None, "") and not _iso_date(meta[key]):
            run.at_key(rel, key, "MF005", f"{key} {meta[key]!r} is not an ISO date")
    aliases = meta.get("aliases")
    if not isinstance(aliases, str | None) and not (
        isinstance(aliases, list) and all(isinstance(a, str) for a in aliases)
    ):
        run.at_key(rel, "aliases", "MF005", "aliases must be a list of strings")
    if meta.get("status") not in (None, *_STATUSES):
        run.at_key(rel, "status", "MF005", f"status {meta['status']!r} is not current/superseded")
    _check_scope(run, rel, meta, required=False)


def _iso_date(value: Any) -> bool:
    if isinstance(value, _dt.date):
        return True
    if not isinstance(value, str):
        return False
    try:
        _dt.datetime.fromisoformat(value)
    except ValueError:
        return False
    return True


def _check_body(run: _Run, rel: str, page: Page) -> tuple[tuple[int, str], ...]:
    """The body's rules but whether its links resolve: the (line, target) of each link
    to resolve once every page is known."""
    body = page.body
    links, cites = extract(body) if "[[" in body or "[cite:" in body else ([], [])
    offset = page.body_line - 1
    pending: list[tuple[int, str]] = []
    for link in links:
        target = link.target.split("#", 1)[0].strip()
        why = _unsafe(link.target)
        if why:
            run.add(rel, offset + link.line, "MF301", f"link {link.target!r} {why}")
        elif target:
            pending.append((offset + link.line, link.target))
    if "sources" not in page.meta:
        if cites:
            run.add(rel, offset + cites[0].line, "MF101", "body cites but has no 'sources' list")
        return tuple(pending)
    valid = _check_sources(run, rel, page.meta["sources"])
    for cite in cites:
        if cite.n not in valid:
            run.add(rel, offset + cite.line, "MF106", f"[cite:{cite.n}] names no source")
    return tuple(pending)


def _check_sources(run: _Run, rel: str, sources: Any) -> set[int]:
    """Check every entry; return the ids a ``[cite:N]`` may name. The entries' file lines
    are looked for only when one has a finding (a hub page lists hundreds)."""
    if not isinstance(sources, list):
        run.at_key(rel, "sources", "MF102", "sources must be a list")
        return set()
    seen: set[int] = set()
    found: list[tuple[int, str, str]] = []  # (entry index, code, message)
    for i, entry in enumerate(sources):
        if not isinstance(entry, dict):
            found.append((i, "MF102", f"source entry {entry!r} is not a mapping"))
            continue
        sid = entry.get("id")
        if isinstance(sid, bool) or not isinstance(sid, int):
            found.append((i, "MF103", f"source id {sid!r} is not an integer"))
        elif sid in seen:
            found.append((i, "MF103", f"source id {sid} is used twice"))
        else:
            seen.add(sid)
        at, digest = entry.get("at"), entry.get("hash")
        if at is not None and not _iso_date(at):
            found.append((i, "MF105", f"source at {at!r} is not an ISO date"))
        if digest is not None and not (isinstance(digest, str) and _HASH_RE.match(digest)):
            found.append((i, "MF105", f"source hash {digest!r} is not a lowercase hex string"))
            digest = None
        found.extend((i, code, why) for code, why in _check_ref(run, entry.get("ref"), digest))
    if found:
        lines = _source_lines(run.text(rel), len(sources))
        for i, code, message in found:
            run.add(rel, lines[i], code, message)
    return seen


def _check_ref(run: _Run, ref: Any, digest: str | None) -> list[tuple[str, str]]:
    """(code, message) of what is wrong with a source's ref."""
    if not isinstance(ref, str):
        why = "has no 'ref'" if ref is None else f"ref {ref!r} is not a string"
        return [("MF104", f"source {why}")]
    why = _unsafe(ref)
    if why:
        return [("MF301", f"source ref {ref!r} {why}")]
    m = _REF_RE.match(ref)
    if m is None:
        return [("MF104", f"source ref {ref!r} is not a transcript turn")]
    path = f"{_TRANSCRIPTS}{m.group(1)}.md"
    if path not in run.transcripts:
        if ref in run.unread_refs:
            return []
        return [("MF107", f"source ref {ref!r}: no transcript memory/{path}")]
    transcript = run.transcripts[path]
    if transcript is None:
        return []  # unreadable transcript: reported on the transcript itself
    turn_hash = transcript.hash_of(m.group(2))
    if turn_hash is None:
        return [("MF108", f"source ref {ref!r}: the transcript has no turn {m.group(2)}")]
    if digest and turn_hash != digest:
        return [("MF109", f"stale citation {ref!r}: hash {digest}, turn is {turn_hash}")]
    return []


# -- the deletion log ----------------------------------------------------------


def _check_deletions(run: _Run, log: str) -> None:
    pages: dict[str, list[str]] = {}
    for rel in run.page_files:
        pages.setdefault(_stem(rel), []).append(rel)
    for rel, page in run.pages.items():
        pages.setdefault(page.id, []).append(rel)
    sessions: dict[str, list[str]] = {}
    for rel in [*run.transcripts, *run.summaries]:
        sessions.setdefault(_stem(rel), []).append(rel)
    texts = ((rel, run.text(rel)) for rel in [*run.pages, *run.summaries])  # one at a time
    for rel, line, code, message in tombstone_findings(log, pages, sessions, texts):
        run.add(rel, line, code, message)
