"""A person page's cited profile: facet by facet, the things their claims name, with evidence.

Job: the ``## Profile`` section, the first of a person page's body, one bullet per facet
of ``dream.language.facets`` (its full heading, with the category words a question asks by:
"hobbies, activities", "trips, places", "events"), then the things the person's claims
name in that facet, each followed by citations of turns that name it::

    - Arts, crafts and music (hobbies, activities): painting [cite:12][cite:101], pottery [cite:45]

A dated log answers "what did Melanie do on 3 July"; only an aggregate across sessions
answers "what activities does Melanie do", whose evidence is spread over many sessions.

Honest by construction: a thing cites a turn only when a claim of the page naming it
cites that turn *and* the turn's own text names it (in any form: "painted" for
"painting"; ``turn_text`` is asked, so a claim whose question part named the thing
while its cited answer did not cites nothing for it). Citations reuse the page's
``sources`` ids. Regenerated from the page's current claims whenever the page changes,
deterministically; a superseded claim's thing goes with it unless another claim names it.

Archives: a hub page rolls its old claims into archives written once
(``dream.wiki.rollover``), and the profile must still cover what was said before. It keeps
them by carrying: a citation of the old profile whose claim left the page (rolled away,
so no claim line of the page cites it any more) stays on its thing, and its source entry
stays on the page with it. The profile is refreshed before each roll, so a rolled
claim's things were already on it. The alternative, reading every archive whenever the
page changes, would make each run's cost grow with the person's whole history, which
rolling exists to bound. Archives themselves get no profile: recall folds them into
their page (``memoryfs.pages.archives``), and one profile per family says it once.

Cost: a page's profile is rebuilt from all its claims, but what each cited turn names is
remembered across runs (``dream.wiki.cited_names``), and the semantic gate checks only the
(thing, citation) pairs a bullet did not hold in the base commit
(``dream.gates.profilecheck``, with ``bullet``), so an incremental run reads the
transcripts it added rather than most of the person's history.

Boundary: claims, citations and turn texts in, section lines out; no file access.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache

from dream.language.facets import HEADINGS, facet_of, thing_key, words
from memoryfs.index.units import PROFILE_SECTION

__all__ = ["PROFILE", "THINGS", "CITES", "bullet", "profile_lines", "summary_parts"]

PROFILE = PROFILE_SECTION  # the heading recall reads as a profile (``memoryfs.index.units``)
THINGS = 6  # things shown per facet, most mentioned first
CITES = 4  # citations per thing: first and latest mention, spread over distinct sessions
MIN_SESSIONS = 2  # sessions a facet's citations must span: a profile aggregates across them
_BULLET_RE = re.compile(r"^- (?P<head>[^:]+): (?P<rest>.*)$")
_THING_RE = re.compile(r"\s*(?P<form>[^,\[\]]+?)\s*(?P<cites>(?:\[cite:\d+\])+)\s*(?:,|$)")
_CITE_RE = re.compile(r"\[cite:(\d+)\]")
_BY_HEADING = {h.lower(): h for h in HEADINGS}


@dataclass
class _Thing:
    facet: str
    forms: dict[str, int] = field(default_factory=dict)
    cites: set[int] = field(default_factory=set)
    mentions: int = 0  # claims naming it, plus the citations carried for it


def carried(
    lines: Iterable[str], cited: set[int], known: set[int]
) -> dict[str, tuple[str, str, list[int]]]:
    """thing key -> (facet, form, citations) of the old profile ``lines`` whose citations
    no claim line of the page names any more (``cited``): their claims were rolled away.
    A citation whose source the page no longer has (``known``) is dropped."""
    out: dict[str, tuple[str, str, list[int]]] = {}
    for line in lines:
        m = _BULLET_RE.match(line.strip())
        facet = _BY_HEADING.get(m.group("head").strip().lower()) if m else None
        if m is None or facet is None:
            continue
        for t in _THING_RE.finditer(m.group("rest")):
            ns = [int(n) for n in _CITE_RE.findall(t.group("cites"))]
            kept = [n for n in ns if n not in cited and n in known]
            if kept:
                form = t.group("form").strip()
                out.setdefault(thing_key(form), (facet, form, []))[2].extend(kept)
    return out


def bullet(line: str) -> list[tuple[str, list[int]]] | None:
    """(thing, citations) of each thing of a well-formed profile bullet (a facet's exact
    heading, then things each followed by citations, nothing else); None otherwise."""
    m = _BULLET_RE.match(line.strip())
    if m is None or m.group("head") not in HEADINGS:
        return None
    rest, pos, out = m.group("rest"), 0, []
    while pos < len(rest):
        t = _THING_RE.match(rest, pos)
        if t is None or t.end() == pos:
            return None
        out.append((t.group("form").strip(), [int(n) for n in _CITE_RE.findall(t.group("cites"))]))
        pos = t.end()
    return out or None


def profile_lines(
    claims: Iterable[tuple[str, tuple[int, ...]]],
    kept: dict[str, tuple[str, str, list[int]]],
    names: Iterable[str],
    session_of: Callable[[int], str],
    names_it: Callable[[int, str], bool],
) -> list[str]:
    """The profile bullets of a page from its current ``claims`` (text, source ids) in
    page order and the ``kept`` citations of rolled claims (``carried``).
    ``session_of(n)`` is the session source ``n`` cites ("" if unknown);
    ``names_it(n, stem)`` whether its turn names the thing."""
    skip = {w.lower() for n in names if n for w in n.split()}
    things: dict[str, _Thing] = {}
    for s, (home, form, held) in kept.items():
        t = things.setdefault(s, _Thing(home))
        t.forms[form] = t.forms.get(form, 0) + 1
        t.cites.update(held)
        t.mentions += len(set(held))
    for text, cites in claims:
        seen: set[str] = set()
        for w in words(text):
            s, facet = _word(w)
            if facet is None or w in skip or s in seen:
                continue
            seen.add(s)
            good = [n for n in cites if names_it(n, s)]
            if not good:
                continue  # the claim names it, its cited turns do not
            t = things.setdefault(s, _Thing(facet))
            t.forms[w] = t.forms.get(w, 0) + 1
            t.cites.update(good)
            t.mentions += 1
    by_facet: dict[str, list[tuple[str, _Thing]]] = {}
    for s, t in things.items():
        by_facet.setdefault(t.facet, []).append((s, t))
    ranked = []
    for facet, found in by_facet.items():
        found.sort(key=lambda st: (-st[1].mentions, min(st[1].cites), st[0]))
        shown = found[:THINGS]
        parts: list[str] = []
        sessions: set[str] = set()
        for _s, t in shown:
            form = max(t.forms, key=t.forms.__getitem__)  # a tie: the form shown first
            picked = _pick(sorted(t.cites), session_of)
            sessions.update(session_of(n) or str(n) for n in picked)
            parts.append(f"{form} " + "".join(f"[cite:{n}]" for n in picked))
        if len(sessions) < MIN_SESSIONS:
            continue  # one session's facet: its dated section says it already
        weight = sum(t.mentions for _s, t in shown)
        ranked.append((-weight, HEADINGS.index(facet), f"- {facet}: {', '.join(parts)}"))
    return [line for *_key, line in sorted(ranked)]


def summary_parts(lines: Iterable[str], per_facet: int = 3) -> list[str]:
    """The profile ``lines`` (bullets, busiest facet first) as a summary says them:
    ``["arts, crafts and music: painting, pottery", ...]``, the facet's short name and the
    first ``per_facet`` things the person came back to (named in two turns or more). Every
    word is a word of the cited bullets, so the summary says only what the page's claims
    say (``dream.gates.frontmatter``)."""
    out: list[str] = []
    for line in lines:
        things = [form for form, cites in bullet(line) or () if len(set(cites)) >= 2]
        if things:
            head = line.strip()[2:].split(":", 1)[0]
            short = head.split(" (", 1)[0].strip().lower()
            out.append(f"{short}: {', '.join(things[:per_facet])}")
    return out


@lru_cache(maxsize=1 << 12)
def _word(w: str) -> tuple[str, str | None]:
    """(thing key, facet) of a claim's word: a page's claims repeat their words."""
    return thing_key(w), facet_of(w)


def _pick(cites: list[int], session_of: Callable[[int], str]) -> list[int]:
    """Up to ``CITES`` of ``cites`` (oldest source first): the first mention, the latest
    and, between them, evenly spaced ones, from distinct sessions where there are enough."""
    firsts: dict[str, int] = {}
    for n in cites:
        firsts.setdefault(session_of(n) or str(n), n)
    pool = list(firsts.values())  # the first mention in each session, in order
    if len(pool) <= CITES:
        return pool
    if CITES == 1:
        return [pool[0]]
    step = (len(pool) - 1) / (CITES - 1)
    return sorted({pool[round(i * step)] for i in range(CITES)})
