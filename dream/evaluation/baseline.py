"""The ``bm25-turns`` arm: plain BM25 over raw transcript turns, the baseline a user would pick.

One SQLite FTS5 table (``porter unicode61``) in memory, one row per turn, holding
the turn prefixed with its speaker and session date, exactly as it is shown.
A question becomes an OR of its distinct non-stopword words; rows come back by
``bm25()`` and are packed best first into the budget, whole rows only, counted
with :func:`memoryfs.store.tokens.count_tokens` like every other arm.
"""

from __future__ import annotations

import datetime as dt
import sqlite3
from collections.abc import Iterable

from dream.evaluation.records import ArmItem, ArmOutput
from dream.evaluation.scoring import STOPWORDS, words
from memoryfs.errors import PageError
from memoryfs.pages.transcript import Transcript, parse_transcript
from memoryfs.store.store import Store
from memoryfs.store.tokens import count_tokens

__all__ = ["Bm25Turns", "human_date"]

_CANDIDATES = 400  # rows considered per question; far more than any budget holds


def human_date(iso: str) -> str:
    """``2023-05-08`` -> ``8 May 2023`` (the input unchanged if it is not a date)."""
    try:
        d = dt.date.fromisoformat(iso[:10])
    except ValueError:
        return iso
    return f"{d.day} {d.strftime('%B')} {d.year}"


class Bm25Turns:
    """A BM25 index over the turns of some transcripts."""

    def __init__(self, transcripts: Iterable[Transcript]) -> None:
        self._db = sqlite3.connect(":memory:")
        self._db.execute("CREATE VIRTUAL TABLE turns USING fts5(body, tokenize='porter unicode61')")
        self._rows: list[tuple[str, str, int]] = []  # rowid-1 -> (shown text, ref, tokens)
        for t in transcripts:
            when = human_date(t.started)
            for turn in t.turns:
                shown = f"[{when}] {turn.speaker}: {turn.text}"
                ref = f"sessions/transcripts/{t.id}.md#t{turn.n}"
                self._rows.append((shown, ref, count_tokens(shown)))
                self._db.execute(
                    "INSERT INTO turns(rowid, body) VALUES (?, ?)", (len(self._rows), shown)
                )
        self._db.commit()

    @classmethod
    def from_store(cls, store: Store) -> Bm25Turns:
        transcripts = []
        for rel in store.files("sessions/transcripts"):
            try:
                transcripts.append(parse_transcript((store.memory / rel).read_text("utf-8"), rel))
            except (OSError, UnicodeDecodeError, PageError):
                continue  # an unreadable transcript is simply not searchable
        return cls(transcripts)

    def __len__(self) -> int:
        return len(self._rows)

    def search(self, question: str, budget_tokens: int) -> ArmOutput:
        terms = list(dict.fromkeys(w for w in words(question) if w not in STOPWORDS))
        if not terms:
            terms = list(dict.fromkeys(words(question)))
        if not terms:
            return ArmOutput(text="", items=())
        query = " OR ".join(f'"{t}"' for t in terms)
        rows = self._db.execute(
            "SELECT rowid FROM turns WHERE turns MATCH ? ORDER BY bm25(turns) LIMIT ?",
            (query, _CANDIDATES),
        ).fetchall()
        items: list[ArmItem] = []
        used = 0
        for (rowid,) in rows:
            shown, ref, n = self._rows[rowid - 1]
            if used + n > budget_tokens:
                continue  # whole turns only; a shorter one further down may still fit
            used += n
            path = ref.split("#", 1)[0]
            items.append(ArmItem(path=path, layer="sessions", text=shown, citations=(ref,)))
            if budget_tokens - used <= 0:
                break
        return ArmOutput(text="\n".join(i.text for i in items), items=tuple(items))
