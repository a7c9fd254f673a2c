"""Phase 2, summarize sessions: one summary page per pending session.

Job: read each pending transcript from the staged tree (in date order), ask the engine for
a ``SummaryDraft`` and render ``sessions/summaries/<id>.md`` with the transcript's content
hash and turn count, which is how orient later tells that a session has grown. The
engine's facts for the session are taken in the same pass (each session is parsed and
analysed once per run). The sessions it reaches, their facts and speakers are what it
returns (``Summarized``) for the later phases; a deadline stops it cleanly between sessions,
leaving the rest pending.

Every key point and fact is checked here with the verification gate's own test
(``dream.gates.support.check_claim``) against the turns it cites; one that would fail
is dropped and reported (``ConsolidationReport.rejected``), so one bad extraction never
costs the whole run. The gate stays strict as the last line of defence.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from dream.engines.base import EngineContext
from dream.engines.embedded.extract import speaker_names
from dream.errors import DreamError
from dream.gates.support import Support, check_claim, support_for
from dream.phases.spilled_facts import SpilledFacts
from dream.phases.workset import Workset
from dream.records import Evidence, Fact, KeyPoint, SummaryDraft
from dream.wiki.render import render_summary
from memoryfs.errors import PageError
from memoryfs.forget.deletions import has_phrase
from memoryfs.pages.transcript import Transcript, parse_transcript
from memoryfs.store.hashing import content_hash
from memoryfs.store.scan import read_file

__all__ = ["Summarized", "run", "load_pending"]


@dataclass
class Summarized:
    """What the summarize phase hands on: the sessions it summarized, in date order, their
    facts (kept on disk until the wiki phase files them) and who spoke in them."""

    sessions: list[str] = field(default_factory=list)
    facts: SpilledFacts = field(default_factory=SpilledFacts)  # session id -> its facts
    speakers: set[str] = field(default_factory=set)  # display names of people who spoke


@dataclass(frozen=True, slots=True)
class _Readable:
    """A pending transcript that parsed; it is read again when its turn comes, so a run
    never holds every parsed transcript at once."""

    started: str
    id: str
    rel: str
    digest: str


def _read(ws: Workset, rel: str) -> tuple[Transcript, str] | str:
    """The transcript ``rel`` parsed and its content hash, or why it cannot be: only a
    regular file within the store's limits is read (a link to ``/dev/zero`` never is)."""
    cfg = ws.store.config
    limit = min(cfg.budgets.max_file_bytes, cfg.limits.transcript_bytes)
    got = read_file(ws.memory, rel, limit)
    if got is None:
        return "not a regular file"
    if got.oversize:
        return f"{got.size} bytes, over the {limit}-byte limit"
    try:
        text = got.data.decode("utf-8")
        return parse_transcript(text, rel, cfg.roster, limits=cfg.limits.yaml), content_hash(
            got.data
        )
    except UnicodeDecodeError:
        return "not UTF-8"
    except PageError as exc:
        return str(exc).removeprefix(f"{rel}: ").removeprefix(f"{rel}:")


def load_pending(ctx: EngineContext, ws: Workset) -> list[_Readable]:
    """Pending transcripts that parse, oldest first (ties by id); each other one is
    reported (``rejected``) with the reason it was skipped."""
    out: list[_Readable] = []
    for p in ctx.pending:
        if p.id in ws.deletions.sessions:
            continue
        rel = p.path or f"sessions/transcripts/{p.id}.md"
        read = _read(ws, rel)
        if isinstance(read, str):
            ws.report.rejected.append(f"{rel}:1: transcript unreadable ({read}); session skipped")
            continue
        t, digest = read
        out.append(_Readable(t.started, t.id, rel, digest))
    return sorted(out, key=lambda x: (x.started, x.id))


def run(ctx: EngineContext, ws: Workset) -> Summarized:
    out = Summarized()
    pending = load_pending(ctx, ws)
    for i, p in enumerate(pending):
        if ctx.out_of_time():
            ws.report.stopped_early = "deadline"
            break
        ctx.progress("summarize", i, len(pending))
        read = _read(ws, p.rel)  # nothing writes transcripts during a run: the same bytes
        if isinstance(read, str) or read[1] != p.digest:
            raise DreamError(f"{p.rel} changed during the run")
        t, digest = read
        check = _Precheck(t, ws.report.rejected)
        draft = check.draft(_without_forgotten(ws.engine.summarize(t), ws))
        # the facts come from the same pass, while the session is read and analysed once;
        # the attach phase files them (kept on disk till then)
        out.facts.put(t.id, check.facts(ws.engine.extract(t)))
        names = speaker_names(t)
        shown = [n or t.speakers.assistant_name for n in names.values()]
        text = render_summary(draft, shown, digest, len(t.turns))
        ws.write(f"sessions/summaries/{t.id}.md", text)
        out.sessions.append(t.id)
        out.speakers.update(n for n in names.values() if n)
        ws.report.sessions_summarized.append(t.id)
    ctx.progress("summarize", len(out.sessions), len(pending))
    return out


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


class _Precheck:
    """The verification gate's claim check, run before anything is filed."""

    def __init__(self, t: Transcript, rejected: list[str]) -> None:
        self.t = t
        self.rejected = rejected
        self.path = f"sessions/transcripts/{t.id}.md"
        self._supports: dict[tuple[tuple[int, ...], tuple[str, ...]], Support | None] = {}

    def _support(self, evidence: tuple[Evidence, ...], subject: tuple[str, ...]) -> Support | None:
        key = (tuple(e.turn for e in evidence), subject)
        if key not in self._supports:
            turns = [
                (self.t, turn)
                for e in evidence
                if e.session_id == self.t.id and (turn := self.t.turn(f"t{e.turn}")) is not None
            ]
            self._supports[key] = support_for(turns, subject) if turns else None
        return self._supports[key]

    def ok(self, what: str, text: str, evidence: tuple[Evidence, ...], subject: str) -> bool:
        support = self._support(evidence, (subject,) if subject else ())
        if support is None:
            return True  # cites another session: the gate reads it there
        problems = check_claim(text, support)
        if not problems:
            return True
        code, why = problems[0]
        turn = self.t.turn(f"t{evidence[0].turn}")
        line = turn.line if turn is not None else 0
        self.rejected.append(f"{self.path}:{line}: {what} dropped before the gates: {code} {why}")
        return False

    def draft(self, d: SummaryDraft) -> SummaryDraft:
        def keep(what: str, points: tuple[KeyPoint, ...]) -> tuple[KeyPoint, ...]:
            return tuple(p for p in points if self.ok(what, p.text, (p.evidence,), d.title))

        outcome_ok = bool(d.outcome and d.outcome_evidence) and self.ok(
            "outcome", d.outcome, (d.outcome_evidence,) if d.outcome_evidence else (), d.title
        )
        return replace(
            d,
            key_points=keep("key point", d.key_points),
            open_threads=keep("open thread", d.open_threads),
            outcome=d.outcome if outcome_ok else "",
            outcome_evidence=d.outcome_evidence if outcome_ok else None,
        )

    def facts(self, facts: list[Fact]) -> list[Fact]:
        return [f for f in facts if self.ok(f"claim on {f.subject}", f.text, f.evidence, f.subject)]
