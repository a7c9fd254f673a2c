"""Benchmark: the cost of Dream's semantic verification gate, this code against another.

    python bench/bench_verify.py                      # 2,000 sessions +20, against 37cc92c
    python bench/bench_verify.py --before /tmp/verify-before --repeat 3
    python bench/bench_verify.py --sessions 300 --new 10 --before-commit HEAD~3

Builds the synthetic store (``bench/synthetic.py``, deterministic with ``--seed``) once
and keeps it in ``--cache``: ``--sessions`` sessions, a full Dream run, ``--new`` more
sessions and an incremental run, each run by this checkout's code. On that one store it
then times ``verify_stage`` (no model judge: the deterministic floor) in two cases:

- **full check**: every page, note and summary under ``memory/knowledge``, ``memory/notes``
  and ``memory/sessions/summaries`` taken as new (``Change("A", path)``), every claim
  checked, as a full rebuild does;
- **night**: the incremental run's changes (its commit's diff against the one before),
  new and changed claims only, as that run's gate saw them.

Each measurement runs in a fresh child process with ``PYTHONPATH`` at the code to time:
this checkout ("after") and a checkout of ``--before-commit`` ("before", a Git worktree
made at ``--before`` when it does not exist yet), alternating, so both come from one
invocation on the same store. Standalone the gate parses each page itself; inside a run
validation has parsed the changed pages first (the page memo, ``memoryfs.pages.page``), so a run's
gate lap is somewhat less than the night figure here.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
AFTER = HERE.parent  # this checkout
PREFIXES = ("memory/knowledge", "memory/notes", "memory/sessions/summaries")


@dataclass(frozen=True)
class Timing:
    code: str  # where ``dream`` was imported from
    case: str
    pages: int  # changes handed to the gate
    claims: int  # claims the gate checked
    problems: int
    seconds: float

    @property
    def rate(self) -> float:
        return self.claims / self.seconds if self.seconds else 0.0


def git(root: Path, *args: str) -> str:
    proc = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"git {' '.join(args)} failed in {root}: {proc.stderr.strip()}")
    return proc.stdout


# -- the store ------------------------------------------------------------------


def dream_run(root: Path) -> str:
    """One Dream run (this checkout's code, embedded engine); the commit it made."""
    from dream.engines import load_engine
    from dream.runner import RunOptions, run_dream
    from memoryfs.store.store import Store

    store = Store.open(root)
    t0 = time.perf_counter()
    result = run_dream(store, load_engine("embedded"), RunOptions(allow_unapproved=True))
    print(
        f"  dream run: {result.status}, {len(result.sessions)} sessions, "
        f"{time.perf_counter() - t0:.1f} s, gates lap {result.timings.get('gates', 0):.2f} s",
        file=sys.stderr,
    )
    if result.status != "committed":
        raise SystemExit(f"dream run ended {result.status}: {list(result.problems[:3])}")
    return git(root, "rev-parse", "HEAD").strip()


def build_store(cache: Path, sessions: int, new: int, seed: int) -> dict[str, str]:
    """The store in ``cache`` (built when absent): its path and the incremental run's
    base and commit."""
    done = cache / "store.json"
    if done.is_file():
        info: dict[str, str] = json.loads(done.read_text(encoding="utf-8"))
        print(f"store: reusing {info['root']}", file=sys.stderr)
        return info
    sys.path.insert(0, str(HERE))
    from synthetic import write_sessions

    from memoryfs.store.store import init_store

    root = cache / "store"
    if root.exists():
        raise SystemExit(f"{root} exists but was not finished; remove it and run again")
    cache.mkdir(parents=True, exist_ok=True)
    print(f"store: building {sessions} sessions in {root} ...", file=sys.stderr)
    store = init_store(root, "dana", "atlas")
    git(root, "config", "gc.autoDetach", "false")  # packing in the foreground, untimed
    write_sessions(store, 0, sessions, seed)
    dream_run(root)
    base = write_sessions(store, sessions, sessions + new, seed)
    head = dream_run(root)
    info = {
        "root": str(root),
        "base": base,
        "head": head,
        "built_by": git(AFTER, "rev-parse", "HEAD").strip(),
    }
    done.write_text(json.dumps(info), encoding="utf-8")
    return info


def before_checkout(path: Path, commit: str) -> Path:
    if not path.exists():
        print(f"before: git worktree add {path} {commit}", file=sys.stderr)
        git(AFTER, "worktree", "add", "--detach", str(path), commit)
    return path


# -- one measurement (in a child process) -----------------------------------------


def changes_of(root: Path, case: str, base: str, head: str) -> tuple[str, list[tuple[str, str]]]:
    """The gate's base commit and its (status, path) changes for ``case``."""
    if case == "full":
        paths = git(root, "ls-tree", "-r", "--name-only", head, "--", *PREFIXES).split()
        return head, [("A", p) for p in paths]
    out = git(root, "diff", "--name-status", "--no-renames", "-z", base, head).split("\0")
    return base, [(out[i][:1], out[i + 1]) for i in range(0, len(out) - 1, 2)]


def child(root: str, case: str, base: str, head: str) -> None:
    import dream
    from dream.gates.verification import verify_stage
    from dream.landing.staging import Change
    from memoryfs.store.store import Store

    store = Store.open(root)
    if git(store.root, "rev-parse", "HEAD").strip() != head:
        raise SystemExit(f"{root}: HEAD moved from {head}")
    gate_base, found = changes_of(store.root, case, base, head)
    changes = [Change(status, path) for status, path in found]
    t0 = time.perf_counter()
    report = verify_stage(store, store.root, gate_base, changes)
    seconds = time.perf_counter() - t0
    timing = Timing(
        code=str(Path(dream.__file__).resolve().parent.parent),
        case=case,
        pages=len(changes),
        claims=report.checked,
        problems=len(report.problems),
        seconds=round(seconds, 3),
    )
    print(json.dumps(asdict(timing)))


def measure(code: Path, info: dict[str, str], case: str) -> Timing:
    env = {**os.environ, "PYTHONPATH": str(code)}
    args = ["--child", info["root"], "--case", case, "--base", info["base"], "--head", info["head"]]
    proc = subprocess.run(
        [sys.executable, __file__, *args], capture_output=True, text=True, env=env, check=False
    )
    if proc.returncode != 0:
        raise SystemExit(f"measurement failed ({code}, {case}):\n{proc.stderr[-3000:]}")
    timing = Timing(**json.loads(proc.stdout.strip().splitlines()[-1]))
    if Path(timing.code) != code.resolve():
        raise SystemExit(f"the child imported dream from {timing.code}, not {code}")
    print(
        f"  {code.name} {case}: {timing.claims} claims, {timing.seconds:.2f} s",
        file=sys.stderr,
    )
    return timing


def main() -> None:
    parser = argparse.ArgumentParser(description="verification gate cost, before and after")
    parser.add_argument("--sessions", type=int, default=2000)
    parser.add_argument("--new", type=int, default=20)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--cache", type=Path, help="where the store is kept (default: a temp dir)")
    parser.add_argument(
        "--before", type=Path, default=Path(tempfile.gettempdir()) / "verify-before"
    )
    parser.add_argument("--before-commit", default="37cc92c")
    parser.add_argument(
        "--repeat", type=int, default=1, help="measurements of each, the fastest kept"
    )
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--case", choices=("full", "night"), help=argparse.SUPPRESS)
    parser.add_argument("--base", help=argparse.SUPPRESS)
    parser.add_argument("--head", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.case, args.base, args.head)
        return
    cache = args.cache or Path(tempfile.gettempdir()) / (
        f"bench-verify-s{args.sessions}-n{args.new}-seed{args.seed}"
    )
    info = build_store(cache, args.sessions, args.new, args.seed)
    codes = {"before": before_checkout(args.before, args.before_commit), "after": AFTER}
    best: dict[tuple[str, str], Timing] = {}
    for _ in range(args.repeat):
        for case in ("full", "night"):
            for side, code in codes.items():
                t = measure(code, info, case)
                if (side, case) not in best or t.seconds < best[side, case].seconds:
                    best[side, case] = t
    before_at = git(codes["before"], "rev-parse", "--short", "HEAD").strip()
    after_at = git(AFTER, "rev-parse", "--short", "HEAD").strip()
    print(f"store: {args.sessions} sessions +{args.new} (seed {args.seed}), {info['root']}")
    load = os.getloadavg()[0]
    print(f"before {before_at}, after {after_at}; fastest of {args.repeat}; load {load:.2f}")
    print("")
    print(
        "| case | pages | claims before | s before | claims/s"
        " | claims after | s after | claims/s | after/before s |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for case in ("full", "night"):
        b, a = best["before", case], best["after", case]
        print(
            f"| {case} | {a.pages} | {b.claims} | {b.seconds:.2f} | {b.rate:.0f} | {a.claims} | "
            f"{a.seconds:.2f} | {a.rate:.0f} | {a.seconds / b.seconds:.2f}x |"
        )
    for case in ("full", "night"):
        b, a = best["before", case], best["after", case]
        print(f"{case}: problems reported before {b.problems}, after {a.problems}")


if __name__ == "__main__":
    main()
