"""The byte-bounded memo behind page parsing."""

from __future__ import annotations

from memoryfs.pages.page import clear_parse_cache, parse_page
from memoryfs.pages.parse_cache import TextMemo


def test_values_are_made_once_while_they_fit_and_first_come_stays() -> None:
    made: list[str] = []
    memo: TextMemo[str, str] = TextMemo(max_chars=10)

    def get(text: str) -> str:
        return memo.get(text, len(text), lambda: made.append(text) or text.upper())

    assert get("abcd") == "ABCD" and get("abcd") == "ABCD"
    assert get("efghij") == "EFGHIJ"  # 4 + 6 = 10 chars: still fits
    assert get("k") == "K" and get("k") == "K"  # full: made again each time, never kept
    assert get("abcd") == "ABCD"  # what came first stays
    assert made == ["abcd", "efghij", "k", "k"] and len(memo) == 2
    memo.clear()
    assert len(memo) == 0 and get("k") == "K" and len(memo) == 1


def test_a_parsed_page_is_shared_until_the_cache_is_cleared() -> None:
    text = "---\nid: a\ntitle: A\n---\nBody.\n"
    first = parse_page(text, "knowledge/a.md")
    assert parse_page(text, "knowledge/a.md") is first
    assert parse_page(text, "knowledge/b.md") is not first  # the path is part of the key
    clear_parse_cache()
    assert parse_page(text, "knowledge/a.md") is not first


def test_the_memo_knows_a_text_by_content_and_does_not_keep_it() -> None:
    """Another copy of the same text finds the parsed page; the text itself is let go
    once its reader drops it (the page keeps its body and frontmatter, not the text)."""
    import tracemalloc

    clear_parse_cache()
    head = "---\nid: big\ntitle: Big\n---\n"
    from memoryfs.pages import page

    count = page._memo.max_chars // 40  # a text of ~70% of the memo: kept in it
    body = "".join(f"line {i} of a long page\n" for i in range(count))
    assert 0.5 * page._memo.max_chars < len(head) + len(body) < page._memo.max_chars
    tracemalloc.start()
    try:
        text = "".join([head, body])  # a text nobody else holds
        first = parse_page(text, "knowledge/big.md")
        held = tracemalloc.get_traced_memory()[0]
        del text
        freed = held - tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert parse_page("".join([head, body]), "knowledge/big.md") is first  # another copy
    assert freed > 0.9 * len(body)
    clear_parse_cache()
