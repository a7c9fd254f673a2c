"""A page's ``sources`` list as the wiki phase edits it, numbered from its entries.

Job: keep the entries a page already has as they are, append new ones, drop the ones no
claim cites any more, and answer which turn a citation names. ``as_meta`` gives the list
back, equal to what was read when nothing changed; an entry in Dream's shape (exactly
``id``, ``ref``, ``at``, ``hash``; an int id, string ref and hash) in Dream's key order.
Boundary: the list only; which claims cite what is ``dream.wiki.subject_page``'s.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from dream.language.calendar_dates import as_date
from dream.records import Evidence

__all__ = ["Sources"]

_KEYS = frozenset(("id", "ref", "at", "hash"))


def _id_of(e: Any) -> int | None:
    """An entry's int ``id``, None if it has none."""
    n = e.get("id") if isinstance(e, dict) else None
    return n if isinstance(n, int) else None


def _ident(e: Any) -> tuple[int, str, str] | None:
    """(id, ref, hash) of an entry a citation can name, else None."""
    if isinstance(e, dict) and isinstance(e.get("id"), int) and isinstance(e.get("ref"), str):
        return e["id"], e["ref"], str(e.get("hash", ""))
    return None


def _in_order(e: Any) -> Any:
    """An entry in Dream's shape with its keys in Dream's order; any other as it is."""
    if type(e) is not dict or e.keys() != _KEYS:
        return e
    n, ref, at, digest = e["id"], e["ref"], e["at"], e["hash"]
    if type(n) is not int or type(ref) is not str or type(digest) is not str:
        return e
    return {"id": n, "ref": ref, "at": at, "hash": digest}


class Sources:
    """A page's ``sources`` list: existing entries kept as they are, new ones appended."""

    def __init__(self, raw: Any) -> None:
        self._rows: list[Any] = list(raw) if isinstance(raw, list) else []
        self._index()
        self.changed = False

    def _index(self) -> None:
        """Lookups and the next id, from the entries alone: a page held open since it was
        read and the same page written and read again number new citations alike."""
        self._by_ref: dict[str, int] = {}  # ref -> the id of its first entry
        self._by_id: dict[int, Any] = {}  # id -> its first entry with that id
        self._next = 1
        for e in self._rows:
            n = _id_of(e)
            if n is None:
                continue
            self._next = max(self._next, n + 1)
            self._by_id.setdefault(n, e)
            ident = _ident(e)
            if ident is not None:
                self._by_ref.setdefault(ident[1], n)

    def __len__(self) -> int:
        return len(self._rows)

    def _find(self, ref: str, digest: str) -> int | None:
        """The id of the first entry naming ``ref`` with ``digest``, None if none does."""
        n = self._by_ref.get(ref)
        if n is None:
            return None
        first = _ident(self._by_id[n])
        if first is not None and first[1] == ref and first[2] == digest:
            return n
        # the turn was cited before with another hash (its text changed): rare, so scanned
        for e in self._rows:
            ident = _ident(e)
            if ident is not None and ident[1] == ref and ident[2] == digest:
                return ident[0]
        return None

    def _append(self, row: Any, ref: str) -> int:
        n = self._next
        self._next += 1
        self._rows.append(row)
        self._by_ref.setdefault(ref, n)
        self._by_id.setdefault(n, row)
        self.changed = True
        return n

    def cite(self, ev: Evidence) -> int:
        ref = ev.ref  # one string for the entry and the lookup (a property: a new one per call)
        found = self._find(ref, str(ev.hash))
        if found is not None:
            return found
        row = {"id": self._next, "ref": ref, "at": as_date(ev.date), "hash": ev.hash}
        return self._append(row, ref)

    def copy(self, entry: dict[str, Any]) -> int:
        """Cite what another page's source ``entry`` names (an archived claim's evidence)."""
        ref = str(entry.get("ref", ""))
        found = self._find(ref, str(entry.get("hash", "")))
        if found is not None:
            return found
        new = {"id": self._next, **{k: v for k, v in entry.items() if k != "id"}}
        return self._append(new, ref)

    def entry(self, n: int) -> dict[str, Any] | None:
        e = self._by_id.get(n)
        return e if isinstance(e, dict) else None

    def keep_only(self, used: set[int]) -> None:
        """Drop the entries no citation names any more (ids are kept, gaps allowed).

        A dropped entry leaves the lookups too: citing its turn again adds an entry
        (else the citation would name none), and the next id is what the page's text
        says, as when the page is read again (else letting a page go and reopening it
        would change what is written)."""
        kept = [e for e in self._rows if not isinstance(e, dict) or _id_of(e) in used]
        if len(kept) != len(self._rows):
            self._rows = kept
            self._index()
            self.changed = True

    def ref_of(self, n: int) -> str:
        ident = _ident(self._by_id.get(n))
        return ident[1] if ident is not None else ""

    def ids(self) -> Iterator[Any]:
        """The ``id`` of every entry that has one, in order."""
        for e in self._rows:
            if isinstance(e, dict) and "id" in e:
                yield e["id"]

    def days(self) -> Iterator[str]:
        """Every entry's ``at`` that is set, as text, in order."""
        for e in self._rows:
            at = e.get("at") if isinstance(e, dict) else None
            if at:
                yield str(at)

    def as_meta(self) -> list[Any]:
        """The entries as frontmatter values."""
        return [_in_order(e) for e in self._rows]
