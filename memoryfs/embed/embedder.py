"""The embedder of a store: what turns texts into unit vectors, chosen by ``[embed]``.

Two back-ends (the ``[embed]`` extra): ``local`` runs a sentence-transformers model from
a folder on disk (``memoryfs.embed.local``), ``endpoint`` asks an OpenAI-compatible
``/v1/embeddings`` (``memoryfs.embed.endpoint``: Ollama, vLLM, OpenAI). Without
``[embed]`` there is no embedder and everything is lexical, as it always was.

An embedder is named by its ``fingerprint``: the back-end, the model and what was read
of its configuration. The vector cache (``memoryfs.index.vectors``) is rebuilt when it
changes, so vectors of two models are never compared. Vectors come back L2-normalized
float32 rows, so a dot product is the cosine. A loaded model is kept for the life of
the process (an MCP server or an evaluation loads it once).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from memoryfs.errors import MemoryFSError
from memoryfs.store.config import EmbedSettings

if TYPE_CHECKING:
    import numpy as np

__all__ = ["Embedder", "open_embedder", "normalized", "EXTRA_HINT"]

EXTRA_HINT = "install the extra: pip install 'memoryfs[embed]'"
_loaded: dict[tuple[object, ...], Embedder] = {}


class Embedder(Protocol):
    fingerprint: str

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """One L2-normalized float32 row per text."""
        ...


def normalized(rows: np.ndarray) -> np.ndarray:
    import numpy as np

    rows = np.asarray(rows, dtype=np.float32)
    if rows.ndim != 2:
        raise MemoryFSError(f"the embedder gave an array of shape {rows.shape}, not one row a text")
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return rows / np.where(norms > 0, norms, 1.0)


def open_embedder(settings: EmbedSettings) -> Embedder | None:
    """The embedder ``settings`` configures (None when ``[embed]`` is off), loaded once
    per process."""
    if not settings.on:
        return None
    key = (settings.backend, settings.model, settings.endpoint, settings.api_key_env,
           settings.timeout, settings.batch)  # fmt: skip
    if key not in _loaded:
        try:
            import numpy  # noqa: F401
        except ImportError:
            raise MemoryFSError(
                f"[embed] is configured but numpy is missing: {EXTRA_HINT}"
            ) from None
        if settings.backend == "local":
            from memoryfs.embed.local import LocalEmbedder

            _loaded[key] = LocalEmbedder.load(settings)
        else:
            from memoryfs.embed.endpoint import EndpointEmbedder

            _loaded[key] = EndpointEmbedder(settings)
    return _loaded[key]
