"""Forgetting outside ``memory/``: the places a store keeps derived copies of its content.

``memoryfs.forget.remove`` scrubs the files Git tracks; this module scrubs what
sits beside them, under the same write lock:

- Dream's staging worktrees (``.dream/worktrees/``, the parked ``.spare`` too):
  checkouts of older trees. They are scratch, so they are removed; a registration
  copied from another store (its checkout's ``.git`` names another repository) is
  dropped from this one without touching the other.
- Kept Dream branches (``dream/*``, runs kept for review): a branch whose tree holds
  what the log forgets is deleted (its review would bring it back).
- Run logs (``.dream/runs/*.json``): list entries that name a removed file or a
  forgotten session, or hold forgotten words, are dropped; other strings holding
  forgotten words are redacted.
- Caches (``.memoryfs/``: the search and parse indexes hold text): dropped, the
  locks kept; they rebuild from the files.

Memoryfs knows Dream's folders by name only (``.dream/worktrees``, ``.dream/runs``,
``dream/*``); it never imports ``dream``.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import git

from memoryfs.forget.deletions import Deletions, has_phrase, redact
from memoryfs.forget.scrub import ref_session, scrub_page
from memoryfs.store.atomic import atomic_write_text
from memoryfs.store.store import Store

__all__ = [
    "DREAM_BRANCHES",
    "DerivedCleanup",
    "clean_derived",
    "drop_caches",
    "foreign_worktrees",
    "remove_dream_worktrees",
    "tree_holds",
]

DREAM_BRANCHES = "refs/heads/dream/"


@dataclass(frozen=True)
class DerivedCleanup:
    worktrees: tuple[str, ...]  # worktrees (or copied registrations) removed
    branches: tuple[str, ...]  # kept Dream branches deleted
    run_logs: tuple[str, ...]  # run logs scrubbed

    def to_dict(self) -> dict[str, Any]:
        return {
            "worktrees": list(self.worktrees),
            "branches": list(self.branches),
            "runLogs": list(self.run_logs),
        }


def clean_derived(
    store: Store, deletions: Deletions, removed: set[str], branches: bool = True
) -> DerivedCleanup:
    """Scrub every derived place; ``removed`` are the files (relative to ``memory/``)
    the forget removed; ``branches=False`` keeps kept Dream branches (a history
    purge rewrites them instead). Call with the store's write lock held."""
    worktrees = remove_dream_worktrees(store)
    deleted = _delete_branches(store, deletions) if branches else []
    logs = _scrub_run_logs(store, deletions, removed)
    drop_caches(store)
    return DerivedCleanup(tuple(worktrees), tuple(deleted), tuple(logs))


def remove_dream_worktrees(store: Store) -> list[str]:
    """Remove Dream's worktrees and registrations copied from another store."""
    repo = store.repo
    ours = store.dream_dir / "worktrees"
    done: list[str] = []
    admin = Path(repo.git_dir) / "worktrees"
    for entry in sorted(admin.iterdir()) if admin.is_dir() else []:
        gitdir = _read(entry / "gitdir").strip()
        checkout = Path(gitdir).parent if gitdir else None
        if checkout is None:
            continue
        if _inside(checkout, ours):
            with contextlib.suppress(git.GitCommandError):
                repo.git.worktree("remove", "--force", "--force", str(checkout))
            done.append(str(checkout))
        elif not _links_back(checkout, entry):
            # copied from another store along with .git: the checkout is that store's
            shutil.rmtree(entry, ignore_errors=True)
            done.append(str(checkout))
    if ours.is_dir() and not ours.is_symlink():
        for child in sorted(ours.iterdir()):  # checkouts no registration of ours names
            if child.is_dir() and not child.is_symlink():
                shutil.rmtree(child, ignore_errors=True)
                done.append(str(child))
    with contextlib.suppress(git.GitCommandError):
        repo.git.worktree("prune")
    return sorted(set(done))


def foreign_worktrees(store: Store) -> list[str]:
    """Linked worktrees of this store outside ``.dream/worktrees/`` (a person's own
    checkouts: never removed by a forget, and a history purge refuses them)."""
    ours = store.dream_dir / "worktrees"
    admin = Path(store.repo.git_dir) / "worktrees"
    out: list[str] = []
    for entry in sorted(admin.iterdir()) if admin.is_dir() else []:
        gitdir = _read(entry / "gitdir").strip()
        checkout = Path(gitdir).parent if gitdir else None
        if checkout is None or _inside(checkout, ours) or not checkout.exists():
            continue
        if _links_back(checkout, entry):
            out.append(str(checkout))
    return out


def _links_back(checkout: Path, entry: Path) -> bool:
    """Whether ``checkout``'s ``.git`` file names our registration ``entry``."""
    text = _read(checkout / ".git").strip()
    if not text.startswith("gitdir:"):
        return not checkout.exists()  # gone: ``worktree prune`` handles it
    target = Path(text[len("gitdir:") :].strip())
    with contextlib.suppress(OSError):
        return os.path.samefile(target, entry)
    return False


def _inside(path: Path, folder: Path) -> bool:
    return os.path.realpath(path).startswith(os.path.realpath(folder) + os.sep)


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _delete_branches(store: Store, deletions: Deletions) -> list[str]:
    repo = store.repo
    out = repo.git.for_each_ref("--format=%(refname) %(objectname)", DREAM_BRANCHES)
    deleted: list[str] = []
    for line in out.splitlines():
        ref, _, sha = line.partition(" ")
        if tree_holds(repo, sha, deletions):
            repo.git.update_ref("-d", ref, sha)
            deleted.append(ref)
    return deleted


def tree_holds(repo: git.Repo, commit: str, deletions: Deletions) -> bool:
    """Whether ``commit``'s tree holds what the log forgets (a file of a forgotten
    page or session, or a page the scrub would change)."""
    listing = repo.git.ls_tree("-r", "-z", commit, "--", "memory").split("\0")
    wanted: list[tuple[str, str]] = []
    for item in listing:
        if not item:
            continue
        meta, _, path = item.partition("\t")
        rel = path[len("memory/") :]
        stem = rel.rsplit("/", 1)[-1].removesuffix(".md")
        if stem in deletions.sessions and rel.startswith("sessions/"):
            return True
        if stem in deletions.pages and rel.startswith(("knowledge/", "notes/")):
            return True
        if has_phrase(rel, deletions, traces=True):
            return True
        if rel.endswith(".md") and not rel.startswith("sessions/transcripts/"):
            wanted.append((meta.split()[2], rel))
    for sha, rel in wanted:
        text = repo.git.cat_file("blob", sha, strip_newline_in_stdout=False)
        if rel in ("INDEX.md", "sessions/index.md"):
            if has_phrase(text, deletions, traces=True):
                return True
        elif scrub_page(text, rel, deletions).text != text:
            return True
    return False


def _scrub_run_logs(store: Store, deletions: Deletions, removed: set[str]) -> list[str]:
    folder = store.dream_dir / "runs"
    if folder.is_symlink() or not folder.is_dir():
        return []
    names = {*removed, *(f"memory/{r}" for r in removed)}
    changed: list[str] = []
    for path in sorted(folder.glob("*.json")):
        if path.is_symlink() or not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
            data = json.loads(text)
        except (OSError, ValueError):
            if has_phrase(_read(path), deletions, traces=True):
                path.unlink(missing_ok=True)  # unreadable and holding it: nothing to keep
                changed.append(path.name)
            continue
        new = _scrub_value(data, deletions, names)
        if new != data:
            atomic_write_text(path, json.dumps(new, ensure_ascii=False, indent=2) + "\n")
            changed.append(path.name)
    return changed


def _named(value: str, deletions: Deletions, names: set[str]) -> bool:
    """Whether a log string names a removed file or a forgotten session."""
    stem = value.rsplit("/", 1)[-1].removesuffix(".md")
    return (
        value in names
        or value in deletions.sessions
        or bool(ref_session(value) and ref_session(value) in deletions.sessions)
        or (stem in deletions.sessions and "sessions/" in value)
        or (stem in deletions.pages and ("knowledge/" in value or "notes/" in value))
        or has_phrase(value, deletions, traces=True)
    )


def _names(item: Any, deletions: Deletions, names: set[str]) -> bool:
    """Whether a list item names what is forgotten (a string, or a record one of whose
    strings does): the item goes from its list."""
    if isinstance(item, str):
        return _named(item, deletions, names)
    if isinstance(item, dict):
        return any(isinstance(v, str) and _named(v, deletions, names) for v in item.values())
    return False


def _scrub_value(value: Any, deletions: Deletions, names: set[str]) -> Any:
    if isinstance(value, list):
        return [_scrub_value(v, deletions, names) for v in value if not _names(v, deletions, names)]
    if isinstance(value, dict):
        return {k: _scrub_value(v, deletions, names) for k, v in value.items()}
    if isinstance(value, str):
        return redact(value, deletions, traces=True)
    return value


def drop_caches(store: Store) -> None:
    """The caches (search index) may hold forgotten text; they rebuild from the files."""
    cache = store.cache_dir
    if cache.is_symlink() or not cache.is_dir():
        return  # never follow a symlink out of the store: deleting there is not ours
    for child in cache.iterdir():
        if child.name == "locks":
            continue
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                child.unlink()
