"""The nightly window with per-store jitter, once a night, and the 'changed' sweep's tips."""

from __future__ import annotations

import datetime as dt
import statistics
from pathlib import Path

import pytest
from git_server import GitServer, git

pytest.importorskip("celery", reason="the [fleet] extra is not installed")
redis = pytest.importorskip("redis", reason="the [fleet] extra is not installed")

from dream.fleet import schedule  # noqa: E402
from dream.fleet.config import FleetConfig  # noqa: E402
from dream.fleet.status import StoreStatus  # noqa: E402

URLS = [f"git@git.example:users/u{i:05d}.git" for i in range(4000)]
WIDTH = 3 * 3600.0


def test_jitter_spreads_thousands_of_stores_evenly_and_is_stable() -> None:
    offsets = [schedule.jitter_offset(u, WIDTH) for u in URLS]
    assert offsets == [schedule.jitter_offset(u, WIDTH) for u in URLS]
    assert all(0 <= o < WIDTH for o in offsets)
    per_quarter = [sum(q * WIDTH / 4 <= o < (q + 1) * WIDTH / 4 for o in offsets) for q in range(4)]
    assert all(900 <= n <= 1100 for n in per_quarter), per_quarter  # 1000 each, give or take
    assert abs(statistics.mean(offsets) - WIDTH / 2) < WIDTH * 0.03


def _at(hour: int, minute: int = 0, day: int = 5) -> dt.datetime:
    return dt.datetime(2026, 12, day, hour, minute, tzinfo=dt.UTC)


def test_a_store_is_due_from_its_start_until_the_catch_up_ends() -> None:
    url = URLS[0]
    start = _at(2) + dt.timedelta(seconds=schedule.jitter_offset(url, WIDTH))
    before = start - dt.timedelta(seconds=1)
    assert schedule.nightly_due([url], before, 2, WIDTH) == []
    assert schedule.nightly_due([url], start, 2, WIDTH) == [(url, "2026-12-05")]
    late = start + dt.timedelta(hours=11)
    assert schedule.nightly_due([url], late, 2, WIDTH) == [(url, "2026-12-05")]
    assert schedule.nightly_due([url], start + dt.timedelta(hours=13), 2, WIDTH) == []


def test_a_window_across_midnight_belongs_to_the_night_it_opened() -> None:
    url = next(u for u in URLS if schedule.jitter_offset(u, WIDTH) > 2 * 3600)
    start = _at(23) + dt.timedelta(seconds=schedule.jitter_offset(url, WIDTH))
    assert start.day == 6
    assert schedule.nightly_due([url], start, 23, WIDTH) == [(url, "2026-12-05")]


def test_at_the_window_all_stores_are_due_within_it_and_claimed_once(redis_url: str) -> None:
    due_at_open = schedule.nightly_due(URLS, _at(2), 2, WIDTH)
    due_at_end = schedule.nightly_due(URLS, _at(5), 2, WIDTH)
    assert len(due_at_open) < 10 and len(due_at_end) == len(URLS)
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    config = FleetConfig(redis_url=redis_url)
    assert schedule.claim_nightly(client, config, URLS[0], "2026-12-05")
    assert not schedule.claim_nightly(client, config, URLS[0], "2026-12-05")  # a second beat
    assert schedule.claim_nightly(client, config, URLS[0], "2026-12-06")  # the next night


def test_changed_are_the_stores_whose_main_moved_and_unreachable_ones_are_named(
    git_server: GitServer, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    git(tmp_path, "init", "--quiet", "--initial-branch=main", str(work))
    git(work, "commit", "--quiet", "--allow-empty", "-m", "one")
    a, b = git_server.bare("a", from_store=work), git_server.bare("b", from_store=work)
    empty = git_server.bare("empty")
    gone = f"git://127.0.0.1:{git_server.port}/missing.git"
    tip = git(work, "rev-parse", "HEAD")
    tips = schedule.remote_tips([a, b, empty, gone], threads=4)
    assert [t.commit for t in tips] == [tip, tip, "", ""]
    assert tips[3].error and not tips[0].error
    known = [StoreStatus(url=a, seen=tip), StoreStatus(url=b, seen="0" * 40)]
    assert schedule.changed(tips, known) == [b]  # a: its last run left this main; empty: no main
    git_server.pause()
    down = schedule.remote_tips([a], timeout=5)
    assert down[0].commit == "" and down[0].error
