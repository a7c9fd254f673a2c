"""Phase 4, update the wiki: file claims on subject pages, notes, links, then the indexes.

Job: for every ``Filing`` (in session order) load its page once (``dream.wiki.subject_page``: a
re-read claim is skipped, a near-duplicate merged, a claim of the same functional slot
supersedes the current one, anything else goes under the session's dated section), write
one-hop notes (``dream.phases.notes``; a superseded claim's note is marked superseded too), roll
over pages past their bound (``dream.wiki.rollover``), add ``[[links]]`` between subjects named
together, write every changed file once, and regenerate INDEX.md and sessions/index.md.
Pages no pending session touches are never opened, so their bytes cannot change; the
open ones are bounded (``dream.phases.open_pages``).
"""

from __future__ import annotations

from collections.abc import Callable

from dream.engines.base import EngineContext
from dream.landing.staging import Stage
from dream.phases import notes
from dream.phases.attach import Attached
from dream.phases.open_pages import OpenPages
from dream.phases.summarize import Summarized
from dream.phases.workset import Workset
from dream.wiki import cited_names, rollover
from dream.wiki.cited_names import CitedNames
from dream.wiki.claim_keys import norm
from dream.wiki.subject_page import Retired, WikiPage
from dream.wiki.subjects import Registry, Subject

__all__ = ["LINKED_ARCHIVES", "run"]

LINKED_ARCHIVES = 3  # the newest archives a page links under Related


def run(ctx: EngineContext, ws: Workset, summarized: Summarized, attached: Attached) -> None:
    turns = CitedNames(ws.read, ctx.store.cache_dir / cited_names.NAME, ws.store.config.roster)
    try:
        _run(ctx, ws, summarized, attached, turns)
    finally:
        turns.close()


def _run(
    ctx: EngineContext, ws: Workset, summarized: Summarized, attached: Attached, turns: CitedNames
) -> None:
    registry = attached.registry

    def settle(page: WikiPage) -> None:
        if page.changed and rollover.needs_roll(page):
            _roll(page, pages, registry)

    pages = OpenPages(ws, summarized.speakers, registry, turns.named)
    # what _link_pages needs of the filings: the subjects each page's claims named
    named: dict[str, dict[str, None]] = {}
    # the claims a page superseded this run, by text: copies filed later are superseded too
    retired: dict[str, list[tuple[str, Retired]]] = {}
    filed = 0
    for filing in attached.filings:
        if filed % 200 == 0:
            ctx.progress("wiki", filed, max(filed, summarized.facts.count))
        pages.step()
        filed += 1
        if filing.links:
            named.setdefault(filing.subject.id, {}).update(dict.fromkeys(filing.links))
        page = pages.get(filing.subject)
        result = page.add(filing.fact)
        if result == "duplicate":
            continue
        for sid, old in retired.get(norm(filing.fact.text), ()):
            # a copy filed after its subject's page superseded the claim (a session read
            # late, its claim straight to History): not current here either
            if sid != filing.subject.id and page.retire_copy(old):
                settle(page)
        if result == "merged":
            ws.report.claims_merged += 1
        else:
            ws.report.claims_added += 1
            ws.report.claims_superseded += result == "superseded"
        if filing.primary:
            notes.maybe_note(ws, registry, filing)
        for old in page.retired:  # a note or another page must not keep it current
            retired.setdefault(norm(old.text), []).append((filing.subject.id, old))
            notes.retire_note(ws, filing.subject, old.text, old.said, old.on, old.refs, old.days)
            linked = [*page.linked(), *named.get(filing.subject.id, {})]
            for copy in _retire_copies(page, old, linked, pages.get, registry):
                settle(copy)
        page.retired.clear()
        # rolled as it grows, so no page holds a store's worth of claims (dream.wiki.rollover)
        settle(page)
    _link_pages(registry, pages, named)
    pages.close()  # each page let go once rendered: the indexes come next
    summarized.facts.clear()  # filed: the indexes are written without the run's facts
    created, updated = ws.flush()
    for rel in created:
        if rel.startswith("notes/"):
            ws.report.notes_written += 1
        elif rel.startswith("knowledge/"):
            ws.report.pages_created.append(rel)
    ws.report.pages_updated.extend(r for r in updated if not r.startswith("sessions/"))
    # from the stage's facts cache, re-reading only what changed (``dream.landing.staging``)
    Stage(ctx.run_id, ctx.stage_root, ctx.base_commit).write_indexes(ctx.store)
    ctx.progress("wiki", filed, filed)


def _retire_copies(
    page: WikiPage,
    old: Retired,
    linked: list[str],
    page_of: Callable[[Subject], WikiPage],
    registry: Registry,
) -> list[WikiPage]:
    """A claim is filed on every subject it names ("Dana lives in Cascais" on Dana's page and
    on Cascais's): when its subject's page supersedes it, the copies on the pages it names
    among ``linked`` (the page's links, and the subjects its claims named this run) are
    superseded too; the pages that had one. (Copies already rolled into an archive stay as
    they are.)"""
    said = old.text.lower()
    changed: list[WikiPage] = []
    for sid in dict.fromkeys(linked):
        subject = registry.subjects.get(sid)
        if subject is None or sid == page.subject.id:
            continue
        if any(n.lower() in said for n in (subject.title, *subject.aliases) if n):
            other = page_of(subject)
            if other.retire_copy(old):
                changed.append(other)
    return changed


def _roll(page: WikiPage, pages: OpenPages, registry: Registry) -> None:
    """Roll ``page``'s old claims into new archives. Each archive links its page and the
    archive before it; the page links its newest ``LINKED_ARCHIVES``, so its Related list
    does not grow with every roll (a hub page touched by every session had one line per
    archive: 642 at 8,000 synthetic sessions). Every archive stays one link hop from the
    next; recall finds a page's archives by name (``memoryfs.pages.archives``)."""
    subject = page.subject
    while rollover.needs_roll(page):
        page.refresh_profile()  # a rolled claim's things stay on the profile (dream.wiki.profile)
        aid = rollover.roll(page, lambda day: pages.get(registry.archive_of(subject, day)))
        if not aid:
            return
        archive = pages[aid]
        linked = [(sid, title) for sid, title in page.archive_links() if sid != aid]
        archive.link([(subject.id, subject.title), *linked[-1:]])
        page.link([(aid, archive.subject.title)])
        for sid, _title in linked[: max(0, len(linked) + 1 - LINKED_ARCHIVES)]:
            page.unlink(sid)


def _link_pages(registry: Registry, pages: OpenPages, named: dict[str, dict[str, None]]) -> None:
    """Context edges: subjects named in the same claim link both ways (``named``: page id
    -> the subjects its filed claims named); a person links to their preferences page and
    back."""
    edges: dict[str, set[str]] = {}
    for sid, others in named.items():
        if not pages.dated(sid):
            continue
        for other in others:
            edges.setdefault(sid, set()).add(other)
            edges.setdefault(other, set()).add(sid)
    for subject in pages.opened():
        sid = subject.id
        if subject.type == "preference" and sid.endswith("-preferences"):
            owner = sid[: -len("-preferences")]
            edges.setdefault(sid, set()).add(owner)
            edges.setdefault(owner, set()).add(sid)
    for sid in sorted(edges):
        pages.step()
        linking = registry.subjects.get(sid)
        if linking is None:
            continue
        targets = [(o, registry.subjects[o].title) for o in edges[sid] if o in registry.subjects]
        pages.get(linking).link(targets)
