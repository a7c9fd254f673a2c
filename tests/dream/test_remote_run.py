"""``dream run`` on a clone of a remote store, against a real ``git daemon``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from git_server import GitServer, git

import dream.remote
import memoryfs
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


@pytest.fixture
def server(tmp_path: Path) -> Iterator[GitServer]:
    srv = GitServer(tmp_path / "srv")
    yield srv
    srv.close()


@pytest.fixture
def url(tmp_path: Path, server: GitServer) -> str:
    memoryfs.init_store(tmp_path / "origin", "dana", "atlas", "Dana")
    return server.bare("dana", from_store=tmp_path / "origin")


def _dream_commits(server: GitServer) -> list[str]:
    log = git(server.path("dana"), "log", "--format=%H %s", "main").splitlines()
    return [line.split()[0] for line in log if line.split()[1] == "dream:"]


def _fresh_clone_is_valid(tmp_path: Path, url: str, name: str) -> Store:
    store = clone_store(url, tmp_path / name)
    findings = validate_store(store)
    assert not findings, [f.format() for f in findings]
    return store


def test_a_run_on_a_clone_lands_on_the_remote(tmp_path: Path, url: str, server: GitServer) -> None:
    a = clone_store(url, tmp_path / "a")
    a.ingest(MOVING, session_id="2026-03-02-moving")
    run = run_remote(a, load_engine("embedded"), OPTIONS)
    assert run.result.status == "committed" and run.tries == 1
    assert run.pushed == server.head("dana") == a.head() == run.result.commit
    fresh = _fresh_clone_is_valid(tmp_path, url, "fresh")
    assert (fresh.memory / "sessions/summaries/2026-03-02-moving.md").is_file()
    again = run_remote(a, load_engine("embedded"), OPTIONS)
    assert again.result.status == "nothing-pending" and again.pushed == ""


def test_a_lost_push_race_runs_again_from_the_new_base(
    tmp_path: Path, url: str, server: GitServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    a = clone_store(url, tmp_path / "a")
    b = clone_store(url, tmp_path / "b")
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
    assert _dream_commits(server) == [server.head("dana")]  # one Dream commit, on top
    assert git(server.path("dana"), "merge-base", "--is-ancestor", raced[0], "main") == ""
    _fresh_clone_is_valid(tmp_path, url, "fresh")


def test_a_remote_that_keeps_moving_is_given_up_with_nothing_pushed(
    tmp_path: Path, url: str, server: GitServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    a = clone_store(url, tmp_path / "a")
    b = clone_store(url, tmp_path / "b")
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
    assert _dream_commits(server) == []


def test_an_unreachable_remote_stops_the_run_before_it_starts(
    tmp_path: Path, url: str, server: GitServer
) -> None:
    a = clone_store(url, tmp_path / "a")
    a.ingest(MOVING, session_id="2026-03-02-moving")
    head = a.head()
    server.pause()
    with pytest.raises(RemoteError, match="cannot reach"):
        run_remote(a, load_engine("embedded"), OPTIONS)
    assert a.head() == head
    assert not (a.dream_dir / "runs").exists() or not list((a.dream_dir / "runs").iterdir())


def test_a_push_that_fails_after_the_run_says_the_commit_is_here(
    tmp_path: Path, url: str, server: GitServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    a = clone_store(url, tmp_path / "a")
    a.ingest(MOVING, session_id="2026-03-02-moving")
    real_publish = dream.remote.publish

    def publish_offline(store: Store) -> str:
        server.pause()  # the server goes away between the run and its push
        return real_publish(store)

    monkeypatch.setattr(dream.remote, "publish", publish_offline)
    with pytest.raises(RemoteError, match=r"committed \w+ here but not pushed: cannot reach"):
        run_remote(a, load_engine("embedded"), OPTIONS)
    assert _dream_commits(server) == []
    server.resume()
    monkeypatch.setattr(dream.remote, "publish", real_publish)
    again = run_remote(a, load_engine("embedded"), OPTIONS)  # nothing pending; pushes the run
    assert again.result.status == "nothing-pending"
    assert again.pushed == server.head("dana") == a.head()
    assert len(_dream_commits(server)) == 1


def test_a_reviewed_run_applied_on_a_clone_lands_on_the_remote(
    tmp_path: Path, url: str, server: GitServer
) -> None:
    from dataclasses import replace

    from dream.remote import apply_store

    a = clone_store(url, tmp_path / "a")
    b = clone_store(url, tmp_path / "b")
    a.ingest(MOVING, session_id="2026-03-02-moving")
    review = run_remote(a, load_engine("embedded"), replace(OPTIONS, review=True))
    assert review.result.status == "review" and review.pushed == ""
    assert _dream_commits(server) == []
    theirs = b.ingest(CELLO, session_id="2026-03-03-ines").commit  # the remote moves meanwhile
    applied = apply_store(a, review.result.run_id)
    assert applied.status == "committed"
    assert server.head("dana") == applied.commit == a.head()
    assert git(server.path("dana"), "merge-base", "--is-ancestor", theirs, "main") == ""
    _fresh_clone_is_valid(tmp_path, url, "fresh")
