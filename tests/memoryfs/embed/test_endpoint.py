"""The endpoint back-end against a real HTTP server speaking ``/v1/embeddings``."""

from __future__ import annotations

import socket

import pytest
from embeddings_server import EmbeddingsServer, width_of

from memoryfs.errors import MemoryFSError
from memoryfs.store.config import EmbedSettings

np = pytest.importorskip("numpy", reason="the [embed] extra is not installed")

from memoryfs.embed.endpoint import EndpointEmbedder  # noqa: E402


def _settings(url: str, **kw: object) -> EmbedSettings:
    return EmbedSettings(backend="endpoint", model="mini", endpoint=url, **kw)  # type: ignore[arg-type]


def test_vectors_are_normalized_rows_in_input_order_and_batched() -> None:
    with EmbeddingsServer() as server:
        embedder = EndpointEmbedder(_settings(server.url, batch=2))
        texts = ["Ann went camping", "Ben plays the cello", "a tent by the lake", "cello"]
        rows = embedder.embed(texts)
    assert rows.shape == (4, width_of("mini")) and rows.dtype == np.float32
    assert np.allclose(np.linalg.norm(rows, axis=1), 1.0)
    assert len(server.requests) == 2 and server.texts() == texts  # two batches of two
    assert rows[0] @ rows[2] > rows[0] @ rows[1]  # the answer's order is by "index"
    assert embedder.fingerprint == f"endpoint:{server.url}:mini"


def test_the_key_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    with EmbeddingsServer(token="s3cret") as server:
        embedder = EndpointEmbedder(_settings(server.url, api_key_env="EMBED_KEY"))
        monkeypatch.delenv("EMBED_KEY", raising=False)
        with pytest.raises(MemoryFSError, match=r"\$EMBED_KEY is not set"):
            embedder.embed(["x"])
        monkeypatch.setenv("EMBED_KEY", "wrong")
        with pytest.raises(MemoryFSError, match="HTTP 401"):
            embedder.embed(["x"])
        monkeypatch.setenv("EMBED_KEY", "s3cret")
        assert embedder.embed(["x"]).shape[0] == 1
    assert server.requests[-1]["auth"] == "Bearer s3cret"


def test_failures_are_one_line() -> None:
    with EmbeddingsServer() as server:
        embedder = EndpointEmbedder(_settings(server.url))
        server.fail.append(500)
        with pytest.raises(MemoryFSError, match="HTTP 500"):
            embedder.embed(["x"])
        server.short = True
        with pytest.raises(MemoryFSError, match="1 embeddings for 2 texts"):
            embedder.embed(["x", "y"])
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed when the block ends: nothing listens there
    gone = EndpointEmbedder(_settings(f"http://127.0.0.1:{port}/v1", timeout=5))
    with pytest.raises(MemoryFSError, match="cannot reach the embeddings endpoint"):
        gone.embed(["x"])
