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
- a well-formed page that a person edited last (the last commit that touched it on the
  base has no ``Dream-Run:`` trailer, forgets aside): the lines the person added or
  changed since Dream last wrote it (the page at the last Dream commit that touched it,
  or every line if Dream never did) are put back where the engine dropped them, after
  the nearest line before them that is still there, and the frontmatter keys the person
  changed keep the person's value (``aliases``: the person's, plus what the engine
  added). Dream's new claims land around them. When that cannot be done (the merged page
  does not parse), the page is kept as on the base (DV401).

Boundary: pages of the staged tree the run changed; commits and leaving out on gate
problems are ``dream.runner``'s and ``dream.landing``'s.
"""

from __future__ import annotations

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


def _show(root: Path, commit: str, path: str) -> bytes | None:
    """The bytes of ``path`` at ``commit`` (None: not there)."""
    proc = subprocess.run(
        ["git", "cat-file", "blob", f"{commit}:{path}"],
        cwd=root,
        capture_output=True,
        check=False,
    )
    return proc.stdout if proc.returncode == 0 else None


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


def _history(root: Path, base: str, paths: Sequence[str]) -> dict[str, tuple[bool, str | None]]:
    """Per path: whether a person edited it last (after Dream), and the last commit of
    Dream's that touched it (None: Dream never did). One ``git log`` for all of them,
    newest first, stopped once each path is settled."""
    out: dict[str, tuple[bool, str | None]] = {}
    if not paths:
        return out
    hand: set[str] = set()
    args = ["git", "log", "--no-renames", "--name-only", "-z"]
    args += ["--format=%x01%H%x02%s%x02%(trailers:key=Dream-Run,valueonly)%x03", base, "--"]
    import os

    with subprocess.Popen(
        [*args, *paths],
        cwd=root,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={**os.environ, **_ENV},
    ) as proc:
        assert proc.stdout is not None
        for sha, subject, dream, files in _commits(proc.stdout):
            for path in files:
                if path in out or path not in paths:
                    continue
                if dream:
                    out[path] = (path in hand, sha)
                elif not subject.startswith(_FORGET):
                    hand.add(path)
            if len(out) == len(paths):
                proc.kill()
                break
    for path in paths:
        out.setdefault(path, (path in hand, None))
    return out


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


def _hand_lines(ancestor: str | None, base: str) -> list[int]:
    """Indexes of the lines of ``base`` a person added or changed since ``ancestor``."""
    import difflib

    lines = base.split("\n")
    if ancestor is None:
        return [i for i, line in enumerate(lines) if line.strip()]
    old = ancestor.split("\n")
    out: list[int] = []
    matcher = difflib.SequenceMatcher(None, old, lines, autojunk=False)
    for tag, _i1, _i2, j1, j2 in matcher.get_opcodes():
        if tag in ("insert", "replace"):
            out.extend(j for j in range(j1, j2) if lines[j].strip())
    return out


def _merge_body(ancestor: str | None, base: str, staged: str) -> str:
    """``staged`` with every line the person wrote into ``base`` (since ``ancestor``)
    that it lacks, put back after the nearest earlier line of ``base`` it still has."""
    lines = base.split("\n")
    out = staged.split("\n")
    for j in _hand_lines(ancestor, base):
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


def _merge_meta(ancestor: Page | None, base: Page, staged: Page) -> dict[str, Any]:
    meta = dict(staged.meta)
    before = ancestor.meta if ancestor is not None else {}
    for key in sorted(set(base.meta) | set(before)):
        if key in _MACHINE_KEYS or before.get(key) == base.meta.get(key):
            continue  # the person did not touch it: the engine's value stands
        if key not in base.meta:
            meta.pop(key, None)  # the person removed it
        elif key == "aliases" and isinstance(meta.get(key), list):
            mine = list(base.meta[key]) if isinstance(base.meta[key], list) else []
            added = [a for a in meta[key] if a not in mine and a not in before.get(key, [])]
            meta[key] = mine + added
        else:
            meta[key] = base.meta[key]
    return meta


def _merge(ancestor_text: str | None, base_text: str, staged_text: str, rel: str) -> str | None:
    """The staged page with the person's edits kept; None when that gives no page."""
    try:
        base = parse_page(base_text, rel, memo=False)
        staged = parse_page(staged_text, rel, memo=False)
        ancestor = None
        if ancestor_text is not None:
            ancestor = parse_page(ancestor_text, rel, memo=False)
    except PageError:
        return None
    body = _merge_body(ancestor.body if ancestor is not None else None, base.body, staged.body)
    merged = render_page(Page(_merge_meta(ancestor, base, staged), body))
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
    base_data: dict[str, bytes] = {}
    for status, path in touched:
        data = _show(store_root, base, path)
        if data is None:
            continue
        base_data[path] = data
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
    history = _history(store_root, base, [p for _, p in well_formed])
    for _, path in well_formed:
        edited, last_dream = history[path]
        if not edited:
            continue
        data = base_data[path]
        staged_path = stage_root / path
        try:
            staged = staged_path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        older = _show(store_root, last_dream, path) if last_dream else None
        ancestor = _text(older) if older is not None else None
        merged = _merge(ancestor, _text(data), staged, path.removeprefix("memory/"))
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
