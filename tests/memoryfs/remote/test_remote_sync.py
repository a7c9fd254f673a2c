"""Remote stores against a real ``git daemon``: clone, pull, publish, races, a purge.

Every test starts a daemon on loopback over a bare repository that holds a store's
history, and works through clones of it as separate users of one store would.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from git_server import GitServer, git

import memoryfs
from memoryfs.errors import MemoryFSError, RemoteError
from memoryfs.forget.purge import purge_history
from memoryfs.forget.remove import forget
from memoryfs.forget.verify import verify_forgotten
from memoryfs.ingest import ingest as ingest_local
from memoryfs.ingest.source import Source
from memoryfs.remote import clone_store, publish, publish_purged, pull, remote_tip, remote_url
from memoryfs.remote.sync import purge_pending
from memoryfs.store.store import Store

MOVING = [{"role": "user", "content": "I moved to Porto last month.", "ts": "2026-03-02T09:00"}]
CELLO = [{"role": "user", "content": "My sister Ines plays the cello.", "ts": "2026-03-03T09:00"}]
SECRET = [
    {"role": "user", "content": "My old address was 12 Blue Heron Lane.", "ts": "2026-03-04T09:00"}
]


def _commit_here(store: Store, chat: list[dict[str, str]], sid: str) -> str:
    """An ingest commit that is not pushed (the library call under the API's push)."""
    return ingest_local(store, [Source.from_messages(chat)], "openai", sid).commit


def _subjects(path: Path, ref: str = "main") -> list[str]:
    return git(path, "log", "--format=%s", ref).splitlines()


def test_clone_is_a_store_that_names_its_remote(
    tmp_path: Path, store_url: str, git_server: GitServer
) -> None:
    store = clone_store(store_url, tmp_path / "a")
    assert remote_url(store) == store_url
    assert remote_tip(store) == store.head() == git_server.head("dana")
    assert (store.root / "memory.toml").is_file()


def test_clone_of_what_is_not_a_store_leaves_nothing(tmp_path: Path, git_server: GitServer) -> None:
    other = tmp_path / "plain"
    other.mkdir()
    git(other, "init", "-q", "-b", "main")
    (other / "README").write_text("not memory\n")
    git(other, "add", "README")
    git(other, "-c", "user.name=x", "-c", "user.email=x@y", "commit", "-qm", "x")
    bad = git_server.bare("plain", from_store=other)
    with pytest.raises(RemoteError, match="not a memory store"):
        clone_store(bad, tmp_path / "b")
    assert not (tmp_path / "b").exists()
    git_server.pause()
    with pytest.raises(RemoteError, match=r"cannot reach .*127\.0\.0\.1") as err:
        clone_store(git_server.url("dana"), tmp_path / "c")
    assert "\n" not in str(err.value)
    assert not (tmp_path / "c").exists()


def test_ingest_pushes_and_the_other_clone_pulls_it(
    tmp_path: Path, store_url: str, git_server: GitServer
) -> None:
    a = clone_store(store_url, tmp_path / "a")
    b = clone_store(store_url, tmp_path / "b")
    result = a.ingest(MOVING, session_id="2026-03-02-moving")
    assert git_server.head("dana") == result.commit == a.head()
    pulled = pull(b)
    assert pulled.how == "fast-forward"
    assert b.head() == result.commit
    assert (b.memory / "sessions/transcripts/2026-03-02-moving.md").is_file()


def test_unreachable_remote_stops_ingest_before_it_writes(
    tmp_path: Path, store_url: str, git_server: GitServer
) -> None:
    a = clone_store(store_url, tmp_path / "a")
    head = a.head()
    git_server.pause()
    with pytest.raises(RemoteError, match="cannot reach"):
        a.ingest(MOVING, session_id="2026-03-02-moving")
    assert a.head() == head
    assert not (a.memory / "sessions/transcripts/2026-03-02-moving.md").exists()
    assert git(a.root, "status", "--porcelain") == ""


def test_a_lost_push_race_replays_the_local_commit_and_loses_nothing(
    tmp_path: Path, store_url: str, git_server: GitServer
) -> None:
    a = clone_store(store_url, tmp_path / "a")
    b = clone_store(store_url, tmp_path / "b")
    mine = _commit_here(a, MOVING, "2026-03-02-moving")  # a commits, has not pushed yet
    theirs = b.ingest(CELLO, session_id="2026-03-03-ines").commit  # b pushes first
    assert git_server.head("dana") == theirs
    pushed = publish(a)  # refused as a fast forward: fetch, replay, push
    assert pushed == git_server.head("dana") == a.head()
    assert git(a.root, "merge-base", "--is-ancestor", theirs, pushed, check=False) == ""
    assert _subjects(a.root)[:2] == ["ingest: 1 sessions, 1 turns"] * 2
    assert mine not in git(a.root, "rev-list", "main")  # replayed: a new commit id
    for sid in ("2026-03-02-moving", "2026-03-03-ines"):
        assert (a.memory / f"sessions/transcripts/{sid}.md").is_file()
    assert git(git_server.path("dana"), "rev-list", "--count", "main") == "3"


def test_publish_never_forces_a_push(tmp_path: Path, store_url: str, git_server: GitServer) -> None:
    a = clone_store(store_url, tmp_path / "a")
    b = clone_store(store_url, tmp_path / "b")
    b.ingest(CELLO, session_id="2026-03-03-ines")
    # a's own idea of the remote is stale and it never pulls: its push must be refused,
    # not forced (the server would take a forced push: denyNonFastForwards is off)
    from memoryfs.remote.transport import push_main

    _commit_here(a, MOVING, "2026-03-02-moving")
    assert push_main(a.root, store_url, a.head()) is False
    assert "ines" in git(git_server.path("dana"), "ls-tree", "-r", "--name-only", "main")


def test_a_local_dream_commit_is_dropped_not_replayed(
    tmp_path: Path, store_url: str, git_server: GitServer
) -> None:
    import dream

    a = clone_store(store_url, tmp_path / "a")
    b = clone_store(store_url, tmp_path / "b")
    _commit_here(a, MOVING, "2026-03-02-moving")
    dream.run(a, allow_unapproved=True)  # a local run: not pushed
    b.ingest(CELLO, session_id="2026-03-03-ines")
    pulled = pull(a)
    assert pulled.how == "replayed"
    assert len(pulled.replayed) == 1 and len(pulled.dropped) == 1
    assert [s.split(":")[0] for s in _subjects(a.root)[:3]] == ["ingest", "ingest", "init"]
    assert not (a.memory / "sessions/summaries/2026-03-02-moving.md").exists()


def test_a_purge_force_pushes_once_and_clones_drop_the_old_history(
    tmp_path: Path, store_url: str, git_server: GitServer
) -> None:
    a = clone_store(store_url, tmp_path / "a")
    b = clone_store(store_url, tmp_path / "b")
    a.ingest(MOVING, session_id="2026-03-02-moving")
    a.ingest(SECRET, session_id="2026-03-04-address")
    pull(b)
    lease = remote_tip(a)
    forget(a, "phrase", "Blue Heron Lane", "privacy")
    purge_history(a)
    pushed = publish_purged(a, lease)
    assert git_server.head("dana") == pushed
    assert _subjects(a.root)[0].startswith("purge: history rewritten")
    assert not purge_pending(a)
    # the server's main holds no forgotten words in any commit it reaches
    for sha in git(git_server.path("dana"), "rev-list", "main").split():
        assert "Blue Heron" not in git(
            git_server.path("dana"), "grep", "-i", "heron", sha, check=False
        )
    # the other clone takes the rewritten history and keeps nothing of the old one
    assert pull(b).how == "rewritten"
    assert b.head() == pushed
    proof = verify_forgotten(Store.open(b.root), history=True)
    assert proof.ok, [r.line() for r in proof.remains]


def test_a_purge_whose_remote_moved_is_refused_and_kept_for_later(
    tmp_path: Path, store_url: str, git_server: GitServer
) -> None:
    a = clone_store(store_url, tmp_path / "a")
    b = clone_store(store_url, tmp_path / "b")
    a.ingest(SECRET, session_id="2026-03-04-address")
    lease = remote_tip(a)
    pull(b)
    b.ingest(CELLO, session_id="2026-03-03-ines")  # moves the remote after a's lease
    forget(a, "phrase", "Blue Heron Lane", "privacy")
    purge_history(a)
    theirs = git_server.head("dana")
    with pytest.raises(RemoteError, match="moved since the purge began"):
        publish_purged(a, lease)
    assert git_server.head("dana") == theirs  # nothing forced over the other writer's commit
    assert purge_pending(a) == lease
    with pytest.raises(RemoteError, match="moved since the purge began"):
        pull(a)  # every later pull tries the forced push first, and refuses the same way


def test_remote_in_memory_toml_pushes_to_an_empty_server(
    tmp_path: Path, git_server: GitServer
) -> None:
    from dataclasses import replace

    store = memoryfs.init_store(tmp_path / "local", "dana", "atlas", "Dana")
    empty = git_server.bare("empty")
    with pytest.raises(MemoryFSError, match="has no remote"):
        pull(store)
    store.configure(replace(store.config, remote=empty), "config: push to the server")
    store = Store.open(store.root)
    assert remote_url(store) == empty
    result = store.ingest(MOVING, session_id="2026-03-02-moving")
    assert git_server.head("empty") == result.commit == store.head()
    clone = clone_store(empty, tmp_path / "clone")
    assert clone.config.remote == empty
    assert (clone.memory / "sessions/transcripts/2026-03-02-moving.md").is_file()


def test_pull_refuses_a_store_with_another_branch_checked_out(
    tmp_path: Path, store_url: str
) -> None:
    a = clone_store(store_url, tmp_path / "a")
    git(a.root, "switch", "-q", "-c", "draft")
    with pytest.raises(MemoryFSError, match="has draft checked out"):
        pull(a)
    assert git(a.root, "rev-parse", "draft") == git(a.root, "rev-parse", "main")


def test_a_url_git_would_read_as_an_option_or_a_password_never_reaches_git_or_a_message(
    tmp_path: Path,
) -> None:
    with pytest.raises(MemoryFSError, match="is not a Git URL"):
        clone_store(f"--upload-pack=touch {tmp_path}/ran:x", tmp_path / "a")
    assert not (tmp_path / "ran").exists() and not (tmp_path / "a").exists()
    with pytest.raises(RemoteError) as err:
        clone_store("https://dana:s3cret@127.0.0.1:9/dana.git", tmp_path / "b")
    assert "s3cret" not in str(err.value) and "127.0.0.1" in str(err.value)
