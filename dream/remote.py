"""Dream on a remote store: fetch, consolidate, push as a compare-and-swap on the remote's main.

``run_remote`` pulls (``memoryfs.remote.pull``: the local main becomes the remote's,
with anything made here and not pushed replayed on top), runs Dream as on any store,
and publishes. The push is never forced, so the remote takes the run's commit only
as a fast forward of the main the run started from. When another writer pushed
first, the publish's pull drops the run's commit (it is derived from the files, and a
commit rebased without its gates would land unchecked) and pushes what else was made
here; the run is then made again from the new base, ``attempts`` times at most. A
run that commits nothing (nothing pending, no change, a gate rejection, a review) pushes
only what else was waiting; a dry run pushes nothing. An unreachable remote stops the run
before it starts (``RemoteError``), and every attempt losing its race is one too.
"""

from __future__ import annotations

from dataclasses import dataclass

from dream.engines.base import Engine
from dream.runner import Progress, RunOptions, RunResult, run_dream
from memoryfs.errors import RemoteError
from memoryfs.remote import publish, pull, remote_url
from memoryfs.remote.sync import is_ancestor, remote_tip
from memoryfs.store.store import Store

__all__ = ["ATTEMPTS", "RemoteRun", "apply_store", "run_remote", "run_store"]

ATTEMPTS = 3  # runs made before a store whose remote keeps moving is given up for now


@dataclass(frozen=True)
class RemoteRun:
    result: RunResult  # the last run's result; "gate-failed" is an answer, not worth a retry
    pushed: str  # the commit this run put on the remote's main ("" when none)
    tries: int  # runs made (a lost push race runs again from the new base)
    url: str

    def to_json(self) -> dict[str, object]:
        return {
            **self.result.to_json(),
            "remote": self.url,
            "pushed": self.pushed,
            "tries": self.tries,
        }


def run_remote(
    store: Store,
    engine: Engine,
    options: RunOptions | None = None,
    *,
    attempts: int = ATTEMPTS,
    progress: Progress | None = None,
) -> RemoteRun:
    """One Dream run on a store with a remote; see the module docstring."""
    options = options or RunOptions()
    for tries in range(1, attempts + 1):
        pulled = pull(store)
        result = run_dream(store, engine, options, progress=progress)
        if options.dry_run:  # a dry run changes nothing, on the remote either
            return RemoteRun(result, "", tries, pulled.url)
        try:
            pushed = publish(store)
        except RemoteError as exc:
            if result.status != "committed":
                raise
            raise RemoteError(
                f"committed {result.commit[:10]} here but not pushed: {exc} "
                "(the next run or 'memoryfs sync' pushes it)"
            ) from None
        if result.status != "committed":
            return RemoteRun(result, pushed, tries, pulled.url)
        tip = remote_tip(store)
        if tip and is_ancestor(store, result.commit, tip):
            return RemoteRun(result, pushed or tip, tries, pulled.url)
        # the publish found the remote moved and left the run's commit out: run again
    raise RemoteError(
        f"{pulled.url}: the remote's main moved under each of {attempts} runs; "
        "nothing of them was pushed (the next run starts from the new main)"
    )


def run_store(
    store: Store,
    engine: Engine,
    options: RunOptions | None = None,
    progress: Progress | None = None,
) -> RunResult:
    """A run on any store: ``run_remote``'s when it has a remote, else ``run_dream``'s."""
    if remote_url(store) is not None:
        return run_remote(store, engine, options, progress=progress).result
    return run_dream(store, engine, options, progress=progress)


def apply_store(store: Store, run_id: str, full_validation: bool = False) -> RunResult:
    """``dream apply`` on any store. With a remote: pull, land the kept run through its
    gates, push; a remote that moved in between leaves the applied commit out (a Dream
    commit is never replayed unchecked), which is an error that says to run again."""
    from dream.landing.kept_runs import apply_run

    if remote_url(store) is None:
        return apply_run(store, run_id, full_validation=full_validation)
    pulled = pull(store)
    result = apply_run(store, run_id, full_validation=full_validation)
    if result.status != "committed":
        return result
    try:
        publish(store)
    except RemoteError as exc:
        raise RemoteError(f"applied {result.commit[:10]} here but not pushed: {exc}") from None
    tip = remote_tip(store)
    if not (tip and is_ancestor(store, result.commit, tip)):
        raise RemoteError(
            f"{pulled.url}: the remote's main moved while run {run_id} was applied, so it was "
            "left out; run 'dream run' (or --review again) on the new main"
        )
    return result
