"""The store: a Git repository holding ``memory.toml`` and the ``memory/`` tree.

This module is the only place that creates stores, finds them, resolves paths
inside them (refusing anything that escapes) and commits through GitPython.
GitPython is imported by the methods that use it, so a read (``memoryfs search``)
opens a store without loading it. What a program calls on a store (search, recall,
ingest, ...) ``Store`` inherits from ``memoryfs.api.StoreAPI``.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import stat
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from memoryfs.api import StoreAPI
from memoryfs.errors import LockedError, MemoryFSError, StoreExistsError, StoreNotFoundError
from memoryfs.receipts.log import ensure_union_merge
from memoryfs.store.atomic import atomic_write_text
from memoryfs.store.config import (
    StoreConfig,
    load_config,
    render_config,
    valid_display_name,
    validate_scope_name,
)
from memoryfs.store.moving import disk_error, disk_reason

if TYPE_CHECKING:
    import git

__all__ = [
    "CONFIG_NAME",
    "LAYERS",
    "Store",
    "find_store",
    "init_store",
    "remove_stale_lock",
]

CONFIG_NAME = "memory.toml"
ENV_STORE = "MEMORYFS_STORE"
LAYERS = ("knowledge", "notes", "sessions")
KNOWLEDGE_FOLDERS = ("people", "projects", "orgs", "places", "topics", "preferences")
DEFAULT_AUTHOR = ("memoryfs", "memoryfs@localhost")
_STORE_GITIGNORE = ".memoryfs/\n.dream/runs/\n.dream/worktrees/\n"


@dataclass(frozen=True)
class Store(StoreAPI):
    """An opened store. ``root`` holds ``memory.toml``; ``memory`` is ``root/memory``.

    ``Store.open(path)`` opens the store at ``path``; ``memoryfs.open_store`` also finds
    one the way the commands do. The calls on it are ``memoryfs.api.StoreAPI``'s."""

    root: Path
    config: StoreConfig

    @property
    def memory(self) -> Path:
        return self.root / "memory"

    @property
    def cache_dir(self) -> Path:
        """Git-ignored folder for caches and locks; deleting it loses nothing."""
        return self.root / ".memoryfs"

    @property
    def dream_dir(self) -> Path:
        return self.root / ".dream"

    @cached_property
    def repo(self) -> git.Repo:
        import git

        try:
            return git.Repo(self.root)
        except (git.InvalidGitRepositoryError, git.NoSuchPathError):
            raise StoreNotFoundError(
                f"{self.root} has memory.toml but is not a Git repository "
                "(run 'git init' there or re-create it with 'memoryfs init')"
            ) from None

    @classmethod
    def open(cls, path: Path | str) -> Store:
        """The store whose ``memory.toml`` is in ``path``; ``StoreNotFoundError`` otherwise."""
        root = Path(path).expanduser().resolve()
        cfg_path = root / CONFIG_NAME
        if not cfg_path.is_file():
            raise StoreNotFoundError(
                f"no store at {root} (no {CONFIG_NAME}; create one with 'memoryfs init DIR')"
            )
        return cls(root=root, config=load_config(cfg_path))

    # -- paths -------------------------------------------------------------

    def resolve(self, rel: str, base: str = "memory") -> Path:
        """Absolute path of ``rel`` (relative to ``base``), refusing escapes.

        Refuses absolute paths, URL schemes, ``..`` that leaves the store, NUL
        bytes and symlinks that point outside the store.
        """
        if not rel or "\x00" in rel or "\n" in rel or "://" in rel or rel.startswith(("/", "\\")):
            raise MemoryFSError(f"path {rel!r} is not a relative path inside the store")
        base_dir = (self.root / base).resolve() if base else self.root
        candidate = (base_dir / rel).resolve()
        if not candidate.is_relative_to(self.root):
            raise MemoryFSError(f"path {rel!r} escapes the store")
        return candidate

    def rel(self, path: Path) -> str:
        """``path`` relative to ``memory/`` in posix form."""
        return path.resolve().relative_to(self.memory.resolve()).as_posix()

    def files(self, sub: str = "", suffix: str = ".md") -> list[str]:
        """Files under ``memory/sub`` (relative to ``memory/``), sorted, no symlinks followed."""
        top = self.memory / sub if sub else self.memory
        out: list[str] = []
        if not top.is_dir():
            return out
        # paths by string (os.walk's dirpaths all start with ``top``): a Path per file would
        # be most of the cost of listing a store of thousands of files
        base = Path(top).relative_to(self.memory).as_posix()
        base = "" if base == "." else base
        start = len(os.fspath(top))
        for dirpath, dirnames, filenames in os.walk(top, followlinks=False):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            folder = (base + dirpath[start:].replace(os.sep, "/")).lstrip("/")
            prefix = f"{folder}/" if folder else ""
            for name in filenames:
                if name.endswith(suffix) and not name.startswith("."):
                    out.append(prefix + name)
        return sorted(out)

    def lists(self, rel: str, suffix: str = ".md") -> bool | None:
        """Whether ``files`` lists ``rel`` (relative to ``memory/``, under a folder of it
        that is not a link) now, without listing the rest: its folders plain, visible and
        readable, its name visible with ``suffix``, an entry that is not a folder. None
        for a folder (what Git reports for a submodule or a folder it did not look in)."""
        parts = rel.split("/")
        if any(p in ("", ".", "..") for p in parts):
            return False
        path = os.fspath(self.memory)
        for part in parts[:-1]:
            path = f"{path}/{part}"
            try:
                st = os.lstat(path)
            except OSError:
                return False
            if part.startswith(".") or not stat.S_ISDIR(st.st_mode):
                return False
            if not os.access(path, os.R_OK | os.X_OK):
                return False  # os.walk cannot list it
        path = f"{path}/{parts[-1]}"
        if os.path.isdir(path):  # follows a link, as os.walk's sorting into folders does
            return None
        if not os.path.lexists(path):
            return False
        return parts[-1].endswith(suffix) and not parts[-1].startswith(".")

    def transcript_path(self, session_id: str) -> Path:
        return self.memory / "sessions" / "transcripts" / f"{session_id}.md"

    # -- git -----------------------------------------------------------------

    def author(self) -> git.Actor:
        import git

        reader = self.repo.config_reader()
        name = reader.get_value("user", "name", default="")
        email = reader.get_value("user", "email", default="")
        if name and email:
            return git.Actor(str(name), str(email))
        return git.Actor(*DEFAULT_AUTHOR)

    def head(self) -> str:
        try:
            return self.repo.head.commit.hexsha
        except ValueError:
            return ""

    def configure(self, config: StoreConfig, message: str) -> str:
        """Write ``config`` as ``memory.toml`` and commit it alone (the commit's sha). The
        caller holds the write lock when others may write; ``Store.open`` sees the new
        configuration."""
        atomic_write_text(self.root / CONFIG_NAME, render_config(config))
        return self.commit(message, [CONFIG_NAME])

    def commit(self, message: str, paths: list[str] | None = None) -> str:
        """Stage ``paths`` (relative to the root; all changes when None) and commit.

        Returns the new commit sha, or "" when there was nothing to commit.
        """
        import git

        try:
            return self._commit(message, paths)
        except git.GitCommandError as exc:
            # what was staged for the commit that failed goes back out of the index
            with contextlib.suppress(git.GitCommandError):
                if self.repo.head.is_valid():
                    self.repo.git.reset("-q", "HEAD", "--", *(paths or []))
            reason = disk_reason(exc)
            if reason is None:
                raise
            raise disk_error(self.root, "git could not commit", reason) from None

    def _commit(self, message: str, paths: list[str] | None) -> str:
        repo = self.repo
        # With paths, only those paths go in (``git commit -- paths``): whatever else
        # happens to be staged stays out of this commit.
        scope = ["--", *paths] if paths else []
        if paths is None:
            _git_retrying(repo.git.add, "-A")
        elif paths:
            _git_retrying(repo.git.add, "-A", *scope)
        if repo.head.is_valid() and not repo.git.diff("--cached", "--name-only", "HEAD", *scope):
            return ""
        actor = self.author()
        with repo.git.custom_environment(
            GIT_AUTHOR_NAME=actor.name or DEFAULT_AUTHOR[0],
            GIT_AUTHOR_EMAIL=actor.email or DEFAULT_AUTHOR[1],
            GIT_COMMITTER_NAME=actor.name or DEFAULT_AUTHOR[0],
            GIT_COMMITTER_EMAIL=actor.email or DEFAULT_AUTHOR[1],
        ):
            _git_retrying(repo.git.commit, "-q", "--no-verify", "-m", message, *scope)
        return repo.head.commit.hexsha

    @contextlib.contextmanager
    def lock(self, name: str = "write", timeout: float = 30.0) -> Iterator[None]:
        """An exclusive advisory lock (``flock``) under ``.memoryfs/locks/``.

        The kernel releases it when the holder dies, so a crashed process never
        leaves a store locked. Waits up to ``timeout`` seconds (0: do not wait).
        """
        lock_dir = self.cache_dir / "locks"
        if self.cache_dir.is_symlink() or lock_dir.is_symlink():
            raise MemoryFSError(
                f"{lock_dir} is a symlink; remove {self.cache_dir} (it only holds caches)"
            )
        lock_dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(lock_dir / f"{name}.lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            deadline = time.monotonic() + timeout
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise LockedError(
                            f"store {self.root} is busy: another process holds the {name!r} lock "
                            "(try again when it finishes)"
                        ) from None
                    time.sleep(0.05)
            try:
                os.ftruncate(fd, 0)
                os.write(fd, f"{os.getpid()}\n".encode())
                yield
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)


_LOCK_EXISTS_RE = re.compile(r"Unable to create '([^']+\.lock)': File exists")


def _git_retrying(cmd: Callable[..., str], *args: str) -> str:
    """Run a git command; a ``.lock`` file left by a killed git is cleared, then retried.

    Callers hold the store's write lock, so no memoryfs process can own the file;
    it is removed only once no process has it open (or, without /proc, once it
    is a minute old), so a user's own running git command is waited for.
    """
    import git

    deadline = time.monotonic() + 10.0
    while True:
        try:
            return cmd(*args)
        except git.GitCommandError as exc:
            m = _LOCK_EXISTS_RE.search(str(exc.stderr))
            if m is None or time.monotonic() > deadline:
                raise
            if _stale_lock(Path(m.group(1))):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(m.group(1))
            else:
                time.sleep(0.2)


def remove_stale_lock(path: Path, wait: float = 2.0) -> bool:
    """Delete a Git ``.lock`` file that a killed git left behind (no process has it
    open); call it holding the store's write lock. Waits up to ``wait`` seconds for
    a live git to finish with it. True when the file is gone."""
    deadline = time.monotonic() + wait
    while path.exists():
        if _stale_lock(path):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
        elif time.monotonic() >= deadline:
            return False
        else:
            time.sleep(0.1)
    return True


def _stale_lock(path: Path) -> bool:
    try:
        age = time.time() - path.stat().st_mtime
    except FileNotFoundError:
        return False  # gone already: just retry
    proc = Path("/proc")
    if not proc.is_dir():
        return age > 60
    if age < 1.0:
        return False
    target = str(path)
    for fd_dir in proc.glob("[0-9]*/fd"):
        try:
            for fd in fd_dir.iterdir():
                with contextlib.suppress(OSError):
                    if os.readlink(fd) == target:
                        return False
        except OSError:
            continue
    return True


def find_store(explicit: Path | str | None = None, cwd: Path | None = None) -> Store:
    """``--store``, else ``MEMORYFS_STORE``, else the nearest folder up with memory.toml."""
    if explicit:
        return Store.open(explicit)
    env = os.environ.get(ENV_STORE)
    if env:
        return Store.open(env)
    here = (cwd or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / CONFIG_NAME).is_file():
            return Store.open(folder)
    raise StoreNotFoundError(
        f"no store found in {here} or its parents "
        f"(pass --store DIR, set {ENV_STORE}, or run 'memoryfs init DIR')"
    )


def init_store(
    path: Path | str,
    user: str,
    assistant: str,
    user_name: str = "",
    assistant_name: str = "",
) -> Store:
    """Create a store: Git repo, ``memory.toml``, the ``memory/`` skeleton, a first commit.

    ``user_name``/``assistant_name`` are the names claims are written with; "" derives
    one from the id (``memoryfs.pages.speakers.display_name``)."""
    root = Path(path).expanduser().resolve()
    validate_scope_name("user", user)
    validate_scope_name("assistant", assistant)
    for kind, name in (("user", user_name), ("assistant", assistant_name)):
        if not valid_display_name(name, empty_ok=True):
            raise MemoryFSError(
                f"invalid {kind} name {name!r} (one line, at most 80 characters, with a letter)"
            )
    if root.exists() and not root.is_dir():
        raise StoreExistsError(f"{root} exists and is not a folder")
    if (root / CONFIG_NAME).exists():
        raise StoreExistsError(f"{root} is already a store (it has {CONFIG_NAME})")
    if root.is_dir() and any(p.name != ".git" for p in root.iterdir()):
        raise StoreExistsError(
            f"{root} is not empty and not a store; choose an empty or new folder"
        )
    import git

    root.mkdir(parents=True, exist_ok=True)
    cfg = StoreConfig(
        user=user,
        assistant=assistant,
        user_name=user_name.strip(),
        assistant_name=assistant_name.strip(),
    )
    repo = (
        git.Repo.init(root, initial_branch="main")
        if not (root / ".git").exists()
        else git.Repo(root)
    )
    atomic_write_text(root / CONFIG_NAME, render_config(cfg))
    atomic_write_text(root / ".gitignore", _STORE_GITIGNORE)
    ensure_union_merge(root)  # receipts logs: concurrent appends merge line by line
    mem = root / "memory"
    for sub in KNOWLEDGE_FOLDERS:
        _keep(mem / "knowledge" / sub)
    _keep(mem / "notes")
    _keep(mem / "sessions" / "summaries")
    _keep(mem / "sessions" / "transcripts")
    atomic_write_text(mem / "deletions.jsonl", "")
    store = Store(root=root, config=cfg)
    store.__dict__["repo"] = repo
    from memoryfs.index.index_md import (
        write_indexes,  # the index module renders the two generated files
    )

    write_indexes(store)
    store.commit(f"init: memory store for {user} / {assistant}")
    return store


def _keep(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    keep = folder / ".gitkeep"
    if not keep.exists():
        keep.write_bytes(b"")
