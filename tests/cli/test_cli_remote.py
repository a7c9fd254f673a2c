"""``memoryfs clone``/``sync`` and the commands that push, as processes against ``git daemon``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from git_server import GitServer, git

CHAT = '{"role": "user", "content": "I moved to Porto last month.", "ts": "2026-03-02T09:00"}\n'


def _run(app: str, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).with_name(app)
    return subprocess.run(
        [str(exe), *args], cwd=cwd, capture_output=True, text=True, timeout=300, check=False
    )


def test_clone_ingest_dream_run_push_and_sync(
    tmp_path: Path, store_url: str, git_server: GitServer
) -> None:
    r = _run("memoryfs", "clone", store_url, str(tmp_path / "a"), "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["remote"] == store_url
    chat = tmp_path / "2026-03-02-moving.jsonl"
    chat.write_text(CHAT)
    r = _run("memoryfs", "ingest", str(chat), "--store", str(tmp_path / "a"))
    assert r.returncode == 0, r.stderr
    r = _run("dream", "run", "--store", str(tmp_path / "a"), "--json", "-q")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["status"] == "committed" and out["pushed"] == git_server.head("dana")
    assert out["remote"] == store_url and out["tries"] == 1
    assert _run("memoryfs", "clone", store_url, str(tmp_path / "b")).returncode == 0
    r = _run("memoryfs", "sync", "--store", str(tmp_path / "b"), "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["how"] == "same"
    r = _run("memoryfs", "validate", "--store", str(tmp_path / "b"))
    assert r.returncode == 0, r.stdout + r.stderr


def test_each_command_fails_with_one_line_when_the_remote_is_unreachable(
    tmp_path: Path, store_url: str, git_server: GitServer
) -> None:
    assert _run("memoryfs", "clone", store_url, str(tmp_path / "a")).returncode == 0
    a = tmp_path / "a"
    head = git(a, "rev-parse", "HEAD")
    chat = tmp_path / "chat.jsonl"
    chat.write_text(CHAT)
    git_server.pause()
    for app, *args in (
        ("memoryfs", "clone", store_url, str(tmp_path / "b")),
        ("memoryfs", "ingest", str(chat), "--store", str(a)),
        ("memoryfs", "sync", "--store", str(a)),
        ("memoryfs", "forget", "--phrase", "Porto", "--reason", "privacy", "--store", str(a)),
        ("dream", "run", "--store", str(a)),
    ):
        r = _run(app, *args)
        assert r.returncode != 0, (args, r.stdout)
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: cannot reach"), (args, r.stderr)
        assert "Traceback" not in r.stderr
    assert not (tmp_path / "b").exists()
    assert git(a, "rev-parse", "HEAD") == head
    assert git(a, "status", "--porcelain") == ""


def test_forget_purge_on_a_clone_force_pushes_the_rewritten_history(
    tmp_path: Path, store_url: str, git_server: GitServer
) -> None:
    a = tmp_path / "a"
    assert _run("memoryfs", "clone", store_url, str(a)).returncode == 0
    chat = tmp_path / "chat.jsonl"
    chat.write_text(CHAT.replace("Porto", "12 Blue Heron Lane"))
    assert _run("memoryfs", "ingest", str(chat), "--store", str(a)).returncode == 0
    old = git_server.head("dana")
    r = _run(
        "memoryfs", "forget", "--phrase", "Blue Heron Lane", "--reason", "privacy",
        "--purge-history", "--yes", "--store", str(a), "--json",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    new = git_server.head("dana")
    assert json.loads(r.stdout)["pushed"] == new != old
    assert git(git_server.path("dana"), "log", "-1", "--format=%s", "main").startswith("purge: ")
    fresh = tmp_path / "fresh"
    git(tmp_path, "clone", "-q", store_url, str(fresh))
    assert "Heron" not in git(fresh, "log", "-p", "--all")


def test_a_forget_on_a_clone_is_verified_and_pushed(
    tmp_path: Path, store_url: str, git_server: GitServer
) -> None:
    from memoryfs.remote import clone_store

    a = clone_store(store_url, tmp_path / "a")
    a.ingest(
        [{"role": "user", "content": "My old address was 12 Blue Heron Lane.", "ts": "2026-03-04"}],
        session_id="2026-03-04-address",
    )
    args = ("forget", "--phrase", "Blue Heron Lane", "--reason", "privacy", "--store", str(a.root))
    r = _run("memoryfs", *args, "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["pushed"] == git_server.head("dana") == a.head()
    tip = git(git_server.path("dana"), "grep", "-i", "heron", "main", check=False)
    assert tip == ""  # the remote's main no longer holds it (its history does, until a purge)
