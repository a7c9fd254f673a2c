"""A sandbox's blob-less partial clone of a Git server's store, driven with ``git``.

``PartialClone`` is a bare repository (``memoryfs.remote.sandbox`` keeps it in
``<sandbox>/.materialized.git``) set up as a partial clone of ``origin`` with the
``blob:none`` filter: ``fetch_tip`` brings ``main``'s commit and trees at depth 1,
``fetch_commit`` one given commit the same way, ``fetch_blobs`` blobs by id in one
request (protocol v2 wants, as Git's own partial clone fetches a missing blob).
``tree``, ``local`` and ``read`` only read what is here, never fetch. Packs are kept
as received (no automatic gc), so their sizes are the bytes fetched.

The URL is given to Git in its environment, never written into the clone's config
(the agent in the sandbox can read that folder), and shown without its password.
Every failure is one ``MemoryFSError`` line naming the URL as shown.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import urlsplit

from memoryfs.errors import MemoryFSError
from memoryfs.remote.transport import check_url, shown_url

__all__ = ["PartialClone", "check_url", "shown_url"]

_REF = "refs/remotes/origin/main"
_TIMEOUT = 600  # seconds one git command may take


class PartialClone:
    """The sandbox's blob-less partial clone, driven with ``git --git-dir``."""

    def __init__(self, git_dir: Path, url: str) -> None:
        self.git_dir = git_dir
        self.url = url
        self.fetches = 0

    @classmethod
    def open(cls, git_dir: Path, url: str) -> PartialClone:
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
        if not self.has_commit(commit):
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
                f"cannot fetch from {shown_url(self.url)}: no answer in {_TIMEOUT} seconds"
            ) from None
        except OSError as exc:
            raise MemoryFSError(f"cannot run git: {exc}") from None
        if proc.returncode != 0:
            raise _fetch_error(self.url, proc.stderr)
        if "filtering not recognized by server" in proc.stderr:
            raise MemoryFSError(
                f"{shown_url(self.url)} does not serve partial clones (set "
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

    def has_commit(self, commit: str) -> bool:
        return self.local().get(commit, ("", 0))[0] == "commit"


def _fetch_error(url: str, stderr: str) -> MemoryFSError:
    if "couldn't find remote ref refs/heads/main" in stderr:
        return MemoryFSError(f"{shown_url(url)} is not a memory store: it has no main branch")
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    # git's first "fatal:" says what failed; one ending in ":" continues on the next line
    at = next((i for i, line in enumerate(lines) if line.startswith("fatal:")), None)
    if at is None:
        line = _last_line(stderr)
    else:
        line = lines[at].removeprefix("fatal:").strip()
        if line.endswith(":") and at + 1 < len(lines):
            line += " " + lines[at + 1]
    line = line.removeprefix("error: ").replace(url, shown_url(url))
    secret = _userinfo(url)
    if secret:  # git names the host as given, user and password included
        line = line.replace(f"{secret}@", "").replace(secret, "***")
    return MemoryFSError(f"cannot fetch from {shown_url(url)}: {line}")


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
