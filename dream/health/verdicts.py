"""Memory health: every lineage's verdict, the overall verdict and the exit code.

``classify(receipts, facts, now, max_age)`` groups receipts by item, adds every
item the store holds (``StoreFacts``), and gives each lineage its verdict with
the rules and the precedence of ``dream.health.lineage`` (documented there; the order
is ``PRECEDENCE``). The overall verdict is the worst lineage verdict; no lineage
at all, or a malformed receipt line, is at least ``uncertain`` -- never green.

Two memory-type checks sit beside the verdicts:

- ``outcomeless_episode``: a session summary that records no outcome. A warning:
  "none recorded" is honest, so it never changes the exit code.
- ``unsafe_procedure``: the active dream skill differs from the one the store
  approved, or, where none was approved, a run acted on a skill anyway (its receipts'
  ``sourceVersion`` names one: an engine that acts on a skill, run with
  ``--allow-unapproved``). It blocks a green exit. A store that never approved a skill
  and whose runs acted on none (the embedded engine) has nothing unsafe to report.

Exit codes (``HealthReport.exit_code``): 0 healthy; 3 waiting; 4 uncertain;
5 promotion_missing; 6 generation_unverified; 7 stale_retrieval;
8 source_at_risk; 9 scope_conflict; 10 unsafe_procedure when no lineage failed
(overall healthy, waiting or uncertain). 1 and 2 stay the CLI's error codes.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dream.errors import DreamError
from dream.health.lineage import (
    PRECEDENCE,
    CitationRisk,
    LineageVerdict,
    StoreFacts,
    classify_lineage,
)
from dream.health.store_facts import gather_store_facts
from dream.skills import NO_SKILL
from memoryfs.receipts.log import (
    ReceiptLog,
    local_receipt_dir,
    sandbox_receipt_dir,
    store_receipt_dir,
)
from memoryfs.receipts.records import Receipt, format_utc, source_parts, utc_now
from memoryfs.store.store import Store

__all__ = [
    "DEFAULT_DUE",
    "DEFAULT_MAX_AGE",
    "EXIT_CODES",
    "UNSAFE_EXIT",
    "Check",
    "HealthReport",
    "check_health",
    "classify",
    "parse_age",
]

DEFAULT_MAX_AGE = dt.timedelta(days=7)
DEFAULT_DUE = dt.timedelta(days=1)  # nightly runs: a session is due by the next night
EXIT_CODES = {
    "healthy": 0,
    "waiting": 3,
    "uncertain": 4,
    "promotion_missing": 5,
    "generation_unverified": 6,
    "stale_retrieval": 7,
    "source_at_risk": 8,
    "scope_conflict": 9,
}
UNSAFE_EXIT = 10
_AGE_RE = re.compile(r"(\d+)([wdhms])")
_AGE_UNITS = {"w": 604800, "d": 86400, "h": 3600, "m": 60, "s": 1}


@dataclass(frozen=True)
class Check:
    """A memory-type check: ``outcomeless_episode`` or ``unsafe_procedure``."""

    kind: str
    item: str  # the session item, "" for the skill
    detail: str  # ids and hashes only

    @property
    def blocking(self) -> bool:
        return self.kind == "unsafe_procedure"

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "item": self.item, "detail": self.detail}


@dataclass(frozen=True)
class HealthReport:
    overall: str
    layer: str  # the first failed layer of the lineage that decided ("" when healthy)
    item: str  # that lineage ("" when none decided)
    reason: str
    lineages: tuple[LineageVerdict, ...]
    checks: tuple[Check, ...] = ()
    citations_at_risk: tuple[CitationRisk, ...] = ()
    problems: tuple[str, ...] = ()  # malformed receipt lines: "file:line: reason"
    now: str = ""
    max_age_seconds: int = 0
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def exit_code(self) -> int:
        code = EXIT_CODES[self.overall]
        if code < EXIT_CODES["promotion_missing"] and any(c.blocking for c in self.checks):
            return UNSAFE_EXIT
        return code

    @property
    def ok(self) -> bool:
        return self.exit_code == 0

    def to_json(self) -> dict[str, Any]:
        return {
            "overall": self.overall,
            "layer": self.layer,
            "item": self.item,
            "reason": self.reason,
            "exitCode": self.exit_code,
            "now": self.now,
            "maxAgeSeconds": self.max_age_seconds,
            "counts": self.counts,
            "lineages": [lv.to_json() for lv in self.lineages],
            "checks": [c.to_json() for c in self.checks],
            "citationsAtRisk": [
                {"item": c.item, "page": c.page, "citation": c.citation, "reason": c.reason}
                for c in self.citations_at_risk
            ],
            "problems": list(self.problems),
        }


def parse_age(text: str) -> dt.timedelta:
    """``"7d"``, ``"12h"``, ``"1d12h"``, ``"2w"``, ``"90s"`` -> a positive timedelta."""
    raw = text.strip().lower().replace(" ", "")
    pos, seconds = 0, 0
    for m in _AGE_RE.finditer(raw):
        if m.start() != pos:
            break
        seconds += int(m.group(1)) * _AGE_UNITS[m.group(2)]
        pos = m.end()
    if not raw or pos != len(raw) or seconds <= 0:
        raise DreamError(f"bad age {text!r} (use e.g. 7d, 12h, 1d12h, 2w, 90s)")
    return dt.timedelta(seconds=seconds)


def classify(
    receipts: Iterable[Receipt],
    facts: StoreFacts,
    now: dt.datetime | None = None,
    max_age: dt.timedelta = DEFAULT_MAX_AGE,
    due_after: dt.timedelta = DEFAULT_DUE,
    problems: Sequence[str] = (),
) -> HealthReport:
    """One verdict per lineage and overall. Pure: reads nothing but its arguments."""
    now = utc_now() if now is None else now
    by_item: dict[str, list[Receipt]] = {}
    sources: set[str] = set()
    for r in receipts:
        by_item.setdefault(r.item, []).append(r)
        sources.add(r.source_version)
    items = set(by_item) | set(facts.versions) | set(facts.transcripts)
    items |= {c.item for c in facts.citations_at_risk} | facts.hand_edited
    lineages = tuple(
        classify_lineage(i, by_item.get(i, []), facts, now, max_age, due_after)
        for i in sorted(items)
    )
    acted = {source_parts(s).get("skill", NO_SKILL) for s in sources} - {NO_SKILL}
    checks = _checks(facts, acted)
    overall, layer, item, reason = "healthy", "", "", "every lineage healthy"
    deciding = sorted(lineages, key=lambda lv: PRECEDENCE.index(lv.verdict))
    if deciding and deciding[0].verdict != "healthy":
        top = deciding[0]
        overall, layer, item, reason = top.verdict, top.layer, top.item, top.reason
    if not lineages:
        overall, reason = "uncertain", "no receipts and nothing in the store"
    elif problems and PRECEDENCE.index(overall) > PRECEDENCE.index("uncertain"):
        overall, layer, item = "uncertain", "", ""
        reason = f"{len(problems)} malformed receipt line(s)"
    counts = {v: 0 for v in PRECEDENCE}
    for lv in lineages:
        counts[lv.verdict] += 1
    return HealthReport(
        overall=overall,
        layer=layer,
        item=item,
        reason=reason,
        lineages=lineages,
        checks=checks,
        citations_at_risk=facts.citations_at_risk,
        problems=tuple(problems),
        now=format_utc(now),
        max_age_seconds=int(max_age.total_seconds()),
        counts={k: v for k, v in counts.items() if v},
    )


def _checks(facts: StoreFacts, acted: set[str]) -> tuple[Check, ...]:
    """``acted``: the skills (content hashes) the store's runs acted on, by their receipts."""
    out = [
        Check("outcomeless_episode", i, "session summary records no outcome")
        for i in sorted(facts.outcomeless)
    ]
    active, approved = facts.active_skill or NO_SKILL, facts.approved_skill
    if approved and active != approved:
        detail = f"active dream skill {active} differs from the approved {approved}"
        out.append(Check("unsafe_procedure", "", detail))
    elif not approved and acted:
        detail = f"runs acted on dream skill {', '.join(sorted(acted))}, never approved"
        out.append(Check("unsafe_procedure", "", detail))
    return tuple(out)


def check_health(
    store: Store,
    now: dt.datetime | None = None,
    max_age: dt.timedelta = DEFAULT_MAX_AGE,
    due_after: dt.timedelta = DEFAULT_DUE,
    extra_receipt_dirs: Sequence[Path] = (),
    skill_path: Path | None = None,
) -> HealthReport:
    """Read the store's receipts (committed, and its own read log) and those of
    ``extra_receipt_dirs`` (a sandbox, or its ``.receipts`` folder), and classify."""
    receipts: list[Receipt] = []
    problems: list[str] = []
    extra = [
        sandbox_receipt_dir(f) if sandbox_receipt_dir(f).is_dir() else f for f in extra_receipt_dirs
    ]
    for folder in (store_receipt_dir(store.root), local_receipt_dir(store.root), *extra):
        log = ReceiptLog(folder)
        receipts.extend(log.read())
        problems.extend(f"{folder.name}/{p.format()}" for p in log.problems)
    facts = gather_store_facts(store, skill_path=skill_path)
    return classify(receipts, facts, now, max_age, due_after, problems)
