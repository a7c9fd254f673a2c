"""Benchmark: bytes ``materialize --from URL`` fetches vs a full clone of the same store.

    python bench/bench_remote_materialize.py                # 300 sessions, +20
    python bench/bench_remote_materialize.py --sessions 500 --budgets 65536,262144

Builds a synthetic store (``bench/synthetic.py``) consolidated by Dream (knowledge
pages, notes, summaries, the maps), serves it with a real ``git daemon`` on loopback
(``tests/support/git_server.py``) and counts every byte the server sends through a
TCP proxy (``tests/support/byte_proxy.py``): protocol, packs and all. For each byte
budget it measures a first ``materialize --from`` into an empty sandbox, a re-run on
the unchanged server, and a re-run after ``--new`` sessions were ingested and
consolidated and pushed; then a full ``git clone --bare`` and, for scale, the
blob-less tree-only clone every ``--from`` starts with. Prints a table on stderr and
one JSON object on stdout.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests" / "support"))

from byte_proxy import ByteProxy  # noqa: E402
from git_server import GitServer  # noqa: E402
from synthetic import write_sessions  # noqa: E402

import dream  # noqa: E402
from memoryfs.remote.sandbox import CLONE, materialize_from  # noqa: E402
from memoryfs.store.store import Store, init_store  # noqa: E402


def _git(*args: str) -> None:
    subprocess.run(["git", *args], check=True, capture_output=True)


def _blobs(git_dir: Path) -> int:
    """Blobs held by a sandbox's partial clone: the ones its runs fetched."""
    out = subprocess.run(
        ["git", f"--git-dir={git_dir}", "cat-file", "--batch-all-objects", "--batch-check"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return sum(1 for line in out.splitlines() if line.split()[1] == "blob")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sessions", type=int, default=300)
    parser.add_argument("--new", type=int, default=20)
    parser.add_argument("--budgets", default="65536,262144", help="byte budgets, comma-separated")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    budgets = [int(b) for b in args.budgets.split(",")]
    with tempfile.TemporaryDirectory(prefix="bench-remote-") as tmp:
        root = Path(tmp)
        print(f"building a store of {args.sessions} sessions and running Dream", file=sys.stderr)
        store = init_store(root / "store", "dana", "atlas", "Dana Reyes")
        write_sessions(store, 0, args.sessions, args.seed)
        dream.run(store, allow_unapproved=True)
        files = len(store.files())
        server = GitServer(root / "srv")
        proxy = ByteProxy(server.port)
        try:
            server.bare("dana", from_store=store.root)
            url = proxy.url("dana")
            proxy.reset()
            _git("clone", "--quiet", "--bare", url, str(root / "full.git"))
            full = proxy.received
            proxy.reset()
            _git(
                "clone", "--quiet", "--bare", "--depth", "1", "--filter=blob:none", url,
                str(root / "trees.git"),
            )  # fmt: skip
            trees = proxy.received
            runs: dict[int, dict[str, object]] = {}
            for budget in budgets:
                sandbox = root / f"sandbox-{budget}"
                proxy.reset()
                t0 = time.perf_counter()
                first = materialize_from(url, sandbox, budget)
                seconds = time.perf_counter() - t0
                runs[budget] = {
                    "first": {
                        "bytes": proxy.received,
                        "connections": proxy.connections,
                        "seconds": round(seconds, 3),
                        "files": len(first.files),
                        "workingSetBytes": first.bytes,
                        "blobsFetched": _blobs(sandbox / CLONE),
                    }
                }
                proxy.reset()
                again = materialize_from(url, sandbox, budget)
                runs[budget]["unchanged"] = {
                    "bytes": proxy.received,
                    "connections": proxy.connections,
                    "copied": len(again.copied),
                }
            write_sessions(store, args.sessions, args.sessions + args.new, args.seed)
            dream.run(Store.open(store.root), allow_unapproved=True)
            _git("-C", str(store.root), "push", "--quiet", str(server.path("dana")), "main")
            for budget in budgets:
                proxy.reset()
                later = materialize_from(url, root / f"sandbox-{budget}", budget)
                runs[budget]["afterNew"] = {
                    "bytes": proxy.received,
                    "connections": proxy.connections,
                    "copied": len(later.copied),
                    "removed": len(later.removed),
                }
        finally:
            proxy.close()
            server.close()
    out = {
        "sessions": args.sessions,
        "new": args.new,
        "files": files,
        "fullCloneBytes": full,
        "treesOnlyBytes": trees,
        "budgets": {
            str(b): {**r, "ratio": round(r["first"]["bytes"] / full, 4)}  # type: ignore[index]
            for b, r in runs.items()
        },
    }
    print(f"store: {args.sessions} sessions, {files} files", file=sys.stderr)
    print(f"full clone (git clone --bare):       {full:>10,} bytes", file=sys.stderr)
    print(f"trees only (depth 1, blob:none):     {trees:>10,} bytes", file=sys.stderr)
    for b, r in runs.items():
        f, u, n = (dict(r[k]) for k in ("first", "unchanged", "afterNew"))  # type: ignore[call-overload]
        print(
            f"budget {b:>7,}: first {f['bytes']:>9,} bytes in {f['connections']} fetches "
            f"({f['bytes'] / full:.1%} of full; {f['files']} files, {f['blobsFetched']} "
            f"blobs), unchanged {u['bytes']:,}, after +{args.new} sessions {n['bytes']:,} "
            f"({n['copied']} files)",
            file=sys.stderr,
        )
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
