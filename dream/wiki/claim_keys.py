"""A claim line as a subject page indexes it, and the keys that find its near-duplicates.

Job: ``ClaimEntry`` holds one claim line of a page being edited with what
``dream.wiki.subject_page``'s indexes need (its normalized text, slot, citations);
``norm`` and ``blocking_keys`` say which claims are compared
for a merge. Boundary: one line; the page and its indexes are ``dream.wiki.subject_page``'s.
"""

from __future__ import annotations

from dream.wiki.render import Claim, Section, day_of

__all__ = ["MERGE_RATIO", "ClaimEntry", "blocking_keys", "norm"]


MERGE_RATIO = 92  # how alike (rapidfuzz ratio of ``norm``) a near-duplicate claim is


def norm(text: str) -> str:
    """A claim's text as claims are compared: lower case, single spaces, no end punctuation."""
    return " ".join(text.lower().split()).rstrip(".!;,: ")


def blocking_keys(normed: str) -> tuple[str, str]:
    """Blocking keys for near-duplicates: two claims 92% alike share their first or their
    last three words, so only those are compared (a page may hold thousands of claims)."""
    words = normed.split()
    return "^" + " ".join(words[:3]), "$" + " ".join(words[-3:])


class ClaimEntry:
    """A claim line of the page, with what the indexes need."""

    __slots__ = ("sec", "line", "claim", "norm", "slot")

    def __init__(self, sec: Section, line: str, claim: Claim) -> None:
        self.sec, self.line, self.claim = sec, line, claim
        self.norm = norm(claim.text)
        self.slot: str | None = None

    @property
    def current(self) -> bool:
        return bool(day_of(self.sec.title))
