"""``dream fleet`` through CliRunner: without Redis or the extra, one line and exit 1 with
nothing written; with a real redis-server, the registry, the queue and the status as JSON."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from git_server import GitServer, git
from loopback import free_port
from redis_server import RedisServer, have_redis_server
from typer.testing import CliRunner, Result

from cli.dream_app import app

URL = "git@git.example.com:users/dana.git"


def fleet(*args: str) -> Result:
    return CliRunner().invoke(app, ["fleet", *args])


def _one_error_line(r: Result, text: str) -> None:
    assert r.exit_code == 1, r.output
    assert r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and text in lines[0], r.stderr


COMMANDS = {
    "worker": ["worker", "--scratch", "{tmp}/scratch"],
    "beat": ["beat", "--scratch", "{tmp}/scratch"],
    "enqueue": ["enqueue", URL],
    "enqueue --changed": ["enqueue", "--changed"],
    "status": ["status", "--json"],
    "add": ["add", URL],
    "remove": ["remove", URL],
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_without_redis_every_command_is_one_line_and_writes_nothing(
    command: str, tmp_path: Path
) -> None:
    pytest.importorskip("redis", reason="the [fleet] extra is not installed")
    down = f"redis://127.0.0.1:{free_port()}/0"
    args = [a.format(tmp=tmp_path) for a in COMMANDS[command]]
    _one_error_line(fleet(*args, "--redis", down), f"cannot reach Redis at {down}")
    assert list(tmp_path.iterdir()) == []


def test_without_the_extra_the_line_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "celery", None)  # as if not installed
    monkeypatch.setitem(sys.modules, "redis", None)
    _one_error_line(fleet("status"), "pip install 'memoryfs[fleet]'")


def test_a_bad_redis_url_or_no_store_to_queue_are_usage_errors() -> None:
    _one_error_line(fleet("status", "--redis", "http://127.0.0.1:1"), "is not a Redis URL")
    r = fleet("enqueue", "--redis", "redis://127.0.0.1:1/0")
    assert r.exit_code == 2 and "give the store URLs to queue, or --changed" in r.stderr


def test_a_worker_with_an_engine_that_does_not_load_does_not_start(tmp_path: Path) -> None:
    r = fleet("worker", "--engine", "no_such_module:Engine", "--scratch", str(tmp_path / "s"))
    _one_error_line(r, "engine 'no_such_module:Engine' is not available")
    assert list(tmp_path.iterdir()) == []


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    pytest.importorskip("celery", reason="the [fleet] extra is not installed")
    pytest.importorskip("redis", reason="the [fleet] extra is not installed")
    if not have_redis_server():
        pytest.skip("redis-server is not installed (Debian: apt-get install redis-server)")
    with RedisServer() as server:
        yield server.url


def test_the_registry_the_queue_and_the_status(redis_url: str, tmp_path: Path) -> None:
    import redis

    client = redis.Redis.from_url(redis_url, decode_responses=True)
    client.flushall()
    r = fleet("add", URL, "git://h/b.git", "--redis", redis_url, "--json")
    assert r.exit_code == 0 and json.loads(r.stdout) == {"added": [URL, "git://h/b.git"]}
    assert fleet("add", URL, "--redis", redis_url).stdout == "nothing new\n"
    r = fleet("remove", "git://h/b.git", "--redis", redis_url, "--json")
    assert json.loads(r.stdout) == {"removed": ["git://h/b.git"]}
    r = fleet("enqueue", URL, "--redis", redis_url)
    assert r.exit_code == 0 and r.stdout == f"queued {URL}\n"
    assert client.llen("dream-fleet") == 1  # the Celery message, for a worker to take
    r = fleet("status", "--redis", redis_url, "--json")
    (rec,) = json.loads(r.stdout)["stores"]
    assert (rec["url"], rec["state"], rec["pending"], rec["failures"]) == (URL, "queued", None, 0)
    human = fleet("status", "--redis", redis_url).stdout
    assert f"{URL}  queued  last run -  pending unknown  failures 0" in human
    listed = tmp_path / "stores.txt"
    listed.write_text(f"{URL}\n", encoding="utf-8")
    r = CliRunner().invoke(
        app,
        ["fleet", "add", "git://h/c.git", "--redis", redis_url],
        env={"DREAM_FLEET_REGISTRY_FILE": str(listed)},
    )
    _one_error_line(r, f"the registry is the file {listed}: edit it")
    assert listed.read_text(encoding="utf-8") == f"{URL}\n"


def test_enqueue_changed_queues_the_moved_store_and_names_the_unreachable_one(
    redis_url: str, tmp_path: Path
) -> None:
    import redis

    redis.Redis.from_url(redis_url).flushall()
    server = GitServer(tmp_path / "server")
    try:
        work = tmp_path / "work"
        git(tmp_path, "init", "--quiet", "--initial-branch=main", str(work))
        git(work, "commit", "--quiet", "--allow-empty", "-m", "one")
        moved = server.bare("moved", from_store=work)
        gone = f"git://127.0.0.1:{server.port}/missing.git"
        r = fleet("enqueue", "--changed", moved, gone, "--redis", redis_url, "--json")
        assert r.exit_code == 1
        data = json.loads(r.stdout)
        assert (data["checked"], data["changed"], data["queued"]) == (2, [moved], [moved])
        assert r.stderr.count("unreachable: ") == 1 and gone in r.stderr
        again = fleet("enqueue", "--changed", moved, "--redis", redis_url, "--json")
        assert again.exit_code == 0 and json.loads(again.stdout)["queued"] == []  # waits already
        client = redis.Redis.from_url(redis_url)
        client.delete(f"dream:fleet:queued:{moved}")  # a worker took it...
        client.set(f"dream:fleet:lock:{moved}", "token")  # ...and runs it now
        running = fleet("enqueue", "--changed", moved, "--redis", redis_url)
        assert running.exit_code == 0 and running.stdout.startswith("queued or running already")
    finally:
        server.close()
