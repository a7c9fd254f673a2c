"""Sandboxes from a Git server (``materialize --from URL``): against a real ``git daemon``.

The store is a Dream-consolidated synthetic store (knowledge pages, notes, summaries),
served from a bare repository; a counting proxy between client and daemon measures
what really crossed the wire.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from byte_proxy import ByteProxy
from git_server import GitServer, git
from paths import ROOT

import dream
from memoryfs.errors import MemoryFSError
from memoryfs.read.materialize import materialize
from memoryfs.read.recall import recall
from memoryfs.read.sandbox import MANIFEST, blob_hash
from memoryfs.remote.partial_clone import shown_url
from memoryfs.remote.sandbox import CLONE, materialize_from
from memoryfs.remote.sandbox import add_files as add_from_url
from memoryfs.store.store import CONFIG_NAME as CONFIG
from memoryfs.store.store import Store, init_store

sys.path.insert(0, str(ROOT / "bench"))
from synthetic import write_sessions  # noqa: E402

SESSIONS = 24
BUDGET = 30_000


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A consolidated store, built once: tests copy it before changing it."""
    root = tmp_path_factory.mktemp("remote-store") / "store"
    store = init_store(root, "dana", "atlas", "Dana Reyes")
    write_sessions(store, 0, SESSIONS)
    dream.run(store, allow_unapproved=True)
    return root


@pytest.fixture
def store(built: Path, tmp_path: Path) -> Store:
    """A clone of the built store, with its own history to push from."""
    root = tmp_path / "store"
    git(tmp_path, "clone", "--quiet", str(built), str(root))
    git(root, "config", "user.name", "Test")
    git(root, "config", "user.email", "test@example.com")
    return Store.open(root)


def _held_blobs(sandbox: Path) -> set[str]:
    out = git(sandbox / CLONE, "cat-file", "--batch-all-objects", "--batch-check")
    return {line.split()[0] for line in out.splitlines() if line.split()[1] == "blob"}


def _tree(store: Store) -> dict[str, str]:
    out = git(store.root, "ls-tree", "-r", "HEAD")
    return {line.split("\t")[1]: line.split()[2] for line in out.splitlines()}


def _snapshot(folder: Path) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    for dirpath, _, names in os.walk(folder):
        for name in names:
            path = Path(dirpath) / name
            out[str(path.relative_to(folder))] = path.read_bytes()
    return out


def test_sandbox_holds_the_servers_files_and_names_its_url_and_commit(
    store: Store, git_server: GitServer, tmp_path: Path
) -> None:
    store_url = git_server.bare("dana", from_store=store.root)
    sandbox = tmp_path / "sandbox"
    result = materialize_from(store_url, sandbox, BUDGET)
    files = {e.path: e for e in result.files}
    assert files["memory/INDEX.md"].reason == files["memory/sessions/index.md"].reason == "index"
    assert result.bytes <= BUDGET and result.bytes > BUDGET // 2  # the budget is used
    assert {e.reason for e in result.files} >= {"preference", "most-linked", "recent-session"}
    assert not any("/transcripts/" in p for p in files)
    tree = _tree(store)
    for path, entry in files.items():
        data = (sandbox / path).read_bytes()
        assert entry.blob == tree[path] == blob_hash(data)  # the store's version, byte for byte
        assert data == (store.root / path).read_bytes()
    manifest = json.loads((sandbox / MANIFEST).read_text())
    assert (
        manifest["url"] == store_url
        and manifest["commit"] == git_server.head("dana") == result.commit
    )
    assert "store" not in manifest
    # only the blobs the choice weighed were fetched: no transcript, a fraction of the pages
    held = _held_blobs(sandbox)
    transcripts = {b for p, b in tree.items() if "/transcripts/" in p}
    assert not held & transcripts
    assert len(held) < len(tree) // 3
    assert (sandbox / ".receipts").is_dir()  # materialized receipts, as a local sandbox


def test_choice_follows_the_local_planners_order(
    store: Store, git_server: GitServer, tmp_path: Path
) -> None:
    store_url = git_server.bare("dana", from_store=store.root)
    remote = materialize_from(store_url, tmp_path / "remote", BUDGET)
    local = materialize(store, tmp_path / "local", BUDGET)

    def by_reason(result: object, reason: str) -> list[str]:
        return sorted(e.path for e in result.files if e.reason == reason)  # type: ignore[attr-defined]

    assert by_reason(remote, "preference") == by_reason(local, "preference")
    summaries = sorted(p for p in _tree(store) if "/summaries/" in p and p.endswith(".md"))
    chosen = by_reason(remote, "recent-session")
    assert chosen and chosen == summaries[-len(chosen) :]  # the newest sessions
    # the most linked page (INDEX.md's link counts) is in both
    assert "memory/knowledge/people/dana-reyes.md" in {e.path for e in remote.files}
    shared = {e.path for e in remote.files} & {e.path for e in local.files}
    assert len(shared) >= len(local.files) // 2


def test_fetches_far_fewer_bytes_than_a_full_clone(
    store: Store, git_server: GitServer, tmp_path: Path
) -> None:
    git_server.bare("dana", from_store=store.root)
    proxy = ByteProxy(git_server.port)
    try:
        result = materialize_from(proxy.url("dana"), tmp_path / "sandbox", BUDGET)
        fetched, connections = proxy.received, proxy.connections
        proxy.reset()
        git(tmp_path, "clone", "--quiet", "--bare", proxy.url("dana"), str(tmp_path / "full"))
        full = proxy.received
    finally:
        proxy.close()
    assert connections == result.fetches <= 8
    assert fetched * 3 < full, (fetched, full)
    assert 0 < result.fetched_bytes <= fetched


def test_rerun_fetches_only_what_changed(
    store: Store, git_server: GitServer, tmp_path: Path
) -> None:
    store_url = git_server.bare("dana", from_store=store.root)
    sandbox = tmp_path / "sandbox"
    first = materialize_from(store_url, sandbox, BUDGET)
    held = _held_blobs(sandbox)
    again = materialize_from(store_url, sandbox, BUDGET)
    assert again.copied == () and again.removed == () and again.fetches == 1
    assert _held_blobs(sandbox) == held  # nothing fetched but the (unchanged) tip
    page = next(e.path for e in first.files if e.reason == "most-linked")
    with (store.root / page).open("a", encoding="utf-8") as fh:
        fh.write("\nA line added on the server.\n")
    git(store.root, "commit", "--quiet", "-am", "edit one page")
    git(store.root, "push", "--quiet", store_url, "main")
    proxy = ByteProxy(git_server.port)
    try:
        rerun = materialize_from(proxy.url("dana"), sandbox, BUDGET)
    finally:
        proxy.close()
    assert rerun.copied == (page,)
    new = _held_blobs(sandbox) - held
    assert new == {_tree(store)[page]}  # the one changed blob, nothing else
    assert (sandbox / page).read_bytes() == (store.root / page).read_bytes()
    assert proxy.received < 6000  # the new commit, its changed trees and one blob
    assert json.loads((sandbox / MANIFEST).read_text())["commit"] == store.head()


def test_a_sandbox_whose_clone_was_deleted_fetches_again_and_rewrites_nothing(
    store: Store, git_server: GitServer, tmp_path: Path
) -> None:
    store_url = git_server.bare("dana", from_store=store.root)
    sandbox = tmp_path / "sandbox"
    first = materialize_from(store_url, sandbox, BUDGET)
    summary = sorted(p for p in _tree(store) if "/summaries/" in p and p.endswith(".md"))[0]
    shutil.rmtree(sandbox / CLONE)
    added = add_from_url(sandbox, [summary.removeprefix("memory/")])
    assert added.copied == (summary,) and added.commit == first.commit
    assert _held_blobs(sandbox) == {_tree(store)[CONFIG], _tree(store)[summary]}
    shutil.rmtree(sandbox / CLONE)
    again = materialize_from(store_url, sandbox, BUDGET)
    assert again.copied == () and again.files == added.files


def test_the_url_is_not_in_the_clones_config_and_a_password_is_never_shown(
    store: Store, git_server: GitServer, tmp_path: Path
) -> None:
    store_url = git_server.bare("dana", from_store=store.root)
    sandbox = tmp_path / "sandbox"
    materialize_from(store_url, sandbox, BUDGET)
    # the URL goes to git in its environment: a token in it never lands in the sandbox
    assert store_url not in (sandbox / CLONE / "config").read_text()
    assert shown_url("https://agent:tok@git.example.org/d.git") == ("https://git.example.org/d.git")
    secret = f"git://agent:s3cret-token@127.0.0.1:{git_server.port}/dana.git"  # git:// has no users
    with pytest.raises(MemoryFSError, match="cannot fetch") as err:
        materialize_from(secret, tmp_path / "other", BUDGET)
    assert "s3cret" not in str(err.value) and not (tmp_path / "other").exists()


def test_unreachable_server_fails_with_one_line_and_writes_nothing(
    store: Store, git_server: GitServer, tmp_path: Path
) -> None:
    store_url = git_server.bare("dana", from_store=store.root)
    git_server.pause()
    sandbox = tmp_path / "new" / "sandbox"
    with pytest.raises(MemoryFSError) as err:
        materialize_from(store_url, sandbox, BUDGET)
    assert "\n" not in str(err.value) and store_url in str(err.value)
    assert "cannot fetch" in str(err.value)
    assert not (tmp_path / "new").exists()  # not even the folders it would have made
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(MemoryFSError):
        materialize_from(store_url, empty, BUDGET)
    assert list(empty.iterdir()) == []  # no lock, no partial clone, no manifest


def test_unreachable_server_on_a_rerun_leaves_the_sandbox_as_it_was(
    store: Store, git_server: GitServer, tmp_path: Path
) -> None:
    store_url = git_server.bare("dana", from_store=store.root)
    sandbox = tmp_path / "sandbox"
    materialize_from(store_url, sandbox, BUDGET)
    before = _snapshot(sandbox)
    git_server.pause()
    with pytest.raises(MemoryFSError, match="cannot fetch"):
        materialize_from(store_url, sandbox, BUDGET // 2)
    assert _snapshot(sandbox) == before


def test_not_a_memory_store_and_bad_urls_are_refused(git_server: GitServer, tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    git(plain, "init", "--quiet", "--initial-branch=main")
    (plain / "README.md").write_text("hello\n")
    git(plain, "add", "README.md")
    git(plain, "-c", "user.name=T", "-c", "user.email=t@e", "commit", "--quiet", "-m", "x")
    cases = {
        git_server.bare("plain", from_store=plain): "is not a memory store: its main branch has no",
        git_server.bare("empty"): "is not a memory store: it has no main branch",
        git_server.url("missing"): "cannot fetch from",
        "-upload-pack=touch": "is not a Git URL",
    }
    for store_url, message in cases.items():
        sandbox = tmp_path / "sb"
        with pytest.raises(MemoryFSError, match=message) as err:
            materialize_from(store_url, sandbox, BUDGET)
        assert "\n" not in str(err.value)
        assert not sandbox.exists(), store_url


def test_a_server_ignoring_the_blob_filter_is_refused(
    store: Store, git_server: GitServer, tmp_path: Path
) -> None:
    store_url = git_server.bare("dana", from_store=store.root)
    git(git_server.path("dana"), "config", "uploadpack.allowFilter", "false")
    with pytest.raises(MemoryFSError, match="does not serve partial clones"):
        materialize_from(store_url, tmp_path / "sb", BUDGET)
    assert not (tmp_path / "sb").exists()


def test_recall_into_fetches_more_from_the_sandboxs_commit(
    store: Store, git_server: GitServer, tmp_path: Path
) -> None:
    store_url = git_server.bare("dana", from_store=store.root)
    sandbox = tmp_path / "sandbox"
    first = materialize_from(store_url, sandbox, 0)  # the maps only
    assert {e.reason for e in first.files} == {"index"}
    at = first.commit
    # the store moves on after the sandbox was made: a changed transcript is pushed
    transcript = sorted(store.files("sessions/transcripts"))[0]
    old = (store.memory / transcript).read_bytes()
    with (store.memory / transcript).open("a", encoding="utf-8") as fh:
        fh.write("\n## t99 · user · 2023-01-02T23:00\n\nOne more turn.\n")
    git(store.root, "commit", "--quiet", "-am", "a turn more")
    git(store.root, "push", "--quiet", store_url, "main")
    held = _held_blobs(sandbox)
    result = recall(store, "Where did Dana Reyes move?", 400, into=sandbox)
    assert result.files
    got = {e.path: e for e in add_from_url(sandbox, []).files}
    recalled = {p for p, e in got.items() if e.reason == "recall"}
    assert recalled == {f"memory/{p}" for p in result.files}
    for path in recalled:  # fetched at the sandbox's commit, not copied from the store
        assert got[path].blob == git(store.root, "rev-parse", f"{at}:{path}")
    assert _held_blobs(sandbox) - held == {got[p].blob for p in recalled} - held
    if f"memory/{transcript}" in recalled:
        assert (sandbox / "memory" / transcript).read_bytes() == old
    manifest = json.loads((sandbox / MANIFEST).read_text())
    assert manifest["commit"] == at and manifest["url"] == store_url
    # a re-run moves the sandbox to the new tip and keeps the recalled files
    again = materialize_from(store_url, sandbox, 0)
    assert {e.path for e in again.files if e.reason == "recall"} == recalled
    assert again.commit == store.head()


def test_concurrent_runs_on_one_sandbox_do_not_interleave(
    store: Store, git_server: GitServer, tmp_path: Path
) -> None:
    store_url = git_server.bare("dana", from_store=store.root)
    sandbox = tmp_path / "sandbox"
    code = (
        "import sys; from pathlib import Path; "
        "from memoryfs.remote.sandbox import materialize_from; "
        f"materialize_from({store_url!r}, Path({str(sandbox)!r}), {BUDGET})"
    )
    procs = [subprocess.Popen([sys.executable, "-c", code]) for _ in range(3)]
    assert [p.wait(timeout=60) for p in procs] == [0, 0, 0]
    manifest = json.loads((sandbox / MANIFEST).read_text())
    for entry in manifest["files"]:
        assert blob_hash((sandbox / entry["path"]).read_bytes()) == entry["blob"]


def test_adding_from_a_url_to_a_sandbox_made_from_a_local_store_is_refused(
    store: Store, tmp_path: Path
) -> None:
    sandbox = tmp_path / "sandbox"
    materialize(store, sandbox, BUDGET)
    before = _snapshot(sandbox)
    with pytest.raises(MemoryFSError, match="was not materialized from a URL"):
        add_from_url(sandbox, ["INDEX.md"])
    assert _snapshot(sandbox) == before
