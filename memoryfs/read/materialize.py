"""The materializer: lay a working set of memory into an agent's sandbox.

``materialize`` writes the two generated maps (``memory/INDEX.md`` and
``memory/sessions/index.md``: always, they tell the agent what else exists) and
the most useful pages within a byte budget: preference pages, then in turn the
most linked and the most recently updated knowledge pages, the most recent
session summaries and notes. Files keep their relative paths from the store;
``.materialized.json`` lists each with its Git blob hash (the version the agent
got), the reason it is there and its size. ``add_files`` (used by
``recall --into``) adds files on demand with reason ``recall``; those stay across
re-runs until the store deletes them, while the budgeted set is re-chosen each run.
Each page copied in gets a ``materialized`` receipt in ``<sandbox>/.receipts/``
(``memoryfs.receipts.reads``): the version the agent now holds.

The set is chosen from the search index after the refresh every read starts with
(``SearchIndex.refresh_for_read``: on a store of 5,000+ files an in-place edit of a
page's metadata counts for the choice from the next full walk, at most a minute
later; additions, removals and replacements at once), while every byte copied is
read from the store there and then.

A re-run copies only files whose blob changed and removes what is no longer
chosen or no longer in the store. It never replaces a file it did not write (one not
in its manifest): a sandbox holding such a file where the working set goes is refused,
as is a sandbox inside a store or inside (or at) a Git folder. It reads store files
without following any symlink, never writes through a symlink in the sandbox (a link where a file or
folder belongs is replaced, not followed), and takes a lock on the sandbox so two
agents materializing at once never interleave. Crash safety: each file is
written atomically, and before anything changes the manifest is rewritten
without the entries about to change (listed under ``pending``), so a run killed
midway leaves every listed file matching its entry, and the next run redoes
the pending paths and removes the killed run's temp files.
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
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from memoryfs.errors import MemoryFSError
from memoryfs.index.catalog import FileRow
from memoryfs.read.search import SearchIndex
from memoryfs.receipts.log import sandbox_receipt_dir
from memoryfs.receipts.reads import record_reads
from memoryfs.store.atomic import atomic_write_text, remove_temp_files
from memoryfs.store.hashing import content_hash
from memoryfs.store.scan import read_file
from memoryfs.store.store import CONFIG_NAME, Store

__all__ = [
    "MANIFEST",
    "ManifestEntry",
    "MaterializeResult",
    "materialize",
    "add_files",
    "plan_working_set",
    "blob_hash",
]

MANIFEST = ".materialized.json"
_LOCK = ".materialized.lock"
MANIFEST_VERSION = 1
RECALL = "recall"
_GENERATED = ("INDEX.md", "sessions/index.md")
_MAX_MISSES = 200
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

    def to_json(self) -> dict[str, object]:
        """The result as ``memoryfs materialize --json`` prints it."""
        return {
            "sandbox": self.sandbox,
            "commit": self.commit,
            "budgetBytes": self.budget_bytes,
            "bytes": self.bytes,
            "files": [asdict(e) for e in self.files],
            "copied": list(self.copied),
            "removed": list(self.removed),
            "unchanged": self.unchanged,
        }


def blob_hash(data: bytes) -> str:
    """The hash Git gives this content as a blob (``git hash-object``)."""
    return hashlib.sha1(b"blob %d\x00" % len(data) + data, usedforsecurity=False).hexdigest()


def plan_working_set(rows: Sequence[FileRow], budget_bytes: int) -> list[tuple[str, str]]:
    """(path relative to memory/, reason) of the pages that fill ``budget_bytes``.

    Preference pages first, then one at a time from each queue in turn (most
    linked, most recently updated, most recent session summaries, notes); a page
    that does not fit is skipped and the next one tried.
    """
    pages = [r for r in rows if r.kind == "page" and r.layer == "knowledge"]
    prefs = sorted((r for r in pages if r.preference), key=lambda r: (_neg(r.updated), r.path))
    others = [r for r in pages if not r.preference]
    queues: list[tuple[str, list[FileRow]]] = [
        (
            "most-linked",
            sorted(
                (r for r in others if r.inbound),
                key=lambda r: (-r.inbound, _neg(r.updated), r.path),
            ),
        ),
        ("recently-updated", sorted(others, key=lambda r: (_neg(r.updated), r.path))),
        (
            "recent-session",
            sorted((r for r in rows if r.kind == "summary"), key=lambda r: (_neg(r.date), r.path)),
        ),
        (
            "note",
            sorted(
                (r for r in rows if r.layer == "notes" and r.kind == "page"),
                key=lambda r: (_neg(r.updated), r.path),
            ),
        ),
    ]
    chosen: list[tuple[str, str]] = []
    used = 0
    taken: set[str] = set()
    misses = 0

    def take(row: FileRow, reason: str) -> None:
        nonlocal used, misses
        if row.path in taken:
            return
        if used + row.size > budget_bytes:
            misses += 1
            return
        taken.add(row.path)
        chosen.append((row.path, reason))
        used += row.size

    for row in prefs:
        take(row, "preference")
    cursors = [0] * len(queues)
    while misses < _MAX_MISSES and any(
        c < len(q) for c, (_, q) in zip(cursors, queues, strict=True)
    ):
        for i, (reason, queue) in enumerate(queues):
            while cursors[i] < len(queue) and queue[cursors[i]].path in taken:
                cursors[i] += 1
            if cursors[i] < len(queue):
                take(queue[cursors[i]], reason)
                cursors[i] += 1
    return chosen


def _neg(date: str) -> str:
    # Sort newest first with a plain string key: invert each digit.
    return date.translate(str.maketrans("0123456789", "9876543210")) if date else "~"


def materialize(store: Store, sandbox: Path, budget_bytes: int | None = None) -> MaterializeResult:
    """Write INDEX.md and the working set into ``sandbox``; incremental on re-runs."""
    budget = store.config.budgets.materialize_bytes if budget_bytes is None else budget_bytes
    if budget < 0:
        raise MemoryFSError("the byte budget must not be negative")
    root = _sandbox_root(store, sandbox)
    with _locked(root):
        with SearchIndex.open(store) as idx:
            idx.refresh_for_read()
            # Enough candidates of each kind to fill the budget with small pages.
            rows = idx.candidates(min(budget // 500 + 50, 20_000))
        # The two generated maps always go, outside the budget: without them an
        # agent cannot tell what else to ask for.
        plan = [(rel, "index") for rel in _GENERATED if _size(store, rel) >= 0]
        plan += plan_working_set(rows, budget)
        old = _load_manifest(root)
        wanted: dict[str, str] = {f"memory/{rel}": reason for rel, reason in plan}
        for path, entry in old.items():
            if entry.reason == RECALL:  # on-demand files stay until the store deletes them
                wanted[path] = RECALL
        return _sync(store, root, wanted, old, budget, prune=True)


def add_files(
    store: Store, sandbox: Path, paths: Sequence[str], reason: str = RECALL
) -> MaterializeResult:
    """Add files (relative to memory/) to a sandbox, keeping what is already there."""
    root = _sandbox_root(store, sandbox)
    with _locked(root):
        old = _load_manifest(root)
        wanted = {path: entry.reason for path, entry in old.items()}
        for rel in paths:
            wanted.setdefault(f"memory/{rel}", reason)
        return _sync(store, root, wanted, old, store.config.budgets.materialize_bytes, prune=False)


def _sync(
    store: Store,
    root: Path,
    wanted: dict[str, str],
    old: dict[str, ManifestEntry],
    budget: int,
    prune: bool,
) -> MaterializeResult:
    entries: list[ManifestEntry] = []
    writes: dict[str, bytes] = {}
    versions: dict[str, str] = {}  # what entered the sandbox: its receipts
    unchanged = 0
    if any(not e.blob for e in old.values()):  # a run was killed midway: its temp files
        remove_temp_files(root / "memory")
    for path, reason in wanted.items():
        data = _read_source(store, path.removeprefix("memory/"))
        if data is None:
            continue  # deleted from the store (or unsafe to read): dropped below
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
    commit = store.head()
    if writes or removed:
        # First say what is about to change: a run killed midway leaves a manifest
        # whose every file entry matches its file, and "pending" tells the next run
        # which paths to redo (_load_manifest gives them no blob).
        pending = [ManifestEntry(e.path, "", e.reason, 0) for e in entries if e.path in writes]
        pending += [ManifestEntry(p, "", old[p].reason, 0) for p in removed]
        steady = [e for e in entries if e.path not in writes]
        _write_manifest(root, store, commit, budget, steady, pending)
    for path, data in writes.items():
        _write(root, path, data)
        versions[path.removeprefix("memory/")] = content_hash(data)
    for path in removed:
        _remove(root, path)
    _write_manifest(root, store, commit, budget, entries, [])
    copied = list(writes)
    record_reads(
        store, sandbox_receipt_dir(root), "materialized", versions, {"budgetBytes": budget}
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
    )


def _write_manifest(
    root: Path,
    store: Store,
    commit: str,
    budget: int,
    files: list[ManifestEntry],
    pending: list[ManifestEntry],
) -> None:
    manifest: dict[str, object] = {
        "version": MANIFEST_VERSION,
        "store": str(store.root),
        "commit": commit,
        "budgetBytes": budget,
        "files": [asdict(e) for e in sorted(files, key=lambda e: e.path)],
    }
    if pending:
        manifest["pending"] = [{"path": e.path, "reason": e.reason} for e in pending]
    atomic_write_text(root / MANIFEST, json.dumps(manifest, indent=2) + "\n")


# -- sandbox side -------------------------------------------------------------


def _sandbox_root(store: Store, sandbox: Path) -> Path:
    """``sandbox`` resolved, refused when it is inside a store (this one or another) or
    inside or at a Git folder (``.git``, a bare repository): writing there would change a
    repository behind its back."""
    root = Path(sandbox).expanduser().resolve()
    if root.is_relative_to(store.root):
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
    root.mkdir(parents=True, exist_ok=True)
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
def _locked(root: Path) -> Iterator[None]:
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


def _load_manifest(root: Path) -> dict[str, ManifestEntry]:
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
    # fsync: the sandbox is a cache of the store, rebuilt by the next run.
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


# -- store side -----------------------------------------------------------------


def _read_source(store: Store, rel: str) -> bytes | None:
    """A store file's bytes, or None if missing, too large, or reached through a symlink."""
    got = read_file(store.memory, rel, store.config.budgets.max_file_bytes)
    return None if got is None or got.oversize else got.data


def _size(store: Store, rel: str) -> int:
    try:
        st = os.lstat(store.memory / rel)
    except OSError:
        return -1
    return st.st_size if stat.S_ISREG(st.st_mode) else -1
