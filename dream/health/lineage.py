"""One lineage's verdict: the receipts of one item checked against the store.

A lineage is every receipt of one opaque item (a session, a page, a claim),
read together with ``StoreFacts`` (what the store holds now). Each rule below
adds findings; the lineage's verdict is the finding that ranks first in
``PRECEDENCE``, and its layer is the earliest pipeline tier with that verdict.

Precedence, worst first (``PRECEDENCE``):

1. ``scope_conflict``   a receipt or the item itself belongs to another user or
   assistant scope. A leak is never redeemed by any later success.
2. ``source_at_risk``   the source is gone without a committed destination (a
   transcript lost before its summary committed, a committed page deleted, a
   cited turn gone or changed). Data loss outranks everything but a leak. A page
   a forget removed is no loss: its last ``committed``-tier receipt has status
   ``forgotten`` and its lineage is healthy, with the reason "forgotten".
3. ``stale_retrieval``  a reader got an older version than the one committed
   at that time. A later fluent use does not redeem a stale read.
4. ``generation_unverified`` something was used with no dependency receipt
   (no ``dependsOnVersion``, or one no retrieval receipt returned).
5. ``promotion_missing`` a durable item is due but never reached ``committed``.
6. ``uncertain``        missing, contradictory or expired evidence, or no
   implementation version (``sourceVersion``). Never green.
7. ``waiting``          durable, promotion not yet due.
8. ``healthy``          every tier proven, versions agree with the store.

Proven failures outrank missing proof (1-5 over 6), and missing proof outranks
"not yet" (6 over 7), so the verdict is never better than the evidence.
Evidence expires after ``max_age`` unless the store itself re-proves it now
(the item's current version equals its last committed version).

Left out: a page or a line (``claim`` item) whose last generation receipt is a
failed ``validated`` with a ``reason`` (a Dream run's gates rejected it and the run
left it out, committing the rest: ``dream.landing.leaveout``), and that no receipt has
committed since, is no promotion the pipeline owes: nothing will retry it, so it is
never ``promotion_missing`` (a false alarm that would never clear) and its evidence
does not expire (the rejection is final; what the store holds is what was committed).
It is not hidden either: while the run's branch is kept for review it is
``waiting`` (on a human: ``dream review``, then ``dream apply`` or ``dream
discard``); once the branch is gone it was decided, and the lineage is ``healthy``
with a reason naming the finding. A session is never judged this way: a summary
left out leaves its session pending, retried by the next run and overdue as any.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from memoryfs.receipts.records import READ_TIERS, TIERS, Receipt

__all__ = [
    "CHAINS",
    "PRECEDENCE",
    "VERDICTS",
    "CitationRisk",
    "Finding",
    "LineageVerdict",
    "StoreFacts",
    "classify_lineage",
    "worst",
]

PRECEDENCE = (
    "scope_conflict",
    "source_at_risk",
    "stale_retrieval",
    "generation_unverified",
    "promotion_missing",
    "uncertain",
    "waiting",
    "healthy",
)
VERDICTS = frozenset(PRECEDENCE)
# The generation tiers each kind must pass, in order, before it counts as promoted.
CHAINS: dict[str, tuple[str, ...]] = {
    "session": ("ingested", "summarized", "validated", "committed"),
    "page": ("validated", "committed"),
    "claim": ("attached", "validated", "committed"),
}
_FUTURE_SLACK = dt.timedelta(minutes=5)


@dataclass(frozen=True)
class CitationRisk:
    """A ``sources`` entry that no longer proves anything (shown to the operator)."""

    item: str  # page_item of the citing page
    page: str  # path relative to memory/
    citation: int  # the N of [cite:N]
    reason: str  # "transcript gone" | "turn gone" | "hash changed"


@dataclass(frozen=True)
class StoreFacts:
    """What the store holds now, keyed by opaque item. ``gather_store_facts`` fills it."""

    user_scope: str  # scope_id of the store's user
    assistant_scope: str  # scope_id of its assistant
    head: str = ""
    versions: Mapping[str, str] = field(default_factory=dict)  # item -> current content hash
    transcripts: frozenset[str] = frozenset()  # session items whose transcript is present
    summarized: frozenset[str] = frozenset()  # session items with a summary file
    outcomeless: frozenset[str] = frozenset()  # session items whose summary has no outcome
    foreign: frozenset[str] = frozenset()  # items whose own frontmatter scope differs
    forgotten: frozenset[str] = frozenset()  # items listed in deletions.jsonl
    # session items whose transcript had an earlier turn changed after ingest (not an append)
    hand_edited: frozenset[str] = frozenset()
    citations_at_risk: tuple[CitationRisk, ...] = ()
    approved_skill: str = ""  # "" when nothing was approved
    active_skill: str = "none"
    kept_runs: frozenset[str] = frozenset()  # run ids whose dream/<run-id> branch is kept

    def to_json(self) -> dict[str, Any]:
        return {
            "userScope": self.user_scope,
            "assistantScope": self.assistant_scope,
            "head": self.head,
            "versions": dict(sorted(self.versions.items())),
            "transcripts": sorted(self.transcripts),
            "summarized": sorted(self.summarized),
            "outcomeless": sorted(self.outcomeless),
            "foreign": sorted(self.foreign),
            "forgotten": sorted(self.forgotten),
            "handEdited": sorted(self.hand_edited),
            "citationsAtRisk": [
                {"item": c.item, "page": c.page, "citation": c.citation, "reason": c.reason}
                for c in self.citations_at_risk
            ],
            "approvedSkill": self.approved_skill,
            "activeSkill": self.active_skill,
            "keptRuns": sorted(self.kept_runs),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> StoreFacts:
        return cls(
            user_scope=str(data["userScope"]),
            assistant_scope=str(data["assistantScope"]),
            head=str(data.get("head", "")),
            versions={str(k): str(v) for k, v in dict(data.get("versions", {})).items()},
            transcripts=frozenset(data.get("transcripts", ())),
            summarized=frozenset(data.get("summarized", ())),
            outcomeless=frozenset(data.get("outcomeless", ())),
            foreign=frozenset(data.get("foreign", ())),
            forgotten=frozenset(data.get("forgotten", ())),
            hand_edited=frozenset(data.get("handEdited", ())),
            citations_at_risk=tuple(
                CitationRisk(str(c["item"]), str(c["page"]), int(c["citation"]), str(c["reason"]))
                for c in data.get("citationsAtRisk", ())
            ),
            approved_skill=str(data.get("approvedSkill", "")),
            active_skill=str(data.get("activeSkill", "none")),
            kept_runs=frozenset(str(r) for r in data.get("keptRuns", ())),
        )


@dataclass(frozen=True)
class Finding:
    verdict: str
    layer: str  # a tier name
    reason: str  # fixed text from this module: never content


@dataclass(frozen=True)
class LineageVerdict:
    item: str
    verdict: str
    layer: str  # the first failed layer ("" when healthy)
    reason: str
    findings: tuple[Finding, ...] = ()  # every finding, worst first

    def to_json(self) -> dict[str, Any]:
        return {
            "item": self.item,
            "verdict": self.verdict,
            "layer": self.layer,
            "reason": self.reason,
            "findings": [
                {"verdict": f.verdict, "layer": f.layer, "reason": f.reason} for f in self.findings
            ],
        }


def _rank(verdict: str) -> int:
    return PRECEDENCE.index(verdict)


def _tier_rank(layer: str) -> int:
    return TIERS.index(layer) if layer in TIERS else len(TIERS)


def worst(findings: Sequence[Finding]) -> Finding | None:
    """The finding that decides: highest precedence, then the earliest tier."""
    if not findings:
        return None
    return min(findings, key=lambda f: (_rank(f.verdict), _tier_rank(f.layer)))


def classify_lineage(
    item: str,
    receipts: Sequence[Receipt],
    facts: StoreFacts,
    now: dt.datetime,
    max_age: dt.timedelta,
    due_after: dt.timedelta = dt.timedelta(days=1),
) -> LineageVerdict:
    """Verdict of one lineage; ``receipts`` are this item's, oldest first."""
    rs = sorted(receipts, key=lambda r: r.at)
    found: list[Finding] = []

    def add(verdict: str, layer: str, reason: str) -> None:
        f = Finding(verdict, layer, reason)
        if f not in found:
            found.append(f)

    kind = item.split(":", 1)[0]
    _check_scope(item, rs, facts, add)
    if item in facts.forgotten:
        if item in facts.versions:
            add("uncertain", "committed", "forgotten item is still in the store")
        return _verdict(item, found, healthy_reason="forgotten")
    if _forgotten_by_forget(rs) and item not in facts.versions:
        # removed on purpose with what a forget forgot: an expected transition
        return _verdict(item, found, healthy_reason="forgotten (removed by a forget)")
    _check_sources(item, kind, rs, facts, add)
    _check_reads(rs, add)
    left = _left_out(kind, rs)
    if left is None:
        _check_promotion(item, kind, rs, facts, now, due_after, add)
    elif left.run_id in facts.kept_runs:
        add("waiting", "validated", f"left out by a gate ({left.reason}); its run awaits review")
    _check_evidence(item, kind, rs, facts, now, max_age, add, expires=left is None)
    healthy = "every tier proven"
    if left is not None:
        healthy = f"left out by a gate ({left.reason}); its run was reviewed"
    return _verdict(item, found, healthy_reason=healthy)


def _forgotten_by_forget(rs: Sequence[Receipt]) -> bool:
    """Whether the item's last ``committed``-tier receipt is a forget's ``forgotten``."""
    last = [r for r in rs if r.tier == "committed"]
    return bool(last) and last[-1].status == "forgotten"


def _left_out(kind: str, rs: Sequence[Receipt]) -> Receipt | None:
    """The receipt of a run that left this page or line out (a failed ``validated``
    with a ``reason``), when no receipt committed it since; None otherwise."""
    if kind == "session":
        return None
    left = None
    for r in rs:
        if r.tier == "validated" and r.status == "failed" and r.reason:
            left = r
        elif r.tier == "committed" and r.succeeded:
            left = None
    return left


def _verdict(item: str, found: list[Finding], healthy_reason: str) -> LineageVerdict:
    top = worst(found)
    ordered = tuple(sorted(found, key=lambda f: (_rank(f.verdict), _tier_rank(f.layer))))
    if top is None:
        return LineageVerdict(item, "healthy", "", healthy_reason, ())
    return LineageVerdict(item, top.verdict, top.layer, top.reason, ordered)


def _committed(rs: Sequence[Receipt]) -> list[Receipt]:
    return [r for r in rs if r.tier == "committed" and r.succeeded]


def _check_scope(item: str, rs: Sequence[Receipt], facts: StoreFacts, add: Any) -> None:
    scope = (facts.user_scope, facts.assistant_scope)
    for r in rs:
        if (r.user_scope, r.assistant_scope) != scope:
            add("scope_conflict", r.tier, "receipt from another user or assistant scope")
    if item in facts.foreign:
        add("scope_conflict", "ingested", "the item's own scope differs from the store's")


def _check_sources(
    item: str, kind: str, rs: Sequence[Receipt], facts: StoreFacts, add: Any
) -> None:
    committed = _committed(rs)
    if kind == "session" and rs and item not in facts.transcripts:
        if not committed:
            add("source_at_risk", "ingested", "transcript gone before any committed destination")
        else:
            add("uncertain", "ingested", "transcript gone after its summary committed")
    if kind == "session" and item in facts.hand_edited:
        add(
            "source_at_risk",
            "ingested",
            "transcript edited by hand after ingest (an earlier turn changed, not appended)",
        )
    if kind == "page" and committed and item not in facts.versions:
        add("source_at_risk", "committed", "committed page is gone from the store")
    for risk in facts.citations_at_risk:
        if risk.item == item:
            add("source_at_risk", "ingested", f"a cited turn no longer matches ({risk.reason})")


def _check_reads(rs: Sequence[Receipt], add: Any) -> None:
    # by time, and within one second (receipt times are to the second) in log order: two
    # runs can commit within a second, and sorting by version would pick one by its hash
    commits = sorted(((r.at, r.version) for r in _committed(rs) if r.version), key=lambda c: c[0])
    every_committed = {v for _, v in commits}

    def committed_at(when: dt.datetime) -> str:
        latest = ""
        for at, version in commits:
            if at <= when:
                latest = version
        return latest

    returned: list[tuple[dt.datetime, str]] = []
    for r in rs:
        if r.tier in READ_TIERS and r.status != "failed":
            if not r.version:
                add("uncertain", r.tier, "a read recorded no version")
                continue
            known = committed_at(r.at)
            if known and r.version != known:
                add("stale_retrieval", r.tier, "returned an older version than the one committed")
            elif r.version not in every_committed:
                add("uncertain", r.tier, "returned a version no committed receipt names")
            returned.append((r.at, r.version))
        elif r.tier == "used":
            if r.status == "failed":
                add("uncertain", "used", "use failed its outcome check")
            if not r.depends_on_version:
                add("generation_unverified", "used", "used with no dependency version")
                continue
            known = committed_at(r.at)
            if known and r.depends_on_version != known:
                add("stale_retrieval", "used", "used an older version than the one committed")
            if not any(v == r.depends_on_version and at <= r.at for at, v in returned):
                add("generation_unverified", "used", "used a version no retrieval receipt returned")


def _check_promotion(
    item: str,
    kind: str,
    rs: Sequence[Receipt],
    facts: StoreFacts,
    now: dt.datetime,
    due_after: dt.timedelta,
    add: Any,
) -> None:
    chain = CHAINS.get(kind, ())
    current = facts.versions.get(item, "")
    if not rs:
        if kind == "session" and item not in facts.summarized:
            add("waiting", "summarized", "transcript present, no receipts yet")
        else:
            add("uncertain", chain[0] if chain else "committed", "no receipts")
        return
    generation = [r for r in rs if r.tier in chain]
    if not generation:
        add(
            "uncertain",
            chain[0] if chain else "committed",
            "read or used with no generation receipt",
        )
        return
    # A session is promoted when its current transcript version is committed; a
    # page or claim when any version is (a changed page is checked as evidence).
    tracks_version = kind == "session" and bool(current)
    relevant = [r for r in generation if not tracks_version or r.version == current]
    if tracks_version and not relevant:
        add("uncertain", "ingested", "the current transcript version has no receipt")
        return
    committed = [r for r in relevant if r.tier == "committed" and r.succeeded]
    missing = [t for t in chain if not any(r.tier == t and r.succeeded for r in relevant)]
    if committed:
        for tier in missing:
            add("uncertain", tier, f"committed without a {tier} receipt")
        return
    layer = missing[0] if missing else "committed"
    since = relevant[0].at
    if now - since > due_after:
        add("promotion_missing", layer, "due but never committed")
    else:
        add("waiting", layer, "durable; promotion not yet due")


def _check_evidence(
    item: str,
    kind: str,
    rs: Sequence[Receipt],
    facts: StoreFacts,
    now: dt.datetime,
    max_age: dt.timedelta,
    add: Any,
    expires: bool = True,
) -> None:
    for r in rs:
        if not r.source_version:
            add("uncertain", r.tier, "no implementation version (sourceVersion)")
        if r.at > now + _FUTURE_SLACK:
            add("uncertain", r.tier, "receipt dated in the future")
    committed = _committed(rs)
    for r in committed:
        if not r.version:
            add("uncertain", "committed", "committed receipt without a version")
    # One run commits one version of an item; two runs may commit within the same second
    # (receipt times are to the second), and then their log order says which came last.
    by_time: dict[tuple[dt.datetime, str], set[str]] = {}
    for r in committed:
        by_time.setdefault((r.at, r.run_id), set()).add(r.version)
    if any(len(v) > 1 for v in by_time.values()):
        add("uncertain", "committed", "contradictory committed versions in one run")
    current = facts.versions.get(item, "")
    last = committed[-1].version if committed else ""
    if kind == "page" and current and last and current != last:
        add("uncertain", "committed", "the store's version differs from the last committed one")
    live = bool(current) and current == last
    if rs and expires and not live and now - rs[-1].at > max_age:
        add("uncertain", rs[-1].tier, "evidence older than max-age")
