"""MCP ``recall`` round trip over stdio against the same call in-process.

    python bench/bench_mcp.py [--rounds 3] [--store DIR] [--json]

Builds the sample store (``sample_memory/transcripts`` ingested, one Dream run with the
embedded engine) unless ``--store`` names one, starts ``memoryfs mcp`` beside this
Python as a subprocess and connects with the SDK's own stdio client, then asks every
question of ``sample_memory/questions.jsonl`` ``--rounds`` times, each question once
in-process (``Store.recall``) and once as an MCP ``recall`` call, alternating so that
both see the same load. Both use the store's default budget; each pair's items are
compared (the bench stops if they differ). Reports p50 and p95 of each, their ratios,
and what starting the server and the handshake took. Not a test: the figures depend
on the machine and its load.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client

import dream
from memoryfs.store.store import Store, init_store

ROOT = Path(__file__).resolve().parent.parent
QUESTIONS = ROOT / "sample_memory" / "questions.jsonl"
MEMORYFS = Path(sys.executable).with_name("memoryfs")


def _sample_store(folder: Path) -> Store:
    store = init_store(folder / "store", "dana", "atlas")
    store.ingest(sorted((ROOT / "sample_memory" / "transcripts").glob("*.md")))
    result = dream.run(store, allow_unapproved=True)
    if result.status != "committed":
        sys.exit(f"bench: dream run: {result.message}")
    return store


def _quantile(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[round(q * 100) - 1]


async def _measure(store: Store, questions: list[str], rounds: int) -> dict[str, Any]:
    params = StdioServerParameters(command=str(MEMORYFS), args=["mcp", "--store", str(store.root)])
    local: list[float] = []
    remote: list[float] = []
    t0 = time.perf_counter()
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        started = time.perf_counter() - t0
        store.recall(questions[0])  # the search cache is built once, before either is timed
        await session.call_tool("recall", {"question": questions[0]})
        for _ in range(rounds):
            for q in questions:
                t = time.perf_counter()
                expected = store.recall(q)
                local.append(time.perf_counter() - t)
                t = time.perf_counter()
                got = await session.call_tool("recall", {"question": q})
                remote.append(time.perf_counter() - t)
                items = (got.structured_content or {}).get("items")
                if got.is_error or items != json.loads(json.dumps(expected.to_json()["items"])):
                    sys.exit(f"bench: MCP recall differs from the library's for {q!r}")
    ms = {name: [v * 1000 for v in values] for name, values in (("mcp", remote), ("local", local))}
    row: dict[str, Any] = {
        "questions": len(questions),
        "rounds": rounds,
        "budgetTokens": store.config.budgets.recall_tokens,
        "startMs": round(started * 1000, 1),
    }
    for name, values in ms.items():
        row[f"{name}P50Ms"] = round(statistics.median(values), 2)
        row[f"{name}P95Ms"] = round(_quantile(values, 0.95), 2)
    row["ratioP50"] = round(row["mcpP50Ms"] / row["localP50Ms"], 2)
    row["ratioP95"] = round(row["mcpP95Ms"] / row["localP95Ms"], 2)
    row["overheadP50Ms"] = round(row["mcpP50Ms"] - row["localP50Ms"], 2)
    row["load"] = round(os.getloadavg()[0], 2)
    return row


def line(row: dict[str, Any]) -> str:
    return (
        f"MCP recall over stdio: p50 {row['mcpP50Ms']:.1f} ms, p95 {row['mcpP95Ms']:.1f} ms; "
        f"in-process p50 {row['localP50Ms']:.1f} ms, p95 {row['localP95Ms']:.1f} ms; "
        f"ratio {row['ratioP50']:.2f}x (p50), {row['ratioP95']:.2f}x (p95) "
        f"({row['questions']} sample questions x {row['rounds']} rounds, "
        f"{row['budgetTokens']}-token budget; server start + handshake {row['startMs']:.0f} ms; "
        f"load {row['load']})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="Times each question is asked.")
    parser.add_argument("--store", type=Path, help="A store to use instead of the sample.")
    parser.add_argument("--json", action="store_true", help="Print the figures as JSON.")
    args = parser.parse_args()
    questions = [
        json.loads(raw)["question"]
        for raw in QUESTIONS.read_text(encoding="utf-8").splitlines()
        if raw.strip()
    ]
    with tempfile.TemporaryDirectory() as tmp:
        if args.store:
            store = Store.open(args.store)
        else:
            print("bench: building the sample store ...", file=sys.stderr, flush=True)
            store = _sample_store(Path(tmp))
        row = anyio.run(_measure, store, questions, max(1, args.rounds))
    print(json.dumps(row, indent=2) if args.json else line(row))


if __name__ == "__main__":
    main()
