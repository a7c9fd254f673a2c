"""``dream canary``: prove the whole pipeline on a synthetic session, off to the side.

Operators run it after an upgrade. It never touches the real store: it clones the
store's checked-out branch into a scratch folder (``git clone --local``: committed
state only, hard-linked objects, the clone's remote removed) and there

1. writes a canary session with a random id and no personal content (a random
   code, said by the user and acknowledged by the assistant) and ingests it;
2. runs Dream (the real engine, the real skill check) and lands its commit;
3. validates the tree (``memoryfs validate``) for the canary's pages;
4. materializes a sandbox and recalls the canary's code into it;
5. reads every receipt of the canary's lineage (its session, its summary, every
   page citing it) and classifies it with ``dream.health.verdicts`` -- promotion due at
   once -- and checks each lineage holds a receipt of every tier it must pass
   (the summary also ``materialized`` and ``recalled``).

The verdict is a health verdict: ``healthy`` only when every step worked and every
tier is proven. A missing receipt, a canary the recall did not find, or a page the
validator rejects after a green gate is ``uncertain`` (missing or contradictory
evidence); a run that did not land the canary is ``promotion_missing``.
"""

from __future__ import annotations

import datetime as dt
import secrets
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dream.engines.base import Engine
from dream.health.lineage import CHAINS, PRECEDENCE, LineageVerdict
from dream.health.verdicts import EXIT_CODES, check_health
from dream.landing.staging import run_git
from dream.phases.orient import target_branch
from dream.runner import RunOptions, run_dream
from memoryfs.ingest import ingest
from memoryfs.pages.transcript import Transcript, Turn, render_transcript
from memoryfs.read.materialize import materialize
from memoryfs.read.recall import recall
from memoryfs.receipts.log import ReceiptLog, sandbox_receipt_dir, store_receipt_dir
from memoryfs.receipts.records import page_item, session_item
from memoryfs.store.store import Store
from memoryfs.validate.rules import validate_store

__all__ = ["CanaryReport", "Step", "run_canary"]


@dataclass(frozen=True)
class Step:
    name: str  # ingest | dream | validate | materialize | recall | receipts
    ok: bool
    detail: str  # ids, counts and statuses only


@dataclass(frozen=True)
class CanaryReport:
    verdict: str  # a health verdict (dream.health.lineage.PRECEDENCE)
    layer: str  # the first failed layer ("" when healthy)
    reason: str
    session: str  # the canary's session id (random; no content)
    steps: tuple[Step, ...]
    lineages: tuple[LineageVerdict, ...]
    run: dict[str, Any] = field(default_factory=dict)  # the Dream run's record
    scratch: str = ""  # the scratch folder when kept, else ""

    @property
    def ok(self) -> bool:
        return self.verdict == "healthy"

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.verdict]

    def to_json(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "layer": self.layer,
            "reason": self.reason,
            "exitCode": self.exit_code,
            "session": self.session,
            "steps": [{"name": s.name, "ok": s.ok, "detail": s.detail} for s in self.steps],
            "lineages": [lv.to_json() for lv in self.lineages],
            "run": self.run,
            "scratch": self.scratch,
        }


def _canary_session(store: Store, code: str, now: dt.datetime) -> Transcript:
    sid = f"{now:%Y-%m-%d}-canary-{code}"
    ts = now.strftime("%Y-%m-%dT%H:%M")
    return Transcript(
        id=sid,
        started=ts,
        participants=("user", "assistant"),
        scope={"user": store.config.user, "assistant": store.config.assistant},
        turns=(
            Turn(1, "user", ts, f"Canary check: the canary code is {code}. Please keep it."),
            Turn(2, "assistant", ts, f"Noted: the canary code is {code}."),
        ),
    )


def _clone(store: Store, dest: Path) -> Store:
    branch = target_branch(store)
    run_git(
        dest.parent, "clone", "--local", "--quiet", "--branch", branch, str(store.root), dest.name
    )
    run_git(dest, "remote", "remove", "origin")
    return Store.open(dest)


def run_canary(
    store: Store,
    engine: Engine,
    allow_unapproved: bool = False,
    keep: bool = False,
    now: dt.datetime | None = None,
) -> CanaryReport:
    """Run the canary on a scratch clone of ``store``; ``keep`` leaves the clone on disk."""
    now = now or dt.datetime.now(dt.UTC)
    scratch = Path(tempfile.mkdtemp(prefix="dream-canary-"))
    try:
        return _run(store, engine, allow_unapproved, scratch, now, keep)
    finally:
        if not keep:
            shutil.rmtree(scratch, ignore_errors=True)


def _run(
    store: Store,
    engine: Engine,
    allow_unapproved: bool,
    scratch: Path,
    now: dt.datetime,
    keep: bool,
) -> CanaryReport:
    copy = _clone(store, scratch / "store")
    code = secrets.token_hex(4)
    session = _canary_session(copy, code, now)
    steps: list[Step] = []
    source = scratch / "input" / f"{session.id}.md"
    source.parent.mkdir()
    source.write_text(render_transcript(session), encoding="utf-8")
    ingested = ingest(copy, [source])
    steps.append(Step("ingest", bool(ingested.commit), f"commit {ingested.commit[:12]}"))

    result = run_dream(copy, engine, RunOptions(allow_unapproved=allow_unapproved))
    landed = result.status == "committed" and session.id in result.sessions
    steps.append(Step("dream", landed, f"run {result.run_id}: {result.status}"))
    summary = f"sessions/summaries/{session.id}.md"
    pages = [summary] if landed else []
    for rel in (*result.pages_created, *result.pages_updated):
        text = _read(copy.memory / rel)
        if f"sessions/transcripts/{session.id}.md#" in text:
            pages.append(rel)

    wanted = {f"memory/{rel}" for rel in pages}
    findings = [f for f in validate_store(copy) if f.path in wanted]
    steps.append(Step("validate", not findings, f"{len(findings)} findings on its pages"))

    sandbox = scratch / "sandbox"
    materialize(copy, sandbox)
    recalled = recall(copy, f"canary code {code}", into=sandbox)
    got = [p for p in recalled.files if p in pages or session.id in p]
    steps.append(Step("recall", bool(got), f"{len(got)} of its files recalled"))
    steps.append(
        Step("materialize", (sandbox / "memory" / summary).is_file(), "summary in sandbox")
    )

    # Due at once: the canary ran its whole pipeline; anything short of committed failed.
    report = check_health(copy, due_after=dt.timedelta(0), extra_receipt_dirs=(sandbox,))
    items = {session_item(session.id): "session", **{page_item(rel): rel for rel in pages}}
    lineages = tuple(lv for lv in report.lineages if lv.item in items)
    tiers = _tiers(copy, sandbox)
    missing: list[tuple[str, str]] = []  # (item, tier)
    for item, what in items.items():
        need = list(CHAINS["session" if what == "session" else "page"])
        if what == summary:
            need += ["materialized", "recalled"]
        missing += [(item, t) for t in need if t not in tiers.get(item, set())]
    steps.append(Step("receipts", not missing, f"{len(missing)} missing tier receipts"))

    verdict, layer, reason = _verdict(lineages, steps, missing)
    return CanaryReport(
        verdict=verdict,
        layer=layer,
        reason=reason,
        session=session.id,
        steps=tuple(steps),
        lineages=lineages,
        run=result.to_json(),
        scratch=str(scratch) if keep else "",
    )


def _tiers(store: Store, sandbox: Path) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for folder in (store_receipt_dir(store.root), sandbox_receipt_dir(sandbox)):
        for r in ReceiptLog(folder).read():
            if r.succeeded:
                out.setdefault(r.item, set()).add(r.tier)
    return out


def _verdict(
    lineages: tuple[LineageVerdict, ...], steps: list[Step], missing: list[tuple[str, str]]
) -> tuple[str, str, str]:
    worst = min(lineages, key=lambda lv: PRECEDENCE.index(lv.verdict), default=None)
    failed = {s.name: s for s in steps if not s.ok}
    candidates: list[tuple[str, str, str]] = []
    if worst is not None and worst.verdict != "healthy":
        candidates.append((worst.verdict, worst.layer, worst.reason))
    if "ingest" in failed or "dream" in failed:
        step = failed.get("ingest") or failed["dream"]
        candidates.append(
            ("promotion_missing", "committed", f"the canary was not committed ({step.detail})")
        )
    if "validate" in failed:
        detail = failed["validate"].detail
        why = f"the validator rejects the canary's pages after a green gate ({detail})"
        candidates.append(("uncertain", "validated", why))
    for name, layer in (("materialize", "materialized"), ("recall", "recalled")):
        if name in failed:
            candidates.append(("uncertain", layer, f"{name}: {failed[name].detail}"))
    if missing:
        item, tier = missing[0]
        candidates.append(("uncertain", tier, f"no {tier} receipt for {item}"))
    if not lineages:
        candidates.append(("uncertain", "ingested", "no lineage of the canary found"))
    if not candidates:
        return "healthy", "", "every tier of the canary's lineage is proven"
    return min(candidates, key=lambda c: PRECEDENCE.index(c[0]))


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""
