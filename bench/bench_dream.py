"""Benchmark: cost of a full Dream run vs an incremental one, and peak memory by store size.

    python bench/bench_dream.py          # 2,000 sessions, +20; memory at 500 / 1,000 / 2,000
    python bench/bench_dream.py --sessions 300 --memory 100,200 --engine embedded

Builds a synthetic store (``bench/synthetic.py``, deterministic with ``--seed``),
times a full run, ingests ``--new`` sessions, times the incremental run, and prints
the ratio (target: at most 5%). Each run happens in a fresh child process, so its
peak resident memory (``ru_maxrss``) is the run's own, not the generator's. ``other``
is the run's time outside its phases (lock, skill check, cleanup, run record); Git's
automatic packing runs in the foreground while ingesting (untimed), not beside a run.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from synthetic import write_sessions  # noqa: E402

from memoryfs.store.store import Store, init_store  # noqa: E402


@dataclass(frozen=True)
class Measure:
    status: str
    seconds: float
    sessions: int
    problems: list[str]
    timings: dict[str, float]
    peak_mb: float

    def phases(self) -> str:
        laps = {k: v for k, v in self.timings.items() if k != "total"}
        # outside the phases: the run lock, skill check, cleanup of crashed runs, run record
        other = self.seconds - sum(laps.values())
        return " ".join(f"{k}={v:.2f}" for k, v in [*laps.items(), ("other", other)])


def child(store_dir: str, engine_name: str) -> None:
    """Run Dream once on ``store_dir``; print what it cost as one JSON line."""
    from dream.engines import load_engine
    from dream.runner import RunOptions, run_dream

    store = Store.open(store_dir)
    t0 = time.perf_counter()
    result = run_dream(store, load_engine(engine_name), RunOptions(allow_unapproved=True))
    seconds = time.perf_counter() - t0
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    measure = Measure(
        status=result.status,
        seconds=round(seconds, 3),
        sessions=len(result.sessions),
        problems=list(result.problems[:5]),
        timings=result.timings,
        peak_mb=round(peak_kb / 1024, 1),
    )
    print(json.dumps(asdict(measure)))


def measure(store: Store, engine: str) -> Measure:
    proc = subprocess.run(
        [sys.executable, __file__, "--child", str(store.root), "--engine", engine],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise SystemExit(f"dream run failed:\n{proc.stderr[-3000:]}")
    result = Measure(**json.loads(proc.stdout.strip().splitlines()[-1]))
    if result.status != "committed":  # the cost is the same up to the commit: report, go on
        print(f"  note: run ended {result.status}: {result.problems[:3]}", file=sys.stderr)
    return result


def full_and_incremental(
    root: Path, sessions: int, new: int, seed: int, engine: str
) -> tuple[Measure, Measure]:
    store = init_store(root, "dana", "atlas")
    # Git packs loose objects when a commit leaves many (the full run's commit does, so the
    # next commit, the ingest, starts 'git gc --auto'), by default in the background, where
    # it would run during the next timed run: here it runs in the foreground, untimed.
    subprocess.run(["git", "-C", str(root), "config", "gc.autoDetach", "false"], check=True)
    write_sessions(store, 0, sessions, seed)
    full = measure(store, engine)
    write_sessions(store, sessions, sessions + new, seed)
    return full, measure(store, engine)


def main() -> None:
    parser = argparse.ArgumentParser(description="Dream full vs incremental run cost")
    parser.add_argument("--sessions", type=int, default=2000)
    parser.add_argument("--new", type=int, default=20)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--engine", default="embedded")
    parser.add_argument("--memory", default="500,1000,2000", help="store sizes for peak memory")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if not args.child:
        print(f"engine {args.engine}: {len(args.memory.split(','))} store sizes", file=sys.stderr)
    if args.child:
        child(args.child, args.engine)
        return
    sizes = sorted({int(x) for x in args.memory.split(",") if x.strip()} | {args.sessions})
    runs: dict[int, tuple[Measure, Measure]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-dream-") as tmp:
        for n in sizes:
            print(f"{n} sessions: building, full run, +{args.new}, run ...", file=sys.stderr)
            runs[n] = full_and_incremental(Path(tmp) / f"s{n}", n, args.new, args.seed, args.engine)
    full, inc = runs[args.sessions]
    print(f"engine: {args.engine}, seed {args.seed}")
    print(f"full run, {args.sessions} sessions: {full.seconds:.2f} s ({full.phases()})")
    print(f"incremental run, +{args.new} sessions: {inc.seconds:.2f} s ({inc.phases()})")
    print(f"incremental / full: {inc.seconds / full.seconds:.1%} (target <= 5%)")
    print("")
    print("| sessions | full run s | full peak MB | incremental s | incremental peak MB |")
    print("|---:|---:|---:|---:|---:|")
    for n in sizes:
        f, i = runs[n]
        print(f"| {n} | {f.seconds:.2f} | {f.peak_mb} | {i.seconds:.2f} | {i.peak_mb} |")


if __name__ == "__main__":
    main()
