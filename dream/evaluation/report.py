"""Reports of an evaluation run: aggregate rows, the JSON file, Markdown tables, a PNG chart.

Aggregates are means over questions (micro averages): a category's row averages
its questions, the ``all`` row averages every scored question. A question with no
resolvable evidence has no session or evidence score and is left out of those
means (its answer is still scored). The chart needs matplotlib (the ``chart`` extra).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from dream.evaluation.records import CATEGORIES, EvalRun
from dream.evaluation.scoring import mean, p95

__all__ = ["METRICS", "summarize", "to_json", "render_markdown", "write_chart", "write_outputs"]

# (key in Score, column heading)
METRICS = (
    ("session_r5", "S@5"),
    ("session_r10", "S@10"),
    ("mrr", "MRR"),
    ("ev_direct", "Ev direct"),
    ("ev_cited", "Ev cited"),
    ("answer_tokens", "Ans tok"),
    ("exact", "Exact"),
)
_DREAM_OK = ("committed", "no-change", "nothing-pending")
_GROUPS: tuple[int | str, ...] = (*CATEGORIES, "all")


def _group_name(group: int | str) -> str:
    return CATEGORIES[group] if isinstance(group, int) else "all"


def summarize(run: EvalRun) -> list[dict[str, Any]]:
    """One row per budget, arm and category (plus ``all``)."""
    rows: list[dict[str, Any]] = []
    for budget in run.budgets:
        for arm in run.arms:
            for group in _GROUPS:
                scores = [
                    s
                    for r in run.results
                    if group == "all" or r.question.category == group
                    for s in r.scores
                    if s.arm == arm and s.budget == budget
                ]
                row: dict[str, Any] = {
                    "budget": budget,
                    "arm": arm,
                    "category": _group_name(group),
                    "questions": len(scores),
                }
                for key, _ in METRICS:
                    vals = [getattr(s, key) for s in scores]
                    m = mean(float(v) if v is not None else None for v in vals)
                    row[key] = None if m is None else round(m, 4)
                lat = [s.latency_ms for s in scores]
                row["tokens_mean"] = round(mean(s.tokens for s in scores) or 0.0, 1)
                row["latency_mean_ms"] = round(mean(lat) or 0.0, 2)
                row["latency_p95_ms"] = round(p95(lat) or 0.0, 2)
                row["over_budget"] = sum(1 for s in scores if s.over_budget)
                rows.append(row)
    return rows


def to_json(run: EvalRun, rows: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """Everything: settings, conversations, the aggregate rows and every per-question result."""
    return {
        "budgets": list(run.budgets),
        "arms": list(run.arms),
        "tokenizer": run.tokenizer,
        "conversations": [dataclasses.asdict(c) for c in run.conversations],
        "summary": rows if rows is not None else summarize(run),
        "questions": [
            {
                "conversation": r.question.conversation,
                "index": r.question.index,
                "category": r.question.category,
                "question": r.question.question,
                "answer": r.question.answer,
                "gold": sorted(r.question.gold),
                "goldSessions": list(r.question.gold_sessions),
                "malformed": list(r.question.malformed),
                "unresolved": list(r.question.unresolved),
                "scores": [
                    {k: v for k, v in dataclasses.asdict(s).items() if k != "text" or v}
                    for s in r.scores
                ],
            }
            for r in run.results
        ],
    }


def _fmt(value: Any) -> str:
    return "–" if value is None else f"{value:.2f}"


def render_markdown(run: EvalRun, rows: list[dict[str, Any]] | None = None) -> str:
    rows = rows if rows is not None else summarize(run)
    total = sum(c.questions for c in run.conversations)
    lines = [
        "# LoCoMo evaluation",
        "",
        f"{len(run.conversations)} conversations, {total} questions (categories 1-4), "
        f"budgets {', '.join(map(str, run.budgets))} tokens ({run.tokenizer}).",
        "",
        "## Overall",
        "",
        "| arm | budget | "
        + " | ".join(h for _, h in METRICS)
        + " | tokens | latency mean / p95 ms |",
        "|---|---:|" + "---:|" * len(METRICS) + "---:|---:|",
    ]
    for row in rows:
        if row["category"] != "all":
            continue
        cells = " | ".join(_fmt(row[k]) for k, _ in METRICS)
        lines.append(
            f"| {row['arm']} | {row['budget']} | {cells} | {row['tokens_mean']:.0f} | "
            f"{row['latency_mean_ms']:.0f} / {row['latency_p95_ms']:.0f} |"
        )
    groups = [_group_name(g) for g in _GROUPS]
    for key, heading in METRICS:
        if key in ("session_r10", "mrr", "exact"):
            continue
        lines += ["", f"## {heading} by category", ""]
        lines.append("| arm | budget | " + " | ".join(groups) + " |")
        lines.append("|---|---:|" + "---:|" * len(groups))
        by = {(r["arm"], r["budget"], r["category"]): r for r in rows}
        for budget in run.budgets:
            for arm in run.arms:
                cells = " | ".join(_fmt(by[(arm, budget, g)][key]) for g in groups)
                lines.append(f"| {arm} | {budget} | {cells} |")
    lines += [
        "",
        "## Conversations",
        "",
        "| conversation | sessions | turns | questions | Dream s | Dream status "
        "| malformed / unresolved ids |",
        "|---|---:|---:|---:|---:|---|---:|",
    ]
    for c in run.conversations:
        dream = "–" if c.dream_seconds is None else f"{c.dream_seconds:.1f}"
        status = str(c.dream.get("status", "–"))
        lines.append(
            f"| {c.id} | {c.sessions} | {c.turns} | {c.questions} | {dream} | {status} | "
            f"{c.malformed_evidence} / {c.unresolved_evidence} |"
        )
    failed = [
        f"{c.id} ({c.dream['status']})"
        for c in run.conversations
        if c.dream.get("status") not in (None, *_DREAM_OK)
    ]
    if failed:
        lines += [
            "",
            f"Dream did not commit on {', '.join(failed)}: there the recall arms searched "
            "the store without what that run wrote.",
        ]
    over = sum(r["over_budget"] for r in rows if r["category"] == "all")
    if over:
        lines += ["", f"{over} outputs exceeded their budget and were cut to it before scoring."]
    return "\n".join(lines) + "\n"


def write_chart(run: EvalRun, rows: list[dict[str, Any]], out_dir: Path) -> list[Path]:
    """One PNG per budget: arms x categories, one metric per panel. [] without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    panels = [
        m for m in METRICS if m[0] in ("session_r5", "ev_direct", "ev_cited", "answer_tokens")
    ]
    groups = [_group_name(g) for g in _GROUPS]
    by = {(r["arm"], r["budget"], r["category"]): r for r in rows}
    written = []
    for budget in run.budgets:
        fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 3.6), sharey=True)
        width = 0.8 / len(run.arms)
        for ax, (key, heading) in zip(axes, panels, strict=True):
            for i, arm in enumerate(run.arms):
                vals = [by[(arm, budget, g)][key] or 0.0 for g in groups]
                xs = [x + (i - (len(run.arms) - 1) / 2) * width for x in range(len(groups))]
                ax.bar(xs, vals, width, label=arm)
            ax.set_title(heading)
            ax.set_xticks(range(len(groups)), groups, rotation=30, ha="right")
            ax.set_ylim(0, 1)
            ax.grid(axis="y", alpha=0.3)
        handles, labels = axes[0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="upper right", ncol=len(run.arms), fontsize=8)
        fig.suptitle(f"LoCoMo, {budget}-token budget", x=0.02, ha="left")
        fig.tight_layout(rect=(0, 0, 1, 0.93))
        path = Path(out_dir) / f"chart-{budget}.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(path)
    return written


def write_outputs(run: EvalRun, out_dir: Path) -> dict[str, Any]:
    """``results.json``, ``report.md`` and the charts into ``out_dir``; returns what was written."""
    from memoryfs.store.atomic import atomic_write_text

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    rows = summarize(run)
    atomic_write_text(out_dir / "results.json", json.dumps(to_json(run, rows), indent=1) + "\n")
    atomic_write_text(out_dir / "report.md", render_markdown(run, rows))
    charts = write_chart(run, rows, out_dir)
    return {
        "results": str(out_dir / "results.json"),
        "report": str(out_dir / "report.md"),
        "charts": [str(p) for p in charts],
    }
