"""Live citations: re-check the claims whose cited turn changed or went away.

A page's ``sources`` entry pins the turn it cites by ``hash``. When a transcript
is rewritten (a phrase forgotten, a hand edit), pages citing it would carry claims
whose evidence no longer says what it said. A run re-verifies those claims in the
staged tree after the engine, before the gates, instead of carrying them forward:

- a turn that still exists but changed: each claim citing it is checked against
  the current turn (and its other cited turns) with the verification gate's
  rules (``check_claim``); if still supported, the entry's ``hash`` is updated
  (re-cited);
- otherwise (turn or transcript gone, or the claim no longer supported) the stale
  ``[cite:N]`` is dropped from the claim; a claim its remaining citations do not
  support loses them all and is marked ``(unsupported)``, so no reader takes it
  for proven; an entry no ``[cite:N]`` names any more leaves ``sources``.

Only transcripts the run knows changed are looked at (``recite_stage``'s
``transcripts``: the batch's sessions whose transcript differs from what their
summary was made from, and those a person edited); ``dream health`` reports every
citation at risk.

A turn a person edited after it was ingested (``edited``, from
``memoryfs.store.transcript_edits``: an earlier turn changed, not an append) is no
evidence: it is taken as gone, so no claim is re-cited to what it says now, and a claim
the engine drew from it this run loses that citation the same way.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from dream.gates.support import check_claim, support_for
from dream.landing.staging import git_proc
from memoryfs.errors import MemoryFSError, PageError
from memoryfs.pages.claims import extract_claims
from memoryfs.pages.factlines import UNSUPPORTED  # validation and recall know the marker too
from memoryfs.pages.links import CITE_RE
from memoryfs.pages.page import Page, parse_page, render_page
from memoryfs.pages.speakers import Roster
from memoryfs.pages.transcript import Transcript, Turn, parse_transcript
from memoryfs.store.atomic import atomic_write_text
from memoryfs.store.config import load_config
from memoryfs.store.scan import READ_MAX_BYTES, read_text
from memoryfs.store.store import CONFIG_NAME

__all__ = ["UNSUPPORTED", "ReciteReport", "recite_stage", "recite_page"]

_PAGE_DIRS = ("memory/knowledge", "memory/notes", "memory/sessions/summaries")


@dataclass
class ReciteReport:
    recited: int = 0  # sources entries whose hash was updated after re-checking
    unsupported: list[str] = field(default_factory=list)  # "path:line: why" per claim marked
    dropped: int = 0  # stale [cite:N] removed from claims that stay supported otherwise
    pages: list[str] = field(default_factory=list)  # pages rewritten (relative to memory/)


def _cite_re(n: int) -> re.Pattern[str]:
    return re.compile(r"[ \t]*\[cite:\s*" + str(n) + r"\]")


def _load(
    root: Path, rel: str, roster: Roster | None = None, edited: frozenset[int] = frozenset()
) -> Transcript | None:
    """The transcript at ``rel`` without its ``edited`` turns (None: gone or unreadable)."""
    text = read_text(root / "memory", rel, READ_MAX_BYTES)  # never a link, FIFO or device
    try:
        if text is None:
            return None
        t = parse_transcript(text, rel, roster)
    except PageError:
        return None
    if not edited:
        return t
    return replace(t, turns=tuple(turn for turn in t.turns if turn.n not in edited))


def recite_page(
    page: Page, transcripts: dict[str, Transcript | None], report: ReciteReport
) -> Page | None:
    """The page with its stale citations re-checked, or None when nothing was stale.

    ``transcripts``: path relative to ``memory/`` -> the current transcript (None: gone);
    sources naming other transcripts are taken as they are.
    """
    current: dict[int, Turn | None] = {}  # stale entry -> its current turn (None: gone)
    turns: dict[int, tuple[Transcript, Turn]] = {}  # every resolvable cited turn
    for src in page.sources:
        if src.path not in transcripts:
            continue
        t = transcripts[src.path]
        turn = t.turn(src.anchor) if t is not None else None
        if t is not None and turn is not None:
            turns[src.id] = (t, turn)
        if turn is None or (src.hash and src.hash != turn.hash):
            current[src.id] = turn
    if not current:
        return None
    # as the verification gate reads it: a subject page's name, where its turns name it
    subject = (page.title, *page.aliases) if page.path.startswith("knowledge/") else ()
    lines = page.body.split("\n")
    kept: set[int] = set()  # stale entries some claim still cites, re-checked
    for claim in extract_claims(page):
        stale = [n for n in claim.citations if n in current]
        if not stale:
            continue
        idx = claim.line - page.body_line
        cited = [turns[n] for n in claim.citations if n in turns]
        changed_only = all(current[n] is not None for n in stale)
        found = check_claim(claim.text, support_for(cited, subject)) if cited else []
        if cited and changed_only and not found:
            kept.update(stale)  # still supported by the turns as they are now
            continue
        line = lines[idx]
        for n in stale:
            line = _cite_re(n).sub("", line)
        rest = [turns[n] for n in claim.citations if n not in current and n in turns]
        left = check_claim(claim.text, support_for(rest, subject)) if rest else [("", "")]
        if not left:
            report.dropped += len(stale)
        else:
            line = CITE_RE.sub("", line).rstrip()
            line = re.sub(r"[ \t]+([.,;:!?])", r"\1", line)  # " ." left by a removed marker
            line = f"{line} {UNSUPPORTED}"
            code = (found or left)[0][0] or "DV108"  # the rule the turn as it is now fails
            report.unsupported.append(
                f"memory/{page.path}:{claim.line}: {code} {_why(stale, current)}"
            )
        lines[idx] = line
    body = "\n".join(lines)
    raw = page.meta.get("sources")
    sources: list[object] = []
    for entry in raw if isinstance(raw, list) else []:
        sid = entry.get("id") if _well_formed(entry) else None
        if not isinstance(sid, int) or sid not in current:
            sources.append(entry)  # kept as written (malformed ones are validation's)
            continue
        turn = current[sid]
        if turn is None or sid not in kept:
            body = _cite_re(sid).sub("", body)  # outside claims too (a heading)
            continue  # no claim rests on it any more
        report.recited += 1
        sources.append({**entry, "hash": turn.hash})
    report.pages.append(page.path)
    return page.with_meta(sources=sources).with_body(body)


def _well_formed(entry: object) -> bool:
    return (
        isinstance(entry, dict)
        and isinstance(entry.get("id"), int)
        and not isinstance(entry.get("id"), bool)
        and isinstance(entry.get("ref"), str)
    )


def _why(stale: list[int], current: dict[int, Turn | None]) -> str:
    gone = [n for n in stale if current[n] is None]
    what = "is gone" if gone else "changed and no longer supports it"
    cites = ", ".join(f"[cite:{n}]" for n in stale)
    return f"claim marked {UNSUPPORTED}: the turn {cites} cited {what}"


def _citing(stage_root: Path, rels: list[str]) -> list[str]:
    """Pages (relative to the stage root) whose text names one of the transcripts."""
    args = ["grep", "--untracked", "-l", "-F", "-z"]
    for rel in rels:
        args += ["-e", f"{rel}#"]
    proc = git_proc(stage_root, *args, "--", *_PAGE_DIRS)
    return sorted(p for p in proc.stdout.split("\0") if p.endswith(".md"))


def recite_stage(
    stage_root: Path,
    transcripts: Iterable[str],
    edited: Mapping[str, frozenset[int]] | None = None,
) -> ReciteReport:
    """Re-check, in the staged tree, every claim citing a changed turn of ``transcripts``
    (paths relative to ``memory/``); rewrites the pages that change. ``edited``: per
    transcript, the turns a person changed after ingest, taken as gone (their
    transcripts are looked at too)."""
    report = ReciteReport()
    edited = edited or {}
    rels = sorted({*transcripts, *edited})
    if not rels:
        return report
    try:
        roster: Roster | None = load_config(stage_root / CONFIG_NAME).roster
    except MemoryFSError:
        roster = None  # validation reports a broken memory.toml
    loaded = {rel: _load(stage_root, rel, roster, edited.get(rel, frozenset())) for rel in rels}
    for path in _citing(stage_root, rels):
        text = read_text(stage_root, path, READ_MAX_BYTES)  # never a link, FIFO or device
        try:
            if text is None:
                continue  # validation reports a page it cannot read
            page = parse_page(text, path.removeprefix("memory/"))
        except PageError:
            continue  # validation reports a page it cannot read
        fixed = recite_page(page, loaded, report)
        if fixed is not None:
            atomic_write_text(stage_root / path, render_page(fixed))
    return report
