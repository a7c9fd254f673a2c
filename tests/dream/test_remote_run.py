"""``dream run`` on a clone of a remote store, against a real ``git daemon``."""

from __future__ import annotations

from pathlib import Path

import pytest
from git_server import GitServer, git

import dream.remote
from dream.engines import load_engine
from dream.remote import run_remote
from dream.runner import RunOptions
from memoryfs.errors import RemoteError
from memoryfs.remote import clone_store
from memoryfs.store.store import Store
from memoryfs.validate.rules import validate_store

MOVING = [{"role": "user", "content": "I moved to Porto last month.", "ts": "2026-03-02T09:00"}]
CELLO = [{"role": "user", "content": "My sister Ines plays the cello.", "ts": "2026-03-03T09:00"}]
OPTIONS = RunOptions(allow_unapproved=True)


def _dream_commits(git_server: GitServer) -> list[str]:
    log = git(git_server.path("dana"), "log", "--format=%H %s", "main").splitlines()
    return [line.split()[0] for line in log if line.split()[1] == "dream:"]


def _fresh_clone_is_valid(tmp_path: Path, store_url: str, name: str) -> Store:
    store = clone_store(store_url, tmp_path / name)
    findings = validate_store(store)
    assert not findings, [f.format() for f in findings]
    return store


def test_a_run_on_a_clone_lands_on_the_remote(
    tmp_path: Path, store_url: str, git_server: GitServer
) -> None:
    a = clone_store(store_url, tmp_path / "a")
    a.ingest(MOVING, session_id="2026-03-02-moving")
    run = run_remote(a, load_engine("embedded"), OPTIONS)
    assert run.result.status == "committed" and run.tries == 1
    assert run.pushed == git_server.head("dana") == a.head() == run.result.commit
    fresh = _fresh_clone_is_valid(tmp_path, store_url, "fresh")
    assert (fresh.memory / "sessions/summaries/2026-03-02-moving.md").is_file()
    again = run_remote(a, load_engine("embedded"), OPTIONS)
    assert again.result.status == "nothing-pending" and again.pushed == ""


def test_a_lost_push_race_runs_again_from_the_new_base(
    tmp_path: Path, store_url: str, git_server: GitServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    a = clone_store(store_url, tmp_path / "a")
    b = clone_store(store_url, tmp_path / "b")
    a.ingest(MOVING, session_id="2026-03-02-moving")
    real_publish = dream.remote.publish
    raced: list[str] = []

    def publish_after_another_writer(store: Store) -> str:
        if not raced:  # another writer pushes between a's fetch and a's push
            raced.append(b.ingest(CELLO, session_id="2026-03-03-ines").commit)
        return real_publish(store)

    monkeypatch.setattr(dream.remote, "publish", publish_after_another_writer)
    run = run_remote(a, load_engine("embedded"), OPTIONS)
    assert run.tries == 2
    assert run.result.status == "committed"
    assert sorted(run.result.sessions) == ["2026-03-02-moving", "2026-03-03-ines"]
    assert _dream_commits(git_server) == [git_server.head("dana")]  # one Dream commit, on top
    assert git(git_server.path("dana"), "merge-base", "--is-ancestor", raced[0], "main") == ""
    _fresh_clone_is_valid(tmp_path, store_url, "fresh")


def test_a_remote_that_keeps_moving_is_given_up_with_nothing_pushed(
    tmp_path: Path, store_url: str, git_server: GitServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    a = clone_store(store_url, tmp_path / "a")
    b = clone_store(store_url, tmp_path / "b")
    a.ingest(MOVING, session_id="2026-03-02-moving")
    real_publish = dream.remote.publish
    n = iter(range(100))

    def always_raced(store: Store) -> str:
        i = next(n)
        b.ingest([{**CELLO[0], "content": f"Note {i}."}], session_id=f"2026-03-1{i}-note")
        return real_publish(store)

    monkeypatch.setattr(dream.remote, "publish", always_raced)
    with pytest.raises(RemoteError, match="moved under each of 2 runs"):
        run_remote(a, load_engine("embedded"), OPTIONS, attempts=2)
    assert _dream_commits(git_server) == []


def test_an_unreachable_remote_stops_the_run_before_it_starts(
    tmp_path: Path, store_url: str, git_server: GitServer
) -> None:
    a = clone_store(store_url, tmp_path / "a")
    a.ingest(MOVING, session_id="2026-03-02-moving")
    head = a.head()
    git_server.pause()
    with pytest.raises(RemoteError, match="cannot reach"):
        run_remote(a, load_engine("embedded"), OPTIONS)
    assert a.head() == head
    assert not (a.dream_dir / "runs").exists() or not list((a.dream_dir / "runs").iterdir())


def test_a_push_that_fails_after_the_run_says_the_commit_is_here(
    tmp_path: Path, store_url: str, git_server: GitServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    a = clone_store(store_url, tmp_path / "a")
    a.ingest(MOVING, session_id="2026-03-02-moving")
    real_publish = dream.remote.publish

    def publish_offline(store: Store) -> str:
        git_server.pause()  # the server goes away between the run and its push
        return real_publish(store)

    monkeypatch.setattr(dream.remote, "publish", publish_offline)
    with pytest.raises(RemoteError, match=r"committed \w+ here but not pushed: cannot reach"):
        run_remote(a, load_engine("embedded"), OPTIONS)
    assert _dream_commits(git_server) == []
    git_server.resume()
    monkeypatch.setattr(dream.remote, "publish", real_publish)
    again = run_remote(a, load_engine("embedded"), OPTIONS)  # nothing pending; pushes the run
    assert again.result.status == "nothing-pending"
    assert again.pushed == git_server.head("dana") == a.head()
    assert len(_dream_commits(git_server)) == 1


def test_a_reviewed_run_applied_on_a_clone_lands_on_the_remote(
    tmp_path: Path, store_url: str, git_server: GitServer
) -> None:
    from dataclasses import replace

    from dream.remote import apply_store

    a = clone_store(store_url, tmp_path / "a")
    b = clone_store(store_url, tmp_path / "b")
    a.ingest(MOVING, session_id="2026-03-02-moving")
    review = run_remote(a, load_engine("embedded"), replace(OPTIONS, review=True))
    assert review.result.status == "review" and review.pushed == ""
    assert _dream_commits(git_server) == []
    theirs = b.ingest(CELLO, session_id="2026-03-03-ines").commit  # the remote moves meanwhile
    applied = apply_store(a, review.result.run_id)
    assert applied.status == "committed"
    assert git_server.head("dana") == applied.commit == a.head()
    assert git(git_server.path("dana"), "merge-base", "--is-ancestor", theirs, "main") == ""
    _fresh_clone_is_valid(tmp_path, store_url, "fresh")


def test_a_dry_run_on_a_clone_pushes_nothing(
    tmp_path: Path, store_url: str, git_server: GitServer
) -> None:
    from dataclasses import replace

    from memoryfs.ingest import ingest
    from memoryfs.ingest.source import Source

    a = clone_store(store_url, tmp_path / "a")
    before = git_server.head("dana")
    # an ingest commit made here and not pushed stays here through a dry run
    ingest(a, [Source.from_messages(MOVING)], "openai", "2026-03-02-moving")
    run = run_remote(a, load_engine("embedded"), replace(OPTIONS, dry_run=True))
    assert run.result.status == "dry-run" and run.pushed == ""
    assert git_server.head("dana") == before
