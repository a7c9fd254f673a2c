"""The fleet's settings from flags and the environment, and a Redis that does not answer."""

from __future__ import annotations

from pathlib import Path

import pytest
from loopback import free_port

pytest.importorskip("celery", reason="the [fleet] extra is not installed")
pytest.importorskip("redis", reason="the [fleet] extra is not installed")

from dream.fleet.app import backoff  # noqa: E402
from dream.fleet.config import FleetConfig, FleetError, connect, safe_url  # noqa: E402


def test_flags_win_over_the_environment_over_the_defaults(tmp_path: Path) -> None:
    env = {
        "DREAM_REDIS_URL": "redis://10.0.0.5:6379/1",
        "DREAM_FLEET_SCRATCH": str(tmp_path / "clones"),
        "DREAM_FLEET_LOCK_TTL": "45",
        "DREAM_FLEET_MAX_RETRIES": "2",
        "DREAM_FLEET_ENGINE": "llm",
    }
    config = FleetConfig.from_env(env, engine="embedded", max_retries=None)
    assert config.redis_url == "redis://10.0.0.5:6379/1"
    assert config.scratch == tmp_path / "clones" and config.lock_ttl == 45.0
    assert (config.max_retries, config.engine) == (2, "embedded")
    assert config.key("lock", "u") == "dream:fleet:lock:u"


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"DREAM_REDIS_URL": "http://x"}, "is not a Redis URL"),
        ({"DREAM_FLEET_LOCK_TTL": "soon"}, "DREAM_FLEET_LOCK_TTL='soon' is not a number"),
        ({"DREAM_FLEET_NIGHTLY_HOUR": "24"}, "the nightly hour must be 0-23"),
        ({"DREAM_FLEET_VISIBILITY_TIMEOUT": "600"}, "visibility_timeout (600s) must exceed"),
    ],
)
def test_bad_settings_are_one_line(env: dict[str, str], message: str) -> None:
    with pytest.raises(FleetError) as info:
        FleetConfig.from_env(env)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_a_password_never_reaches_a_message() -> None:
    assert safe_url("redis://:s3cret@db:6379/0") == "redis://:***@db:6379/0"
    assert safe_url("rediss://fleet:s3cret@db/0") == "rediss://fleet:***@db/0"
    with pytest.raises(FleetError) as info:
        FleetConfig.from_env({"DREAM_REDIS_URL": "http://u:s3cret@db"})
    assert "s3cret" not in str(info.value)


def test_redis_down_is_one_line_naming_the_url() -> None:
    url = f"redis://:s3cret@127.0.0.1:{free_port()}/0"
    with pytest.raises(FleetError) as info:
        connect(FleetConfig(redis_url=url), timeout=1)
    text = str(info.value)
    assert text.startswith(f"cannot reach Redis at redis://:***@127.0.0.1:{url.split(':')[-1]}")
    assert "\n" not in text and "s3cret" not in text


def test_the_retry_countdown_doubles_up_to_its_cap_with_jitter() -> None:
    config = FleetConfig(backoff=10, backoff_max=100)
    waits = [[backoff(n, config) for _ in range(50)] for n in range(6)]
    for n, got in enumerate(waits):
        full = min(100, 10 * 2**n)
        assert all(full / 2 <= w <= full for w in got), (n, got)
    assert len(set(waits[0])) > 1  # jitter: stores that failed together come back apart
