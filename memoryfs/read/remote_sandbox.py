"""Sandboxes from a Git server: ``materialize --from URL`` fetches what the working set
needs, never a full clone.

The sandbox keeps a blob-less partial clone of the store's ``main`` in
``<sandbox>/.materialized.git`` (a bare repository: commit and trees, depth 1, only
the blobs it asked for). A run:

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
import subprocess
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from memoryfs.errors import MemoryFSError
from memoryfs.read.materialize import GENERATED, fill_budget
from memoryfs.read.sandbox import (
    MANIFEST,
    RECALL,
    MaterializeResult,
    Origin,
    blob_hash,
    check_sandbox,
    load_manifest,
    locked,
    manifest_head,
    sync,
)
from memoryfs.store.config import StoreConfig, load_config
from memoryfs.store.store import CONFIG_NAME

__all__ = ["CLONE", "materialize_from", "add_files"]

CLONE = ".materialized.git"  # the sandbox's partial clone, beside its manifest
_LOCK = ".materialized.lock"
_REF = "refs/remotes/origin/main"
_ROUNDS = 6  # blob batches that may weigh the working set's pages
_MAX_MISSES = 20  # pages that did not fit (real or estimated size) before the choice stops
_PROBE = 3  # pages of a kind fetched to learn its sizes before a batch trusts their mean
_ESTIMATE = 2000  # bytes a page is taken to have before any page was fetched
_TIMEOUT = 600  # seconds one git command may take
_LINKS_RE = re.compile(r"\((\d+) links?\)\s*$")
_PAGE_RE = re.compile(r"\]\((knowledge/[^()\n]+?\.md)\)")
_SESSION_RE = re.compile(r"^\|[^|]*\|\s*(\d{4}-\d{2}-\d{2})[^|]*\|.*\]\((summaries/[^()\n]+\.md)\)")
_DATE_RE = re.compile(r"\d{4}-\d{2}-\d{2}")


class _Clone:
    """The sandbox's blob-less partial clone, driven with ``git --git-dir``."""

    def __init__(self, git_dir: Path, url: str) -> None:
        self.git_dir = git_dir
        self.url = url
        self.fetches = 0

    @classmethod
    def open(cls, git_dir: Path, url: str) -> _Clone:
        clone = cls(git_dir, url)
        if not (git_dir / "HEAD").is_file():
            clone._git("init", "--quiet", "--bare", str(git_dir), git_dir=False)
        for key, value in (
            ("core.repositoryformatversion", "1"),
            ("extensions.partialClone", "origin"),
            ("remote.origin.promisor", "true"),
            ("remote.origin.partialCloneFilter", "blob:none"),
            ("gc.auto", "0"),  # packs stay as received: their sizes are what was fetched
            ("transfer.unpackLimit", "1"),
            ("fetch.unpackLimit", "1"),
        ):
            clone._git("config", key, value)
        return clone

    def pack_bytes(self) -> int:
        folder = self.git_dir / "objects" / "pack"
        with contextlib.suppress(FileNotFoundError):
            return sum(p.stat().st_size for p in folder.glob("*.pack"))
        return 0

    def fetch_tip(self) -> str:
        """Fetch ``main``'s commit and trees (depth 1, no blobs); its commit id."""
        self._fetch("--depth", "1", "origin", f"+refs/heads/main:{_REF}")
        return self._git("rev-parse", "--verify", f"{_REF}^{{commit}}").strip()

    def fetch_commit(self, commit: str) -> None:
        """Fetch one commit and its trees (depth 1, no blobs) unless it is here."""
        if not _has(self, commit):
            self._fetch("--depth", "1", "origin", commit)

    def fetch_blobs(self, oids: Sequence[str]) -> None:
        """Fetch blobs by id in one request (as a partial clone fetches missing blobs)."""
        want = sorted(set(oids))
        if want:
            self._fetch(
                "--recurse-submodules=no", "--filter=blob:none",
                "--stdin", "origin", stdin="".join(f"{oid}\n" for oid in want),
                negotiate=False,
            )  # fmt: skip

    def tree(self, commit: str) -> dict[str, str]:
        """Regular files of ``commit``: path -> blob id (symlinks and submodules left out)."""
        out = self._git("ls-tree", "-r", "-z", "--full-tree", commit)
        files: dict[str, str] = {}
        for record in out.split("\0"):
            meta, _, path = record.partition("\t")
            parts = meta.split()
            if len(parts) == 3 and parts[1] == "blob" and parts[0] in ("100644", "100755"):
                files[path] = parts[2]
        return files

    def local(self) -> dict[str, tuple[str, int]]:
        """Every object held here: id -> (type, size). Never fetches."""
        out = self._git(
            "cat-file", "--batch-all-objects", "--batch-check=%(objectname) %(objecttype) "
            "%(objectsize)",
        )  # fmt: skip
        held: dict[str, tuple[str, int]] = {}
        for line in out.splitlines():
            oid, kind, size = line.split()
            held[oid] = (kind, int(size))
        return held

    def read(self, oids: Sequence[str]) -> dict[str, bytes]:
        """The contents of blobs held here, in one ``cat-file --batch``."""
        want = sorted(set(oids))
        if not want:
            return {}
        try:
            proc = subprocess.run(
                ["git", f"--git-dir={self.git_dir}", "cat-file", "--batch"],
                input="".join(f"{oid}\n" for oid in want).encode(),
                capture_output=True,
                env=_env(self.url),
                timeout=_TIMEOUT,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise MemoryFSError(f"cannot read the sandbox's clone {self.git_dir}: {exc}") from None
        if proc.returncode != 0:
            raise MemoryFSError(f"cannot read the sandbox's clone {self.git_dir}: {_last(proc)}")
        data, pos, got = proc.stdout, 0, {}
        for oid in want:
            end = data.index(b"\n", pos)
            header = data[pos:end].split()
            if len(header) != 3:
                raise MemoryFSError(f"blob {oid} is missing from {self.git_dir}")
            size = int(header[2])
            got[oid] = data[end + 1 : end + 1 + size]
            pos = end + 1 + size + 1
        return got

    def _fetch(self, *args: str, stdin: str | None = None, negotiate: bool = True) -> None:
        extra = [] if negotiate else ["-c", "fetch.negotiationAlgorithm=noop"]
        self.fetches += 1
        cmd = ["git", *extra, f"--git-dir={self.git_dir}", "fetch", "--quiet", "--no-tags"]
        try:
            proc = subprocess.run(
                [*cmd, "--no-write-fetch-head", *args],
                input=stdin,
                capture_output=True,
                text=True,
                env=_env(self.url),
                timeout=_TIMEOUT,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise MemoryFSError(
                f"cannot fetch from {_shown(self.url)}: no answer in {_TIMEOUT} seconds"
            ) from None
        except OSError as exc:
            raise MemoryFSError(f"cannot run git: {exc}") from None
        if proc.returncode != 0:
            raise _fetch_error(self.url, proc.stderr)
        if "filtering not recognized by server" in proc.stderr:
            raise MemoryFSError(
                f"{_shown(self.url)} does not serve partial clones (set "
                "uploadpack.allowFilter on the server); materialize --from never takes a "
                "full clone"
            )

    def _git(self, *args: str, git_dir: bool = True) -> str:
        cmd = ["git", *([f"--git-dir={self.git_dir}"] if git_dir else []), *args]
        try:
            proc = subprocess.run(
                cmd,
                capture_output=True,
                text=True,
                env=_env(self.url),
                timeout=_TIMEOUT,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise MemoryFSError(f"git {args[0]} failed in {self.git_dir}: {exc}") from None
        if proc.returncode != 0:
            raise MemoryFSError(f"git {args[0]} failed in {self.git_dir}: {_last(proc)}")
        return proc.stdout


def materialize_from(url: str, sandbox: Path, budget_bytes: int | None = None) -> MaterializeResult:
    """Lay the working set of the store at ``url`` (its ``main``) into ``sandbox``,
    fetching only the blobs it writes; incremental on re-runs."""
    _check_url(url)
    if budget_bytes is not None and budget_bytes < 0:
        raise MemoryFSError("the byte budget must not be negative")
    with _sandbox(Path(sandbox)) as root:
        clone = _Clone.open(root / CLONE, url)
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
            if previous and previous != commit and _has(clone, previous)
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
    head = manifest_head(root)
    if not head.url or not head.commit:
        raise MemoryFSError(f"sandbox {root} was not materialized from a URL")
    with _sandbox(root) as root:
        old = load_manifest(root)
        clone = _Clone.open(root / CLONE, head.url)
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
    clone: _Clone,
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


def _has(clone: _Clone, commit: str) -> bool:
    return clone.local().get(commit, ("", 0))[0] == "commit"


def _gather(
    clone: _Clone, root: Path, tree: dict[str, str], paths: Sequence[str]
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
            f"{_shown(url)} is not a memory store: its main branch has no {CONFIG_NAME} "
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
            message = str(exc).replace(str(path), f"{_shown(url)} {CONFIG_NAME}")
            raise MemoryFSError(message) from None


def _origin(
    clone: _Clone,
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

    return Origin(read=read, commit=commit, config=config, where={"url": _shown(clone.url)})


def _with_fetches(result: MaterializeResult, clone: _Clone, before: int) -> MaterializeResult:
    return dataclasses.replace(
        result,
        url=_shown(clone.url),
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


def _check_url(url: str) -> None:
    if not url.strip() or url.startswith("-") or any(c in url for c in "\0\n\r"):
        raise MemoryFSError(f"{url!r} is not a Git URL")


def _shown(url: str) -> str:
    """``url`` without a password or token in it (for messages and the manifest)."""
    with contextlib.suppress(ValueError):
        parts = urlsplit(url)
        if parts.password is not None or (parts.username and parts.scheme in ("http", "https")):
            host = parts.hostname or ""
            netloc = host + (f":{parts.port}" if parts.port else "")
            return urlunsplit(parts._replace(netloc=netloc))
    return url


def _fetch_error(url: str, stderr: str) -> MemoryFSError:
    if "couldn't find remote ref refs/heads/main" in stderr:
        return MemoryFSError(f"{_shown(url)} is not a memory store: it has no main branch")
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    # git's first "fatal:" says what failed; one ending in ":" continues on the next line
    at = next((i for i, line in enumerate(lines) if line.startswith("fatal:")), None)
    if at is None:
        line = _last_line(stderr)
    else:
        line = lines[at].removeprefix("fatal:").strip()
        if line.endswith(":") and at + 1 < len(lines):
            line += " " + lines[at + 1]
    line = line.removeprefix("error: ").replace(url, _shown(url))
    secret = _userinfo(url)
    if secret:  # git names the host as given, user and password included
        line = line.replace(f"{secret}@", "").replace(secret, "***")
    return MemoryFSError(f"cannot fetch from {_shown(url)}: {line}")


def _userinfo(url: str) -> str:
    """The ``user:password`` part of a URL ("" when none)."""
    with contextlib.suppress(ValueError):
        netloc = urlsplit(url).netloc
        if "@" in netloc:
            return netloc.rsplit("@", 1)[0]
    return ""


def _last(proc: subprocess.CompletedProcess[str] | subprocess.CompletedProcess[bytes]) -> str:
    err = proc.stderr
    return _last_line(err.decode("utf-8", "replace") if isinstance(err, bytes) else err)


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else "git failed"


def _env(url: str) -> dict[str, str]:
    """Git's environment: never wait for a password on a terminal nobody reads (the
    user's own Git settings, credential helpers and proxies still apply), and the URL
    given in the environment rather than written in the clone's config, where the agent
    in the sandbox could read a token in it."""
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
    count = env.get("GIT_CONFIG_COUNT", "")
    n = int(count) if count.isdigit() else 0
    env.update(
        {"GIT_CONFIG_COUNT": str(n + 1), f"GIT_CONFIG_KEY_{n}": "remote.origin.url",
         f"GIT_CONFIG_VALUE_{n}": url}
    )  # fmt: skip
    return env
