"""Retrieval by meaning: the units nearest a question, and its fusion with the lexical.

Lexical search finds the units that share words with a question; a question that names
a category ("what activities ...") while the turn names an instance ("camping") shares
none. With ``[embed]`` configured (``memoryfs.embed``), ``Dense`` ranks every unit by
the cosine of its vector with the question's (``memoryfs.index.vectors``), and
``hybrid`` merges that ranking with the lexical one by weighted reciprocal rank fusion
(``memoryfs.read.expand.fuse``), the lexical ranking first so scores keep its scale.
Without ``[embed]`` there is no ``Dense`` and search and recall are lexical.

The search modes: ``lexical`` (FTS5 and BM25), ``dense`` (vectors only) and ``hybrid``
(both); the default is ``hybrid`` when ``[embed]`` is configured, else ``lexical``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from memoryfs.embed.embedder import Embedder, open_embedder
from memoryfs.errors import MemoryFSError
from memoryfs.index.vectors import VectorCache
from memoryfs.read.expand import fuse
from memoryfs.read.search import Hit, SearchIndex, check_query
from memoryfs.store.store import Store

__all__ = ["DENSE_WEIGHT", "SEARCH_MODES", "Dense", "search_mode", "hybrid_search"]

SEARCH_MODES = ("lexical", "dense", "hybrid")
# The dense ranking's weight in the fusion (the lexical one's: 1). Chosen on the five
# LoCoMo tuning conversations (docs/hybrid.md).
DENSE_WEIGHT = 1.0


def search_mode(store: Store, mode: str | None) -> str:
    """``mode`` checked, or the store's default: hybrid with ``[embed]``, else lexical."""
    if mode is None:
        return "hybrid" if store.config.embed.on else "lexical"
    if mode not in SEARCH_MODES:
        raise MemoryFSError(f"unknown search mode {mode!r} (use {', '.join(SEARCH_MODES)})")
    if mode != "lexical" and not store.config.embed.on:
        raise MemoryFSError(
            f"search mode {mode!r} needs an embedder: configure [embed] in memory.toml "
            "(docs/hybrid.md)"
        )
    return mode


class Dense:
    """The units nearest a text by meaning, over a refreshed vector cache."""

    def __init__(self, idx: SearchIndex, cache: VectorCache, embedder: Embedder) -> None:
        self.idx = idx
        self.cache = cache
        self.embedder = embedder

    @classmethod
    def open(
        cls,
        store: Store,
        idx: SearchIndex,
        progress: Callable[[int, int], None] | None = None,
    ) -> Dense | None:
        """The store's dense retrieval with its vectors brought up to date with ``idx``
        (refreshed first), or None without ``[embed]``. ``progress(done, total)``: texts
        embedded."""
        embedder = open_embedder(store.config.embed)
        if embedder is None:
            return None
        cache = VectorCache(store.cache_dir, embedder)
        try:
            cache.refresh(idx.unit_texts, idx.signature(), progress)
        except BaseException:
            cache.close()
            raise
        return cls(idx, cache, embedder)

    def close(self) -> None:
        self.cache.close()

    def __enter__(self) -> Dense:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def search(self, query: str, k: int, layers: Sequence[str] | None = None) -> list[Hit]:
        """The ``k`` units nearest ``query``, best first, scored by cosine."""
        check_query(self.idx.store, query)
        if not query.strip() or k <= 0:
            return []
        vector = self.embedder.embed([query])[0]
        nearest = self.cache.matrix().top(vector, k, layers)
        cosine = dict(nearest)
        hits = self.idx.units_by_id([uid for uid, _ in nearest], query)
        return [replace(hit, score=round(cosine[uid], 6)) for uid, hit in hits]


def hybrid_search(
    idx: SearchIndex,
    dense: Dense,
    query: str,
    k: int,
    layers: Sequence[str] | None = None,
    depth: int = 40,
) -> list[Hit]:
    """The ``k`` best of the lexical and the dense rankings (each ``depth`` deep), fused."""
    depth = max(depth, k)
    lexical = idx.search(query, k=depth, layers=layers)
    nearest = dense.search(query, depth, layers)
    return fuse([lexical, nearest], [1.0, DENSE_WEIGHT], k)
