"""Frontmatter claims: a page's ``summary`` and a non-subject page's ``title`` say only
what the page's cited claims say.

INDEX.md prints each page's ``summary`` line and each session's title, and search and
recall serve a page's head (``memoryfs.index.units``): a reader takes them for facts as much as
any claim line, so the semantic gate holds them to the claim rule, with the page's
current (not superseded) claims as their evidence (all of them on a page that is
history as a whole, ``status: superseded``). "Supported" is
``dream.gates.support.check_claim`` against a ``Support`` made of those claims'
texts: their names, numbers and dates (written in the claims, or the day of the dated
section holding them), so whatever that check learns to ask of a claim, a summary is
asked too. A subject page's subject (title, aliases) may be named by its summary, as by
its claims.

- ``summary`` of any page under ``knowledge/``, ``notes/`` or ``sessions/summaries/``:
  DV110 for each part no current claim of the page supports;
- ``title`` (DV111) of a page that is not a subject page: a subject page's title
  (``knowledge/<folder>/`` of ``dream.wiki.subjects.FOLDERS``: a person, organisation,
  place, project, topic or someone's preferences) is the subject's name, chosen with
  its aliases by the attach phase; a note's title says what its claim says, and so does
  a page anywhere else. A session summary's title names its session ("Tidewater
  interview", "Caroline and Melanie, session 3: LGBTQ"): what the session's own name
  (its id, its transcript's title) and the session's turns support, besides its claims.

Checked only when new or changed relative to the base commit: a frontmatter line that
landed before is not the run's doing. Boundary: reads the staged page, its base and,
for a summary's title, its transcript; returns problems; writes nothing.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable
from pathlib import Path

from dream.gates import Problem, base_page
from dream.gates.claimtext import claim_dates, plain
from dream.gates.entailment import TurnView, evidence
from dream.gates.support import Support, check_claim, support_for
from dream.wiki.subjects import FOLDERS
from memoryfs.errors import PageError
from memoryfs.pages.claims import Claim, extract_claims
from memoryfs.pages.page import Page
from memoryfs.pages.speakers import Roster
from memoryfs.pages.transcript import parse_transcript
from memoryfs.store.scan import read_text
from memoryfs.store.store import Store

__all__ = ["frontmatter_problems", "claims_support", "is_subject_page"]

GATE = "verification"
_SUBJECT_DIRS = tuple(f"memory/knowledge/{folder}/" for folder in FOLDERS.values())
_SUMMARIES = "memory/sessions/summaries/"
_TRANSCRIPTS = "memory/sessions/transcripts/"
_WORD_RE = re.compile(r"[\w'’-]+")
_SLUG_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}-?")


def is_subject_page(path: str) -> bool:
    """Whether ``path`` (relative to the store root) is a subject page, whose title is
    the subject's name rather than something said about it."""
    return path.startswith(_SUBJECT_DIRS)


def claims_support(claims: Iterable[Claim], subject: Iterable[str] = ()) -> Support:
    """What ``claims`` let a frontmatter line say: their texts, the ``subject``'s words
    as names, and the dates the claims write or are filed under (a dated section)."""
    texts: list[str] = []
    sections: dict[str, None] = {}
    for claim in claims:
        texts.append(plain(claim.text))
        sections[claim.section] = None
    dates = [ref for section in sections for ref in _dates(section, None)]
    # "7 May" in a claim is of the year its section is dated in
    year = min((first.year for first, _ in dates), default=None)
    dates += [ref for text in texts for ref in _dates(text, year)]
    names = frozenset(w.lower() for name in subject for w in _WORD_RE.findall(name))
    # the claims are what the line may say, as turns are for a claim: its meaning too
    # (``dream.gates.entailment``), each claim read as one turn that no one speaks
    said = evidence(TurnView(text, frozenset(), frozenset()) for text in texts)
    return Support(text="\n".join(texts).lower(), names=names, dates=tuple(dates), evidence=said)


def _dates(text: str, year: int | None) -> list[tuple[dt.date, str]]:
    found, _ = claim_dates(text, year)
    return [(first, gran) for (first, gran, _given), _raw in found]


def frontmatter_problems(
    store: Store, stage_root: Path, base: str, path: str, page: Page, is_new: bool
) -> list[Problem]:
    """DV110 / DV111 for the staged ``page`` at ``path`` (relative to the root)."""
    old = None if is_new else base_page(store, base, path)
    summary = _new_line(page, old, "summary")
    title = _new_line(page, old, "title") if not is_subject_page(path) else ""
    if not summary and not title and _heading(page) == (_heading(old) if old else None):
        return []
    claims = extract_claims(page)
    # a page that is history as a whole (``status: superseded``, a note whose claim was
    # superseded) is summed up by the claims it keeps
    whole = str(page.meta.get("status", "")).strip().lower() == "superseded"
    current = claims if whole else [c for c in claims if not c.superseded]
    out: list[Problem] = []
    if summary:
        # a subject page's summary may name its subject, as its claims may; a note's title
        # is no name but a sentence, checked on its own
        subject = (page.title, *page.aliases) if is_subject_page(path) else ()
        support = claims_support(current, subject)
        for code, why in check_claim(summary, support):
            out.append(_problem(page, path, "summary", "DV110", _why("summary", code, why)))
    if title:
        support = claims_support(current)
        found = check_claim(title, support)
        if found and path.startswith(_SUMMARIES):
            session = _session_support(store, stage_root, path)
            if session is not None:
                found = check_claim(title, _joined(support, session))
        for code, why in found:
            out.append(_problem(page, path, "title", "DV111", _why("title", code, why)))
    heading = _heading(page)
    if heading is not None and not is_subject_page(path):
        # a note's "# heading" says what its title says: held to the claims the same way
        line, text = heading
        before = _heading(old) if old is not None else None
        if text != title and (before is None or before[1] != text):
            found = check_claim(text, claims_support(current))
            if found and path.startswith(_SUMMARIES):
                session = _session_support(store, stage_root, path)
                if session is not None:
                    found = check_claim(text, _joined(claims_support(current), session))
            for code, why in found:
                message = _why("title", code, why).replace("title", "heading", 1)
                out.append(Problem(GATE, path, line, "DV111", message))
    return out


def heading(page: Page) -> tuple[int, str] | None:
    """The file line and text of a page's first level-1 heading, if it has one."""
    return _heading(page)


def _heading(page: Page) -> tuple[int, str] | None:
    for n, line in enumerate(page.body.split("\n")):
        if line.startswith("# "):
            return page.body_line + n, line[2:].strip()
    return None


def _new_line(page: Page, old: Page | None, key: str) -> str:
    """The page's ``key`` when it is a non-empty string new or changed since the base."""
    value = page.meta.get(key)
    if value is None or isinstance(value, list | dict) or not str(value).strip():
        return ""  # a list or mapping is validation's to report (MF005 for a title)
    if old is not None and old.meta.get(key) == value:
        return ""
    return str(value)


def _session_support(store: Store, stage_root: Path, path: str) -> Support | None:
    """What a session summary's title may say: the session's name (the id's words, the
    transcript's title) and its turns."""
    sid = path.rsplit("/", 1)[1].removesuffix(".md")
    roster: Roster | None = store.config.roster
    text = read_text(
        stage_root / "memory", f"sessions/transcripts/{sid}.md", store.config.budgets.max_file_bytes
    )
    try:
        if text is None:
            return None  # missing or not a file validation accepts: it reports which
        t = parse_transcript(text, f"sessions/transcripts/{sid}.md", roster)
    except (PageError, ValueError):
        return None  # validation reports a summary without its transcript (MF404)
    turns = support_for([(t, turn) for turn in t.turns])
    # the id as it is ("late-0", "chat-17") and as words ("weekly meal prep")
    slug = _SLUG_DATE_RE.sub("", sid)
    name = " ".join([sid, slug, slug.replace("-", " "), str(t.meta.get("title") or "")])
    named = evidence((*turns.evidence.turns, TurnView(name, frozenset(), frozenset())))
    return Support(
        text=f"{name.lower()}\n{turns.text}",
        names=turns.names | {w.lower() for w in _WORD_RE.findall(name)},
        dates=turns.dates,
        evidence=named,
    )


def _joined(a: Support, b: Support) -> Support:
    return Support(
        text=f"{a.text}\n{b.text}",
        names=a.names | b.names,
        dates=a.dates + b.dates,
        evidence=evidence((*a.evidence.turns, *b.evidence.turns)),
    )


def _why(key: str, code: str, why: str) -> str:
    """``check_claim``'s reason, said of a frontmatter line and the page's claims."""
    why = why.replace("the cited turns", "the page's claims").replace(
        "the cited turn", "the page's claims"
    )
    return f"{key} is not supported: {why} ({code})"


def _problem(page: Page, path: str, key: str, code: str, message: str) -> Problem:
    return Problem(GATE, path, _key_line(page, key), code, message)


def _key_line(page: Page, key: str) -> int:
    """The file line of a top-level frontmatter key (1 when it cannot be found)."""
    raw = page.raw_meta or ""
    for n, line in enumerate(raw.split("\n"), start=2):  # line 1 is the opening '---'
        if line.startswith(f"{key}:"):
            return n
    return 1
