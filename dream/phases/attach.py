"""Phase 3, attach facts: extract each session's facts and decide which page each goes to.

Job: take the engine's facts of every summarized session, then resolve each subject
name to a page: an existing one by title or alias (rapidfuzz, ``dream.wiki.subjects``), else a
new one whose type is voted across the run's sessions. A name nobody typed (a "topic") gets
a page only when it recurs across at least two sessions of the store; preferences go to
their speaker's preferences page. The result is the ``Filing``s for the wiki phase, in
session order, made a session at a time from the facts on disk (``dream.phases.spilled_facts``):
only compact counters (votes, the sessions a name is seen in) span the run. It returns them
with the subject registry (``Attached``). Boundary: writes nothing.
"""

from __future__ import annotations

import subprocess
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from dream.engines.base import EngineContext
from dream.phases.summarize import Summarized
from dream.phases.workset import Workset
from dream.records import Fact
from dream.wiki.subjects import Registry, Subject
from memoryfs.forget.deletions import has_phrase

__all__ = ["Attached", "Filing", "run", "recurring_in_store"]

_TYPE_ORDER = ("person", "org", "place", "project")


@dataclass(frozen=True, slots=True)
class Filing:
    """One fact filed on one subject page. ``primary``: the first page its claim went to."""

    subject: Subject
    fact: Fact
    primary: bool
    links: tuple[str, ...] = ()  # ids of the other subjects the claim names


@dataclass(frozen=True)
class Attached:
    """What the attach phase hands the wiki phase: the subjects of the store and of this run,
    and the filings in session order (an iterable that reads the facts back a session at a
    time, so the run's facts are never all held at once)."""

    registry: Registry
    filings: Iterable[Filing]


def run(ctx: EngineContext, ws: Workset, summarized: Summarized) -> Attached:
    registry = Registry.load(ws.store, ws.deletions)
    facts = _Facts(summarized, ws)
    votes: dict[str, Counter[str]] = defaultdict(Counter)
    # the number of sessions each name is seen in, and the last one: the facts come a
    # session at a time, so a name's sessions are counted, not held
    seen_in: Counter[str] = Counter()
    last_in: dict[str, str] = {}
    # of those votes, the sessions whose vote rests on weak cues only ("moved to X", the shape
    # of a name): typed evidence of other sessions wins over them
    weak: dict[str, Counter[str]] = defaultdict(Counter)
    preferring: dict[str, None] = {}  # names with a preference, in order of first one
    for sid in summarized.facts:
        for f in facts.of(sid):
            kind = "person" if f.subject_type == "preference" else f.subject_type
            if last_in.get(f.subject) != sid:
                last_in[f.subject] = sid
                seen_in[f.subject] += 1
                votes[f.subject][kind] += 1
                weak[f.subject][kind] += f.weak
            if f.subject_type == "preference":
                preferring.setdefault(f.subject)
    subjects = _resolve_all(ws, registry, votes, seen_in, weak)
    for name in preferring:  # every preferences page exists before any page is filed
        if (subject := subjects.get(name)) is not None:
            registry.preferences_of(subject)
    sessions = len(summarized.sessions)
    ctx.progress("attach", sessions, sessions)
    return Attached(registry, _Filings(facts, registry, subjects))


class _Facts:
    """The summarized sessions' facts, read back from the spill; a forgotten phrase never
    comes back through a claim."""

    def __init__(self, summarized: Summarized, ws: Workset) -> None:
        self.summarized = summarized
        self.deletions = ws.deletions

    def of(self, sid: str) -> list[Fact]:
        facts = self.summarized.facts.get(sid)
        if self.deletions:
            facts = [f for f in facts if not has_phrase(f.text, self.deletions)]
        return facts


class _Filings:
    """The run's filings in session order, made a session at a time from the facts on
    disk (each pass reads them again), so the wiki phase never holds them all."""

    def __init__(self, facts: _Facts, registry: Registry, subjects: dict[str, Subject | None]):
        self.facts = facts
        self.registry = registry
        self.subjects = subjects

    def __iter__(self) -> Iterator[Filing]:
        for sid in self.facts.summarized.sessions:
            yield from self._of_session(sid)

    def _of_session(self, sid: str) -> Iterator[Filing]:
        subjects, registry = self.subjects, self.registry
        first_target: dict[tuple[str, tuple[str, ...]], str] = {}
        for f in self.facts.of(sid):
            subject = subjects.get(f.subject)
            if subject is None:
                continue
            if f.subject_type == "preference":
                prefs = registry.preferences_of(subject)
                if prefs is None:
                    continue
                subject = prefs
            key = (f.text, tuple(e.ref for e in f.evidence))
            primary = first_target.setdefault(key, subject.id) == subject.id
            links = tuple(
                dict.fromkeys(
                    s.id
                    for m in f.mentions
                    if (s := subjects.get(m)) is not None and s.id != subject.id
                )
            )
            yield Filing(subject, f, primary, links)


def _decide_type(votes: Counter[str], weak: Counter[str] | None = None) -> str:
    """The type most sessions give a name on typed evidence; when all of it is weak
    (``weak``: the sessions whose vote rests on weak cues only), the type of the most
    weak votes, where any other type wins over a person made by the shape of a name
    ("Temple Quay" said after "walked over to" in one session, in no typed way in two)."""
    strong = Counter({k: votes[k] - (weak[k] if weak else 0) for k in _TYPE_ORDER})
    typed = [k for k in _TYPE_ORDER if strong[k] > 0]
    if typed:
        return max(typed, key=lambda k: (strong[k], -_TYPE_ORDER.index(k)))
    typed = [k for k in _TYPE_ORDER if votes[k]]
    if not typed:
        return "topic"
    return max(typed, key=lambda k: (k != "person", votes[k], -_TYPE_ORDER.index(k)))


def _kind_within(
    name: str,
    kind: str,
    registry: Registry,
    votes: dict[str, Counter[str]],
    weak: dict[str, Counter[str]] | None = None,
) -> str:
    """A "person" whose first or last word is a place or an organisation of the store or of
    this run is named after it, not someone ("Berlin Hbf", "Lisbon Airport")."""
    words = name.split()
    if kind != "person" or len(words) < 2:
        return kind
    for word in (words[0], words[-1]):
        known = registry.resolve(word)
        typed = _decide_type(votes[word], (weak or {}).get(word)) if word in votes else ""
        inner = known.type if known else typed
        if inner in ("place", "org"):
            return inner
    return kind


def _resolve_all(
    ws: Workset,
    registry: Registry,
    votes: dict[str, Counter[str]],
    seen_in: Counter[str],
    weak: dict[str, Counter[str]],
) -> dict[str, Subject | None]:
    """Name -> subject page, longest names first so "Priya" finds "Priya Natarajan"."""
    out: dict[str, Subject | None] = {}
    names = sorted(votes, key=lambda n: (-len(n.split()), -len(n), n))
    lonely_topics = [
        n
        for n in names
        if _decide_type(votes[n], weak[n]) == "topic"
        and seen_in[n] < 2
        and registry.resolve(n) is None
    ]
    recurring = recurring_in_store(ws, lonely_topics)
    for name in names:
        kind = _kind_within(name, _decide_type(votes[name], weak[name]), registry, votes, weak)
        subject = registry.resolve(name, kind)
        if subject is None and kind != "topic" and 0 < weak[name][kind] >= votes[name][kind]:
            # only weak cues typed it ("back at X", "moved to X", the shape of the name): the
            # short form of a page of the store or of this run is that page, whatever its
            # type ("at Archiva" for "Archiva Foundation", "over to Odile" for "Odile
            # Brandt"), and a place most of its sessions leave untyped stays a topic
            subject = registry.resolve(name, "topic")
            if subject is None and kind == "place" and votes[name]["topic"] > votes[name]["place"]:
                kind = "topic"
        if subject is not None:
            if subject.type != "preference":
                registry.add_alias(subject, name)
            out[name] = subject
            continue
        if kind == "topic" and seen_in[name] < 2 and name not in recurring:
            out[name] = None  # said once: a word in a claim, not a subject of its own
            continue
        out[name] = registry.create(name, kind)
    return out


def recurring_in_store(ws: Workset, names: list[str]) -> set[str]:
    """Those of ``names`` that occur (whole word, any case) in at least two transcripts of
    the staged tree. One ``git grep`` for all names: C speed over the whole store."""
    if not names:
        return set()
    args = ["git", "grep", "--untracked", "-o", "-i", "-F", "-w"]
    for n in names:
        args += ["-e", n]
    args += ["--", "memory/sessions/transcripts"]
    try:
        proc = subprocess.run(
            args, cwd=ws.store.root, capture_output=True, text=True, timeout=120, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return set()
    files: dict[str, set[str]] = defaultdict(set)
    for line in proc.stdout.splitlines():
        path, _, match = line.partition(":")
        files[match.lower()].add(path)
    return {n for n in names if len(files.get(n.lower(), ())) >= 2}
