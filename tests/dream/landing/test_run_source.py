"""A run's ``sourceVersion``: the build, the skill, the engine and a hash of the effective
configuration, so two differently configured runs of one build are told apart."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from dream_fixtures import add_sessions

from dream.engines.embedded.engine import EmbeddedEngine
from dream.engines.llm.engine import LLMEngine, LLMSettings
from dream.landing.runlog import run_config, run_source
from dream.runner import run_dream
from memoryfs.receipts.log import ReceiptLog, store_receipt_dir
from memoryfs.receipts.records import config_hash, source_parts
from memoryfs.store.atomic import atomic_write_text
from memoryfs.store.config import Budgets, load_config, render_config
from memoryfs.store.store import CONFIG_NAME, Store, init_store
from memoryfs.version import version_info

SESSION = ("2026-01-05-figures", "2026-01-05", ["I need the figures as PDF for Reefsong.", "Sure."])


def _store(tmp_path: Path, name: str, index_tokens: int = 1500) -> Store:
    s = init_store(tmp_path / name, "dana", "atlas")
    cfg = load_config(s.root / CONFIG_NAME)
    budgets = dataclasses.replace(cfg.budgets, index_tokens=index_tokens)
    atomic_write_text(
        s.root / CONFIG_NAME, render_config(dataclasses.replace(cfg, budgets=budgets))
    )
    s.commit("budgets", [CONFIG_NAME])
    add_sessions(s, tmp_path / f"in-{name}", [SESSION])
    return Store.open(s.root)


def _run_sources(s: Store) -> set[str]:
    return {
        r.source_version
        for r in ReceiptLog(store_receipt_dir(s.root)).read()
        if not r.run_id.startswith("ingest-")
    }


def test_differently_configured_runs_have_different_source_versions(tmp_path: Path) -> None:
    runs = {}
    for name, tokens in (("a", 1500), ("b", 800), ("c", 1500)):
        s = _store(tmp_path, name, tokens)
        result = run_dream(s, EmbeddedEngine())
        assert result.status == "committed", result.message
        assert _run_sources(s) == {result.source_version}  # every receipt of the run
        runs[name] = source_parts(result.source_version)
    assert runs["a"]["memoryfs"] == version_info().pinned
    assert (runs["a"]["skill"], runs["a"]["engine"]) == ("none", "embedded/1")
    assert runs["a"]["config"] != runs["b"]["config"]  # the index budget differs
    assert runs["a"] == runs["c"]  # the same configuration in another store: the same pin


def test_an_llm_runs_model_is_in_the_config_not_the_engine_label() -> None:
    budgets = Budgets()
    mini = LLMEngine(LLMSettings(model="gpt-4o-mini", base_url="http://127.0.0.1:9/v1"))
    big = LLMEngine(LLMSettings(model="gpt-4o", base_url="http://127.0.0.1:9/v1"))
    configs = [run_config(e, budgets, None, False) for e in (mini, big)]
    assert config_hash(configs[0]) != config_hash(configs[1])
    sources = [
        run_source("3f9a2c1e", e.label, c) for e, c in zip((mini, big), configs, strict=True)
    ]
    assert [source_parts(s)["engine"] for s in sources] == ["llm/1", "llm/1"]
    assert sources[0] != sources[1]
    # the settings never hold the key
    keyed = LLMEngine(LLMSettings(model="gpt-4o", api_key="sk-secret"))
    assert "sk-secret" not in repr(run_config(keyed, budgets, None, False))
