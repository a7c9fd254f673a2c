"""Which memoryfs this is: the package version and, when known, the commit it was built from.

The commit comes from ``memoryfs/_build.json``, which the build writes into a wheel
(``setup.py``: from ``git`` in the checkout it builds, or from the file an sdist carries);
else, when the package runs from a Git checkout (the folder above it holds ``.git``: a
source tree or an editable install), from ``git rev-parse`` at run time; else it is
unknown. Never a network call. A receipt's ``sourceVersion`` pins ``pinned`` (the version
with the commit as a local label), so two builds of one version stay apart.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from memoryfs import __version__

__all__ = ["BUILD_FILE", "VersionInfo", "checkout_commit", "read_build_file", "version_info"]

BUILD_FILE = "_build.json"  # inside the memoryfs package of a built wheel
_COMMIT_RE = re.compile(r"^[0-9a-f]{40}$")
_SHORT = 12
_GIT_TIMEOUT = 5.0


@dataclass(frozen=True)
class VersionInfo:
    version: str  # the package version, "0.1.0"
    commit: str = ""  # full commit id; "" when unknown
    dirty: bool = False  # tracked files differed from the commit
    source: str = ""  # where the commit came from: "build", "checkout" or ""

    @property
    def pinned(self) -> str:
        """``0.1.0+1320913abcde`` (``.dirty`` added), or ``0.1.0`` when the commit is unknown."""
        if not self.commit:
            return self.version
        return f"{self.version}+{self.commit[:_SHORT]}" + (".dirty" if self.dirty else "")

    def describe(self) -> str:
        """One line: ``0.1.0 (commit 1320913abcde, from the build)``."""
        if not self.commit:
            return f"{self.version} (commit unknown)"
        dirty = ", with uncommitted changes" if self.dirty else ""
        where = "the build" if self.source == "build" else "the checkout"
        return f"{self.version} (commit {self.commit[:_SHORT]}{dirty}, from {where})"

    def to_json(self) -> dict[str, str | bool]:
        return {
            "version": self.version,
            "commit": self.commit,
            "dirty": self.dirty,
            "commitFrom": self.source,
            "pinned": self.pinned,
        }


@functools.cache
def version_info() -> VersionInfo:
    """This package's version and commit (looked up once per process)."""
    package = Path(__file__).resolve().parent
    built = read_build_file(package / BUILD_FILE)
    if built is not None:
        return VersionInfo(__version__, built[0], built[1], "build")
    checkout = checkout_commit(package.parent)
    if checkout is not None:
        return VersionInfo(__version__, checkout[0], checkout[1], "checkout")
    return VersionInfo(__version__)


def read_build_file(path: Path) -> tuple[str, bool] | None:
    """``(commit, dirty)`` from a build file; None when absent or malformed."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    commit, dirty = data.get("commit"), data.get("dirty", False)
    if not isinstance(commit, str) or not _COMMIT_RE.match(commit) or not isinstance(dirty, bool):
        return None
    return commit, dirty


def checkout_commit(root: Path) -> tuple[str, bool] | None:
    """``(HEAD, dirty)`` of the checkout at ``root``; None unless ``root`` itself holds
    ``.git`` (a wheel installed in a virtual environment inside some repository is not
    that repository's code) and ``git`` answers."""
    if not (root / ".git").exists():
        return None
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}

    def git(*args: str) -> str | None:
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            done = subprocess.run(
                ["git", "--no-optional-locks", "-C", str(root), *args],
                capture_output=True, text=True, env=env, timeout=_GIT_TIMEOUT, check=False,
            )  # fmt: skip
            if done.returncode == 0:
                return done.stdout
        return None

    head = git("rev-parse", "HEAD")
    if head is None or not _COMMIT_RE.match(head.strip()):
        return None
    status = git("status", "--porcelain", "--untracked-files=no")
    return head.strip(), bool(status and status.strip())
