"""Benchmark of the read side: search index, incremental refresh, search, materialize, grep.

    python bench/bench_read.py --sizes 1000,10000,100000 [--queries 300] [--workdir DIR]
        [--repeat 5] [--keep-index] [--fresh] [--json]

For each size a store of that many pages (1-4 KB each, realistic mix: 40% knowledge
pages with cited claims and [[links]], 20% notes, 15% session summaries, 25%
transcripts) is generated deterministically. Words follow a Zipf law over a
pseudo-English vocabulary, so term frequencies look like real text. Measured:

- full index build (``SearchIndex.refresh`` on a store without a cache);
- refresh with nothing changed; the incremental refresh after 10 pages in different
  folders were rewritten the way memoryfs, Dream and git write files (new file
  renamed into place), and after 10 pages were edited in place (same inode, no
  commit); each the median of ``--repeat`` runs; the stat walk alone (the floor of
  any refresh that sees in-place edits), a refresh comparing every file
  (``full=True``), and the quick refresh every read of a store of 5,000+ files uses
  (``SearchIndex.refresh_for_read``, ``max_stale=READ_STALE``: in-place edits wait
  for the next full walk, at most a minute) after 10 pages were replaced and with
  none changed.
  The edited pages are put back afterwards, so a kept store stays as generated;
- search p50 / p95 over queries made of 2-4 content words of a random claim;
- ``materialize`` into a fresh sandbox (default 256 KB budget) versus a plain full
  copy of ``memory/`` (``shutil.copytree``), and the ratio;
- ``grep -rl`` of a word over the materialized set versus over the full tree.

Prints a Markdown table (and ``--json`` for machines) with the load average seen;
refresh figures are wall time with this process's CPU time (all threads) in
parentheses, which a loaded machine inflates much less.
Not a test: numbers depend on the machine. Stores are kept under ``--workdir`` for
reuse (``--fresh`` regenerates them); ``--keep-index`` also reuses a store's search
index when it has one (no build is measured then), to iterate on refresh quickly.
"""

from __future__ import annotations

import argparse
import bisect
import itertools
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memoryfs.index.index_md import write_indexes  # noqa: E402
from memoryfs.index.refresh import WALK_DIRS  # noqa: E402
from memoryfs.pages.page import render_meta  # noqa: E402
from memoryfs.read.materialize import materialize  # noqa: E402
from memoryfs.read.search import INDEX_NAME, READ_STALE, SearchIndex  # noqa: E402
from memoryfs.store.atomic import atomic_write_text  # noqa: E402
from memoryfs.store.scan import walk  # noqa: E402
from memoryfs.store.store import Store, init_store  # noqa: E402

SEED = 11
QUICK = READ_STALE  # max_stale of the quick refresh measured (what reads use)
_FUNCTION_TEXT = """the a of and to in is it that for on with as was at by from this be have
had not but or we they she he I my our their you very really just then also about after before"""
FUNCTION_WORDS = _FUNCTION_TEXT.split()
FOLDERS = ("people", "projects", "orgs", "places", "topics")


class _Words:
    """A pseudo-English vocabulary with Zipf frequencies (s = 1.07)."""

    def __init__(self, rng: random.Random, size: int = 40_000) -> None:
        syll = [c + v for c in "bcdfghjklmnprstvwz" for v in ("a", "e", "i", "o", "u", "ai", "ou")]
        seen: set[str] = set()
        words: list[str] = []
        while len(words) < size:
            w = "".join(rng.choice(syll) for _ in range(rng.choice((1, 2, 2, 3, 3, 4))))
            if w not in seen:
                seen.add(w)
                words.append(w)
        self.words = words
        self.cum = list(itertools.accumulate(1.0 / (r + 1) ** 1.07 for r in range(size)))

    def content(self, rng: random.Random) -> str:
        return self.words[bisect.bisect(self.cum, rng.random() * self.cum[-1])]

    def sentence(self, rng: random.Random, n: int) -> str:
        out = []
        for _ in range(n):
            out.append(rng.choice(FUNCTION_WORDS) if rng.random() < 0.4 else self.content(rng))
        return " ".join(out).capitalize() + "."


def _date(i: int) -> str:
    day = 1 + i % 28
    month = 1 + (i // 28) % 12
    return f"{2023 + (i // 336) % 3}-{month:02d}-{day:02d}"


def generate(root: Path, pages: int) -> Store:
    """A store of ``pages`` pages; deterministic for a given size."""
    rng = random.Random(SEED)
    words = _Words(rng)
    store = init_store(root, "bench", "atlas")
    n_transcripts = pages * 25 // 100
    n_summaries = pages * 15 // 100
    n_notes = pages * 20 // 100
    n_knowledge = pages - n_transcripts - n_summaries - n_notes
    sessions = [f"{_date(i)}-s{i:06d}" for i in range(n_transcripts)]
    page_ids = [f"p{i:06d}-{words.words[i % 5000]}" for i in range(n_knowledge)]
    mem = store.memory
    for sid in sessions:
        target = rng.randint(1000, 4000)
        parts = [
            f"---\nid: {sid}\ntype: session\nstarted: {sid[:10]}T10:00\nparticipants:\n- user\n"
            f"- atlas\nscope:\n  user: bench\n  assistant: atlas\n---\n"
        ]
        size, n = len(parts[0]), 0
        while size < target:
            n += 1
            text = " ".join(
                words.sentence(rng, rng.randint(6, 18)) for _ in range(rng.randint(1, 4))
            )
            speaker = "user" if n % 2 else "atlas"
            parts.append(f"\n## t{n} · {speaker} · {sid[:10]}T10:{n % 60:02d}\n\n{text}\n")
            size += len(parts[-1])
        _write(mem / "sessions" / "transcripts" / f"{sid}.md", "".join(parts))

    def cited_page(
        rel: str, pid: str, ptype: str, title: str, summary: str, date: str, heading: str
    ) -> None:
        target = rng.randint(1000, 4000)
        sources = (
            [
                {
                    "id": k + 1,
                    "ref": f"sessions/transcripts/{rng.choice(sessions)}.md#t{rng.randint(1, 6)}",
                    "at": date,
                    "hash": f"{rng.getrandbits(32):08x}",
                }
                for k in range(rng.randint(2, 6))
            ]
            if sessions
            else []
        )
        meta: dict[str, object] = {
            "id": pid,
            "title": title,
            "type": ptype,
            "summary": summary,
            "updated": date,
        }
        if sources:
            meta["sources"] = sources
        body = [f"# {title}", "", f"## {heading}", ""]
        size = len(render_meta(meta)) + 40
        while size < target:
            line = "- " + words.sentence(rng, rng.randint(6, 16))
            if rng.random() < 0.15 and page_ids:
                line = line[:-1] + f" with [[{rng.choice(page_ids)}]]."
            if sources:
                line += f" [cite:{rng.randint(1, len(sources))}]"
            body.append(line)
            size += len(line) + 1
        _write(mem / rel, f"---\n{render_meta(meta)}---\n" + "\n".join(body) + "\n")

    for i, pid in enumerate(page_ids):
        folder = "preferences" if i % 100 == 0 else FOLDERS[i % len(FOLDERS)]
        ptype = {"people": "person", "projects": "project", "orgs": "org", "places": "place"}.get(
            folder, folder.rstrip("s")
        )
        title = " ".join(w.capitalize() for w in pid.split("-")[1:]) + f" {i}"
        cited_page(
            f"knowledge/{folder}/{pid}.md",
            pid,
            ptype,
            title,
            words.sentence(rng, 8),
            _date(i),
            "Facts",
        )
    for i in range(n_notes):
        nid = f"n{i:06d}"
        cited_page(
            f"notes/{words.words[i % 300]}/{nid}.md",
            nid,
            "note",
            f"Note {i}",
            "",
            _date(i),
            "Notes",
        )
    for i, sid in enumerate(sessions[:n_summaries]):
        cited_page(
            f"sessions/summaries/{sid}.md",
            sid,
            "summary",
            f"Session {i}",
            words.sentence(rng, 8),
            sid[:10],
            "Key points",
        )
    write_indexes(store)
    return store


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _queries(store: Store, n: int) -> list[str]:
    rng = random.Random(SEED + 1)
    files = store.files("knowledge") + store.files("notes")
    out: list[str] = []
    while len(out) < n:
        body = (store.memory / rng.choice(files)).read_text().split("\n---\n", 1)[-1]
        lines = [ln for ln in body.splitlines() if ln.startswith("- ")]
        if not lines:
            continue
        content = [
            w.strip(".")
            for w in rng.choice(lines)[2:].split()
            if w.lower().strip(".") not in FUNCTION_WORDS and not w.startswith("[")
        ]
        if len(content) >= 2:
            picked = rng.sample(content, min(len(content), rng.randint(2, 4)))
            out.append(f"What do I know about {' '.join(picked)}?")
    return out


def _time(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _grep(word: str, folder: Path) -> float:
    return _time(lambda: subprocess.run(["grep", "-rl", word, str(folder)], capture_output=True))


def _timed(fn: Callable[[], object]) -> tuple[float, float]:
    """(wall, CPU) seconds of ``fn``; CPU is this process's, all threads, user + system."""
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def _median_ms(runs: list[tuple[float, float]]) -> tuple[float, float]:
    """Median wall and median CPU milliseconds of ``runs``."""
    return (
        statistics.median(w for w, _ in runs) * 1000,
        statistics.median(c for _, c in runs) * 1000,
    )


def _refresh_after(
    idx: SearchIndex,
    store: Store,
    pages: list[str],
    repeat: int,
    in_place: bool,
    max_stale: float | None = None,
) -> tuple[float, float]:
    """Median refresh time after changing 10 pages (other pages each repetition)."""
    step = max(1, len(pages) // 10)
    runs = []
    for r in range(repeat):
        for rel in pages[(r * 7) % step :: step][:10]:
            path = store.memory / rel
            if in_place:
                with open(path, "a", encoding="utf-8") as fh:
                    fh.write(f"- Edited in place about zebrafish {r}.\n")
            else:
                atomic_write_text(
                    path, path.read_text() + "- Freshly added fact about zebrafish.\n"
                )
        wall, cpu = time.perf_counter(), time.process_time()
        stats = idx.refresh(max_stale=max_stale)
        runs.append((time.perf_counter() - wall, time.process_time() - cpu))
        assert stats.changed == 10, stats  # the benchmark must measure real work
        assert stats.quick == (max_stale is not None), stats
    return _median_ms(runs)


def bench(
    size: int, workdir: Path, n_queries: int, fresh: bool, keep_index: bool, repeat: int
) -> dict[str, float]:
    root = workdir / f"store-{size}"
    if fresh and root.exists():
        shutil.rmtree(root)
    gen = 0.0
    if not (root / "memory.toml").exists():
        gen = _time(lambda: generate(root, size))
    load_before = os.getloadavg()[0]
    store = Store.open(root)
    if not (keep_index and (store.cache_dir / INDEX_NAME).exists()):
        for suffix in ("", "-wal", "-shm"):
            Path(f"{store.cache_dir / INDEX_NAME}{suffix}").unlink(missing_ok=True)
    idx = SearchIndex.open(store)
    build = _time(idx.refresh) if idx.count()[0] == 0 else float("nan")
    files, units = idx.count()
    full_scan = _time(lambda: idx.refresh(full=True))  # every file compared with its row
    walk_only = _median_ms([_timed(lambda: walk(store.memory, WALK_DIRS)) for _ in range(repeat)])
    pages = store.files("knowledge") + store.files("notes")
    step = max(1, len(pages) // 10)
    originals = {
        rel: (store.memory / rel).read_text()
        for r in range(repeat)
        for rel in pages[(r * 7) % step :: step][:10]
    }
    time.sleep(2.1)  # past the racy window: files changed just now are read again
    noop = _median_ms([_timed(idx.refresh) for _ in range(repeat)])
    atomic = _refresh_after(idx, store, pages, repeat, in_place=False)
    in_place = _refresh_after(idx, store, pages, repeat, in_place=True)
    # The quick refresh reads use on a large store (in-place edits wait for the next full walk).
    time.sleep(2.1)
    idx.refresh()  # a full walk: the quick ones below lean on it
    quick_noop = _median_ms([_timed(lambda: idx.refresh(max_stale=QUICK)) for _ in range(repeat)])
    quick = _refresh_after(idx, store, pages, repeat, in_place=False, max_stale=QUICK)
    for rel, text in originals.items():
        atomic_write_text(store.memory / rel, text)
    idx.refresh()
    queries = _queries(store, n_queries)
    for q in queries[:20]:
        idx.search(q)  # warm the page cache
    lat = []
    for q in queries:
        start = time.perf_counter()
        idx.search(q, k=10)
        lat.append((time.perf_counter() - start) * 1000)
    idx.close()
    lat.sort()
    sandbox = workdir / f"sandbox-{size}"
    copy_dir = workdir / f"copy-{size}"
    for d in (sandbox, copy_dir):
        shutil.rmtree(d, ignore_errors=True)
    mat = _time(lambda: materialize(store, sandbox))
    rerun = _time(lambda: materialize(store, sandbox))
    full = _time(lambda: shutil.copytree(store.memory, copy_dir))
    word = "zebrafish"
    grep_sandbox = _grep(word, sandbox / "memory")
    grep_full = _grep(word, store.memory)
    shutil.rmtree(copy_dir, ignore_errors=True)
    return {
        "pages": size,
        "files": files,
        "units": units,
        "generate_s": gen,
        "build_s": build,
        "refresh10_ms": atomic[0],
        "refresh10_cpu_ms": atomic[1],
        "refresh10_inplace_ms": in_place[0],
        "refresh10_inplace_cpu_ms": in_place[1],
        "refresh10_quick_ms": quick[0],
        "refresh10_quick_cpu_ms": quick[1],
        "refresh_noop_quick_ms": quick_noop[0],
        "refresh_noop_ms": noop[0],
        "refresh_noop_cpu_ms": noop[1],
        "stat_walk_ms": walk_only[0],
        "stat_walk_cpu_ms": walk_only[1],
        "full_scan_ms": full_scan * 1000,
        "search_p50_ms": statistics.median(lat),
        "search_p95_ms": lat[int(0.95 * (len(lat) - 1))],
        "materialize_ms": mat * 1000,
        "materialize_rerun_ms": rerun * 1000,
        "full_copy_ms": full * 1000,
        "copy_ratio": full / mat if mat else 0.0,
        "grep_sandbox_ms": grep_sandbox * 1000,
        "grep_full_ms": grep_full * 1000,
        "index_mb": os.path.getsize(store.cache_dir / INDEX_NAME) / 1e6,
        "load_before": load_before,
        "load_after": os.getloadavg()[0],
    }


def table(rows: list[dict[str, float]]) -> str:
    head = (
        "| pages | units | full build | refresh, 10 replaced | refresh, 10 edited in place "
        "| refresh, none | stat walk alone | compare every file "
        "| quick refresh, 10 replaced / none "
        "| search p50 | search p95 | materialize | full copy | ratio | grep set / full | load |\n"
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    )
    lines = [head]
    for r in rows:
        lines.append(
            f"| {r['pages']:,} | {r['units']:,} | {r['build_s']:.1f} s "
            f"| {r['refresh10_ms']:.0f} ({r['refresh10_cpu_ms']:.0f}) ms "
            f"| {r['refresh10_inplace_ms']:.0f} ({r['refresh10_inplace_cpu_ms']:.0f}) ms "
            f"| {r['refresh_noop_ms']:.0f} ({r['refresh_noop_cpu_ms']:.0f}) ms "
            f"| {r['stat_walk_ms']:.0f} ({r['stat_walk_cpu_ms']:.0f}) ms "
            f"| {r['full_scan_ms']:.0f} ms "
            f"| {r['refresh10_quick_ms']:.0f} ({r['refresh10_quick_cpu_ms']:.0f}) "
            f"/ {r['refresh_noop_quick_ms']:.0f} ms "
            f"| {r['search_p50_ms']:.1f} ms | {r['search_p95_ms']:.1f} ms "
            f"| {r['materialize_ms']:.0f} ms | {r['full_copy_ms']:.0f} ms | {r['copy_ratio']:.0f}x "
            f"| {r['grep_sandbox_ms']:.0f} / {r['grep_full_ms']:.0f} ms "
            f"| {r['load_before']:.1f}-{r['load_after']:.1f} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument(
        "--workdir", type=Path, default=Path(tempfile.gettempdir()) / "memoryfs-bench"
    )
    parser.add_argument("--fresh", action="store_true", help="regenerate the stores")
    parser.add_argument(
        "--keep-index", action="store_true", help="reuse a kept store's index (no build timed)"
    )
    parser.add_argument("--repeat", type=int, default=5, help="runs per refresh figure (median)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    rows = []
    for size in (int(s) for s in args.sizes.split(",")):
        print(f"bench: {size} pages ...", file=sys.stderr, flush=True)
        rows.append(
            bench(size, args.workdir, args.queries, args.fresh, args.keep_index, args.repeat)
        )
        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    print(json.dumps(rows, indent=2) if args.json else table(rows))


if __name__ == "__main__":
    main()
