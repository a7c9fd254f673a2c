"""Pages a person edited: kept through a run, or left out with the reason; never undone.

A person may edit a page under ``memory/`` and commit. Dream works from the base commit,
so an engine reads the page as the person left it, but it rewrites pages from its own
model of them: a section it regenerates (``## Profile``), a frontmatter key it derives
(``summary``), or a page it cannot read at all (no frontmatter, so no id or type: it
looks like a new subject) would lose what the person wrote. After the engine and before
the gates, ``respect_hand_edits`` looks at each page the run changed or deleted:

- a page that does not parse as one on the base (no frontmatter, YAML that does not
  load, a required key missing: ``memoryfs validate`` reports it): Dream cannot tell what
  the person meant, so it keeps the file byte for byte as on the base and says so (DV401,
  left out). It is never written again from scratch over the person's text;
- a well-formed page a person wrote lines of: the lines whose last change, as ``git
  blame`` on the base tells it, is a person's commit (one without a ``Dream-Run:``
  trailer; a forget's commit is neither a person's nor Dream's) are put back where the
  engine dropped them, after the nearest line before them that is still there, and a
  frontmatter key with such a line keeps the person's value (``aliases``: the person's,
  plus what the engine added). Dream's new claims land around them. Blame, not "the
  last commit was a person's": once a run kept the lines, the page's last commit is
  Dream's, and the next run must keep them too. A line the engine still holds, or holds
  with other citations or a ``(superseded ...)`` / ``(unsupported)`` mark, is not put
  back twice. When the merged page does not parse, the page is kept as on the base
  (DV401).

What a person removed from a page is not tracked: Dream may write such a line again (a
profile line regenerated from the page's claims).

Boundary: pages of the staged tree the run changed; commits and leaving out on gate
problems are ``dream.runner``'s and ``dream.landing``'s.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memoryfs.errors import PageError
from memoryfs.pages.page import REQUIRED_KEYS, Page, parse_page, render_page
from memoryfs.store.atomic import atomic_write_text
from memoryfs.store.hashing import content_hash

__all__ = ["HAND_CODE", "HandEdit", "respect_hand_edits"]

HAND_CODE = "DV401"
_PAGE_ROOTS = ("memory/knowledge/", "memory/notes/", "memory/sessions/summaries/")
_TRAILER = "Dream-Run:"
_FORGET = "forget:"  # a forget's commit (memoryfs.forget): neither Dream's nor a person's
_MACHINE_KEYS = ("sources", "updated", "created")  # what Dream keeps up to date itself
_CITE_RE = re.compile(r"\s*\[cite:\s*\d+\]")
_BLAME_RE = re.compile(r"^([0-9a-f]{40}) \d+ (\d+)(?: (\d+))?$")
_KEY_RE = re.compile(r"^['\"]?([A-Za-z_][\w-]*)['\"]?\s*:")
_ENV = {
    "GIT_OPTIONAL_LOCKS": "0",
    "LC_ALL": "C",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_LITERAL_PATHSPECS": "1",  # a page path is a path, never a pattern
}


@dataclass(frozen=True)
class HandEdit:
    """A page the run kept as the person wrote it (``kept``) or merged into."""

    path: str  # relative to the store root (memory/...)
    kept: bool  # True: the file stays as on the base (left out); False: merged
    why: str  # one line, no page text
    version: str = ""  # content hash of the file as kept

    def format(self) -> str:
        if self.kept:
            return f"{self.path}:0: {HAND_CODE} {self.why} (file left out)"
        return f"{self.path}: {self.why}"


def _show(root: Path, commit: str, paths: Sequence[str]) -> dict[str, bytes]:
    """The bytes of each of ``paths`` at ``commit`` (missing ones left out), read by one
    ``git cat-file --batch``: a full run changes thousands of pages."""
    if not paths:
        return {}
    proc = subprocess.run(
        ["git", "cat-file", "--batch"],
        cwd=root,
        input="".join(f"{commit}:{p}\n" for p in paths).encode("utf-8"),
        capture_output=True,
        env={**os.environ, **_ENV},
        check=False,
    )
    out: dict[str, bytes] = {}
    data, pos = proc.stdout, 0
    for path in paths:
        end = data.find(b"\n", pos)
        if end < 0:
            break
        header = data[pos:end].split()
        pos = end + 1
        if len(header) == 3 and header[1] == b"blob":
            size = int(header[2])
            out[path] = data[pos : pos + size]
            pos += size + 1
    return out


def _text(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


def _malformed(text: str, path: str) -> str:
    """Why ``text`` is no page ("" when it is one)."""
    try:
        page = parse_page(text, path, memo=False)
    except PageError as exc:
        return str(exc).split(": ", 1)[-1] or "it does not parse"
    if not text.lstrip("\ufeff").startswith("---"):
        return "it has no YAML frontmatter"
    missing = [k for k in REQUIRED_KEYS if k not in page.meta]
    if missing:
        return f"its frontmatter lacks {', '.join(missing)}"
    return ""


def _person_commits(root: Path, base: str, paths: Sequence[str]) -> dict[str, set[str]]:
    """Per path: the commits in the history of ``base`` that touched it and are a
    person's (no ``Dream-Run:`` trailer, not a forget). One ``git log`` for all paths."""
    out: dict[str, set[str]] = {}
    if not paths:
        return out
    wanted = set(paths)
    args = ["git", "log", "--no-renames", "--name-only", "-z"]
    args += ["--format=%x01%H%x02%s%x02%(trailers:key=Dream-Run,valueonly)%x03", base, "--"]
    with subprocess.Popen(
        [*args, *paths],
        cwd=root,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={**os.environ, **_ENV},
    ) as proc:
        assert proc.stdout is not None
        for sha, subject, dream, files in _commits(proc.stdout):
            if dream or subject.startswith(_FORGET):
                continue
            for path in files:
                if path in wanted:
                    out.setdefault(path, set()).add(sha)
    return out


def _blamed(root: Path, base: str, path: str, people: set[str]) -> set[int]:
    """The lines (1-based, of the file at ``base``) whose last change is a person's
    commit (``people``), as ``git blame`` tells it."""
    proc = subprocess.run(
        ["git", "blame", "--porcelain", base, "--", path],
        cwd=root,
        capture_output=True,
        env={**os.environ, **_ENV},
        check=False,
    )
    lines: set[int] = set()
    for raw in proc.stdout.decode("utf-8", "replace").split("\n"):
        m = _BLAME_RE.match(raw)
        if m and m.group(1) in people:
            first, count = int(m.group(2)), int(m.group(3) or 1)
            lines.update(range(first, first + count))
    return lines


def _commits(stream: Any) -> Iterator[tuple[str, str, bool, list[str]]]:
    """(sha, subject, has a Dream-Run trailer, files) of each commit ``git log`` printed."""
    buf = b""
    for chunk in iter(lambda: stream.read(1 << 16), b""):
        buf += chunk
        while True:
            start = buf.find(b"\x01")
            nxt = buf.find(b"\x01", start + 1)
            if start < 0 or nxt < 0:
                break
            yield _commit(buf[start + 1 : nxt])
            buf = buf[nxt:]
    if buf.startswith(b"\x01"):
        yield _commit(buf[1:])


def _commit(raw: bytes) -> tuple[str, str, bool, list[str]]:
    head, _, names = raw.partition(b"\x03")
    sha, subject, trailer = (head.decode("utf-8", "replace").split("\x02") + ["", ""])[:3]
    files = [n.strip("\n") for n in names.decode("utf-8", "replace").split("\0")]
    return sha, subject, bool(trailer.strip()), [f for f in files if f]


def _core(line: str) -> str:
    """A line without list marker and citations: how a moved claim is recognized
    (a superseded claim keeps its text under ``## History``)."""
    return _CITE_RE.sub("", line).strip().lstrip("-*").strip().rstrip(".")


def _merge_body(base: str, hand: set[int], staged: str) -> str:
    """``staged`` with every line of ``base`` a person wrote (indexes ``hand``) that it
    lacks, put back after the nearest earlier line of ``base`` it still has."""
    lines = base.split("\n")
    out = staged.split("\n")
    for j in sorted(i for i in hand if 0 <= i < len(lines) and lines[i].strip()):
        line = lines[j]
        core = _core(line)
        if line in out or (core and any(core in _core(o) for o in out if o.strip())):
            continue
        pos, blanks = 0, 0
        for k in range(j - 1, -1, -1):
            if not lines[k].strip():
                blanks += 1
                continue
            if lines[k] in out:
                pos = out.index(lines[k]) + 1
                break
            blanks = 0
        while blanks and pos < len(out) and not out[pos].strip():
            pos, blanks = pos + 1, blanks - 1
        out.insert(pos, line)
    return "\n".join(out)


def _hand_keys(text: str, meta: dict[str, Any], hand: set[int]) -> list[str]:
    """The top-level frontmatter keys of ``text`` with a line a person wrote."""
    lines = text.split("\n")
    keys: list[str] = []
    current = ""
    for n, line in enumerate(lines[1:], start=2):
        if line.rstrip("\r") == "---":
            break
        m = _KEY_RE.match(line)
        if m and m.group(1) in meta:
            current = m.group(1)
        if current and n in hand and current not in keys:
            keys.append(current)
    return [k for k in keys if k not in _MACHINE_KEYS]


def _merge(base_text: str, hand: set[int], staged_text: str, rel: str) -> str | None:
    """The staged page with the person's lines (``hand``: 1-based lines of
    ``base_text``) kept; None when that gives no page."""
    try:
        base = parse_page(base_text, rel, memo=False)
        staged = parse_page(staged_text, rel, memo=False)
    except PageError:
        return None
    meta = dict(staged.meta)
    for key in _hand_keys(base_text, base.meta, hand):
        mine = base.meta[key]
        if key == "aliases" and isinstance(mine, list) and isinstance(meta.get(key), list):
            meta[key] = [*mine, *(a for a in meta[key] if a not in mine)]
        else:
            meta[key] = mine
    body_hand = {n - base.body_line for n in hand if n >= base.body_line}
    merged = render_page(Page(meta, _merge_body(base.body, body_hand, staged.body)))
    try:
        parse_page(merged, rel, memo=False)
    except PageError:
        return None
    return merged


def respect_hand_edits(
    store_root: Path, stage_root: Path, base: str, changes: Iterable[tuple[str, str]]
) -> list[HandEdit]:
    """Keep or merge the person's edits on each changed page of the staged tree;
    ``changes``: (status A/M/D, path relative to the store root). Returns what it did."""
    touched = [
        (status, path)
        for status, path in changes
        if status in ("M", "D") and path.startswith(_PAGE_ROOTS) and path.endswith(".md")
    ]
    done: list[HandEdit] = []
    well_formed: list[tuple[str, str]] = []
    base_data = _show(store_root, base, [path for _, path in touched])
    for status, path in touched:
        data = base_data.get(path)
        if data is None:
            continue
        why = _malformed(_text(data), path.removeprefix("memory/"))
        if why:
            _restore(stage_root, path, data)
            done.append(
                HandEdit(
                    path,
                    True,
                    f"edited by hand and no longer a page ({why}); kept as the person wrote "
                    "it: fix its frontmatter and Dream will update it again",
                    content_hash(data),
                )
            )
        elif status == "M":
            well_formed.append((status, path))
    people = _person_commits(store_root, base, [p for _, p in well_formed])
    for _, path in well_formed:
        if path not in people:
            continue  # only Dream (and forgets) ever wrote it
        hand = _blamed(store_root, base, path, people[path])
        if not hand:
            continue  # what the person wrote is gone since (Dream superseded it, say)
        data = base_data[path]
        staged_path = stage_root / path
        try:
            staged = staged_path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        merged = _merge(_text(data), hand, staged, path.removeprefix("memory/"))
        if merged is None:
            _restore(stage_root, path, data)
            why = "edited by hand; Dream's update could not keep the person's lines, kept as is"
            done.append(HandEdit(path, True, why, content_hash(data)))
        elif merged != staged:
            atomic_write_text(staged_path, merged)
            done.append(HandEdit(path, False, "edited by hand; the person's lines kept"))
    return done


def _restore(stage_root: Path, path: str, data: bytes) -> None:
    """Put the base's bytes back (the staged worktree: a crash throws it away)."""
    target = stage_root / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
