"""A claim line as a subject page indexes it, and the keys that find its near-duplicates.

Job: ``ClaimEntry`` holds one claim line of a page being edited with what
``dream.wiki.subject_page``'s indexes need (its normalized text, slot, citations), the claim's text
kept as a slice of its line; ``norm`` and ``blocking_keys`` say which claims are compared
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
    """A claim line of the page, with what the indexes need. The claim's text is the slice
    of its line after "- " (where it is: nearly always), so it is not held twice."""

    __slots__ = ("sec", "line", "norm", "slot", "cites", "tail", "_text")

    def __init__(self, sec: Section, line: str, claim: Claim) -> None:
        self.sec, self.line = sec, line
        self.cites, self.tail = claim.cites, claim.tail
        text = claim.text
        # where the text ends in the line, else the text itself
        self._text: int | str = 2 + len(text) if line.startswith(text, 2) else text
        self.norm = norm(text)
        self.slot: str | None = None

    @property
    def claim(self) -> Claim:
        at = self._text
        text = self.line[2:at] if isinstance(at, int) else at
        return Claim(text, self.cites, self.tail)

    @property
    def current(self) -> bool:
        return bool(day_of(self.sec.title))
