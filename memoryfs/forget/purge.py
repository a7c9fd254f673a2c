"""``memoryfs forget --purge-history``: rewrite history so no commit holds what was forgotten.

Git keeps every old version of every file, so a forget alone leaves the content in
history. The purge rewrites every commit reachable from any ref: each file
version is scrubbed against the whole deletion log with the same functions
``forget`` uses (``memoryfs.forget.scrub``: forgotten pages and sessions dropped, claim
lines citing them removed, phrases removed or redacted; any other file and every
commit and tag message get phrases redacted), then the refs are moved by
compare-and-swap, reflogs expired and unreachable objects pruned (``git gc
--prune=now``). Object rewriting is plain Git plumbing through GitPython's object
database: no ``git filter-repo`` needed, and unlike ``filter-branch`` it scrubs
each distinct file version once.

Rewritten commits get new ids and lose their signatures; anyone with a clone must
re-clone (the old objects live on there). Dream's staging worktrees under
``.dream/worktrees/`` are removed first (their checkouts hold old files); any
other linked worktree makes the purge refuse.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import git
from gitdb import IStream

from memoryfs.errors import MemoryFSError
from memoryfs.forget.deletions import Deletions, load_deletions
from memoryfs.forget.derived import clean_derived, foreign_worktrees, remove_dream_worktrees
from memoryfs.forget.redact import scrub_transcript
from memoryfs.forget.scrub import scrub_generated, scrub_other, scrub_page
from memoryfs.forget.verify import VerifyReport, verify_forgotten
from memoryfs.store.store import Store

__all__ = ["PurgeResult", "check_purge", "purge_history", "count_commits"]

_GENERATED = ("memory/INDEX.md", "memory/sessions/index.md")
_SIGNATURE_HEADERS = (b"gpgsig", b"gpgsig-sha256")
_TREE_MODE = b"40000"


@dataclass(frozen=True)
class PurgeResult:
    commits: int  # commits walked
    rewritten: int  # commits that got a new id
    versions: int  # distinct file versions scrubbed or dropped
    refs: tuple[str, ...]  # refs moved
    worktrees_removed: tuple[str, ...]
    head_before: str
    head_after: str
    verify: VerifyReport = VerifyReport(history=True, entries=0)

    def to_dict(self) -> dict[str, Any]:
        return {
            "commits": self.commits,
            "rewritten": self.rewritten,
            "versions": self.versions,
            "refs": list(self.refs),
            "worktreesRemoved": list(self.worktrees_removed),
            "headBefore": self.head_before,
            "headAfter": self.head_after,
            "verify": self.verify.to_dict(),
        }


def count_commits(store: Store) -> int:
    """Commits reachable from any ref (what a purge would walk)."""
    out = store.repo.git.rev_list("--all", "--count")
    return int(out or 0)


def purge_history(store: Store) -> PurgeResult:
    """Rewrite all history against ``memory/deletions.jsonl``; see the module docstring."""
    with store.lock("write"):
        deletions = load_deletions(store)
        if not deletions:
            raise MemoryFSError("the deletion log is empty: there is nothing to purge")
        repo = store.repo
        head_before = store.head()
        removed = _remove_worktrees(store)
        rewriter = _Rewriter(repo, deletions)
        rewriter.gone = _gone_pages(repo, deletions)
        order = repo.git.rev_list("--all", "--topo-order", "--reverse").split()
        for sha in order:
            rewriter.commit(sha)
        moved = _move_refs(repo, rewriter)
        head_after = store.head()
        if head_after != head_before:
            _sync_worktree(repo, head_before, head_after)
        for name in ("ORIG_HEAD", "FETCH_HEAD"):  # not refs, but they name old commits
            (Path(repo.git_dir) / name).unlink(missing_ok=True)
        repo.git.reflog("expire", "--expire=now", "--expire-unreachable=now", "--all")
        repo.git.gc("--prune=now", "--quiet")
        clean_derived(store, deletions, set(), branches=False)  # run logs and caches
        proof = verify_forgotten(store, history=True)
    return PurgeResult(
        commits=len(order),
        rewritten=sum(1 for old, new in rewriter.commits.items() if old != new),
        versions=rewriter.versions,
        refs=tuple(moved),
        worktrees_removed=tuple(removed),
        head_before=head_before,
        head_after=head_after,
        verify=proof,
    )


def check_purge(store: Store) -> None:
    """Refuse, before anything changes, a purge that could not finish."""
    foreign = foreign_worktrees(store)
    if foreign:
        raise MemoryFSError(
            f"the store has linked worktrees outside .dream/ ({', '.join(foreign)}); "
            "remove them (git worktree remove) before purging history"
        )


def _remove_worktrees(store: Store) -> list[str]:
    check_purge(store)
    return remove_dream_worktrees(store)


def _move_refs(repo: git.Repo, rewriter: _Rewriter) -> list[str]:
    moved: list[str] = []
    listing = repo.git.for_each_ref("--format=%(objectname) %(objecttype) %(refname)")
    for line in listing.splitlines():
        sha, kind, ref = line.split(" ", 2)
        if kind == "commit":
            new = rewriter.commits.get(sha, sha)
        elif kind == "tag":
            new = rewriter.tag(sha)
        else:
            continue
        if new != sha:
            repo.git.update_ref("-m", "memoryfs: purge history", ref, new, sha)
            moved.append(ref)
    return moved


def _sync_worktree(repo: git.Repo, old: str, new: str) -> None:
    """Bring the checkout to the rewritten HEAD (only files that differ are touched)."""
    repo.git.read_tree("-m", "-u", f"{old}^{{tree}}", f"{new}^{{tree}}")


@dataclass
class _Rewriter:
    repo: git.Repo
    deletions: Deletions
    commits: dict[str, str] = field(default_factory=dict)  # old sha -> new sha
    _trees: dict[tuple[str, str], str | None] = field(default_factory=dict)
    _blobs: dict[tuple[str, str], str | None] = field(default_factory=dict)
    versions: int = 0
    gone: frozenset[str] = frozenset()  # ids of pages the scrub removes in every version

    def _read(self, sha: str) -> bytes:
        return bytes(self.repo.odb.stream(bytes.fromhex(sha)).read())

    def _write(self, kind: bytes, data: bytes) -> str:
        stream = self.repo.odb.store(IStream(kind, len(data), io.BytesIO(data)))
        return str(stream.hexsha.decode() if isinstance(stream.hexsha, bytes) else stream.hexsha)

    def commit(self, sha: str) -> str:
        raw = self._read(sha)
        header, sep, message = raw.partition(b"\n\n")
        out: list[bytes] = []
        skipping = False
        for line in header.split(b"\n"):
            if line.startswith(b" "):  # continuation of a multi-line header
                if not skipping:
                    out.append(line)
                continue
            key, _, value = line.partition(b" ")
            skipping = key in _SIGNATURE_HEADERS  # a rewritten commit's signature is void
            if skipping:
                continue
            if key == b"tree":
                tree = self.tree(value.decode(), "")
                line = b"tree " + (tree or self._empty_tree()).encode()
            elif key == b"parent":
                line = b"parent " + self.commits.get(value.decode(), value.decode()).encode()
            out.append(line)
        new_raw = b"\n".join(out) + sep + self._message(message)
        new = sha if new_raw == raw else self._write(b"commit", new_raw)
        self.commits[sha] = new
        return new

    def tag(self, sha: str) -> str:
        raw = self._read(sha)
        header, sep, message = raw.partition(b"\n\n")
        lines = header.split(b"\n")
        for i, line in enumerate(lines):
            if line.startswith(b"object "):
                target = line[len(b"object ") :].decode()
                lines[i] = b"object " + self.commits.get(target, target).encode()
        new_raw = b"\n".join(lines) + sep + self._message(message)
        return sha if new_raw == raw else self._write(b"tag", new_raw)

    def _message(self, message: bytes) -> bytes:
        """A commit or tag message: lines listing removed files go, words are redacted."""
        try:
            text = message.decode("utf-8")
        except UnicodeDecodeError:
            return scrub_other(message, self.deletions)
        new = scrub_generated(text, self.deletions, self.gone)
        return message if new == text else new.encode("utf-8")

    def _empty_tree(self) -> str:
        return self._write(b"tree", b"")

    def tree(self, sha: str, prefix: str) -> str | None:
        """The scrubbed tree (None when nothing is left in it)."""
        key = (sha, prefix)
        if key in self._trees:
            return self._trees[key]
        data = self._read(sha)
        out: list[bytes] = []
        changed = False
        pos = 0
        while pos < len(data):
            space = data.index(b" ", pos)
            nul = data.index(b"\0", space)
            mode, name = data[pos:space], data[space + 1 : nul]
            entry_sha = data[nul + 1 : nul + 21].hex()
            pos = nul + 21
            path = prefix + name.decode("utf-8", errors="surrogateescape")
            if mode == _TREE_MODE:
                new = self.tree(entry_sha, path + "/")
            elif mode.startswith(b"10"):  # regular files (symlinks 120000 keep their target)
                new = self.blob(entry_sha, path)
            else:
                new = entry_sha
            if new is None:
                changed = True
                continue
            if new != entry_sha:
                changed = True
            out.append(mode + b" " + name + b"\0" + bytes.fromhex(new))
        if not out:
            result: str | None = None
        elif not changed:
            result = sha
        else:
            result = self._write(b"tree", b"".join(out))
        self._trees[key] = result
        return result

    def blob(self, sha: str, path: str) -> str | None:
        kind = _kind(path)
        key = (path if kind != "other" else "", sha)  # pages and transcripts depend on the path
        if key in self._blobs:
            return self._blobs[key]
        data = self._read(sha)
        new = self._scrub(data, path, kind)
        result = None if new is None else (sha if new == data else self._write(b"blob", new))
        if result != sha:
            self.versions += 1
        self._blobs[key] = result
        return result

    def _scrub(self, data: bytes, path: str, kind: str) -> bytes | None:
        d = self.deletions
        if kind == "other":
            return scrub_other(data, d)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return scrub_other(data, d)
        rel = path[len("memory/") :]
        if kind == "generated":
            return scrub_generated(text, d, self.gone).encode("utf-8")
        if kind == "transcript":
            try:
                result = scrub_transcript(text, rel, d)
            except MemoryFSError:  # cannot keep its structure: plain redaction then
                return scrub_other(data, d)
            return None if result.text is None else result.text.encode("utf-8")
        page = scrub_page(text, rel, d, gone=self.gone)
        return None if page.text is None else page.text.encode("utf-8")


def _gone_pages(repo: git.Repo, deletions: Deletions) -> frozenset[str]:
    """Lower-cased ids of the pages (knowledge/, notes/) the scrub removes from every
    version history holds: made only of forgotten content, so links to them and
    lines listing them go from other files and messages too."""
    removed: set[str] = set()
    kept: set[str] = set()
    seen: set[str] = set()
    listing = repo.git.rev_list("--all", "--objects")
    for line in listing.splitlines():
        sha, _, path = line.partition(" ")
        if sha in seen or not path.startswith(("memory/knowledge/", "memory/notes/")):
            continue
        seen.add(sha)
        if not path.endswith(".md"):
            continue
        rel = path[len("memory/") :]
        try:
            text = bytes(repo.odb.stream(bytes.fromhex(sha)).read()).decode("utf-8")
        except (UnicodeDecodeError, ValueError):
            continue
        result = scrub_page(text, rel, deletions)
        stem = rel.rsplit("/", 1)[-1].removesuffix(".md").lower()
        (removed if result.text is None else kept).add(stem)
    return frozenset(removed - kept)


_PAGE_RE = re.compile(r"^memory/(?:knowledge/.+|notes/.+|sessions/summaries/[^/]+)\.md$")
_TRANSCRIPT_RE = re.compile(r"^memory/sessions/transcripts/[^/]+\.md$")


def _kind(path: str) -> str:
    if path in _GENERATED:
        return "generated"
    if _TRANSCRIPT_RE.match(path):
        return "transcript"
    if _PAGE_RE.match(path):
        return "page"
    return "other"
