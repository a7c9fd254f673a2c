"""Validation findings: the stable codes, their fix hints, and the ``Finding`` record.

Every rule of ``memoryfs validate`` reports one of these codes; the codes never
change meaning, so scripts and Dream's gate can rely on them:

MF001  a page or transcript has no YAML frontmatter
MF002  the frontmatter is not valid YAML
MF003  the frontmatter is not a mapping
MF004  a page lacks a required key (id, title, type, updated)
MF005  a key has a bad value (id not a string, dates not ISO, aliases, status)
MF006  a page id differs from its file name
MF007  two pages in knowledge/ + notes/ share an id
MF008  an alias equals another page's id
MF101  the body cites ``[cite:N]`` but the page has no ``sources``
MF102  ``sources`` is not a list, or an entry is not a mapping
MF103  a source id is not an integer, or is used twice
MF104  a source ref is not ``sessions/transcripts/<session>.md#tN``
MF105  a source ``at`` is not an ISO date, or its ``hash`` is not a hex string
MF106  a ``[cite:N]`` names no entry of ``sources``
MF107  a source names a transcript that does not exist
MF108  a source names a turn the transcript does not have
MF109  stale citation: the cited turn's text no longer matches the source hash
MF110  a line of a page or summary states something and cites nothing (``memoryfs.pages.factlines``)
MF201  a ``[[link]]`` resolves to no page id or alias in knowledge/ or notes/
MF301  a ref or link is absolute, has ``..``, a URL scheme or a NUL byte
MF302  a symlink under memory/ points outside the store (never followed)
MF303  a symlink under memory/ is broken
MF304  a file is not valid UTF-8
MF305  a file is larger than ``budgets.max_file_bytes`` (a transcript: ``limits.transcript_bytes``)
MF306  the tree has no memory/ folder
MF401  a transcript is malformed (headings, turn order, id, started)
MF402  a transcript id differs from its file name
MF403  a transcript's (or page's) scope differs from the store's scope
MF404  a summary has no transcript
MF405  a transcript turn was changed after it was ingested (an edit, not an append)
MF501  a deletions.jsonl line is malformed
MF502  a forgotten page or session is back in the tree
MF503  forgotten words (a phrase, or a forgotten page's or session's text) are back
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CODES", "Finding"]

CODES: dict[str, str] = {  # code -> one-line fix hint
    "MF001": "start the file with a '---' line, the YAML keys, then a closing '---'",
    "MF002": "fix the YAML between the '---' lines (quote values holding ':' or '#')",
    "MF003": "write the frontmatter as 'key: value' lines",
    "MF004": "add the key to the frontmatter",
    "MF005": "use a string id, ISO dates (YYYY-MM-DD), a list of strings for aliases, "
    "status current or superseded",
    "MF006": "rename the file or set id to the file name without .md",
    "MF007": "give each page a unique id (merge the pages or rename one)",
    "MF008": "remove the alias or link to the page by its id",
    "MF101": "add a 'sources' list naming the cited transcript turns",
    "MF102": "write sources as a list of mappings with id, ref, at, hash",
    "MF103": "number the sources 1, 2, 3... each once",
    "MF104": "use ref: sessions/transcripts/<session>.md#tN",
    "MF105": "use at: YYYY-MM-DD and a quoted hex hash (memoryfs hashing.turn_hash)",
    "MF106": "add a matching entry to 'sources' or fix the number",
    "MF107": "point the ref at an existing transcript or drop the citation",
    "MF108": "point the ref at an existing turn anchor",
    "MF109": "re-check the claim against the turn and update the hash, or drop the citation",
    "MF110": "put a [cite:N] of the turn that says it on the same line (a claim is one "
    "line), or remove the line",
    "MF201": "create the page, add an alias, or fix the link target",
    "MF301": "use a path relative to memory/ without '..' or a scheme",
    "MF302": "replace the symlink with the file itself",
    "MF303": "remove the broken symlink",
    "MF304": "re-save the file as UTF-8",
    "MF305": "split the file or raise budgets.max_file_bytes (for a transcript also "
    "limits.transcript_bytes) in memory.toml",
    "MF306": "create memory/ (memoryfs init) or validate the store root",
    "MF401": "fix the turn headings: '## tN · speaker · ISO-time', numbered from t1",
    "MF402": "rename the file or set id to the file name without .md",
    "MF403": "move the file to the store of its scope or fix its scope",
    "MF404": "delete the summary or restore its transcript",
    "MF405": "restore the turn as ingested (git log -p on the file shows it) and append a "
    "correction as a new turn; use 'memoryfs forget' to remove text",
    "MF501": 'write one JSON object per line: {"kind": "page"|"session"|"phrase", ...}',
    "MF502": "delete it again (memoryfs forget); forgotten items must not come back",
    "MF503": "remove the forgotten words from the text",
}


@dataclass(frozen=True)
class Finding:
    path: str  # relative to the validated root, posix (memory/knowledge/people/ana.md)
    line: int  # 1-based; 0 when not line-specific
    code: str
    message: str
    hint: str

    def format(self) -> str:
        return f"{self.path}:{self.line}: {self.code} {self.message} ({self.hint})"
