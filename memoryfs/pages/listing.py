"""Reading the pages of a store: every parseable page under a layer.

Malformed pages are skipped here; ``validate`` is where they are reported.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator

from memoryfs.errors import MemoryFSError
from memoryfs.pages.page import Page, parse_page
from memoryfs.store.store import Store

__all__ = ["iter_pages", "load_page", "page_index"]


def load_page(store: Store, rel: str) -> Page | None:
    """The page at ``memory/rel``, or None if it is missing, malformed, not a regular file
    (a FIFO or a device is never read) or over ``budgets.max_file_bytes``."""
    try:
        path = store.resolve(rel)
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as fh:
            st = os.fstat(fh.fileno())
            limit = store.config.budgets.max_file_bytes
            if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
                return None
            text = fh.read(limit + 1).decode("utf-8")
        return None if len(text) > limit else parse_page(text, rel)
    except (OSError, UnicodeDecodeError, MemoryFSError, ValueError):
        return None  # MemoryFSError: malformed, or a symlink out of the store (never followed)


def iter_pages(store: Store, sub: str) -> Iterator[Page]:
    for rel in store.files(sub):
        page = load_page(store, rel)
        if page is not None:
            yield page


def page_index(pages: list[Page]) -> dict[str, Page]:
    """Map of page id and lower-cased aliases to pages (first one wins)."""
    out: dict[str, Page] = {}
    for page in pages:
        out.setdefault(page.id, page)
    for page in pages:
        for alias in page.aliases:
            out.setdefault(alias.lower(), page)
    return out
