"""Which transcript turns were changed after they were ingested, as Git's history tells it.

A transcript only grows (DESIGN.md section 1): ``ingest`` appends turns and refuses a
change to an earlier one, and ``forget`` is the one command that may redact. Any other
change to a committed transcript that is not an append (a person editing a turn and
committing, or editing the file in the working tree) leaves turns whose text is not what
was ingested: those turns are no evidence any more. This module finds them: one ``git log``
over the transcripts folder lists every modification; those of commits that are neither
an ingest nor a forget (recognized by the subjects those commands write: ``ingest: ...``,
``forget: ...``) are compared turn by turn, old version against new, and so is the working
tree against ``HEAD`` when asked. A version that only appended turns is no edit.

Validation (``MF405``), ``dream health`` and Dream (which cites no edited turn) read the
same answer. Boundary: reads Git and the files; never writes.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from memoryfs.errors import PageError
from memoryfs.pages.transcript import Transcript, parse_transcript

__all__ = ["TranscriptEdit", "edited_turns", "transcript_edits"]

FOLDER = "memory/sessions/transcripts/"
# the subjects of the commits that may change a transcript (memoryfs.ingest.commit,
# memoryfs.forget.remove): an ingest only appends, a forget redacts on purpose
_TRUSTED = ("ingest:", "forget:")
_ENV = {"GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C", "GIT_TERMINAL_PROMPT": "0"}


@dataclass(frozen=True)
class TranscriptEdit:
    """Turns of one transcript whose text is not what was ingested."""

    path: str  # relative to memory/ (sessions/transcripts/<id>.md)
    turns: tuple[int, ...]  # the turn numbers changed or removed, ascending
    commit: str  # the commit that changed them; "" when only the working tree does
    line: int = 0  # the heading line of the first changed turn in the file (0: removed)

    def describe(self) -> str:
        where = f"in commit {self.commit[:10]}" if self.commit else "in the working tree"
        names = ", ".join(f"t{n}" for n in self.turns)
        return (
            f"turn {names} changed after it was ingested ({where}, not an append); "
            "what it says now is no evidence"
        )


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    import os

    return subprocess.run(
        ["git", *args],
        cwd=root,
        capture_output=True,
        text=True,
        env={**os.environ, **_ENV},
        check=False,
    )


def _parse(text: str | None, path: str) -> Transcript | None:
    if text is None:
        return None
    try:
        return parse_transcript(text, path)
    except PageError:
        return None


def _changed(old: Transcript, new: Transcript | None) -> tuple[tuple[int, ...], int]:
    """The turns of ``old`` that ``new`` does not hold unchanged, and the heading line of
    the first of them in ``new`` (0 when it is gone). A ``new`` that does not parse
    changed every turn."""
    if new is None:
        return tuple(t.n for t in old.turns), 0
    changed: list[int] = []
    line = 0
    for i, turn in enumerate(old.turns):
        now = new.turns[i] if i < len(new.turns) else None
        if now is None or not turn.same_as(now):
            changed.append(turn.n)
            if not line and now is not None:
                line = now.line
    return tuple(changed), line


def _modifications(root: Path, commit: str) -> Iterator[tuple[str, str, str, str]]:
    """(commit, path, old blob, new blob) of each modification of a transcript in the
    history of ``commit`` by a commit that is neither an ingest nor a forget."""
    proc = _git(
        root,
        "log",
        "--no-renames",
        "--raw",
        "--no-abbrev",
        "--format=@%H %s",
        commit,
        "--",
        FOLDER,
    )
    if proc.returncode != 0:
        return
    sha, trusted = "", True
    for line in proc.stdout.splitlines():
        if line.startswith("@"):
            sha, _, subject = line[1:].partition(" ")
            trusted = subject.startswith(_TRUSTED)
        elif line.startswith(":") and not trusted:
            meta, _, path = line.partition("\t")
            parts = meta.split()
            if len(parts) == 5 and parts[4] == "M" and path.endswith(".md"):
                yield sha, path, parts[2], parts[3]


def _blobs(root: Path, names: list[str]) -> dict[str, str | None]:
    """The text of each object name (``<blob>`` or ``<commit>:<path>``); None if missing."""
    if not names:
        return {}
    proc = subprocess.run(
        ["git", "cat-file", "--batch"],
        cwd=root,
        input=("\n".join(names) + "\n").encode(),
        capture_output=True,
        check=False,
    )
    out: dict[str, str | None] = {}
    data, pos = proc.stdout, 0
    for name in names:
        end = data.find(b"\n", pos)
        if end < 0:
            break
        header = data[pos:end].split()
        pos = end + 1
        if len(header) != 3 or header[1] != b"blob":
            out[name] = None
            continue
        size = int(header[2])
        out[name] = data[pos : pos + size].decode("utf-8", errors="replace")
        pos += size + 1
    return out


def transcript_edits(
    root: Path, commit: str = "HEAD", worktree: bool = False
) -> list[TranscriptEdit]:
    """Every edit of an ingested turn in the history of ``commit`` (and, with
    ``worktree``, in the working tree against ``HEAD``), newest first. ``[]`` when
    ``root`` is no Git repository."""
    found = list(_modifications(root, commit))
    names = [blob for _, _, old, new in found for blob in (old, new)]
    dirty: list[str] = []
    if worktree:
        proc = _git(root, "diff", "--no-renames", "--name-only", "--diff-filter=M", "HEAD", "--")
        dirty = sorted(p for p in proc.stdout.splitlines() if p.startswith(FOLDER))
        names += [f"HEAD:{p}" for p in dirty]
    texts = _blobs(root, names)
    edits: list[TranscriptEdit] = []
    for path in dirty:
        try:
            now = (root / path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue  # validation reports a file it cannot read
        edits.extend(_edit(path, texts.get(f"HEAD:{path}"), now, ""))
    for sha, path, old, new in found:
        edits.extend(_edit(path, texts.get(old), texts.get(new), sha))
    return edits


def _edit(path: str, old_text: str | None, new_text: str | None, sha: str) -> list[TranscriptEdit]:
    rel = path.removeprefix("memory/")
    old = _parse(old_text, rel)
    if old is None:
        return []  # nothing ingested to compare with (it did not parse before either)
    turns, line = _changed(old, _parse(new_text, rel))
    return [TranscriptEdit(rel, turns, sha, line)] if turns else []


def edited_turns(
    root: Path, commit: str = "HEAD", worktree: bool = False
) -> dict[str, frozenset[int]]:
    """Per transcript (relative to ``memory/``) the turn numbers edited after ingest."""
    out: dict[str, set[int]] = {}
    for edit in transcript_edits(root, commit, worktree):
        out.setdefault(edit.path, set()).update(edit.turns)
    return {path: frozenset(turns) for path, turns in out.items()}
