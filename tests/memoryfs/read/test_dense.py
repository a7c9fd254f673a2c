"""Hybrid retrieval over a real store: the vector cache, the search modes, recall.

The embedder is the endpoint back-end against ``EmbeddingsServer`` (real HTTP on
loopback), whose "model" puts words of one meaning near each other (``CONCEPTS``): a
question naming a category ("outdoor activities") is near a turn naming an instance
("camping") that shares no word with it.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from embeddings_server import EmbeddingsServer, width_of
from read_fixtures import build_store, write_transcript
from typer.testing import CliRunner

from cli.memoryfs_app import app
from memoryfs.errors import MemoryFSError
from memoryfs.store.store import Store

pytest.importorskip("numpy", reason="the [embed] extra is not installed")

CAMPING = "2023-06-10-weekend"
QUESTION = "Which outdoor activities did the family enjoy?"


def _configure(store: Store, url: str, model: str = "mini") -> Store:
    toml = store.root / "memory.toml"
    text = toml.read_text(encoding="utf-8").split("\n[embed]")[0]
    toml.write_text(
        text + f'\n[embed]\nbackend = "endpoint"\nmodel = "{model}"\nendpoint = "{url}"\n',
        encoding="utf-8",
    )
    store.commit(f"embed with {model}")
    return Store.open(store.root)


@pytest.fixture
def served() -> Iterator[EmbeddingsServer]:
    with EmbeddingsServer() as server:
        yield server


@pytest.fixture
def store(tmp_path: Path, served: EmbeddingsServer) -> Store:
    plain = build_store(tmp_path / "store")
    write_transcript(
        plain,
        CAMPING,
        "2023-06-10T10:00",
        [
            ("Melanie", "We went camping by the lake last weekend, the kids loved the tent."),
            ("Caroline", "That sounds wonderful!"),
        ],
    )
    plain.commit("a weekend")
    return _configure(plain, served.url)


def _vectors(store: Store) -> sqlite3.Connection:
    return sqlite3.connect(store.cache_dir / "vectors.sqlite")


def test_dense_finds_by_meaning_what_shares_no_word(store: Store) -> None:
    lexical = store.search(QUESTION, k=5, mode="lexical")
    assert all(CAMPING not in h.path for h in lexical)  # no word in common
    dense = store.search(QUESTION, k=3, mode="dense")
    assert dense[0].ref == f"sessions/transcripts/{CAMPING}.md#t1"
    assert 0 < dense[0].score <= 1 and "camping" in dense[0].snippet
    assert lexical == []
    assert store.search(QUESTION, k=3)[0].ref == dense[0].ref  # hybrid: the default with [embed]
    # hybrid holds the best of both rankings
    both = "Which outdoor activities and pottery?"
    refs = [h.ref for h in store.search(both, k=10)]
    assert store.search(both, k=1, mode="lexical")[0].ref in refs
    assert store.search(both, k=1, mode="dense")[0].ref in refs
    only = store.search("camping tent", k=3, mode="dense", layer="knowledge")
    assert only and {h.layer for h in only} == {"knowledge"}


def test_hybrid_recall_brings_the_turn_lexical_recall_misses(store: Store) -> None:
    lexical = store.recall(QUESTION, 300, mode="lexical")
    assert "camping" not in lexical.text
    hybrid = store.recall(QUESTION, 300)
    assert "camping by the lake" in hybrid.text
    assert f"sessions/transcripts/{CAMPING}.md" in hybrid.files


def test_the_cache_embeds_only_new_texts(store: Store, served: EmbeddingsServer) -> None:
    store.search("pottery", k=1)
    first = len(served.texts())
    with _vectors(store) as db:
        units = db.execute("SELECT count(*) FROM unit").fetchone()[0]
        distinct = db.execute("SELECT count(*) FROM vec").fetchone()[0]
    assert first == distinct + 1 and units >= distinct  # every text once, plus the query
    store.search("pottery", k=1)
    assert len(served.texts()) == first + 1  # nothing re-embedded: only the query
    write_transcript(
        store, "2023-06-20-hike", "2023-06-20T09:00", [("Caroline", "A long hiking trail.")]
    )
    store.search("pottery", k=1)
    new = served.texts()[first + 1 :]
    assert new[:-1] == ["Caroline: A long hiking trail."] and new[-1] == "pottery"
    assert store.search("trail walking", k=1, mode="dense")[0].path.endswith("2023-06-20-hike.md")


def test_a_removed_file_leaves_no_vectors_and_no_hits(store: Store) -> None:
    assert store.search(QUESTION, k=1, mode="dense")[0].path.endswith(f"{CAMPING}.md")
    (store.memory / f"sessions/transcripts/{CAMPING}.md").unlink()
    hits = store.search(QUESTION, k=5, mode="dense")
    assert all(CAMPING not in h.path for h in hits)
    with _vectors(store) as db:
        kept = db.execute("SELECT count(*) FROM vec").fetchone()[0]
        units = db.execute("SELECT count(DISTINCT digest) FROM unit").fetchone()[0]
    assert kept == units


def test_another_model_rebuilds_the_cache(store: Store, served: EmbeddingsServer) -> None:
    store.search("pottery", k=1)
    with _vectors(store) as db:
        n = db.execute("SELECT count(*) FROM vec").fetchone()[0]
        assert len(db.execute("SELECT v FROM vec").fetchone()[0]) == 4 * width_of("mini")
    other = _configure(store, served.url, model="other-model")
    before = len(served.texts())
    assert other.search(QUESTION, k=1, mode="dense")[0].path.endswith(f"{CAMPING}.md")
    assert len(served.texts()) - before == n + 1  # every text again, and the query
    with _vectors(other) as db:
        widths = {len(r[0]) for r in db.execute("SELECT v FROM vec")}
        fingerprint = db.execute("SELECT value FROM meta WHERE key = 'fingerprint'").fetchone()[0]
    assert widths == {4 * width_of("other-model")} and fingerprint.endswith(":other-model")
    (other.cache_dir / "vectors.sqlite").unlink()  # a cache: deleting it loses nothing
    assert other.search(QUESTION, k=1, mode="dense")[0].path.endswith(f"{CAMPING}.md")


def test_vectors_stay_out_of_git(store: Store) -> None:
    store.search("pottery", k=1)
    assert (store.cache_dir / "vectors.sqlite").is_file()
    assert store.repo.git.status("--porcelain", "--ignored=no") == ""


def test_an_unreachable_endpoint_is_one_line_and_lexical_still_works(
    store: Store, served: EmbeddingsServer
) -> None:
    served.fail.extend([503] * 5)
    with pytest.raises(MemoryFSError, match="HTTP 503"):
        store.search("pottery", k=1, mode="dense")
    assert store.search("pottery", k=1, mode="lexical")[0].path == "knowledge/topics/pottery.md"


def test_without_embed_everything_is_lexical_and_other_modes_are_refused(tmp_path: Path) -> None:
    plain = build_store(tmp_path / "plain")
    assert plain.search("pottery", k=1) == plain.search("pottery", k=1, mode="lexical")
    with pytest.raises(MemoryFSError, match=r"needs an embedder: configure \[embed\]"):
        plain.search("pottery", mode="dense")
    with pytest.raises(MemoryFSError, match="unknown search mode 'fuzzy'"):
        plain.search("pottery", mode="fuzzy")
    assert not (plain.cache_dir / "vectors.sqlite").exists()


def test_the_cli_modes(store: Store) -> None:
    runner = CliRunner()
    base = ["--store", str(store.root)]
    done = runner.invoke(app, ["search", QUESTION, "--mode", "dense", "-k", "1", "--json", *base])
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["hits"][0]["path"].endswith(f"{CAMPING}.md")
    bad = runner.invoke(app, ["search", "x", "--mode", "fuzzy", *base])
    assert bad.exit_code == 2 and "unknown mode 'fuzzy'" in bad.stderr
    recall = runner.invoke(app, ["recall", QUESTION, "--mode", "lexical", *base])
    assert recall.exit_code == 0 and "camping" not in recall.stdout


def test_a_cache_that_cannot_be_written_keeps_the_vectors_in_memory(store: Store) -> None:
    store.search("pottery", k=1)
    (store.cache_dir / "vectors.sqlite").unlink()
    (store.cache_dir / "vectors.sqlite").mkdir()  # no database can be made there (even by root)
    assert store.search(QUESTION, k=1, mode="dense")[0].path.endswith(f"{CAMPING}.md")
    assert not any((store.cache_dir / "vectors.sqlite").iterdir())


def test_a_query_over_the_limit_is_refused_before_it_is_embedded(
    store: Store, served: EmbeddingsServer
) -> None:
    store.search("pottery", k=1)
    before = len(served.texts())
    with pytest.raises(MemoryFSError, match="query"):
        store.search("x" * 40_000, k=1, mode="dense")
    assert len(served.texts()) == before
