"""Is a change to recall or Dream above the noise? Two LoCoMo evaluations, question by question.

    python bench/compare_eval.py BEFORE/results.json AFTER/results.json
    python bench/compare_eval.py A.json B.json --arm no-wiki --category temporal --json

Both files are ``dream eval locomo --out`` results of the same questions. The
evaluation is deterministic, so what is uncertain about a difference is which
questions happened to be asked: for each budget and metric (S@5, Ev cited, Ans tok
unless ``--metric`` says otherwise) this prints the mean before and after, their
difference (after - before), and its paired bootstrap 95% interval: the questions
are drawn with replacement ``--draws`` times (2,000), every draw scoring both sides
on the same questions, and the interval is the 2.5th and 97.5th percentiles of the
draws' mean differences. A question a metric does not score on either side (no
resolvable evidence) is left out of that metric's means, as in ``report.md``.
``moved`` counts the questions whose score went up and down. ``noise`` marks an
interval that holds zero.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from dream.evaluation.records import CATEGORIES
from dream.evaluation.report import METRICS

DEFAULT_METRICS = ("session_r5", "ev_cited", "answer_tokens")
HEADINGS = dict(METRICS)
DRAWS = 2000
LEVEL = 0.95


class CompareError(Exception):
    """The two results cannot be compared as asked."""


@dataclass(frozen=True)
class Difference:
    """One metric at one budget: means before and after, their difference and its interval."""

    budget: int
    metric: str
    questions: int  # scored on both sides
    before: float
    after: float
    diff: float
    low: float
    high: float
    up: int  # questions scoring higher after
    down: int

    @property
    def noise(self) -> bool:
        return self.low <= 0.0 <= self.high


def load_scores(path: Path, arm: str, category: str) -> dict[tuple[str, int], dict[int, dict]]:
    """(conversation, question index) -> budget -> that question's score row for ``arm``."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        questions = data["questions"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise CompareError(f"{path}: not a `dream eval locomo` results.json ({exc})") from None
    out: dict[tuple[str, int], dict[int, dict]] = {}
    for q in questions:
        if category and CATEGORIES.get(q["category"]) != category:
            continue
        rows = {s["budget"]: s for s in q["scores"] if s["arm"] == arm}
        if rows:
            out[(q["conversation"], q["index"])] = rows
    if not out:
        raise CompareError(f"{path}: no question scored for arm {arm!r}")
    return out


def paired_interval(
    pairs: list[tuple[float, float]], draws: int, rng: random.Random
) -> tuple[float, float]:
    """The ``LEVEL`` percentile interval of the mean of after - before over resampled pairs."""
    diffs = [b - a for a, b in pairs]
    n = len(diffs)
    means = sorted(sum(rng.choices(diffs, k=n)) / n for _ in range(draws))
    tail = (1.0 - LEVEL) / 2
    return means[int(tail * draws)], means[min(draws - 1, int((1.0 - tail) * draws))]


def compare(
    before: dict[tuple[str, int], dict[int, dict]],
    after: dict[tuple[str, int], dict[int, dict]],
    metrics: tuple[str, ...] = DEFAULT_METRICS,
    draws: int = DRAWS,
    seed: int = 0,
) -> list[Difference]:
    """One ``Difference`` per budget both sides scored and per metric, budgets ascending."""
    if set(before) != set(after):
        only = sorted(set(before) ^ set(after))[:3]
        raise CompareError(
            "the two results hold different questions (e.g. "
            + ", ".join(f"{c}#{i}" for c, i in only)
            + "): compare runs of the same conversations"
        )
    budgets = sorted(
        {b for rows in before.values() for b in rows} & {b for rows in after.values() for b in rows}
    )
    if not budgets:
        raise CompareError("the two results share no budget")
    out: list[Difference] = []
    for budget in budgets:
        for metric in metrics:
            pairs: list[tuple[float, float]] = []
            for key in sorted(before):
                a, b = (
                    before[key].get(budget, {}).get(metric),
                    after[key].get(budget, {}).get(metric),
                )
                if a is not None and b is not None:
                    pairs.append((float(a), float(b)))
            if not pairs:
                continue
            # one generator per (budget, metric): a figure does not depend on which others are asked
            low, high = paired_interval(pairs, draws, random.Random(f"{seed}:{budget}:{metric}"))
            mean_a = sum(a for a, _ in pairs) / len(pairs)
            mean_b = sum(b for _, b in pairs) / len(pairs)
            out.append(
                Difference(
                    budget=budget,
                    metric=metric,
                    questions=len(pairs),
                    before=mean_a,
                    after=mean_b,
                    diff=mean_b - mean_a,
                    low=low,
                    high=high,
                    up=sum(1 for a, b in pairs if b > a),
                    down=sum(1 for a, b in pairs if b < a),
                )
            )
    return out


def render(rows: list[Difference]) -> str:
    lines = [
        "| budget | metric | questions | before | after | diff | 95% interval | moved up/down | |",
        "|---:|---|---:|---:|---:|---:|---|---:|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r.budget} | {HEADINGS.get(r.metric, r.metric)} | {r.questions} | "
            f"{r.before:.4f} | {r.after:.4f} | {r.diff:+.4f} | [{r.low:+.4f}, {r.high:+.4f}] | "
            f"{r.up}/{r.down} | {'noise' if r.noise else ''} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("before", type=Path, help="results.json of the baseline")
    parser.add_argument("after", type=Path, help="results.json of the change")
    parser.add_argument("--arm", default="wiki", help="arm to compare (default wiki)")
    parser.add_argument(
        "--metric",
        action="append",
        choices=[k for k, _ in METRICS],
        help="a Score field; repeat for several (default S@5, Ev cited, Ans tok)",
    )
    parser.add_argument(
        "--category", default="", choices=["", *CATEGORIES.values()], help="only this category"
    )
    parser.add_argument("--draws", type=int, default=DRAWS, help=f"bootstrap draws ({DRAWS})")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = parser.parse_args(argv)
    try:
        if args.draws < 100:
            raise CompareError(f"--draws {args.draws}: at least 100 draws for a 95% interval")
        rows = compare(
            load_scores(args.before, args.arm, args.category),
            load_scores(args.after, args.arm, args.category),
            tuple(args.metric or DEFAULT_METRICS),
            args.draws,
            args.seed,
        )
    except CompareError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if args.json:
        payload: list[dict[str, Any]] = [{**asdict(r), "noise": r.noise} for r in rows]
        print(json.dumps(payload, indent=1))
    else:
        print(render(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
