"""Load test of ``dream fleet``: N stores on a local Git server, 1 vs 2 worker processes.

    python bench/bench_fleet.py [--stores 24] [--sessions 4] [--workers 1,2] [--json]

Needs the ``[fleet]`` extra and ``redis-server``. For each worker count it starts a fresh
``redis-server`` and ``git daemon`` on loopback (``tests/support``), serves ``--stores``
stores with ``--sessions`` pending sessions each, starts that many ``dream fleet worker``
processes (solo pool, the embedded engine, each its own scratch folder as on its own
machine), queues every store and times until the last one is consolidated: the cold
round, where each worker clones. Then every store receives ``--sessions`` more sessions
(pushed as an agent would) and all are queued again: the warm round, where the workers'
clones only fetch, the nightly steady state. Last, one "changed" sweep (``git ls-remote``
of every store) is timed.

Per store it reads the fleet's status record: the whole task (lock, clone or fetch, the
Dream run, push, record) against the Dream run inside it; the rest is the fleet's
overhead. As a baseline the same stores are run with a local ``dream run`` (in this
process, no Git server): the cold batch, then the warm batch ingested on top. Reports
stores per minute per round, the speed-up of 2 workers, and the ratios of a fleet task
to a local run. Not a test: the figures depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "support"))

from fleet_fixtures import Worker, add_batch, ingest_batch, served_store, wait_for  # noqa: E402
from git_server import GitServer  # noqa: E402
from redis_server import RedisServer  # noqa: E402

from dream.fleet import schedule, status  # noqa: E402
from dream.fleet.app import create_app, enqueue  # noqa: E402
from dream.fleet.config import FleetConfig, connect  # noqa: E402
from memoryfs.store.store import find_store  # noqa: E402


def _names(n: int) -> list[str]:
    return [f"user{i:03d}" for i in range(n)]


def _round(
    config: FleetConfig, urls: list[str], server: GitServer, names: list[str]
) -> dict[str, Any]:
    client = connect(config)
    app = create_app(config)
    heads = {n: server.head(n) for n in names}
    t0 = time.perf_counter()
    enqueue(app, client, config, urls, once=False)

    def done() -> bool:
        recs = status.load(client, config, urls)
        return all(
            r.state in ("done", "failed") and r.seen and r.seen != heads[n]
            for r, n in zip(recs, names, strict=True)
        )

    wait_for(done, 1800, "every store", every=0.2)
    wall = time.perf_counter() - t0
    recs = status.load(client, config, urls)
    failed = [r.url for r in recs if r.status != "committed"]
    if failed:
        sys.exit(f"bench: not committed: {failed}")
    task = [r.seconds for r in recs]
    run = [r.run_seconds for r in recs]
    return {
        "wall": round(wall, 2),
        "storesPerMinute": round(len(urls) / wall * 60, 1),
        "taskMedian": round(statistics.median(task), 3),
        "runMedian": round(statistics.median(run), 3),
        "overheadMedian": round(
            statistics.median(t - r for t, r in zip(task, run, strict=True)), 3
        ),
    }


def _fleet(stores: int, sessions: int, workers: int, tmp: Path) -> dict[str, Any]:
    names = _names(stores)
    with RedisServer() as redis_server:
        server = GitServer(tmp / "server")
        procs: list[Worker] = []
        try:
            urls = [served_store(server, tmp / "src", n, sessions) for n in names]
            config = FleetConfig(redis_url=redis_server.url, scratch=tmp / "scratch")
            for i in range(workers):
                w = Worker(
                    redis_server.url,
                    tmp / f"scratch-{i}",
                    "embedded",
                    f"w{i}",
                    {},
                    tmp / f"w{i}.log",
                )
                procs.append(w)
            for w in procs:
                wait_for(w.ready, 60, "a worker to start")
            cold = _round(config, urls, server, names)
            for n, url in zip(names, urls, strict=True):
                add_batch(url, tmp / "agents" / n, sessions, sessions)
            warm = _round(config, urls, server, names)
            t0 = time.perf_counter()
            tips = schedule.remote_tips(urls, config.sweep_threads)
            sweep = time.perf_counter() - t0
            assert all(t.commit for t in tips)
        finally:
            for w in procs:
                w.stop()
            server.close()
    # one "changed" sweep: git ls-remote of every store, 16 at a time
    return {
        "workers": workers,
        "cold": cold,
        "warm": warm,
        "sweepPerStoreMs": round(sweep / len(urls) * 1000, 1),
    }


def _local(stores: int, sessions: int, tmp: Path) -> dict[str, float]:
    """``dream run`` on local copies of the same stores: the cold batch, then the warm one."""
    import dream

    server = GitServer(tmp / "server")  # served_store's bare copies are not used here
    try:
        names = _names(stores)
        for n in names:
            served_store(server, tmp / "src", n, sessions)
        cold, warm = [], []
        for n in names:
            store = find_store(tmp / "src" / n)
            t0 = time.perf_counter()
            if dream.run(store).status != "committed":
                sys.exit(f"bench: local run of {n} did not commit")
            cold.append(time.perf_counter() - t0)
            ingest_batch(store, sessions, sessions)
            t0 = time.perf_counter()
            if dream.run(store).status != "committed":
                sys.exit(f"bench: local second run of {n} did not commit")
            warm.append(time.perf_counter() - t0)
    finally:
        server.close()
    return {
        "coldMedian": round(statistics.median(cold), 3),
        "warmMedian": round(statistics.median(warm), 3),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--stores", type=int, default=24)
    ap.add_argument("--sessions", type=int, default=4)
    ap.add_argument("--workers", default="1,2", help="worker counts to compare, e.g. 1,2")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    counts = [int(x) for x in args.workers.split(",")]
    results: dict[str, Any] = {"stores": args.stores, "sessions": args.sessions, "fleet": []}
    with tempfile.TemporaryDirectory(prefix="bench-fleet-") as tmp:
        results["local"] = _local(args.stores, args.sessions, Path(tmp) / "local")
        for k in counts:
            results["fleet"].append(_fleet(args.stores, args.sessions, k, Path(tmp) / f"fleet{k}"))
    local = results["local"]
    for row in results["fleet"]:
        for name in ("cold", "warm"):
            r = row[name]
            r["taskOverLocalRun"] = round(r["taskMedian"] / local[f"{name}Median"], 2)
    if len(results["fleet"]) > 1:
        one, more = results["fleet"][0], results["fleet"][-1]
        results["speedup"] = {
            name: round(more[name]["storesPerMinute"] / one[name]["storesPerMinute"], 2)
            for name in ("cold", "warm")
        }
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print(f"{args.stores} stores, {args.sessions} sessions a batch, embedded engine")
    print(
        f"local dream run, median per store: cold {local['coldMedian']}s, "
        f"warm {local['warmMedian']}s"
    )
    for row in results["fleet"]:
        for name in ("cold", "warm"):
            r = row[name]
            print(
                f"{row['workers']} worker(s) {name}: {r['storesPerMinute']} stores/min "
                f"(wall {r['wall']}s); per store: task {r['taskMedian']}s = run {r['runMedian']}s "
                f"+ overhead {r['overheadMedian']}s; task / local run {r['taskOverLocalRun']}"
            )
    sweeps = [row["sweepPerStoreMs"] for row in results["fleet"]]
    print(f"'changed' sweep (git ls-remote, 16 threads): {min(sweeps)} ms a store")
    if "speedup" in results:
        print(f"speed-up {counts[-1]} vs {counts[0]} workers: {results['speedup']}")


if __name__ == "__main__":
    main()
