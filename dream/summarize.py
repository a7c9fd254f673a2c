"""Phase 2, summarize sessions: one summary page per pending session.

Job: read each pending transcript from the staged tree (in date order), ask the engine for
a ``SummaryDraft`` and render ``sessions/summaries/<id>.md`` with the transcript's content
hash and turn count, which is how orient later tells that a session has grown. The
engine's facts for the session are taken in the same pass (each session is parsed and
analysed once per run). Sessions this phase reaches are the ones the later phases work on;
a deadline stops it cleanly between sessions, leaving the rest pending.
"""

from __future__ import annotations

from dataclasses import replace

from dream.engine import EngineContext
from dream.extract import speaker_names
from dream.pagewriter import render_summary
from dream.records import KeyPoint, SummaryDraft
from dream.workset import Workset
from memoryfs.deletions import has_phrase
from memoryfs.errors import PageError
from memoryfs.hashing import content_hash
from memoryfs.transcript import Transcript, parse_transcript

__all__ = ["run", "load_pending"]


def load_pending(ctx: EngineContext, ws: Workset) -> list[tuple[Transcript, str]]:
    """Pending transcripts with their content hash, oldest first (ties by id)."""
    out: list[tuple[Transcript, str]] = []
    for p in ctx.pending:
        if p.id in ws.deletions.sessions:
            continue
        rel = p.path or f"sessions/transcripts/{p.id}.md"
        try:
            data = (ws.memory / rel).read_bytes()
            t = parse_transcript(data.decode("utf-8"), rel)
        except (OSError, UnicodeDecodeError, PageError):
            ws.report.rejected.append(f"{rel}:1: transcript unreadable; session skipped")
            continue
        out.append((t, content_hash(data)))
    out.sort(key=lambda x: (x[0].started, x[0].id))
    return out


def run(ctx: EngineContext, ws: Workset) -> None:
    pending = load_pending(ctx, ws)
    for i, (t, digest) in enumerate(pending):
        if ctx.out_of_time():
            ws.report.stopped_early = "deadline"
            break
        ctx.progress("summarize", i, len(pending))
        draft = _without_forgotten(ws.engine.summarize(t), ws)
        # the facts come from the same pass, while the session is read and analysed once;
        # the attach phase files them
        ws.facts[t.id] = ws.engine.extract(t)
        names = speaker_names(t)
        shown = [n or t.scope.get("assistant", "assistant").capitalize() for n in names.values()]
        text = render_summary(draft, shown, digest, len(t.turns))
        ws.write(f"sessions/summaries/{t.id}.md", text)
        ws.sessions.append(t)
        ws.speakers.update(n for n in names.values() if n)
        ws.report.sessions_summarized.append(t.id)
    ctx.progress("summarize", len(ws.sessions), len(pending))


def _without_forgotten(draft: SummaryDraft, ws: Workset) -> SummaryDraft:
    """The draft minus any point that would bring a forgotten phrase back."""
    if not ws.deletions:
        return draft

    def keep(points: tuple[KeyPoint, ...]) -> tuple[KeyPoint, ...]:
        return tuple(p for p in points if not has_phrase(p.text, ws.deletions))

    outcome_ok = not has_phrase(draft.outcome, ws.deletions)
    return replace(
        draft,
        title=draft.title if not has_phrase(draft.title, ws.deletions) else draft.session_id,
        key_points=keep(draft.key_points),
        open_threads=keep(draft.open_threads),
        outcome=draft.outcome if outcome_ok else "",
        outcome_evidence=draft.outcome_evidence if outcome_ok else None,
    )
