"""What each cited turn names, for the profile's check, remembered across runs.

Job: a person page's ``## Profile`` (``dream.wiki.profile``) lets a thing cite a turn only
when the turn's text names it, so each time a person page changes, every turn its
claims cite is asked: by speaker and by the thing keys (``dream.language.facets.thing_key``)
of its words. Parsing each transcript again for that would cost an incremental run about
as much as the rest of its wiki phase (1,000-session synthetic store: 1,093 turns of most
of the store's transcripts, for 20 new sessions). ``CitedNames`` keeps, by the blake2b
digest of a transcript's text (so never stale: a grown or edited transcript is another
text), each turn's speaker display name and keys in ``.memoryfs/dream-turnkeys.sqlite``;
a run parses only the transcripts no earlier run asked about.

Only a cache: a database SQLite cannot open or write leaves the run to parse the
transcripts itself.
Boundary: transcript texts in (``Workset.read``), (speaker, keys) out.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import sqlite3
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path

from dream.language import analysis, facets
from dream.language.analysis import speaker_names
from dream.language.facets import thing_key, words
from memoryfs.errors import PageError
from memoryfs.pages.speakers import Roster
from memoryfs.pages.transcript import parse_transcript
from memoryfs.store import cache_db

__all__ = ["CitedNames", "turn_keys"]

NAME = "dream-turnkeys.sqlite"
VERSION = 2  # the layout; the code the keys come from is in the version too (_version)
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS turns(rel TEXT NOT NULL, digest BLOB NOT NULL, data TEXT NOT NULL, "
    "PRIMARY KEY (rel, digest)) WITHOUT ROWID"
)

Named = tuple[str, frozenset[str]]  # the speaker's display name, the thing keys said


def turn_keys(text: str) -> frozenset[str]:
    """The thing keys of the words of ``text``."""
    return frozenset(thing_key(w) for w in words(text))


def _version() -> int:
    """``VERSION`` and the code a turn's keys and speaker come from (``dream.language.facets``,
    ``dream.language.analysis``): a change to either starts the cache anew, never serving keys
    an older thing_key made."""
    h = hashlib.blake2b(str(VERSION).encode(), digest_size=3)
    for module in (facets, analysis):
        with contextlib.suppress(OSError, TypeError):
            h.update(Path(str(module.__file__)).read_bytes())
    return 1 + int.from_bytes(h.digest(), "big")


class CitedNames:
    """(speaker's display name, thing keys) of the turn a ref names; transcripts read by
    ``read`` (relative to ``memory/``), remembered in the SQLite file at ``path``."""

    SIZE = 16  # transcripts kept in memory, most recently used (a page cites them in runs)

    def __init__(
        self, read: Callable[[str], str | None], path: Path | None, roster: Roster | None = None
    ) -> None:
        self.read = read
        self.roster = roster
        self._db: sqlite3.Connection | None = None
        self._new: dict[tuple[str, bytes], str] = {}
        self._by_rel: OrderedDict[str, dict[int, Named] | None] = OrderedDict()
        self.parsed = 0  # transcripts parsed this run (for tests and benchmarks)
        if path is not None and not (path.is_symlink() or path.parent.is_symlink()):
            with contextlib.suppress(sqlite3.Error, OSError):
                path.parent.mkdir(parents=True, exist_ok=True)
                db = cache_db.connect(str(path))
                try:
                    version = _version()
                    found = db.execute("PRAGMA user_version").fetchone()[0]
                    if found not in (0, version):
                        db.execute("DROP TABLE IF EXISTS turns")
                    db.execute(_SCHEMA)
                    if found != version:
                        db.execute(f"PRAGMA user_version = {version}")
                    db.commit()
                except sqlite3.Error:
                    db.close()
                    raise
                self._db = db

    def named(self, ref: str) -> Named | None:
        """What the turn ``ref`` ("sessions/transcripts/x.md#t3") says; None: no such turn."""
        rel, _, anchor = ref.partition("#")
        if not anchor.startswith("t") or not anchor[1:].isdigit():
            return None
        if rel in self._by_rel:
            self._by_rel.move_to_end(rel)
        else:
            self._by_rel[rel] = self._load(rel)
            if len(self._by_rel) > self.SIZE:
                self._by_rel.popitem(last=False)
        turns = self._by_rel[rel]
        return turns.get(int(anchor[1:])) if turns is not None else None

    def _load(self, rel: str) -> dict[int, Named] | None:
        raw = self.read(rel)
        if raw is None:
            return None
        # the speaker's display name is part of what is kept: a renamed user is parsed again
        h = hashlib.blake2b(raw.encode("utf-8", "surrogatepass"), digest_size=16)
        if self.roster is not None:
            h.update(f"\0{self.roster.user_name}\0{self.roster.assistant_name}".encode())
        digest = h.digest()
        data = self._new.get((rel, digest))
        if data is None and self._db is not None:
            try:
                query = "SELECT data FROM turns WHERE rel = ? AND digest = ?"
                row = self._db.execute(query, (rel, digest)).fetchone()
            except sqlite3.Error:
                row = None
            data = row[0] if row else None
        if data is None:
            data = self._parse(raw, rel)
            self._keep(rel, digest, data)
        found = json.loads(data)
        if found is None:
            return None
        return {int(n): (speaker, frozenset(keys.split())) for n, (speaker, keys) in found.items()}

    def _keep(self, rel: str, digest: bytes, data: str) -> None:
        """Remember a parsed transcript: in the database (committed on ``close``), so a
        full run does not hold every transcript's words; in memory without one. A
        transcript only grows, so what an older text of it said is dropped."""
        if self._db is not None:
            try:
                self._db.execute("DELETE FROM turns WHERE rel = ? AND digest != ?", (rel, digest))
                self._db.execute(
                    "INSERT OR REPLACE INTO turns VALUES (?, ?, ?)", (rel, digest, data)
                )
                return
            except sqlite3.Error:
                pass
        self._new[(rel, digest)] = data

    def _parse(self, raw: str, rel: str) -> str:
        self.parsed += 1
        try:
            t = parse_transcript(raw, rel, self.roster)
        except (PageError, ValueError):
            return "null"
        names = speaker_names(t)
        out: dict[str, list[str]] = {}
        for n in dict.fromkeys(turn.n for turn in t.turns):
            turn = t.turn(f"t{n}")
            if turn is not None:
                keys = " ".join(sorted(turn_keys(turn.text)))
                out[str(n)] = [names.get(turn.speaker, turn.speaker), keys]
        return json.dumps(out, ensure_ascii=False)

    def close(self) -> None:
        """Keep what this run parsed; close the database."""
        db, self._db = self._db, None
        if db is None:
            return
        with contextlib.suppress(sqlite3.Error):
            rows = [(rel, digest, data) for (rel, digest), data in self._new.items()]
            db.executemany("INSERT OR REPLACE INTO turns VALUES (?, ?, ?)", rows)
            db.commit()
        db.close()
