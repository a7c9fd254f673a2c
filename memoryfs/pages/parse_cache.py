"""A byte-bounded memo for parsed text (``memoryfs.pages.page``'s parsed pages).

In one Dream run the wiki phase, the index facts and both gates parse the same
changed pages. The memo is bounded by the characters of the texts it keeps; once
full it keeps what it has (first come: repeated scans in the same order still hit
their first part, where a least-recently-used cache would miss every time) until
``clear``. Values may be shared between callers: treat them as read-only.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

__all__ = ["TextMemo"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class TextMemo(Generic[K, V]):
    """``get(key, size, make)``: the value made for ``key``, made once while it fits."""

    def __init__(self, max_chars: int) -> None:
        self.max_chars = max_chars
        self._values: dict[K, V] = {}
        self._chars = 0

    def get(self, key: K, size: int, make: Callable[[], V]) -> V:
        found = self._values.get(key)
        if found is not None:
            return found
        value = make()
        if self._chars + size <= self.max_chars:
            self._values[key] = value
            self._chars += size
        return value

    def clear(self) -> None:
        self._values.clear()
        self._chars = 0

    def __len__(self) -> int:
        return len(self._values)
