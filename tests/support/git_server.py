"""A real Git server on loopback for the remote-store tests: ``git daemon`` over bare repos.

``GitServer(root)`` starts ``git daemon`` serving every bare repository under ``root``
(``git://127.0.0.1:<port>/<name>.git``) with pushes enabled, and stops it on ``close``.
``bare(name, from_store=...)`` makes a bare repository there, optionally holding a copy
of a store's main, set up like a real host: partial clones
allowed (``uploadpack.allowFilter``) and ``receive.denyNonFastForwards`` off, so only
the client decides what is forced (the tests check the client never forces but where
the product says it does). ``pause()``/``resume()`` stop and restart the daemon on the
same port, for the "remote unreachable" cases.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from loopback import LoopbackServer

__all__ = ["GitServer", "git"]


def git(cwd: Path | str, *args: str, check: bool = True) -> str:
    proc = subprocess.run(["git", *args], cwd=str(cwd), capture_output=True, text=True, check=False)
    if check and proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {proc.stderr.strip()}")
    return proc.stdout.strip()


class GitServer(LoopbackServer):
    name = "git daemon"

    def __init__(self, root: Path) -> None:
        super().__init__()
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        self.resume()

    def command(self) -> list[str]:
        return [
            "git", "daemon", "--reuseaddr", "--export-all", "--enable=receive-pack",
            f"--base-path={self.root}", "--listen=127.0.0.1", f"--port={self.port}",
            str(self.root),
        ]  # fmt: skip

    def url(self, name: str) -> str:
        return f"git://127.0.0.1:{self.port}/{name}.git"

    def path(self, name: str) -> Path:
        return self.root / f"{name}.git"

    def bare(self, name: str, from_store: Path | None = None) -> str:
        """A bare repository ``name`` (with ``from_store``'s branches); its URL."""
        path = self.path(name)
        git(self.root, "init", "--quiet", "--bare", "--initial-branch=main", str(path))
        git(path, "config", "uploadpack.allowFilter", "true")
        git(path, "config", "uploadpack.allowAnySHA1InWant", "true")
        git(path, "config", "receive.denyNonFastForwards", "false")
        if from_store is not None:
            git(from_store, "push", "--quiet", str(path), "refs/heads/main:refs/heads/main")
        return self.url(name)

    def head(self, name: str, branch: str = "main") -> str:
        return git(self.path(name), "rev-parse", f"refs/heads/{branch}")
