"""Start-up cost of the command-line front ends: what a short command pays before it works.

    python bench/bench_startup.py [--repeat 9] [--bin DIR]... [--json]

Runs the installed console entries (``memoryfs`` and ``dream`` in ``--bin``, default
beside this Python) as a user would, each ``--repeat`` times, and reports the median of:

- wall time and peak RSS, as ``/usr/bin/time -f '%e %M'`` reports them (10 ms steps);
- the import time Python itself counts (``PYTHONPROFILEIMPORTTIME=1``, the sum of every
  module's own time) and how many modules were imported, in all and from this
  project (``memoryfs``, ``dream``, ``cli``).

Commands: ``memoryfs --help``, ``memoryfs search x`` in a small store built from
``dream/data/sample_memory/`` (its search cache built by one search first, so every measured
search only reads), and ``dream --help``. Given several ``--bin`` (two checkouts'
virtual environments, say), their runs alternate, so that both see the same load on
a shared machine. Not a test: the figures depend on the machine and its load, which
is printed with them.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TIME = "/usr/bin/time"
PROJECT = ("memoryfs", "dream", "cli")


def _run(argv: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, env=env, check=False)


def _small_store(folder: Path, bin_dir: Path) -> Path:
    """A store with the sample transcripts ingested and its search cache built."""
    store = folder / "store"
    mfs = str(bin_dir / "memoryfs")
    steps = [
        [mfs, "init", str(store), "--user", "dana", "--assistant", "atlas"],
        [
            mfs,
            "ingest",
            "--store",
            str(store),
            *map(str, sorted(ROOT.glob("dream/data/sample_memory/transcripts/*.md"))),
        ],
        [mfs, "search", "x", "--store", str(store)],
    ]
    for argv in steps:
        done = _run(argv)
        if done.returncode not in (0,):
            sys.exit(f"bench: {' '.join(argv[:2])} failed: {done.stderr.strip()}")
    return store


def _timed(argv: list[str], out: Path) -> tuple[float, int]:
    """(wall seconds, peak RSS in KB) of one run, as /usr/bin/time measures them."""
    done = _run([TIME, "-f", "%e %M", "-o", str(out), *argv])
    if done.returncode != 0:
        sys.exit(f"bench: {' '.join(argv)} failed: {done.stderr.strip()}")
    wall, rss = out.read_text().split()[-2:]
    return float(wall), int(rss)


def _imports(argv: list[str]) -> tuple[int, int, int]:
    """(import time in microseconds, modules imported, of them this project's)."""
    env = dict(os.environ, PYTHONPROFILEIMPORTTIME="1")
    done = _run(argv, env)
    total = modules = own = 0
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        self_us, _cumulative, name = line.removeprefix("import time:").split("|")
        total += int(self_us)
        modules += 1
        own += name.strip().split(".")[0] in PROJECT
    return total, modules, own


def measure(bins: list[Path], repeat: int) -> list[dict[str, object]]:
    with tempfile.TemporaryDirectory(prefix="bench-startup-") as tmp:
        commands: dict[tuple[str, str], list[str]] = {}
        for i, bin_dir in enumerate(bins):
            store = _small_store(Path(tmp) / str(i), bin_dir)
            mfs, dream = str(bin_dir / "memoryfs"), str(bin_dir / "dream")
            commands[(str(bin_dir), "memoryfs --help")] = [mfs, "--help"]
            commands[(str(bin_dir), "memoryfs search x")] = [
                mfs,
                "search",
                "x",
                "--store",
                str(store),
            ]
            commands[(str(bin_dir), "dream --help")] = [dream, "--help"]
        timed: dict[tuple[str, str], list[tuple[float, int]]] = {key: [] for key in commands}
        counted: dict[tuple[str, str], list[tuple[int, int, int]]] = {key: [] for key in commands}
        for _ in range(repeat):
            for key, argv in commands.items():
                timed[key].append(_timed(argv, Path(tmp) / "time.txt"))
                counted[key].append(_imports(argv))
        return [
            {
                "bin": key[0],
                "command": key[1],
                "wall_s": statistics.median(t[0] for t in timed[key]),
                "peak_rss_mb": statistics.median(t[1] for t in timed[key]) / 1024,
                "import_ms": statistics.median(c[0] for c in counted[key]) / 1000,
                "modules": counted[key][0][1],
                "project_modules": counted[key][0][2],
            }
            for key in commands
        ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=9, help="runs per command (median)")
    parser.add_argument(
        "--bin",
        type=Path,
        action="append",
        help="folder with the memoryfs and dream entries; repeatable (default: beside Python)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args()
    bins = args.bin or [Path(sys.executable).parent]
    load = os.getloadavg()[0]
    rows = measure(bins, args.repeat)
    load = max(load, os.getloadavg()[0])
    if args.json:
        print(json.dumps({"repeat": args.repeat, "load": load, "rows": rows}, indent=2))
        return
    print(
        f"median of {args.repeat} runs; load average up to {load:.2f} on {os.cpu_count()} cores\n"
    )
    print("| entries | command | wall (s) | peak RSS (MB) | import time (ms) | modules (project) |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for r in rows:
        print(
            f"| {r['bin']} | `{r['command']}` | {r['wall_s']:.2f} | {r['peak_rss_mb']:.1f} | "
            f"{r['import_ms']:.0f} | {r['modules']} ({r['project_modules']}) |"
        )


if __name__ == "__main__":
    main()
