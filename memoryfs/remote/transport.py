"""The network side of a remote store: Git's fetch, push and clone, and what their failures mean.

Every command runs ``git`` itself, so credentials come from Git's own configuration
(SSH keys, credential helpers, ``url.<base>.insteadOf``); memoryfs stores none and
never prompts (``GIT_TERMINAL_PROMPT=0``: a missing credential is an error, not a
hang). A command that cannot reach the remote raises ``RemoteError`` with one line
naming the URL and Git's reason; a push the remote refuses because it would not
fast-forward is an answer (``False``), not an error: the caller fetches and tries
again. Nothing here moves a local branch.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from memoryfs.errors import RemoteError

__all__ = [
    "NET_TIMEOUT",
    "clone_bare_url",
    "fetch_main",
    "git_net",
    "push_main",
    "remote_problem",
]

NET_TIMEOUT = 300.0  # seconds a fetch, push or clone may take before it counts as unreachable
FETCHED = "refs/memoryfs/remote/fetched"  # where a fetch puts the remote's main
_NO_MAIN = ("couldn't find remote ref", "could not find remote ref")


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.update({"GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"})
    return env


def git_net(
    cwd: Path, *args: str, timeout: float = NET_TIMEOUT
) -> subprocess.CompletedProcess[str]:
    """Run a git command that talks to a remote; a timeout comes back as exit code 124."""
    try:
        return subprocess.run(
            ["git", *args],
            cwd=cwd,
            env=_env(),
            capture_output=True,
            text=True,
            check=False,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(
            ["git", *args], 124, "", f"timed out after {timeout:g} s"
        )


def remote_problem(url: str, proc: subprocess.CompletedProcess[str]) -> RemoteError:
    """One line: the URL and Git's own reason (its last ``fatal:`` line, else its last line,
    with the line after it when it ends in a colon, as "unable to connect to HOST:" does)."""
    lines = [line.strip() for line in proc.stderr.splitlines() if line.strip()]
    at = max(
        (i for i, line in enumerate(lines) if line.startswith(("fatal:", "error:"))), default=-1
    )
    if not lines:
        reason = f"git exited with {proc.returncode}"
    else:
        reason = lines[at]
        if reason.endswith(":") and at + 1 < len(lines) and at != -1:
            reason = f"{reason} {lines[at + 1]}"
    for prefix in ("fatal: ", "error: "):
        reason = reason.removeprefix(prefix)
    return RemoteError(f"cannot reach the store's remote {url}: {reason}")


def fetch_main(root: Path, url: str) -> str:
    """Fetch the remote's ``main`` into ``FETCHED``; its commit, or "" when it has none yet."""
    proc = git_net(root, "fetch", "--quiet", "--no-tags", url, f"+refs/heads/main:{FETCHED}")
    if proc.returncode != 0:
        if any(marker in proc.stderr for marker in _NO_MAIN):
            return ""
        raise remote_problem(url, proc)
    rev = git_net(root, "rev-parse", "--verify", "--quiet", FETCHED)
    return rev.stdout.strip()


def push_main(root: Path, url: str, commit: str, lease: str | None = None) -> bool:
    """Push ``commit`` as the remote's ``main``: True when taken, False when the remote
    moved first (the push would not fast-forward, or ``lease`` no longer holds).

    Without ``lease`` the push is never forced: the remote takes it only as a fast
    forward of what it has, a compare-and-swap on the ancestry. With ``lease`` (the one
    forced push, of a purged history) the remote takes it only while its main is still
    exactly ``lease``."""
    args = ["push", "--porcelain", "--no-verify"]
    if lease is not None:
        args.append(f"--force-with-lease=refs/heads/main:{lease}")
    proc = git_net(root, *args, url, f"{commit}:refs/heads/main")
    if proc.returncode == 0:
        return True
    # porcelain: "!<tab>src:dst<tab>[rejected] (fetch first)" for a refused ref
    if any(line.startswith("!") for line in proc.stdout.splitlines()):
        return False
    raise remote_problem(url, proc)


def clone_bare_url(url: str) -> str:
    """``url`` as Git takes it: a plain folder path made absolute, anything else unchanged."""
    if "://" in url or (":" in url.split("/", 1)[0] and not url.startswith(("/", "."))):
        return url
    return str(Path(url).expanduser().resolve())
