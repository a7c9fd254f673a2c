"""``dream watch``: run Dream when new sessions arrive.

Job: watch ``memory/sessions/transcripts/`` of the live store with watchdog. Every
transcript created, grown or moved into place marks the store dirty and restarts a
quiet-period clock; once no event came for the quiet period, one Dream run handles
everything that arrived, so a burst of ingests coalesces into one run (and one commit).
Events during a run mark the store dirty again: another run follows, after its own
quiet period. When the watcher starts with sessions already pending, it runs once
after the quiet period as well.

A run never starts while another holds the store's ``dream`` lock (a nightly
``dream run``, say): the watcher waits and tries again. ``stop()`` (SIGTERM, SIGINT
in the CLI) ends ``serve`` at once between runs, or right after the run in progress.
A run that fails (a gate, an engine error) is reported and the watcher keeps
watching: the sessions stay pending and the next arrival tries again.

Boundary: when to run; what a run does is ``dream.runner``'s.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer

from dream.errors import DreamError
from dream.phases.orient import find_pending, parse_duration, rev, target_branch
from dream.runner import RunResult
from memoryfs.errors import LockedError, MemoryFSError
from memoryfs.store.store import Store

__all__ = ["Watcher", "parse_quiet_period", "lock_held"]

TRANSCRIPTS = Path("memory") / "sessions" / "transcripts"


def parse_quiet_period(text: str) -> float:
    """``"60s"``, ``"2m"``, ``"1.5"`` (a bare number is seconds here) -> seconds."""
    raw = text.strip()
    try:
        seconds = float(raw)
    except ValueError:
        seconds = parse_duration(raw) or 0.0
    if seconds <= 0:
        raise DreamError(f"bad quiet period {text!r} (use e.g. 60s, 2m, 0.5)")
    return seconds


def lock_held(store: Store) -> bool:
    """Whether another process holds the store's ``dream`` lock right now."""
    try:
        with store.lock("dream", timeout=0):
            return False
    except LockedError:
        return True


class Watcher:
    """Coalesces transcript events into Dream runs; ``serve`` loops until ``stop``."""

    def __init__(
        self,
        store: Store,
        run: Callable[[], RunResult],
        quiet_period: float = 60.0,
        on_result: Callable[[RunResult], None] = lambda result: None,
        on_error: Callable[[str], None] = lambda message: None,
        on_ready: Callable[[], None] = lambda: None,
        retry: float = 1.0,
    ) -> None:
        self.store = store
        self.run = run
        self.quiet_period = quiet_period
        self.on_result = on_result
        self.on_error = on_error
        self.on_ready = on_ready  # called once the observer is watching
        self.retry = retry  # seconds between looks at a busy lock
        self.runs = 0
        self._cond = threading.Condition()
        self._dirty = False
        self._last = 0.0
        self._stopping = False

    def notice(self) -> None:
        """A transcript changed: (re)start the quiet period."""
        with self._cond:
            self._dirty = True
            self._last = time.monotonic()
            self._cond.notify_all()

    def stop(self) -> None:
        with self._cond:
            self._stopping = True
            self._cond.notify_all()

    @property
    def stopping(self) -> bool:
        return self._stopping

    def serve(self) -> int:
        """Watch and run until ``stop``; the number of runs made."""
        folder = self.store.root / TRANSCRIPTS
        folder.mkdir(parents=True, exist_ok=True)
        observer = Observer()
        observer.schedule(_Handler(self), str(folder), recursive=False)
        observer.start()
        self.on_ready()
        try:
            if self._has_pending():
                self.notice()
            self.loop()
        finally:
            observer.stop()
            observer.join(timeout=5)
        return self.runs

    def loop(self) -> None:
        """The scheduling loop (without watchdog: tests call ``notice`` themselves)."""
        while self._wait_quiet():
            if lock_held(self.store):
                with self._cond:
                    self._cond.wait(self.retry)
                continue
            with self._cond:
                self._dirty = False
            self._run_once()

    def _wait_quiet(self) -> bool:
        """Block until dirty and quiet for the quiet period; False once stopping."""
        with self._cond:
            while not self._stopping:
                if self._dirty:
                    left = self._last + self.quiet_period - time.monotonic()
                    if left <= 0:
                        return True
                    self._cond.wait(left)
                else:
                    self._cond.wait()
            return False

    def _run_once(self) -> None:
        try:
            result = self.run()
        except (DreamError, MemoryFSError) as exc:
            if lock_held(self.store):  # lost the race to another run: try again later
                self.notice()
                return
            self.runs += 1
            self.on_error(str(exc))
            return
        self.runs += 1
        self.on_result(result)

    def _has_pending(self) -> bool:
        try:
            head = rev(self.store, f"refs/heads/{target_branch(self.store)}")
            return bool(head) and bool(find_pending(self.store, head)[0])
        except (DreamError, MemoryFSError):
            return False


class _Handler(FileSystemEventHandler):
    """Transcript files created, written or moved into place (an atomic write)."""

    def __init__(self, watcher: Watcher) -> None:
        super().__init__()
        self.watcher = watcher

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.is_directory or event.event_type not in ("created", "modified", "moved", "closed"):
            return
        path = event.dest_path if event.event_type == "moved" else event.src_path
        name = Path(str(path)).name
        if name.endswith(".md") and not name.startswith("."):
            self.watcher.notice()
