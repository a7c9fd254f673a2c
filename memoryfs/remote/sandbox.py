"""Sandboxes from a Git server: ``materialize --from URL`` fetches what the working set
needs, never a full clone.

The sandbox keeps a blob-less partial clone of the store's ``main`` in
``<sandbox>/.materialized.git`` (``memoryfs.remote.partial_clone``: a bare repository
with commit and trees at depth 1 and only the blobs it asked for). A run:

1. fetches the tip of ``main`` (``--depth 1 --filter=blob:none``): the commit and its
   trees, which name every file and its blob hash but not its size; a re-run fetches
   the new commit and the trees that changed;
2. fetches ``memory.toml`` (the budgets, the scope for receipts), ``memory/INDEX.md``
   and ``memory/sessions/index.md`` in one batch: the maps the choice is made from;
3. chooses with ``fill_budget`` (the local planner's filling rule) from what the maps
   and the tree say: preference pages (INDEX.md's Preferences section), then in turn
   the knowledge pages by INDEX.md's link counts (most linked first, INDEX.md's order
   among equals, pages missing from INDEX.md last), the most recent session summaries
   (sessions/index.md's dates) and the notes (by the date in their file name, newest
   first). A local store's "recently updated" queue needs each page's ``updated``
   field, which no map carries, so a remote choice has no such queue;
4. fetches the chosen blobs in batches (protocol v2 wants by object id, as a partial
   clone fetches a missing blob). A blob's size is known only once it is fetched, so
   the choice is walked with estimated sizes (the mean of the known pages of the same
   kind, after a probe of a few) and each batch is the pages of unknown size the walk
   took, until a walk takes only real sizes (``_plan``): three to seven fetches in all
   on a store of a few hundred sessions. A page whose estimate does not fit is passed
   over without being fetched, and the choice stops after 20 such misses (a local one
   after 200);
5. writes the files through ``memoryfs.read.sandbox.sync``: the same manifest,
   receipts, crash safety, locks and refusals as a local materialize. The manifest
   records the URL and the commit.

A re-run fetches only blobs it does not hold (a file that did not change keeps its
blob). ``add_files`` (``recall --into`` on such a sandbox) fetches the files recall
chose the same way, at the sandbox's commit, so the sandbox stays one commit of the
store; a file that commit does not hold is not added.

Failures (the server unreachable, the URL no repository, no ``main``, no
``memory.toml``, a server that ignores the blob filter) are one ``MemoryFSError``
line, and a first run that fails leaves nothing behind: no manifest, no partial
clone, no sandbox folder it created.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from memoryfs.errors import MemoryFSError
from memoryfs.read.materialize import GENERATED, fill_budget
from memoryfs.read.sandbox import (
    MANIFEST,
    RECALL,
    ManifestHead,
    MaterializeResult,
    Origin,
    blob_hash,
    check_sandbox,
    load_manifest,
    locked,
    manifest_head,
    sync,
)
from memoryfs.remote.partial_clone import PartialClone, check_url, shown_url
from memoryfs.store.config import StoreConfig, load_config
from memoryfs.store.store import CONFIG_NAME

__all__ = ["CLONE", "materialize_from", "add_files"]

CLONE = ".materialized.git"  # the sandbox's partial clone, beside its manifest
_LOCK = ".materialized.lock"
_ROUNDS = 6  # blob batches that may weigh the working set's pages
_MAX_MISSES = 20  # pages that did not fit (real or estimated size) before the choice stops
_PROBE = 3  # pages of a kind fetched to learn its sizes before a batch trusts their mean
_ESTIMATE = 2000  # bytes a page is taken to have before any page was fetched
_LINKS_RE = re.compile(r"\((\d+) links?\)\s*$")
_PAGE_RE = re.compile(r"\]\((knowledge/[^()\n]+?\.md)\)")
_SESSION_RE = re.compile(r"^\|[^|]*\|\s*(\d{4}-\d{2}-\d{2})[^|]*\|.*\]\((summaries/[^()\n]+\.md)\)")
_DATE_RE = re.compile(r"\d{4}-\d{2}-\d{2}")


def materialize_from(url: str, sandbox: Path, budget_bytes: int | None = None) -> MaterializeResult:
    """Lay the working set of the store at ``url`` (its ``main``) into ``sandbox``,
    fetching only the blobs it writes; incremental on re-runs."""
    check_url(url)
    if budget_bytes is not None and budget_bytes < 0:
        raise MemoryFSError("the byte budget must not be negative")
    with _sandbox(Path(sandbox)) as root:
        clone = PartialClone.open(root / CLONE, url)
        before = clone.pack_bytes()
        commit = clone.fetch_tip()
        tree = clone.tree(commit)
        _check_store(tree, url)
        maps = [f"memory/{rel}" for rel in GENERATED if f"memory/{rel}" in tree]
        texts = _gather(clone, root, tree, [CONFIG_NAME, *maps])
        config = _config(texts[tree[CONFIG_NAME]], url)
        budget = config.budgets.materialize_bytes if budget_bytes is None else budget_bytes
        index_md = texts.get(tree.get("memory/INDEX.md", ""), b"").decode("utf-8", "replace")
        sessions_md = texts.get(tree.get("memory/sessions/index.md", ""), b"")
        first, queues = _queues(tree, index_md, sessions_md.decode("utf-8", "replace"))
        previous = manifest_head(root).commit
        hints = (
            clone.tree(previous)
            if previous and previous != commit and clone.has_commit(previous)
            else {}
        )
        old = load_manifest(root)
        # the sandbox's copies: their sizes, without fetching their blobs again
        copies = {e.blob: e.bytes for e in old.values() if e.blob}
        plan = _plan(clone, tree, first, queues, budget, hints, copies)
        wanted = {path: "index" for path in maps}
        wanted.update({f"memory/{rel}": reason for rel, reason in plan})
        for path, entry in old.items():
            if entry.reason == RECALL:  # on-demand files stay until the store deletes them
                wanted.setdefault(path, RECALL)
        origin = _origin(clone, root, tree, commit, config, list(wanted))
        result = sync(origin, root, wanted, old, budget, prune=True)
        return _with_fetches(result, clone, before)


def add_files(sandbox: Path, paths: Sequence[str], reason: str = RECALL) -> MaterializeResult:
    """Add files (relative to memory/) to a sandbox materialized from a URL, fetched
    from that URL at the sandbox's commit; a file that commit does not hold is left out."""
    root = check_sandbox(Path(sandbox))
    _from_url(root)  # before the lock: nothing is written for a sandbox of another kind
    with _sandbox(root) as root:
        head = _from_url(root)  # again, under the lock: a run may have moved it
        old = load_manifest(root)
        clone = PartialClone.open(root / CLONE, head.url)
        before = clone.pack_bytes()
        clone.fetch_commit(head.commit)
        tree = clone.tree(head.commit)
        _check_store(tree, head.url)
        config = _config(_gather(clone, root, tree, [CONFIG_NAME])[tree[CONFIG_NAME]], head.url)
        wanted = {path: entry.reason for path, entry in old.items()}
        for rel in paths:
            if f"memory/{rel}" in tree and rel.endswith(".md"):  # Markdown files only
                wanted.setdefault(f"memory/{rel}", reason)
        origin = _origin(clone, root, tree, head.commit, config, list(wanted))
        result = sync(origin, root, wanted, old, config.budgets.materialize_bytes, prune=False)
        return _with_fetches(result, clone, before)


def _from_url(root: Path) -> ManifestHead:
    head = manifest_head(root)
    if not head.url or not head.commit:
        raise MemoryFSError(f"sandbox {root} was not materialized from a URL")
    return head


# -- choosing from the maps ---------------------------------------------------------


def _queues(
    tree: dict[str, str], index_md: str, sessions_md: str
) -> tuple[list[str], list[tuple[str, list[str]]]]:
    """Preference pages, then the queues (reason, paths relative to memory/ best first)."""
    prefs: list[str] = []
    listed: list[tuple[int, int, str]] = []  # (-links, position, path)
    section = ""
    seen: set[str] = set()
    for line in index_md.splitlines():
        if line.startswith("## "):
            section = line[3:].strip()
            continue
        found = _PAGE_RE.search(line) if line.startswith("- [") else None
        if found is None or f"memory/{found.group(1)}" not in tree or found.group(1) in seen:
            continue
        path = found.group(1)
        seen.add(path)
        if section == "Preferences":
            prefs.append(path)
            continue
        links = _LINKS_RE.search(line)
        listed.append((-int(links.group(1)) if links else 0, len(listed), path))
    unlisted = sorted(
        p.removeprefix("memory/")
        for p in tree
        if p.startswith("memory/knowledge/") and p.endswith(".md")
    )
    linked = [p for _, _, p in sorted(listed)] + [p for p in unlisted if p not in seen]
    dates: dict[str, str] = {}
    for line in sessions_md.splitlines():
        row = _SESSION_RE.match(line)
        if row is not None:
            dates[f"sessions/{row.group(2)}"] = row.group(1)
    summaries = [
        p.removeprefix("memory/")
        for p in tree
        if p.startswith("memory/sessions/summaries/") and p.endswith(".md")
    ]
    notes = [
        p.removeprefix("memory/")
        for p in tree
        if p.startswith("memory/notes/") and p.endswith(".md")
    ]
    return prefs, [
        ("most-linked", linked),
        ("recent-session", _newest_first(summaries, lambda p: dates.get(p, _date_in(p)))),
        ("note", _newest_first(notes, _date_in)),
    ]


def _date_in(path: str) -> str:
    found = _DATE_RE.search(path.rsplit("/", 1)[-1])
    return found.group(0) if found else ""


def _newest_first(paths: list[str], date: Callable[[str], str]) -> list[str]:
    # newest first, ties by path (a stable sort keeps the path order), undated last
    return sorted(sorted(paths), key=lambda p: date(p) or "0", reverse=True)


def _plan(
    clone: PartialClone,
    tree: dict[str, str],
    first: list[str],
    queues: list[tuple[str, list[str]]],
    budget: int,
    before: dict[str, str],
    copies: dict[str, int],
) -> list[tuple[str, str]]:
    """The working set (path relative to memory/, reason): ``fill_budget`` over real
    sizes for the pages it takes, fetched on the way.

    Each round walks with the sizes known and an estimate for the others, then fetches,
    in one batch, the pages of unknown size the walk took; a walk that took only known
    sizes is the answer. The estimate is the mean size of the known pages of the same
    kind (knowledge pages, notes and session summaries differ tenfold), so while fewer
    than ``_PROBE`` pages of a kind the walk weighed are known, a round fetches only the
    first few of that kind: a small probe instead of a batch chosen with a wrong mean.
    A page whose estimate does not fit is passed over unfetched (a local choice would
    weigh its real size): fetching every page the walk passes over would cost more than
    the working set. A page changed since the sandbox's last commit (``before``: that
    commit's tree) is first taken at its size then, so a re-run weighs what it weighed
    then and fetches only the changed pages it takes; a re-run of an unchanged store
    fetches nothing. After ``_ROUNDS`` rounds, pages still unknown count as not fitting.
    """
    sizes = {oid: size for oid, (kind, size) in clone.local().items() if kind == "blob"}
    kinds: dict[str, set[str]] = {}
    for rel in [*first, *(p for _, q in queues for p in q)]:
        kinds.setdefault(_kind(rel), set()).add(tree[f"memory/{rel}"])
    for round_ in range(_ROUNDS + 1):
        known = {k: [sizes[o] for o in oids if o in sizes] for k, oids in kinds.items()}
        every = [n for got in known.values() for n in got]
        default = sum(every) // len(every) if every else _ESTIMATE
        guess = {k: sum(got) // len(got) if got else default for k, got in known.items()}
        weighed: list[tuple[str, str]] = []  # (kind, blob) of unknown size the walk weighed

        def size(
            rel: str,
            guess: dict[str, int] = guess,
            last: bool = round_ == _ROUNDS,
            weighed: list[tuple[str, str]] = weighed,
        ) -> int:
            oid = tree[f"memory/{rel}"]
            got = sizes.get(oid)
            if got is not None:
                return got
            weighed.append((_kind(rel), oid))
            if last:
                return budget + 1
            return sizes.get(before.get(f"memory/{rel}", ""), guess[_kind(rel)])

        plan = fill_budget(first, queues, size, budget, _MAX_MISSES)
        if not weighed or round_ == _ROUNDS:
            return plan
        probes: list[str] = []
        for kind in dict.fromkeys(k for k, _ in weighed):
            room = _PROBE - len(known[kind])
            if room > 0:
                probes += list(dict.fromkeys(o for k, o in weighed if k == kind))[:room]
        taken = {tree[f"memory/{rel}"] for rel, _ in plan}
        batch = probes or [oid for _, oid in weighed if oid in taken]
        if not batch:
            return plan  # only pages whose estimate does not fit are unknown
        clone.fetch_blobs([oid for oid in batch if oid not in sizes])
        sizes.update({oid: size for oid, (kind, size) in clone.local().items() if kind == "blob"})
    raise AssertionError("unreachable")


def _kind(rel: str) -> str:
    """A page's kind for size estimates: its top folder under memory/ (summaries apart)."""
    return "summaries" if rel.startswith("sessions/") else rel.split("/", 1)[0]


def _gather(
    clone: PartialClone, root: Path, tree: dict[str, str], paths: Sequence[str]
) -> dict[str, bytes]:
    """The contents of the blobs of ``paths`` (paths in ``tree``, as in the sandbox): from
    the clone, else from the sandbox's own copy when it is that very blob, else fetched,
    all in one request."""
    held = clone.local()
    got: dict[str, bytes] = {}
    for path in paths:
        oid = tree.get(path)
        if oid is None or oid in held or oid in got:
            continue
        data = _copy(root / path)
        if data is not None and blob_hash(data) == oid:
            got[oid] = data
    oids = {tree[p] for p in paths if p in tree}
    clone.fetch_blobs([oid for oid in oids if oid not in held and oid not in got])
    got.update(clone.read([oid for oid in oids if oid not in got]))
    return got


def _copy(path: Path) -> bytes | None:
    """A sandbox file's bytes (None if it is not a regular file); never follows a link."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        return fh.read() if stat.S_ISREG(st.st_mode) else None


def _check_store(tree: dict[str, str], url: str) -> None:
    if CONFIG_NAME not in tree or not any(p.startswith("memory/") for p in tree):
        raise MemoryFSError(
            f"{shown_url(url)} is not a memory store: its main branch has no {CONFIG_NAME} "
            "and memory/ folder"
        )


def _config(data: bytes, url: str) -> StoreConfig:
    """The store's ``memory.toml`` (``data``) at the fetched commit."""
    with tempfile.TemporaryDirectory() as tmp:  # load_config reads a file
        path = Path(tmp) / CONFIG_NAME
        path.write_bytes(data)
        try:
            return load_config(path)
        except MemoryFSError as exc:
            message = str(exc).replace(str(path), f"{shown_url(url)} {CONFIG_NAME}")
            raise MemoryFSError(message) from None


def _origin(
    clone: PartialClone,
    root: Path,
    tree: dict[str, str],
    commit: str,
    config: StoreConfig,
    paths: list[str],
) -> Origin:
    """The files of ``paths`` (sandbox paths) at ``commit``; what is not here is fetched
    in one batch."""
    blobs = _gather(clone, root, tree, paths)
    limit = config.budgets.max_file_bytes

    def read(rel: str) -> bytes | None:
        data = blobs.get(tree.get(f"memory/{rel}", ""))
        return None if data is None or len(data) > limit else data

    return Origin(read=read, commit=commit, config=config, where={"url": shown_url(clone.url)})


def _with_fetches(result: MaterializeResult, clone: PartialClone, before: int) -> MaterializeResult:
    return dataclasses.replace(
        result,
        url=shown_url(clone.url),
        fetched_bytes=max(0, clone.pack_bytes() - before),
        fetches=clone.fetches,
    )


# -- the sandbox and its failures -----------------------------------------------------


@contextlib.contextmanager
def _sandbox(sandbox: Path) -> Iterator[Path]:
    """The sandbox folder, locked; when the run fails and no manifest was there before,
    everything the run made is removed (the clone, the lock, the folders it created)."""
    root = check_sandbox(sandbox)
    made = [p for p in (root, *root.parents) if not p.exists()]
    root.mkdir(parents=True, exist_ok=True)
    first = not (root / MANIFEST).exists()
    had_clone = (root / CLONE).exists()
    had_lock = (root / _LOCK).exists()
    try:
        with locked(root):
            yield root
    except BaseException:
        if first and not (root / MANIFEST).exists():
            if not had_clone:
                shutil.rmtree(root / CLONE, ignore_errors=True)
            if not had_lock:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(root / _LOCK)
            for folder in made:  # deepest first
                with contextlib.suppress(OSError):
                    folder.rmdir()
        raise
