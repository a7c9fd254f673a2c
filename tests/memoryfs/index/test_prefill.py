"""Prefill: ``memoryfs index --prompt`` prints INDEX.md cut to a token budget, most useful first."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from read_fixtures import build_store, write_page
from typer.testing import CliRunner

from cli.memoryfs_app import app
from memoryfs.index.index_md import prompt_index, render_index
from memoryfs.store.store import Store
from memoryfs.store.tokens import count_tokens


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    store = build_store(tmp_path_factory.mktemp("prefill") / "store")
    for i in range(40):  # more pages than a small budget holds
        write_page(
            store,
            f"knowledge/topics/topic-{i:02d}.md",
            {
                "id": f"topic-{i:02d}",
                "title": f"Topic {i:02d}",
                "type": "topic",
                "summary": f"Filler subject number {i} with a one-line summary.",
                "updated": "2023-04-01",
            },
            "Body.\n",
        )
    return store


def _prompt(store: Store, *args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(app, ["index", "--prompt", "--store", str(store.root), *args])
    return r.exit_code, r.stdout, r.stderr


@pytest.mark.parametrize("budget", [40, 80, 150, 300, 1000])
def test_prompt_fits_the_budget(store: Store, budget: int) -> None:
    code, out, _ = _prompt(store, "--max-tokens", str(budget))
    assert code == 0
    assert count_tokens(out) <= budget
    assert out.startswith("# Memory index")
    assert out == prompt_index(store, budget)


def test_most_useful_entries_come_first(store: Store) -> None:
    _, out, _ = _prompt(store, "--max-tokens", "200")
    sections = [line for line in out.splitlines() if line.startswith("## ")]
    assert sections[0] == "## Preferences"
    assert "Figures as PDF, not PNG" in out
    # the most linked page leads its section; filler pages do not crowd out the rest
    topics = out.split("## Topics", 1)[1].split("## ", 1)[0]
    assert topics.strip().splitlines()[0].startswith("- [Pottery]")
    assert "## Recent sessions" in _prompt(store, "--max-tokens", "400")[1]


def test_a_big_budget_gives_the_whole_index_minus_the_marker(store: Store) -> None:
    _, out, _ = _prompt(store, "--max-tokens", "100000")
    full = render_index(store)
    assert "do not edit" in full and "do not edit" not in out
    assert {line for line in out.splitlines() if line.startswith("- ")} == {
        line for line in full.splitlines() if line.startswith("- ")
    }


def test_default_budget_json_and_determinism(store: Store) -> None:
    code, out, _ = _prompt(store, "--json")
    assert code == 0
    data = json.loads(out)
    assert data["maxTokens"] == store.config.budgets.index_tokens
    assert count_tokens(data["text"]) <= data["maxTokens"]
    assert _prompt(store, "--json")[1] == out


def test_bad_budgets_are_usage_errors(store: Store, tmp_path: Path) -> None:
    assert _prompt(store, "--max-tokens", "0")[0] == 2
    r = CliRunner().invoke(app, ["index", "--max-tokens", "10", "--store", str(store.root)])
    assert r.exit_code == 2 and "--prompt" in r.stderr
    assert _prompt(store, "--max-tokens", "3")[0] == 0  # tiny: the title at most, no error
