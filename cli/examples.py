"""Examples at the end of every command's help, both apps, in one table.

Kept in one place so a reviewer sees them together and a test can check each one
still parses against its command (``tests/cli/test_examples.py``). Each line is a
whole command as a user types it in a shell, in a store's folder unless it says
``--store``.
"""

from __future__ import annotations

import typer

__all__ = ["EXAMPLES", "add_examples"]

EXAMPLES: dict[str, tuple[str, ...]] = {
    "memoryfs init": ("memoryfs init ~/memory --user dana --assistant atlas",),
    "memoryfs ingest": (
        "memoryfs ingest chats/*.jsonl",
        "memoryfs ingest --format chatgpt conversations.json",
        "memoryfs ingest --session-id 2026-03-02-moving - < chat.jsonl",
    ),
    "memoryfs clone": (
        "memoryfs clone git@git.example.com:memory/dana.git ~/memory",
        "memoryfs clone https://git.example.com/memory/dana.git dana --json",
    ),
    "memoryfs sync": ("memoryfs sync", "memoryfs sync --store ~/memory --json"),
    "memoryfs validate": ("memoryfs validate", "memoryfs validate --store ~/memory --json"),
    "memoryfs index": ("memoryfs index", "memoryfs index --prompt --max-tokens 800"),
    "memoryfs path": ("memoryfs path --json",),
    "memoryfs forget": (
        "memoryfs forget --session 2026-01-19-lisbon --reason 'asked to forget'",
        "memoryfs forget --phrase 'old address' --reason privacy --purge-history --yes",
        "memoryfs forget --verify",
    ),
    "memoryfs search": (
        "memoryfs search cello",
        "memoryfs search 'Lisbon trip' -k 5 --layer knowledge --json",
        "memoryfs search 'outdoor activities' --mode dense",
    ),
    "memoryfs recall": (
        "memoryfs recall 'Where does Dana live?'",
        "memoryfs recall 'What did I decide about the grant?' --budget-tokens 500 --into sandbox/",
    ),
    "memoryfs show": (
        "memoryfs show dana",
        "memoryfs show 'Amara Osei' --section 2026-02 --max-tokens 300",
        "memoryfs show sessions/transcripts/2026-03-02-moving.md#t3",
    ),
    "memoryfs materialize": (
        "memoryfs materialize --to sandbox/ --budget-bytes 200000",
        "memoryfs materialize --from https://git.example.org/memory/dana.git --to sandbox/",
    ),
    "memoryfs used": (
        "memoryfs used knowledge/people/dana.md --sandbox sandbox/ --outcome test:pass",
    ),
    "memoryfs mcp": (
        "memoryfs mcp --store ~/memory",
        "MEMORYFS_TOKEN=... memoryfs mcp --http 0.0.0.0:8765 --token-env MEMORYFS_TOKEN",
    ),
    "memoryfs version": ("memoryfs version --json",),
    "dream run": (
        "dream run",
        "dream run --deadline 20m --max-sessions 50",
        "dream run --engine llm --base-url http://localhost:11434/v1 --model qwen2.5",
        "dream run --stores ~/stores/* -j 2 --json",
    ),
    "dream status": ("dream status --json",),
    "dream review": ("dream review 20260302T0315-ab12cd",),
    "dream apply": ("dream apply 20260302T0315-ab12cd",),
    "dream discard": ("dream discard 20260302T0315-ab12cd",),
    "dream watch": ("dream watch --quiet-period 2m",),
    "dream demo": ("dream demo", "dream demo --to ~/demo-store"),
    "dream health": ("dream health", "dream health --receipts sandbox/ --max-age 3d --json"),
    "dream canary": ("dream canary --keep",),
    "dream skills approve": ("dream skills approve --by dana",),
    "dream skills status": ("dream skills status --json",),
    "dream skills path": ("dream skills path",),
    "dream eval locomo": (
        "dream eval locomo conv-26.json conv-30.json --budget 1000 --out results/",
        "dream eval locomo conv-26.json --arms wiki,wiki-hybrid --embed-model models/minilm",
    ),
    "dream version": ("dream version --json",),
    "dream fleet worker": (
        "dream fleet worker --redis redis://127.0.0.1:6379/0 --scratch /var/lib/dream/clones",
        "dream fleet worker --concurrency 4 --hostname dream-1",
    ),
    "dream fleet beat": (
        "dream fleet beat --hour 2 --jitter 10800",
        "dream fleet beat --registry /etc/dream/stores.txt --changed-every 600",
    ),
    "dream fleet enqueue": (
        "dream fleet enqueue git@git.example.com:users/dana.git",
        "dream fleet enqueue --changed --json",
    ),
    "dream fleet status": ("dream fleet status", "dream fleet status --json"),
    "dream fleet add": ("dream fleet add git@git.example.com:users/dana.git",),
    "dream fleet remove": ("dream fleet remove git@git.example.com:users/dana.git",),
}


def add_examples(app: typer.Typer, prefix: str) -> None:
    """Put the examples of ``EXAMPLES`` under each command of ``app`` (and of its
    sub-apps) as the help's epilog, before Typer builds the commands."""
    for info in app.registered_commands:
        name = info.name or (info.callback.__name__ if info.callback else "")
        lines = EXAMPLES.get(f"{prefix} {name}")
        if lines:
            info.epilog = "Examples:\n" + "\n".join(lines)
    for group in app.registered_groups:
        if group.typer_instance is not None and group.name:
            add_examples(group.typer_instance, f"{prefix} {group.name}")
