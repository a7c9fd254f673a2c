"""A sandbox's files and manifest: what materialize writes, whatever the files come from.

``sync`` brings a sandbox to a wanted set of files read from an ``Origin`` (a local
store: ``memoryfs.read.materialize``; a Git server: ``memoryfs.remote.sandbox``).
``.materialized.json`` lists each file with its Git blob hash (the version the agent
got), the reason it is there and its size, and says where the files came from (the
store's folder, or the URL) and at which commit. Each page written gets a
``materialized`` receipt in ``<sandbox>/.receipts/`` (``memoryfs.receipts.reads``).

A sync writes only files whose blob changed and removes what is no longer wanted or
no longer at the origin. It never replaces a file it did not write (one not in its
manifest): a sandbox holding such a file where the working set goes is refused, as is
a sandbox inside a store or inside (or at) a Git folder. It never writes through a
symlink in the sandbox (a link where a file or folder belongs is replaced, not
followed), and ``locked`` takes a lock on the sandbox so two agents materializing at
once never interleave. Crash safety: each file is written atomically, and before
anything changes the manifest is rewritten without the entries about to change
(listed under ``pending``), so a run killed midway leaves every listed file matching
its entry, and the next run redoes the pending paths and removes the killed run's
temp files.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import stat
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

from memoryfs.errors import MemoryFSError
from memoryfs.receipts.log import sandbox_receipt_dir
from memoryfs.receipts.reads import record_reads
from memoryfs.store.atomic import atomic_write_text, remove_temp_files
from memoryfs.store.config import StoreConfig
from memoryfs.store.hashing import content_hash
from memoryfs.store.store import CONFIG_NAME

__all__ = [
    "MANIFEST",
    "RECALL",
    "ManifestEntry",
    "MaterializeResult",
    "Origin",
    "blob_hash",
    "check_sandbox",
    "load_manifest",
    "locked",
    "ManifestHead",
    "manifest_head",
    "sandbox_root",
    "sync",
]

MANIFEST = ".materialized.json"
_LOCK = ".materialized.lock"
MANIFEST_VERSION = 1
RECALL = "recall"
_SAFE_PATH_RE = re.compile(r"^memory/[^\x00\n\r]+\.md$")


@dataclass(frozen=True)
class ManifestEntry:
    path: str  # relative to the sandbox and to the store root, e.g. "memory/INDEX.md"
    blob: str  # Git blob hash of the content written (its version)
    reason: (
        str  # index | preference | most-linked | recently-updated | recent-session | note | recall
    )
    bytes: int


@dataclass(frozen=True)
class MaterializeResult:
    sandbox: str
    commit: str  # store HEAD when the set was chosen ("" on an empty repository)
    files: tuple[ManifestEntry, ...]
    copied: tuple[str, ...]  # paths written this run
    removed: tuple[str, ...]  # paths deleted this run
    unchanged: int
    bytes: int  # total bytes of the budgeted working set (the maps and recalled files aside)
    budget_bytes: int
    url: str = ""  # the Git server the files came from ("" for a local store)
    fetched_bytes: int = 0  # bytes of the packs received from ``url`` this run
    fetches: int = 0  # fetches from ``url`` this run (each one connection)

    def to_json(self) -> dict[str, object]:
        """The result as ``memoryfs materialize --json`` prints it."""
        out: dict[str, object] = {
            "sandbox": self.sandbox,
            "commit": self.commit,
            "budgetBytes": self.budget_bytes,
            "bytes": self.bytes,
            "files": [asdict(e) for e in self.files],
            "copied": list(self.copied),
            "removed": list(self.removed),
            "unchanged": self.unchanged,
        }
        if self.url:
            out.update(url=self.url, fetchedBytes=self.fetched_bytes, fetches=self.fetches)
        return out


@dataclass(frozen=True)
class Origin:
    """Where a sandbox's files come from: ``read(rel)`` gives a file's bytes (path
    relative to ``memory/``; None when it is not there), at ``commit``."""

    read: Callable[[str], bytes | None]
    commit: str
    config: StoreConfig  # the origin store's: scope and budgets for the receipts
    where: dict[str, str] = field(default_factory=dict)  # {"store": folder} or {"url": URL}


@dataclass(frozen=True)
class ManifestHead:
    """What a manifest says besides its files: where they came from."""

    store: str = ""
    url: str = ""
    commit: str = ""


def blob_hash(data: bytes) -> str:
    """The hash Git gives this content as a blob (``git hash-object``)."""
    return hashlib.sha1(b"blob %d\x00" % len(data) + data, usedforsecurity=False).hexdigest()


def sync(
    origin: Origin,
    root: Path,
    wanted: dict[str, str],
    old: dict[str, ManifestEntry],
    budget: int,
    prune: bool,
) -> MaterializeResult:
    """Bring the sandbox at ``root`` to ``wanted`` (sandbox path -> reason), read from
    ``origin``; ``old`` is the manifest's entries before. ``prune``: also remove what the
    manifest holds and ``wanted`` does not (else only what the origin no longer has)."""
    entries: list[ManifestEntry] = []
    writes: dict[str, bytes] = {}
    versions: dict[str, str] = {}  # what entered the sandbox: its receipts
    unchanged = 0
    if any(not e.blob for e in old.values()):  # a run was killed midway: its temp files
        remove_temp_files(root / "memory")
    for path, reason in wanted.items():
        data = origin.read(path.removeprefix("memory/"))
        if data is None:
            continue  # gone from the origin (or unsafe to read): dropped below
        blob = blob_hash(data)
        dest = root / path
        prev = old.get(path)
        if prev is not None and prev.blob == blob and _is_file_of_size(dest, len(data)):
            unchanged += 1
        else:
            writes[path] = data
        entries.append(ManifestEntry(path=path, blob=blob, reason=reason, bytes=len(data)))
    foreign = sorted(p for p, data in writes.items() if p not in old and _foreign(root, p, data))
    if foreign:
        more = f" and {len(foreign) - 1} more" if len(foreign) > 1 else ""
        raise MemoryFSError(
            f"sandbox {root} already holds {foreign[0]}{more}, which materialize did not "
            "write; use an empty folder (or one materialize made) or move those files away"
        )
    keep = {e.path for e in entries}
    removed = [p for p in old if p not in keep and (prune or p in wanted)]
    commit = origin.commit
    if writes or removed:
        # First say what is about to change: a run killed midway leaves a manifest
        # whose every file entry matches its file, and "pending" tells the next run
        # which paths to redo (load_manifest gives them no blob).
        pending = [ManifestEntry(e.path, "", e.reason, 0) for e in entries if e.path in writes]
        pending += [ManifestEntry(p, "", old[p].reason, 0) for p in removed]
        steady = [e for e in entries if e.path not in writes]
        _write_manifest(root, origin, budget, steady, pending)
    for path, data in writes.items():
        _write(root, path, data)
        versions[path.removeprefix("memory/")] = content_hash(data)
    for path in removed:
        _remove(root, path)
    _write_manifest(root, origin, budget, entries, [])
    copied = list(writes)
    record_reads(
        origin.config, sandbox_receipt_dir(root), "materialized", versions, {"budgetBytes": budget}
    )
    return MaterializeResult(
        sandbox=str(root),
        commit=commit,
        files=tuple(sorted(entries, key=lambda e: e.path)),
        copied=tuple(copied),
        removed=tuple(removed),
        unchanged=unchanged,
        bytes=sum(e.bytes for e in entries if e.reason not in (RECALL, "index")),
        budget_bytes=budget,
        url=origin.where.get("url", ""),
    )


def _write_manifest(
    root: Path,
    origin: Origin,
    budget: int,
    files: list[ManifestEntry],
    pending: list[ManifestEntry],
) -> None:
    manifest: dict[str, object] = {
        "version": MANIFEST_VERSION,
        **origin.where,
        "commit": origin.commit,
        "budgetBytes": budget,
        "files": [asdict(e) for e in sorted(files, key=lambda e: e.path)],
    }
    if pending:
        manifest["pending"] = [{"path": e.path, "reason": e.reason} for e in pending]
    atomic_write_text(root / MANIFEST, json.dumps(manifest, indent=2) + "\n")


# -- sandbox side -------------------------------------------------------------


def sandbox_root(sandbox: Path, store: Path | None = None) -> Path:
    """``sandbox`` resolved, refused when it is inside a store (``store`` or another) or
    inside or at a Git folder (``.git``, a bare repository): writing there would change a
    repository behind its back. Creates the folder."""
    root = check_sandbox(sandbox, store)
    root.mkdir(parents=True, exist_ok=True)
    return root


def check_sandbox(sandbox: Path, store: Path | None = None) -> Path:
    """``sandbox`` resolved and checked as ``sandbox_root`` does, without creating it."""
    root = Path(sandbox).expanduser().resolve()
    if store is not None and root.is_relative_to(store):
        raise MemoryFSError(
            f"{root} is inside the store; materialize into a separate sandbox folder"
        )
    for folder in (root, *root.parents):
        if folder.name == ".git" or _is_git_dir(folder):
            raise MemoryFSError(
                f"{root} is inside the Git folder {folder}; "
                "materialize into a separate sandbox folder"
            )
        if (folder / CONFIG_NAME).is_file() and (folder / "memory").is_dir():
            raise MemoryFSError(
                f"{root} is inside the store at {folder}; "
                "materialize into a separate sandbox folder"
            )
    if root.exists() and not root.is_dir():
        raise MemoryFSError(f"sandbox {root} exists and is not a folder")
    return root


def _is_git_dir(folder: Path) -> bool:
    """A repository's own folder (``.git`` or a bare repository), not a work tree."""
    return (
        (folder / "HEAD").is_file() and (folder / "objects").is_dir() and (folder / "refs").is_dir()
    )


def _foreign(root: Path, path: str, data: bytes) -> bool:
    """Whether writing ``data`` at ``path`` (relative to the sandbox) would replace or
    delete a file materialize did not write: a file with other content at the path (the
    same bytes lose nothing, as after a lost manifest) or a file where one of its folders
    belongs. A link is not such a file: it is replaced, never followed."""
    cur = root
    parts = path.split("/")
    for i, part in enumerate(parts):
        cur = cur / part
        try:
            mode = os.lstat(cur).st_mode
        except FileNotFoundError:
            return False
        except OSError:
            return True
        if stat.S_ISLNK(mode):
            return False
        if i < len(parts) - 1 and not stat.S_ISDIR(mode):
            return True  # a file where a folder belongs (_ensure_dirs would delete it)
    if stat.S_ISDIR(mode):
        return False  # refused by _write
    return not (stat.S_ISREG(mode) and _holds(cur, data))


def _holds(path: Path, data: bytes) -> bool:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as fh:
            return os.fstat(fh.fileno()).st_size == len(data) and fh.read(len(data) + 1) == data
    except OSError:
        return False


@contextlib.contextmanager
def locked(root: Path) -> Iterator[None]:
    fd = os.open(root / _LOCK, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        _remove_manifest_temps(root)
        yield
    finally:
        os.close(fd)


def _remove_manifest_temps(root: Path) -> None:
    """A run killed while it wrote the manifest leaves its temp file (``atomic``) beside
    it; holding the sandbox lock, nobody else is writing one."""
    prefix = f".{MANIFEST}."
    with os.scandir(root) as entries:
        for entry in entries:
            if entry.name.startswith(prefix) and entry.name.endswith(".tmp"):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(entry.path)  # a symlink is removed, never followed


def load_manifest(root: Path) -> dict[str, ManifestEntry]:
    """The previous manifest's entries; a missing or damaged one counts as empty."""
    try:
        fd = os.open(root / MANIFEST, os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(fd, "rb") as fh:
            data = json.loads(fh.read(20_000_000))
    except (OSError, ValueError, RecursionError):
        return {}
    out: dict[str, ManifestEntry] = {}
    files = data.get("files") if isinstance(data, dict) else None
    pending = data.get("pending") if isinstance(data, dict) else None
    items = list(files) if isinstance(files, list) else []
    if isinstance(pending, list):  # paths a killed run was changing: no blob, so redone
        items += [{**p, "blob": ""} for p in pending if isinstance(p, dict)]
    for item in items:
        if not isinstance(item, dict):
            continue
        path, blob, reason, size = (
            item.get("path"),
            item.get("blob"),
            item.get("reason"),
            item.get("bytes"),
        )
        if (
            isinstance(path, str)
            and _safe_rel(path)
            and isinstance(blob, str)
            and isinstance(reason, str)
        ):
            out[path] = ManifestEntry(path, blob, reason, size if isinstance(size, int) else 0)
    return out


def manifest_head(root: Path) -> ManifestHead:
    """Where the sandbox's files came from, as its manifest says (empty when none)."""
    try:
        fd = os.open(Path(root) / MANIFEST, os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(fd, "rb") as fh:
            data = json.loads(fh.read(20_000_000))
    except (OSError, ValueError, RecursionError):
        return ManifestHead()
    if not isinstance(data, dict):
        return ManifestHead()
    got = {k: data.get(k) for k in ("store", "url", "commit")}
    return ManifestHead(**{k: v for k, v in got.items() if isinstance(v, str)})


def _safe_rel(path: str) -> bool:
    return bool(_SAFE_PATH_RE.match(path)) and not any(
        p in ("", ".", "..") for p in path.split("/")
    )


def _ensure_dirs(root: Path, parts: list[str]) -> Path:
    """Create the folders ``parts`` under ``root``, replacing anything that is not a real folder."""
    cur = root
    for part in parts:
        cur = cur / part
        try:
            st = os.lstat(cur)
        except FileNotFoundError:
            os.mkdir(cur)
            continue
        if not stat.S_ISDIR(st.st_mode):  # a symlink (even to a folder) or a file
            os.unlink(cur)
            os.mkdir(cur)
    return cur


def _write(root: Path, path: str, data: bytes) -> None:
    parts = path.split("/")
    folder = _ensure_dirs(root, parts[:-1])
    dest = folder / parts[-1]
    with contextlib.suppress(FileNotFoundError):
        if stat.S_ISDIR(os.lstat(dest).st_mode):
            raise MemoryFSError(f"{dest} is a folder in the sandbox; remove it and re-run")
    # Temp file + os.replace: a reader or a killed run sees the old or the new file,
    # never half of one (os.replace swaps a symlink itself, never its target). No
    # fsync: the sandbox is a cache of the store (or remote), rebuilt by the next run.
    fd, tmp = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, dest)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _is_file_of_size(dest: Path, size: int) -> bool:
    try:
        st = os.lstat(dest)
    except OSError:
        return False
    return stat.S_ISREG(st.st_mode) and st.st_size == size


def _remove(root: Path, path: str) -> None:
    parts = path.split("/")
    cur = root
    for part in parts[:-1]:
        cur = cur / part
        try:
            if not stat.S_ISDIR(os.lstat(cur).st_mode):
                return  # never reach through a link
        except OSError:
            return
    with contextlib.suppress(FileNotFoundError, IsADirectoryError):
        os.unlink(cur / parts[-1])
    for depth in range(len(parts) - 1, 1, -1):  # drop folders the removal emptied, not memory/
        with contextlib.suppress(OSError):
            os.rmdir(root.joinpath(*parts[:depth]))
