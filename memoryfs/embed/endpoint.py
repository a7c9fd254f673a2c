"""An OpenAI-compatible ``/v1/embeddings`` endpoint (Ollama, vLLM, OpenAI, ...).

Requests go only to the ``endpoint`` the store's ``[embed]`` names, in batches of
``batch`` texts, with the key from the environment variable ``api_key_env`` when one
is set. Any failure (unreachable, an HTTP error, a malformed answer, a row count or
width that does not match) is one ``MemoryFSError`` line; nothing is cached from a
failed call. The fingerprint is the endpoint and the model: the vectors are rebuilt
when either changes.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import TYPE_CHECKING

from memoryfs.embed.embedder import normalized
from memoryfs.errors import MemoryFSError
from memoryfs.store.config import EmbedSettings

if TYPE_CHECKING:
    import numpy as np

__all__ = ["EndpointEmbedder"]

_MAX_ANSWER = 512 * 1024 * 1024  # bytes read of one answer


class EndpointEmbedder:
    """``[embed] backend = "endpoint"``."""

    def __init__(self, settings: EmbedSettings) -> None:
        self._url = settings.endpoint.rstrip("/") + "/embeddings"
        self._model = settings.model
        self._key_env = settings.api_key_env
        self._timeout = settings.timeout
        self._batch = settings.batch
        self.fingerprint = f"endpoint:{settings.endpoint.rstrip('/')}:{settings.model}"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        rows: list[list[float]] = []
        for start in range(0, len(texts), self._batch):
            rows += self._request(list(texts[start : start + self._batch]))
        if not rows:
            return np.zeros((0, 0), dtype=np.float32)
        if len({len(r) for r in rows}) != 1:
            raise MemoryFSError(f"{self._url}: embeddings of different widths in one answer")
        return normalized(np.array(rows, dtype=np.float32))

    def _request(self, batch: list[str]) -> list[list[float]]:
        body = json.dumps({"model": self._model, "input": batch}).encode()
        headers = {"Content-Type": "application/json"}
        if self._key_env:
            key = os.environ.get(self._key_env, "")
            if not key:
                raise MemoryFSError(f"[embed] api_key_env: ${self._key_env} is not set")
            headers["Authorization"] = f"Bearer {key}"
        request = urllib.request.Request(self._url, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self._timeout) as answer:  # noqa: S310
                raw = answer.read(_MAX_ANSWER)
        except urllib.error.HTTPError as exc:
            raise MemoryFSError(f"{self._url}: HTTP {exc.code} {exc.reason}") from None
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise MemoryFSError(
                f"{self._url}: cannot reach the embeddings endpoint: {reason}"
            ) from None
        try:
            data = json.loads(raw)["data"]
            items = sorted(data, key=lambda d: int(d.get("index", 0)))
            vectors = [[float(x) for x in item["embedding"]] for item in items]
        except (ValueError, KeyError, TypeError, AttributeError):
            raise MemoryFSError(f"{self._url}: not an embeddings answer") from None
        if len(vectors) != len(batch) or any(not v for v in vectors):
            raise MemoryFSError(f"{self._url}: {len(vectors)} embeddings for {len(batch)} texts")
        return vectors
