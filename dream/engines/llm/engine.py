"""The LLM engine: Dream thinks with an OpenAI-compatible chat model.

Job: for each pending session, send the dream skill (system prompt) and the session
with numbered turns (``dream.engines.llm.schema``), read back one JSON object of summary and
facts, and turn it into ``dream.records`` for the shared phases (``dream.phases.consolidate``),
which write the summary, file the facts on pages and update the wiki exactly as for the
embedded engine. Staging, gates and sync are the same for every engine.

Nothing the model says is trusted:

- an answer that is not the JSON asked for is retried ``json_retries`` times with the
  parse error quoted back; then the session is skipped and stays pending;
- every claim (key point, outcome, open thread, fact, the title and fact subjects) is
  checked against the turn it cites with the semantic gate's own rules
  (``dream.gates.support.check_claim``): a turn that does not exist, or a name,
  number or date the turn does not hold, drops the claim before anything is staged, and
  the run report lists it (``rejected``). A session left with no supported key point
  stays pending. Whatever still reaches the gates and fails them fails the run, as for
  any engine;
- transport trouble (timeouts, 429, 5xx) is retried with backoff by ``llm_client``;
  when it persists the run stops there: sessions already answered are committed, the
  rest stay pending (``stopped: endpoint``); if none was answered the run fails.

Budget: every request's tokens are counted (``report.tokens``, ``report.cost``, the
``Dream-Tokens`` trailer). ``max_tokens`` is checked before each request; once spent,
the run stops cleanly (``stopped: max-tokens``) and the rest stays pending. One answer
in flight may overshoot the budget.
"""

from __future__ import annotations

import datetime as dt
import logging
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from dream.engines.base import Engine, EngineContext
from dream.engines.llm.client import ChatClient, Completion, EndpointError, LLMSettings
from dream.engines.llm.schema import (
    Answer,
    Malformed,
    Point,
    messages_for,
    parse_answer,
    retry_message,
)
from dream.errors import DreamError
from dream.gates.support import check_claim, support_for
from dream.records import (
    ConsolidationReport,
    Evidence,
    Fact,
    KeyPoint,
    PendingSession,
    SummaryDraft,
)
from dream.skills import active_skill_path
from memoryfs.errors import PageError
from memoryfs.pages.transcript import Transcript, Turn, parse_transcript
from memoryfs.store.scan import read_text

__all__ = ["LLMEngine", "LLMSettings"]

log = logging.getLogger("dream.llm")


@dataclass(frozen=True)
class _Verified:
    draft: SummaryDraft
    facts: list[Fact]


class LLMEngine(Engine):
    """Summaries and facts from a chat model, verified against their turns."""

    name = "llm"
    version = "1"

    def __init__(self, settings: LLMSettings | None = None, client: ChatClient | None = None):
        self.settings = settings if settings is not None else LLMSettings.from_env()
        self.client = client
        self.skill_path: Path | None = None  # None: the active dream skill
        self._answers: dict[str, _Verified] = {}
        self.tokens = 0

    @property
    def label(self) -> str:
        model = self.settings.model
        return f"{self.name}/{self.version}:{model}" if model else super().label

    def configuration(self) -> dict[str, Any]:
        s = self.settings
        return {
            "model": s.model,
            "baseUrl": s.base_url,
            "temperature": s.temperature,
            "jsonMode": s.json_mode,
            "jsonRetries": s.json_retries,
            "maxTokens": s.max_tokens,
        }

    # -- the shared phases call these, per session, after ``consolidate`` verified them

    def summarize(self, session: Transcript) -> SummaryDraft:
        return self._verified(session).draft

    def extract(self, session: Transcript) -> list[Fact]:
        return list(self._verified(session).facts)

    def _verified(self, session: Transcript) -> _Verified:
        try:
            return self._answers[session.id]
        except KeyError:
            raise DreamError(f"llm engine: session {session.id} was not answered") from None

    # -- the run -------------------------------------------------------------------

    def consolidate(self, ctx: EngineContext) -> ConsolidationReport:
        self.settings.require_model()
        if ctx.phases is None:
            raise DreamError("llm engine: no shared phases were given to run")
        client = self.client or ChatClient(self.settings, log=log.warning)
        skill = self._skill_text()
        self._answers, self.tokens = {}, 0
        rejected: list[str] = []
        answered: list[PendingSession] = []
        stopped, failed = "", ""
        for i, pending in enumerate(ctx.pending):
            ctx.progress("llm", i, len(ctx.pending))
            if ctx.out_of_time():
                stopped = "deadline"
                break
            if self._over_budget():
                stopped = "max-tokens"
                break
            t = _read(ctx, pending, rejected)
            if t is None:
                continue
            try:
                answer = self._ask(client, skill, t)
            except Malformed as exc:
                rejected.append(f"{pending.path}:0: model answer unusable ({exc}); stays pending")
                continue
            except _OutOfBudget:
                stopped = "max-tokens"
                break
            except EndpointError as exc:
                failed = str(exc)
                stopped = "endpoint"
                break
            verified = _verify(t, answer, rejected)
            if verified is not None:
                self._answers[t.id] = verified
                answered.append(pending)
        ctx.progress("llm", len(ctx.pending), len(ctx.pending))
        if failed and not answered:
            raise DreamError(
                f"llm engine: {failed}; nothing committed, {len(ctx.pending)} sessions stay pending"
            )
        if failed:
            rejected.append(f"endpoint failed ({failed}); the sessions after it stay pending")
        if not answered and ctx.pending and not stopped and rejected:
            raise DreamError(
                f"llm engine: no usable answer for any of {len(ctx.pending)} pending sessions "
                f"({rejected[0]}); they stay pending"
            )
        if answered:
            report = ctx.phases(self, replace(ctx, pending=answered))
        else:
            report = ConsolidationReport()
        report.rejected[:0] = rejected
        report.tokens = self.tokens
        report.cost = round(self.tokens * self.settings.price_per_1k / 1000, 6)
        report.stopped_early = report.stopped_early or stopped
        return report

    def _skill_text(self) -> str:
        path = self.skill_path or active_skill_path()
        try:
            return path.read_text(encoding="utf-8") if path is not None else ""
        except OSError as exc:
            raise DreamError(f"cannot read the dream skill {path}: {exc.strerror}") from None

    def _over_budget(self) -> bool:
        budget = self.settings.max_tokens
        return bool(budget) and self.tokens >= (budget or 0)

    def _ask(self, client: ChatClient, skill: str, t: Transcript) -> Answer:
        """The parsed answer for ``t``, re-asking while it is malformed (bounded)."""
        messages = messages_for(skill, t)
        for attempt in range(self.settings.json_retries + 1):
            if attempt and self._over_budget():
                raise _OutOfBudget
            done: Completion = client.complete(messages)
            self.tokens += done.tokens
            try:
                return parse_answer(done.text)
            except Malformed as exc:
                if attempt == self.settings.json_retries:
                    raise Malformed(f"{exc}, {attempt + 1} attempts") from None
                log.warning("llm: session %s: %s; asking again", t.id, exc)
                messages = [
                    *messages,
                    {"role": "assistant", "content": done.text[:4000]},
                    retry_message(str(exc)),
                ]
        raise AssertionError("unreachable")  # pragma: no cover


class _OutOfBudget(Exception):
    """The token budget ran out between the attempts for one session."""


def _read(ctx: EngineContext, pending: PendingSession, rejected: list[str]) -> Transcript | None:
    cfg = ctx.store.config
    # a regular file within the store's limits only (never a link to /dev/zero, a FIFO)
    text = read_text(
        ctx.memory, pending.path, min(cfg.budgets.max_file_bytes, cfg.limits.transcript_bytes)
    )
    try:
        if text is None:
            raise PageError(pending.path)
        return parse_transcript(text, pending.path, cfg.roster, limits=cfg.limits.yaml)
    except PageError:
        rejected.append(f"{pending.path}:1: transcript unreadable; session skipped")
        return None


# -- verification: every claim against the turn it cites ---------------------------------


def _verify(t: Transcript, answer: Answer, rejected: list[str]) -> _Verified | None:
    """The answer as records, keeping only the claims their turns support."""
    path = f"sessions/transcripts/{t.id}.md"

    def check(what: str, text: str, n: int, subject: tuple[str, ...] = ()) -> Turn | None:
        turn = t.turn(f"t{n}")
        if turn is None:
            rejected.append(f"{path}:0: {what} cites t{n}, which the session does not have")
            return None
        problems = check_claim(text, support_for([(t, turn)], subject))
        if problems:
            code, why = problems[0]
            rejected.append(f"{path}:{turn.line}: {what} citing t{n} rejected: {code} {why}")
            return None
        return turn

    def point(what: str, p: Point) -> KeyPoint | None:
        turn = check(what, p.text, p.turn)
        return KeyPoint(p.text, _evidence(t, turn)) if turn is not None else None

    keys = [k for i, p in enumerate(answer.key_points) if (k := point(f"key point {i + 1}", p))]
    if not keys:
        rejected.append(f"{path}:0: no supported key point; session stays pending")
        return None
    outcome = point("outcome", answer.outcome) if answer.outcome is not None else None
    threads = [k for i, p in enumerate(answer.open_threads) if (k := point(f"thread {i + 1}", p))]
    title = answer.title
    if check_claim(title, support_for([(t, turn) for turn in t.turns])):
        rejected.append(f"{path}:0: title names what the session does not; replaced")
        title = f"Session of {t.date}"
    draft = SummaryDraft(
        session_id=t.id,
        title=title,
        date=t.date,
        participants=t.participants,
        key_points=tuple(keys),
        outcome=outcome.text if outcome else "",
        outcome_evidence=outcome.evidence if outcome else None,
        open_threads=tuple(threads),
    )
    facts: list[Fact] = []
    for i, f in enumerate(answer.facts):
        what = f"fact {i + 1}"
        turn = check(f"{what} subject", _about(f.subject), f.turn)
        if turn is None or check(what, f.text, f.turn, (f.subject,)) is None:
            continue
        support = support_for([(t, turn)])
        mentions = tuple(m for m in f.mentions if not check_claim(_about(m), support))
        facts.append(
            Fact(
                subject=f.subject,
                subject_type=f.type,
                kind=f.kind,
                slot=f.slot,
                text=f.text,
                evidence=(_evidence(t, turn),),
                date=_fact_date(f.date, t, turn),
                mentions=mentions,
            )
        )
    return _Verified(draft, facts)


def _about(name: str) -> str:
    # A lone word at the start of a text counts as sentence-initial, never as a name.
    return f"About {name}."


def _evidence(t: Transcript, turn: Turn) -> Evidence:
    return Evidence(session_id=t.id, turn=turn.n, hash=turn.hash, date=t.date)


def _fact_date(value: str, t: Transcript, turn: Turn) -> str:
    """The model's date when its turn supports it, else the session date."""
    try:
        day = dt.date.fromisoformat(value)
    except ValueError:
        return t.date
    if check_claim(day.isoformat(), support_for([(t, turn)])):
        return t.date
    return day.isoformat()
