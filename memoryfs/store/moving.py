"""Moving the live tree to a new commit, and undoing a move that stopped half way.

Job: Git updates a working tree one file at a time, not atomically. A fast-forward
that fails midway (a full disk, a read-only file system, a killed git) leaves files
of the new commit (whole, cut short or empty) beside the old ones while the branch
stays where it was; every later fast-forward then refuses them as local edits, and
the next commit that takes a whole folder (``ingest`` takes ``.dream/receipts``)
commits them. Before such a move, ``begin_move`` writes a marker in ``.git``
(``memoryfs-moving``: the old and the new commit, nothing else); ``undo_move`` puts
the live tree back as the branch has it; ``end_move`` drops the marker. Every command
that writes the store calls ``recover_moves`` first (holding the write lock), so a
move whose undo could not run either (the disk still full) is undone by the next
command, which says so on stderr.

A file goes back only when it is missing or holds a prefix of what the new commit
has there: a user's own edits stay. Boundary: the live tree and the index; who moves
the branch and why is the caller's (Dream's sync).
"""

from __future__ import annotations

import contextlib
import errno
import os
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

from memoryfs.errors import DiskError
from memoryfs.store.atomic import atomic_write_text

__all__ = [
    "begin_move",
    "disk_error",
    "dirty_paths",
    "disk_reason",
    "end_move",
    "recover_moves",
    "undo_move",
    "write_refused",
]

MARKER = "memoryfs-moving"
_NO_BLOB = "0" * 40
_WRITE_FAILED = ("unable to write", "couldn't write", "could not write", "unable to create")
_FULL_BELOW = 1 << 20  # bytes free: a write git could not finish ran out of space
_DISK_ERRNOS = {errno.ENOSPC: "no space left on device", errno.EROFS: "read-only file system"}
_DISK_ERRNOS[errno.EDQUOT] = "disk quota exceeded"
_DISK_TEXTS = {
    "no space left on device": "no space left on device",
    "insufficient space": "no space left on device",
    "out of diskspace": "no space left on device",
    "read-only file system": "read-only file system",
    "disk quota exceeded": "disk quota exceeded",
}


def disk_reason(problem: BaseException | str) -> str | None:
    """ "no space left on device" (or "read-only file system", "disk quota exceeded")
    when ``problem`` (an ``OSError``, or git's error output) says the disk refused a
    write; None otherwise."""
    if isinstance(problem, OSError):
        return _DISK_ERRNOS.get(problem.errno or 0)
    text = str(problem).lower()
    if isinstance(problem, BaseException):  # GitPython keeps git's words in ``stderr``
        text += " " + str(getattr(problem, "stderr", "")).lower()
    return next((why for needle, why in _DISK_TEXTS.items() if needle in text), None)


def write_refused(root: Path, git_output: str) -> str | None:
    """Why git could not write the live tree of ``root``, from its output; None when it
    did not fail on a write. Git names the file it could not write but not always the
    reason ("unable to write file X", "couldn't write '.git/ORIG_HEAD.lock'"): then the
    free space tells."""
    reason = disk_reason(git_output)
    if reason or not any(words in git_output for words in _WRITE_FAILED):
        return reason
    try:
        st = os.statvfs(root)
    except OSError:
        return "git could not write the files"
    full = st.f_bavail * st.f_frsize < _FULL_BELOW
    return "no space left on device" if full else "git could not write the files"


def disk_error(root: Path, what: str, reason: str) -> DiskError:
    """The one-line error for a write the disk refused, with the way out."""
    fix = "free some space" if reason != "read-only file system" else "make it writable"
    return DiskError(
        f"{what} in {root}: {reason}; nothing was committed. {fix.capitalize()}, then run "
        "the command again (it first puts back any file left half written)"
    )


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "LC_ALL": "C", "GIT_TERMINAL_PROMPT": "0"}
    return subprocess.run(
        ["git", "-c", "core.hooksPath=/dev/null", *args],
        cwd=root,
        env=env,
        capture_output=True,
        check=False,
    )


def _marker(root: Path) -> Path:
    return root / ".git" / MARKER


def begin_move(root: Path, old: str, new: str) -> None:
    """Note that the live tree of ``root`` is about to move from ``old`` to ``new``.

    Raises ``OSError`` when the note cannot be written: nothing has changed yet."""
    atomic_write_text(_marker(root), f"{old} {new}\n")


def end_move(root: Path) -> None:
    """The move is done or undone: drop the note."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(_marker(root))


def _pending(root: Path) -> tuple[str, str] | None:
    try:
        parts = _marker(root).read_text(encoding="utf-8").split()
    except (OSError, UnicodeDecodeError):
        return None
    return (parts[0], parts[1]) if len(parts) == 2 else ("", "")


def _head(root: Path) -> str:
    return _git(root, "rev-parse", "--verify", "--quiet", "HEAD").stdout.decode().strip()


def dirty_paths(root: Path) -> set[str]:
    """Paths that differ from HEAD in the live tree (untracked ones too): a user's edits,
    which ``undo_move`` leaves alone."""
    out = _git(root, "status", "--porcelain", "-z", "--untracked-files=all", "--no-renames")
    return {item[3:].decode("utf-8", "surrogateescape") for item in out.stdout.split(b"\0") if item}


def undo_move(root: Path, tips: Iterable[str], spare: Iterable[str] = ()) -> list[str]:
    """Put back the live files a move to one of ``tips`` left half done; returns them.

    A path of ``spare`` (dirty before the move began) is never touched. A file goes
    back to HEAD only when it is missing or holds a prefix of what the tip has there;
    a file the tip adds is removed under the same rule, with the folders it leaves
    empty. Raises ``OSError`` or ``DiskError`` when the disk refuses the undo too.
    """
    import git  # the objects are read in-process: a full run's tree is thousands of files

    odb = git.Repo(root).odb
    kept = set(spare)
    touched: list[str] = []
    for tip in tips:
        out = _git(root, "diff", "--raw", "-z", "--no-renames", "--no-abbrev", "HEAD", tip)
        if out.returncode != 0:
            continue  # the tip is gone: nothing to compare with
        fields = out.stdout.split(b"\0")
        restore: list[str] = []
        drop: list[str] = []
        for meta, raw in zip(fields[0::2], fields[1::2], strict=False):
            parts = meta.decode().split()
            path = raw.decode("utf-8", "surrogateescape")
            if len(parts) < 5 or path in kept:
                continue
            old, new = parts[2], parts[3]
            live = _live_bytes(root / path)
            if live is None:
                left = old != _NO_BLOB  # removed before being written again
            else:
                left = new != _NO_BLOB and odb.stream(bytes.fromhex(new)).read().startswith(live)
            if left:
                (drop if old == _NO_BLOB else restore).append(path)
        for path in drop:  # first: it frees the space the restore needs
            (root / path).unlink(missing_ok=True)
            _prune_empty(root, (root / path).parent)
        for i in range(0, len(drop), 500):
            _checked(root, "rm", "--cached", "-q", "--ignore-unmatch", "--", *drop[i : i + 500])
        for i in range(0, len(restore), 500):
            _checked(root, "checkout", "HEAD", "--", *restore[i : i + 500])
        touched += drop + restore
    return touched


def _checked(root: Path, *args: str) -> None:
    proc = _git(root, *args)
    if proc.returncode != 0:
        detail = proc.stderr.decode(errors="replace").strip()
        reason = disk_reason(detail)
        if reason:
            raise disk_error(root, "the live tree could not be put back", reason)
        raise OSError(f"git {args[0]} failed in {root}: {detail.splitlines()[:1]}")


def _prune_empty(root: Path, folder: Path) -> None:
    """Remove ``folder`` and its parents while empty, up to (not including) ``root``."""
    while folder != root and folder.is_relative_to(root):
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent


def _live_bytes(path: Path) -> bytes | None:
    """The file at ``path`` (never through a symlink); None when there is none."""
    try:
        return None if path.is_symlink() or not path.is_file() else path.read_bytes()
    except OSError:
        return None


def recover_moves(root: Path) -> list[str]:
    """Undo a move that stopped half way (call holding the store's write lock); returns
    the paths put back. Says on stderr what it did. A move that finished (HEAD is the
    new commit) only loses its note."""
    pending = _pending(root)
    if pending is None:
        return []
    _, new = pending
    if not new or _head(root) == new:
        end_move(root)
        return []
    touched = undo_move(root, [new])
    end_move(root)
    if touched:
        sys.stderr.write(
            f"memoryfs: a move of {root} to {new[:10]} stopped half way (a full disk?); "
            f"put back {len(touched)} file{'s' * (len(touched) != 1)} as {_head(root)[:10]} "
            "has them\n"
        )
        sys.stderr.flush()
    return touched
