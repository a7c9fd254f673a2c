"""Token counting, the same everywhere (prefill, recall budgets, evaluation).

A token is a run of word characters or a single other non-space character
(``\\w+|[^\\w\\s]``). On English chat text this is within about 15% of the BPE
counts of common LLM tokenizers, needs no model files, and is deterministic.
"""

from __future__ import annotations

import re

__all__ = ["count_tokens", "truncate_to_tokens"]

_TOKEN_RE = re.compile(r"\w+|[^\w\s]")


def count_tokens(text: str) -> int:
    return sum(1 for _ in _TOKEN_RE.finditer(text))


def truncate_to_tokens(text: str, max_tokens: int) -> str:
    """The longest prefix of ``text`` holding at most ``max_tokens`` tokens."""
    if max_tokens <= 0:
        return ""
    for i, m in enumerate(_TOKEN_RE.finditer(text)):
        if i == max_tokens:
            return text[: m.start()].rstrip()
    return text
