"""The LLM engine against a real OpenAI-compatible HTTP server on 127.0.0.1.

The server (``openai_server``) replays scripted answers per session: good answers,
malformed JSON, a claim citing the wrong turn, a timeout, 429 and 5xx. Each case ends
as ``dream.engines.llm.engine`` documents it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from dream_fixtures import add_sessions, approved_store
from openai_server import ScriptedServer, answer, hang, status, text
from typer.testing import CliRunner

from cli.dream_app import app
from dream.engines.llm.client import ChatClient, LLMSettings
from dream.engines.llm.engine import LLMEngine
from dream.engines.llm.schema import Malformed, parse_answer
from dream.errors import DreamError
from dream.phases.orient import find_pending
from dream.runner import run_dream
from dream.skills import active_skill_path, approve
from memoryfs.store.store import Store, init_store
from memoryfs.validate.rules import validate_store

S1 = ("2026-01-05-figures", "2026-01-05", ["I need the figures as PDF for Reefsong.", "Sure."])
S2 = ("2026-01-06-marta", "2026-01-06", ["Marta is a nurse at the UKE in Hamburg.", "Noted."])
S3 = ("2026-01-07-kyoto", "2026-01-07", ["We fly to Kyoto on 3 March with Ines.", "Great."])

GOOD: dict[str, dict[str, Any]] = {
    S1[0]: {
        "summary": {
            "title": "Figures for Reefsong",
            "key_points": [{"text": "Dana needs the figures as PDF for Reefsong.", "turn": 1}],
            "outcome": None,
            "open_threads": [],
        },
        "facts": [],
    },
    S2[0]: {
        "summary": {
            "title": "Marta in Hamburg",
            "key_points": [{"text": "Marta is a nurse at the UKE in Hamburg.", "turn": 1}],
            "outcome": {"text": "Noted.", "turn": 2},
            "open_threads": [],
        },
        "facts": [
            {
                "subject": "Marta",
                "type": "person",
                "kind": "fact",
                "slot": "role",
                "text": "Marta works as a nurse at the UKE in Hamburg.",
                "turn": 1,
            }
        ],
    },
    S3[0]: {
        "summary": {
            "title": "Trip to Kyoto",
            "key_points": [{"text": "Dana flies to Kyoto on 3 March with Ines.", "turn": 1}],
            "outcome": None,
            "open_threads": [],
        },
        "facts": [],
    },
}


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    pytest.importorskip("openai")
    srv = ScriptedServer().start()
    yield srv
    srv.close()


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return approved_store(tmp_path, [S1, S2])


def settings(server: ScriptedServer, **kw: Any) -> LLMSettings:
    base: dict[str, Any] = {"model": "test-model", "base_url": server.base_url, "backoff": 0.01}
    return LLMSettings(**(base | kw))


def head(store: Store) -> str:
    return store.repo.head.commit.hexsha


def last_message(store: Store) -> str:
    return str(store.repo.head.commit.message)


def pending(store: Store) -> list[str]:
    return [p.id for p in find_pending(store, head(store))[0]]


def test_good_answers_commit_with_tokens_in_trailer_and_json(
    server: ScriptedServer, store: Store
) -> None:
    for sid in (S1[0], S2[0]):
        server.script[sid].append(answer(GOOD[sid]))
    args = ["run", "--engine", "llm", "--base-url", server.base_url, "--model", "test-model"]
    args += ["--price-per-1k", "0.5", "--json", "--store", str(store.root)]
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["status"] == "committed" and out["engine"] == "llm/1:test-model"
    assert out["tokens"] == 240 and out["cost"] == pytest.approx(0.12)
    assert out["rejected"] == [] and pending(store) == []
    message = last_message(store)
    assert "Dream-Tokens: 240 (cost 0.1200)" in message
    assert "Dream-Engine: llm/1:test-model" in message
    assert validate_store(store) == []
    marta = (store.memory / "knowledge/people/marta.md").read_text()
    assert "Marta works as a nurse at the UKE in Hamburg. [cite:1]" in marta
    # The skill is the system prompt; the session goes with numbered turns.
    request = server.for_session(S2[0])[0]
    skill = active_skill_path()
    assert skill is not None
    system, user = request["messages"][0]["content"], request["messages"][1]["content"]
    assert system.startswith(skill.read_text().strip()[:200])
    assert "[t1] Dana (user)" in user and "Marta is a nurse" in user
    assert "The user is Dana; the assistant is Atlas." in user
    assert request["response_format"] == {"type": "json_object"}


def test_malformed_json_is_retried_then_the_session_stays_pending(
    server: ScriptedServer, store: Store
) -> None:
    server.script[S1[0]].extend([text("not json {"), text("```json\n[1, 2]\n```"), text("{")])
    server.script[S2[0]].extend([text("{'summary': oops"), answer(GOOD[S2[0]])])
    result = run_dream(store, LLMEngine(settings(server)))
    assert result.status == "committed", result.problems
    assert result.sessions == (S2[0],)
    assert pending(store) == [S1[0]]
    assert len(server.for_session(S1[0])) == 3  # 1 + json_retries (2)
    retry = server.for_session(S2[0])[1]["messages"]
    assert retry[-2]["role"] == "assistant" and "not valid JSON" in retry[-1]["content"]
    assert any("model answer unusable" in r and S1[0] in r for r in result.rejected)
    assert result.tokens == 5 * 120


def test_no_usable_answer_at_all_fails_the_run(server: ScriptedServer, store: Store) -> None:
    server.default = text("I am not JSON")
    before = head(store)
    with pytest.raises(DreamError, match="no usable answer for any of 2 pending sessions"):
        run_dream(store, LLMEngine(settings(server, json_retries=0)))
    assert head(store) == before and len(pending(store)) == 2


def test_a_claim_citing_the_wrong_turn_is_rejected_and_the_rest_committed(
    server: ScriptedServer, store: Store
) -> None:
    bad = json.loads(json.dumps(GOOD[S2[0]]))
    bad["facts"].append(
        {
            "subject": "Marta",
            "type": "person",
            "kind": "fact",
            "slot": "city",
            "text": "Marta lives in Hamburg.",
            "turn": 2,
        }  # fmt: skip
    )
    bad["summary"]["key_points"].append({"text": "Marta moved to Lisbon.", "turn": 1})
    bad["summary"]["open_threads"].append({"text": "Ask about the UKE.", "turn": 9})
    server.script[S1[0]].append(answer(GOOD[S1[0]]))
    server.script[S2[0]].append(answer(bad))
    r = CliRunner().invoke(
        app,
        ["run", "--engine", "llm", "--base-url", server.base_url, "--model", "m"]
        + ["--store", str(store.root)],
    )
    assert r.exit_code == 0, r.stderr
    rejected = [line for line in r.stdout.splitlines() if line.startswith("rejected: ")]
    assert len(rejected) == 3, r.stdout
    assert any("fact 2" in line and "DV101" in line and "t2" in line for line in rejected)
    assert any("key point 2" in line and "Lisbon" in line for line in rejected)
    assert any("t9, which the session does not have" in line for line in rejected)
    assert r.stdout.splitlines()[-1].startswith("dream: 2 sessions summarized")
    tree = "\n".join(p.read_text() for p in store.memory.rglob("*.md"))
    assert "Lisbon" not in tree and "lives in Hamburg" not in tree
    assert "Marta works as a nurse" in tree
    assert validate_store(store) == []


def test_a_timeout_is_retried_then_the_run_stops_and_keeps_what_was_answered(
    server: ScriptedServer, store: Store
) -> None:
    server.script[S1[0]].append(answer(GOOD[S1[0]]))
    server.script[S2[0]].extend([hang(1.0), hang(1.0)])
    engine = LLMEngine(settings(server, timeout=0.3, retries=1))
    result = run_dream(store, engine)
    assert result.status == "committed" and result.sessions == (S1[0],)
    assert result.stopped == "endpoint" and pending(store) == [S2[0]]
    assert any("timed out after 2 attempts" in r for r in result.rejected)
    assert "1 sessions still pending" in result.message


def test_an_endpoint_down_from_the_start_fails_the_run_and_leaves_main(
    server: ScriptedServer, store: Store
) -> None:
    server.default = status(503)
    before = head(store)
    with pytest.raises(DreamError, match=r"HTTP 503 .* after 3 attempts; nothing committed"):
        run_dream(store, LLMEngine(settings(server, retries=2)))
    assert head(store) == before
    assert len(server.requests) == 3


def test_429_honours_retry_after_and_5xx_backs_off(server: ScriptedServer, store: Store) -> None:
    server.script[S1[0]].extend([status(429, retry_after="2"), answer(GOOD[S1[0]])])
    server.script[S2[0]].extend([status(500), status(502), answer(GOOD[S2[0]])])
    sleeps: list[float] = []
    s = settings(server, backoff=0.25, max_backoff=5)
    result = run_dream(store, LLMEngine(s, client=ChatClient(s, sleep=sleeps.append)))
    assert result.status == "committed" and len(result.sessions) == 2
    assert sleeps == [2.0, 0.25, 0.5]  # Retry-After, then exponential backoff
    assert result.tokens == 240  # failed requests cost nothing


def test_auth_errors_are_not_retried(server: ScriptedServer, store: Store) -> None:
    server.default = status(401)
    with pytest.raises(DreamError, match="HTTP 401.*MEMORYFS_LLM_API_KEY"):
        run_dream(store, LLMEngine(settings(server)))
    assert len(server.requests) == 1


def test_max_tokens_stops_the_run_cleanly(server: ScriptedServer, tmp_path: Path) -> None:
    s = init_store(tmp_path / "s3", "dana", "atlas")
    approve(s, by="tests")
    add_sessions(s, tmp_path / "in3", [S1, S2, S3])
    for sid in GOOD:
        server.script[sid].append(answer(GOOD[sid]))
    result = run_dream(s, LLMEngine(settings(server, max_tokens=200)))
    assert result.status == "committed"
    assert result.sessions == (S1[0], S2[0]) and result.stopped == "max-tokens"
    assert result.tokens == 240 and pending(s) == [S3[0]]
    assert "Dream-Tokens: 240" in last_message(s)
    assert len(server.requests) == 2


def test_missing_openai_package_is_one_clear_error(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "openai", None)  # import openai -> ImportError
    with pytest.raises(DreamError, match=r"pip install '\.\[llm\]'"):
        run_dream(store, LLMEngine(LLMSettings(model="m", base_url="http://127.0.0.1:9/v1")))


def test_cli_needs_a_model_and_rejects_options_of_other_engines(store: Store) -> None:
    runner = CliRunner()
    r = runner.invoke(app, ["run", "--engine", "llm", "--store", str(store.root)], env={})
    assert r.exit_code == 1 and "needs a model" in r.stderr
    r = runner.invoke(app, ["run", "--model", "m", "--store", str(store.root)])
    assert r.exit_code == 1 and "--model only apply to --engine llm" in r.stderr


def test_settings_from_env_lose_to_options() -> None:
    env = {"MEMORYFS_LLM_MODEL": "a", "MEMORYFS_LLM_BASE_URL": "http://x/v1",
           "MEMORYFS_LLM_MAX_TOKENS": "500", "OPENAI_API_KEY": "k"}  # fmt: skip
    s = LLMSettings.from_env(env, model="b", max_tokens=None)
    assert (s.model, s.base_url, s.max_tokens, s.api_key) == ("b", "http://x/v1", 500, "k")
    with pytest.raises(DreamError, match="MEMORYFS_LLM_TIMEOUT"):
        LLMSettings.from_env({"MEMORYFS_LLM_TIMEOUT": "soon"})


@pytest.mark.parametrize(
    "raw",
    [
        "",
        "[]",
        '{"summary": []}',
        '{"summary": {"title": "x", "key_points": [{"text": "y"}]}}',
        '{"summary": {"title": "x", "key_points": []}, "facts": [{"subject": "A", "type": "alien",'
        ' "kind": "fact", "text": "t", "turn": 1}]}',
    ],  # fmt: skip
)
def test_parser_rejects_malformed_shapes(raw: str) -> None:
    with pytest.raises(Malformed):
        parse_answer(raw)


def test_engine_is_importable_without_openai() -> None:
    code = (
        "import sys; sys.modules['openai'] = None; import dream.engines.llm.engine, cli.dream_app"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
