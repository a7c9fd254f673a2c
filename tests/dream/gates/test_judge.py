"""The model judge of the semantic gate against a real OpenAI-compatible HTTP server.

The server (``openai_server``) plays a model whose verdict the test scripts per claim:
entailed, contradicted, unrelated, unclear; a malformed reply; a reply that comes too
late. Each case ends as ``dream.gates.judge`` documents it, through ``verify_stage``
and through ``dream run`` (the leave-out drops a claim the judge rejects).
"""

from __future__ import annotations

import json
import logging
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from dream_fixtures import add_sessions
from gate_fixtures import PATH, dana_page, one_session_store
from openai_server import ScriptedServer, Step, answer, hang, text
from typer.testing import CliRunner

from cli.dream_app import app
from dream.engines.llm.client import LLMSettings
from dream.engines.llm.engine import LLMEngine
from dream.errors import DreamError
from dream.gates import GateReport
from dream.gates.judge import (
    NAME,
    SYSTEM,
    Judge,
    Malformed,
    judge_for,
    parse_verdicts,
)
from dream.gates.verification import verify_stage
from dream.landing.staging import Change
from dream.runner import run_dream
from dream.skills import approve
from memoryfs.errors import MemoryFSError
from memoryfs.store.config import VerifySettings, load_config
from memoryfs.store.store import Store, init_store

MOVE = "2026-02-10-move"
TURNS = [
    "I moved to Porto to join the Tidewater lab.",
    "I'm not a fan of sushi at all.",
    "My sister Ines has two kids.",
]
# the deterministic floor lets each of these through: a word changed, a relation turned
# round, a detail added; only the judge reads them as meant
ENTAILED = "Moved to Porto to join the Tidewater lab."
CONTRADICTED = "Is not a fan of sushi, only of sashimi."
UNRELATED = "Ines has two sisters."
UNCLEAR = "Dana's sister Ines has two kids, both at school."
_ITEM_RE = re.compile(r"^Item (\S+)\n(?:Page: .*\n)?Claim: (.*)$", re.MULTILINE)


class Model:
    """The judge's side of the server: a verdict per claim (by a part of its text),
    "yes" for any other; ``steps``: a claim whose batch gets that reply instead."""

    def __init__(self) -> None:
        self.verdicts: dict[str, tuple[str, str]] = {}
        self.steps: dict[str, Step] = {}
        self.asked: list[list[str]] = []  # the claims of each judge request

    def __call__(self, body: dict[str, Any]) -> Step | None:
        messages = body["messages"]
        if messages[0]["content"] != SYSTEM:
            return None  # not the judge: the engine's script answers
        items = _ITEM_RE.findall(messages[1]["content"])
        self.asked.append([claim for _, claim in items])
        for part, step in self.steps.items():
            if any(part in claim for _, claim in items):
                return step
        out = []
        for item_id, claim in items:
            verdict, reason = next(
                (v for part, v in self.verdicts.items() if part in claim), ("yes", "said so")
            )
            out.append({"id": item_id, "verdict": verdict, "reason": reason})
        return answer({"verdicts": out})

    @property
    def claims(self) -> list[str]:
        return [c for batch in self.asked for c in batch]


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    pytest.importorskip("openai")
    srv = ScriptedServer().start()
    srv.responder = Model()
    yield srv
    srv.close()


def model(server: ScriptedServer) -> Model:
    assert isinstance(server.responder, Model)
    return server.responder


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return one_session_store(tmp_path, MOVE, TURNS)


def configure(store: Store, verify: str) -> Store:
    """``store`` with ``verify`` as its ``[verify]`` section (committed), reopened."""
    config = store.root / "memory.toml"
    before = config.read_text().split("\n[verify]\n")[0]  # the section comes last
    config.write_text(before + f"\n[verify]\n{verify}\n")
    store.commit("judge", ["memory.toml"])
    return Store.open(store.root)


def verify_section(server: ScriptedServer, **extra: Any) -> str:
    keys = {"endpoint": server.base_url, "model": "judge-model", "timeout": 5, **extra}
    return "\n".join(f"{k} = {json.dumps(v)}" for k, v in keys.items())


def a_judge(store: Store, server: ScriptedServer, **extra: Any) -> tuple[Store, Judge]:
    store = configure(store, verify_section(server, **extra))
    judge = judge_for(store)
    assert judge is not None
    return store, judge


def write_page(store: Store, claims: list[tuple[str, int]]) -> dict[str, int]:
    """The Dana page with ``claims`` (text, cited turn); the file line of each claim."""
    body = "\n## Facts\n\n" + "".join(f"- {c} [cite:{n}]\n" for c, n in claims)
    text = dana_page(MOVE, TURNS, body)
    (store.root / PATH).write_text(text)
    lines = text.split("\n")
    return {
        c: next(i + 1 for i, x in enumerate(lines) if x.startswith(f"- {c}")) for c, _ in claims
    }


def gate(store: Store, judge: Judge | None, base: str) -> GateReport:
    return verify_stage(store, store.root, base, [Change("A", PATH)], judge)


ALL = [(ENTAILED, 1), (CONTRADICTED, 2), (UNRELATED, 3), (UNCLEAR, 3)]


def script_verdicts(server: ScriptedServer) -> None:
    model(server).verdicts.update(
        {
            CONTRADICTED: ("no", "Dana says she is not a fan of sushi."),
            UNRELATED: ("no", "The turn is about Ines's kids, not a cello."),
            UNCLEAR: ("unclear", "The turn does not say whether Ines likes her job."),
        }
    )


# -- verdicts ---------------------------------------------------------------------------


def test_entailed_passes_contradicted_and_unrelated_are_dv301_unclear_dv302(
    store: Store, server: ScriptedServer
) -> None:
    store, judge = a_judge(store, server)
    base = store.head()
    script_verdicts(server)
    lines = write_page(store, ALL)
    report = gate(store, judge, base)
    found = {(p.line, p.code) for p in report.problems}
    assert found == {
        (lines[CONTRADICTED], "DV301"),
        (lines[UNRELATED], "DV301"),
        (lines[UNCLEAR], "DV302"),
    }
    by_line = {p.line: p.message for p in report.problems}
    ref = "sessions/transcripts/2026-02-10-move.md"
    assert by_line[lines[CONTRADICTED]] == (
        f"the model judge finds the claim not entailed by its cited turns (cites [2] {ref}#t2): "
        "Dana says she is not a fan of sushi."
    )
    assert "cannot tell" in by_line[lines[UNCLEAR]] and "likes her job" in by_line[lines[UNCLEAR]]
    stats = report.stats
    assert (stats["claims_judged"], stats["judge_rejected"]) == (4, 3)
    assert (stats["judge_cached"], stats["judge_fallback"]) == (0, 0)
    # one request for the four claims, each under its id, with the page and the turns
    assert len(server.requests) == 1
    request = server.requests[0]
    assert request["model"] == "judge-model"
    assert request["response_format"] == {"type": "json_object"}
    user = request["messages"][1]["content"]
    assert "Item c1\nPage: Dana (person)\nClaim: Moved to Porto" in user
    assert f"[{ref}#t2] Dana (user), 2026-02-10T09:00: I'm not a fan of sushi at all." in user
    assert [i for i, _ in _ITEM_RE.findall(user)] == ["c1", "c2", "c3", "c4"]


def test_claims_the_floor_rejects_or_the_base_held_are_not_asked(
    store: Store, server: ScriptedServer
) -> None:
    store, judge = a_judge(store, server)
    write_page(store, [(ENTAILED, 1)])
    base = store.commit("the page", [PATH])
    write_page(store, [(ENTAILED, 1), ("Works with Gunther.", 1), (CONTRADICTED, 2)])
    report = verify_stage(store, store.root, base, [Change("M", PATH)], judge)
    assert [p.code for p in report.problems] == ["DV101"]  # Gunther: the floor's
    assert model(server).claims == [CONTRADICTED]


def test_batches_hold_at_most_batch_claims(store: Store, server: ScriptedServer) -> None:
    store, judge = a_judge(store, server, batch=3)
    base = store.head()
    write_page(store, [*ALL, ("Lives in Porto.", 1)])
    report = gate(store, judge, base)
    assert report.ok and report.stats["claims_judged"] == 5
    assert [len(b) for b in model(server).asked] == [3, 2]


# -- failure: the floor alone, and the run says so -----------------------------------------


MALFORMED = [
    "not json {",
    '[{"id": "c1", "verdict": "yes"}]',
    '{"verdicts": [{"id": "c1", "verdict": "yes", "reason": "ok"}]}',  # c2 missing
    '{"verdicts": [{"id": "c1", "verdict": "maybe"}, {"id": "c2", "verdict": "yes"}]}',
    '{"verdicts": [{"id": "c1", "verdict": "yes"}, {"id": "c9", "verdict": "yes"}]}',
    '{"verdicts": [{"id": "c1", "verdict": "yes"}, {"id": "c1", "verdict": "no"}]}',
]


@pytest.mark.parametrize("reply", MALFORMED)
def test_a_malformed_reply_falls_back_to_the_floor_and_says_so(
    store: Store, server: ScriptedServer, reply: str, caplog: pytest.LogCaptureFixture
) -> None:
    store, judge = a_judge(store, server)
    base = store.head()
    model(server).steps[CONTRADICTED] = text(reply)
    write_page(store, [(ENTAILED, 1), (CONTRADICTED, 2)])
    with caplog.at_level(logging.WARNING, logger="dream.judge"):
        report = gate(store, judge, base)
    assert report.ok  # the floor passes both
    assert report.stats["judge_fallback"] == 2 and report.stats["claims_judged"] == 0
    assert any("malformed reply" in r.getMessage() for r in caplog.records)
    assert "model judge gave no verdict on 2 claims (malformed reply" in judge.fallback_note()
    assert judge.summary()["judge_fallback"] == 2
    # not cached: the next run asks again
    server.responder = Model()
    again = judge_for(store)
    assert again is not None
    assert gate(store, again, base).stats["claims_judged"] == 2


def test_a_timeout_falls_back_and_the_endpoint_is_not_asked_again(
    store: Store, server: ScriptedServer, caplog: pytest.LogCaptureFixture
) -> None:
    store, judge = a_judge(store, server, timeout=0.3, batch=1)
    base = store.head()
    model(server).steps[ENTAILED] = hang(2.0)
    model(server).steps[CONTRADICTED] = hang(2.0)
    write_page(store, [(ENTAILED, 1), (CONTRADICTED, 2)])
    t0 = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="dream.judge"):
        report = gate(store, judge, base)
    assert time.monotonic() - t0 < 1.5  # one timeout, no retry, no second batch
    assert report.ok and report.stats["judge_fallback"] == 2
    assert len(server.requests) == 1
    assert any("timed out" in r.getMessage() for r in caplog.records)
    assert "timed out" in judge.fallback_note()
    # the gates run again in the run (after a leave-out): still no request
    assert gate(store, judge, base).stats["judge_fallback"] == 2
    assert len(server.requests) == 1


def test_an_unreachable_endpoint_falls_back(store: Store, tmp_path: Path) -> None:
    store = configure(store, 'endpoint = "http://127.0.0.1:9/v1"\nmodel = "m"\ntimeout = 2')
    judge = judge_for(store)
    assert judge is not None
    base = store.head()
    write_page(store, [(CONTRADICTED, 2)])
    report = gate(store, judge, base)
    assert report.ok and report.stats["judge_fallback"] == 1
    assert "unreachable" in judge.fallback_note()


# -- the cache --------------------------------------------------------------------------------


def test_verdicts_are_cached_by_claim_and_turns(store: Store, server: ScriptedServer) -> None:
    store, judge = a_judge(store, server)
    base = store.head()
    script_verdicts(server)
    write_page(store, ALL)
    first = gate(store, judge, base)
    judge.close()
    assert len(server.requests) == 1 and (store.cache_dir / NAME).is_file()
    # a second run: the same verdicts, no request
    judge = judge_for(store)
    assert judge is not None
    second = gate(store, judge, base)
    assert second.problems == first.problems and len(server.requests) == 1
    assert second.stats["judge_cached"] == 4 and second.stats["claims_judged"] == 4
    assert judge.summary()["judge_cached"] == 4 and judge.summary()["judge_requests"] == 0
    # a cited turn with another text (a hand edit): asked again, only that claim
    transcript = store.memory / "sessions/transcripts/2026-02-10-move.md"
    transcript.write_text(transcript.read_text().replace("sushi at all", "sushi, really"))
    third = gate(store, judge, base)
    assert len(server.requests) == 2 and model(server).asked[-1] == [CONTRADICTED]
    assert third.stats["judge_cached"] == 3


def test_another_model_asks_again(store: Store, server: ScriptedServer) -> None:
    store, judge = a_judge(store, server)
    base = store.head()
    write_page(store, [(ENTAILED, 1)])
    gate(store, judge, base)
    judge.close()
    config = store.root / "memory.toml"
    config.write_text(config.read_text().replace('"judge-model"', '"other-model"'))
    judge = judge_for(Store.open(store.root))
    assert judge is not None
    assert gate(store, judge, base).stats["judge_cached"] == 0
    assert len(server.requests) == 2 and server.requests[1]["model"] == "other-model"


def test_a_damaged_cache_is_rebuilt(store: Store, server: ScriptedServer) -> None:
    store, judge = a_judge(store, server)
    store.cache_dir.mkdir(exist_ok=True)
    (store.cache_dir / NAME).write_bytes(b"this is not a database" * 100)
    base = store.head()
    write_page(store, [(ENTAILED, 1)])
    assert gate(store, judge, base).stats["claims_judged"] == 1
    judge.close()
    judge = judge_for(store)
    assert judge is not None
    assert gate(store, judge, base).stats["judge_cached"] == 1


# -- the reply --------------------------------------------------------------------------------


def test_parse_verdicts_reads_exactly_one_verdict_per_id() -> None:
    reply = '```json\n{"verdicts": [{"id": "c2", "verdict": "No", "reason": "  the\\nopposite "},\n'
    reply += '{"id": "c1", "verdict": "yes"}]}\n```'
    assert parse_verdicts(reply, ["c1", "c2"]) == {"c1": ("yes", ""), "c2": ("no", "the opposite")}
    for bad in MALFORMED[:2]:
        with pytest.raises(Malformed):
            parse_verdicts(bad, ["c1"])
    for bad in MALFORMED[2:]:
        with pytest.raises(Malformed):
            parse_verdicts(bad, ["c1", "c2"])


# -- configuration ------------------------------------------------------------------------------


def test_no_judge_without_configuration(store: Store) -> None:
    assert store.config.verify == VerifySettings()
    assert judge_for(store) is None
    assert judge_for(store, LLMEngine(LLMSettings(model="m"))) is not None


def test_the_llm_engine_lends_its_endpoint_unless_told_otherwise(store: Store) -> None:
    engine = LLMEngine(LLMSettings(model="m", base_url="http://h:1/v1", api_key="k", timeout=9))
    judge = judge_for(store, engine)
    assert judge is not None
    assert (judge.settings.base_url, judge.model, judge.settings.api_key) == (
        "http://h:1/v1",
        "m",
        "k",
    )
    assert judge.settings.timeout == 9 and judge.settings.retries == 0
    other = configure(store, 'endpoint = "http://other:2/v1"\nmodel = "small"\nbatch = 4')
    judge = judge_for(other, engine)
    assert judge is not None
    assert (judge.settings.base_url, judge.model, judge.batch) == ("http://other:2/v1", "small", 4)
    assert judge.settings.api_key == ""  # the engine's key stays with the engine's endpoint
    assert judge_for(configure(store, "judge = false"), engine) is None


def test_api_key_env_names_the_variable(store: Store) -> None:
    store = configure(store, 'endpoint = "http://h:1/v1"\nmodel = "m"\napi_key_env = "JUDGE_KEY"')
    judge = judge_for(store, env={"JUDGE_KEY": "secret"})
    assert judge is not None and judge.settings.api_key == "secret"
    with pytest.raises(DreamError, match="api_key_env names JUDGE_KEY, which is not set"):
        judge_for(store, env={})


@pytest.mark.parametrize(
    ("section", "error"),
    [
        ('model = "m"', "needs an endpoint"),
        ("judge = true", "needs a model"),
    ],
)
def test_a_judge_that_cannot_be_built_is_one_clear_error(
    store: Store, section: str, error: str
) -> None:
    with pytest.raises(DreamError, match=error):
        judge_for(configure(store, section))


@pytest.mark.parametrize(
    ("section", "error"),
    [
        ("batch = 0", "batch must be a whole number of claims from 1 to 50"),
        ('timeout = "soon"', "timeout must be a number"),
        ('judge = "yes"', "judge must be true or false"),
        ('endpoint = "localhost:8080"', "is not an http:// or https:// URL"),
        ('api_key_env = "my key"', "api_key_env must name an environment variable"),
        ('modle = "m"', "unknown key 'modle'"),
    ],
)
def test_bad_verify_config_is_one_line_and_a_non_zero_exit(
    store: Store, section: str, error: str
) -> None:
    config = store.root / "memory.toml"
    config.write_text(config.read_text() + f"\n[verify]\n{section}\n")
    with pytest.raises(MemoryFSError, match=re.escape(error)):
        load_config(config)
    r = CliRunner().invoke(app, ["run", "--store", str(store.root)])
    assert r.exit_code != 0 and r.stdout == ""
    assert error in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_approving_a_skill_keeps_the_verify_section(store: Store) -> None:
    store = configure(store, 'endpoint = "http://h:1/v1"\nmodel = "m"\ntimeout = 7.5\nbatch = 4')
    before = store.config.verify
    approve(store, by="tests")  # rewrites memory.toml
    assert load_config(store.root / "memory.toml").verify == before


# -- through dream run ----------------------------------------------------------------------------


SESSIONS = [
    (
        "2026-01-06-marta",
        "2026-01-06",
        ["Marta is a nurse at the UKE in Hamburg. I prefer figures as PDF, not PNG.", "Noted."],
    ),
    ("2026-01-07-kyoto", "2026-01-07", ["We fly to Kyoto on 3 March with Ines.", "Great."]),
]


@pytest.fixture
def run_store(tmp_path: Path, server: ScriptedServer) -> Store:
    s = init_store(tmp_path / "run-store", "dana", "atlas")
    approve(s, by="tests")
    add_sessions(s, tmp_path / "in", SESSIONS)
    return configure(s, verify_section(server))


def tree(store: Store) -> str:
    return "\n".join(p.read_text() for p in sorted((store.memory).rglob("*.md")))


def test_dream_run_leaves_out_what_the_judge_rejects_and_lands_the_rest(
    run_store: Store, server: ScriptedServer
) -> None:
    model(server).verdicts["Marta is a nurse"] = ("no", "Made up: nobody said Marta nursed.")
    r = CliRunner().invoke(app, ["run", "--store", str(run_store.root), "--json"])
    assert r.exit_code == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["status"] == "committed"
    assert len(out["leftOut"]) == 1
    assert "DV301" in out["leftOut"][0] and "Made up" in out["leftOut"][0]
    assert "claim left out" in out["leftOut"][0]
    assert out["judge"]["judgeRejected"] == 1 and out["judge"]["judgeFallback"] == 0
    assert out["judge"]["claimsJudged"] >= 5
    landed = tree(run_store)
    assert "Marta is a nurse" not in landed.replace("Marta is a nurse at the UKE in Hamburg. I", "")
    assert "fly to Kyoto on 3 March with Ines" in landed and "prefers figures as PDF" in landed
    # one request for the run's 8 claims: the leave-out's second pass asked nothing
    assert len(model(server).asked) == 1 and len(model(server).claims) == 8
    # a second run with nothing new asks nothing
    before = len(server.requests)
    r = CliRunner().invoke(app, ["run", "--store", str(run_store.root)])
    assert r.exit_code == 0 and len(server.requests) == before


def test_dream_run_says_when_the_judge_timed_out(run_store: Store, server: ScriptedServer) -> None:
    config = run_store.root / "memory.toml"
    config.write_text(config.read_text().replace("timeout = 5", "timeout = 0.3"))
    run_store.commit("short timeout", ["memory.toml"])
    model(server).steps[""] = hang(2.0)  # every batch
    # a real process: what reaches its stderr is what an operator sees
    argv = [sys.executable, "-c", "from cli.dream_app import main; main()", "run"]
    r = subprocess.run(
        [*argv, "--store", str(run_store.root)], capture_output=True, text=True, timeout=60
    )
    assert r.returncode == 0, r.stderr
    assert "judge:" in r.stderr and "timed out" in r.stderr
    last = r.stdout.strip().splitlines()[-1]
    assert last.startswith("dream: 2 sessions summarized")
    assert "model judge gave no verdict on" in last and "deterministic checks alone" in last
    assert "Marta is a nurse" in tree(run_store)  # the floor passed it
    assert len(server.requests) == 1


def test_dream_run_with_the_llm_engine_asks_its_endpoint(
    tmp_path: Path, server: ScriptedServer
) -> None:
    s = init_store(tmp_path / "llm-store", "dana", "atlas")
    approve(s, by="tests")
    add_sessions(s, tmp_path / "in", SESSIONS[:1])
    summary = {
        "title": "Marta in Hamburg",
        "key_points": [
            {"text": "Marta is a nurse at the UKE in Hamburg.", "turn": 1},
            {"text": "Dana prefers figures as PDF, not PNG.", "turn": 1},
        ],
        "outcome": None,
        "open_threads": [],
    }
    server.script[SESSIONS[0][0]].append(answer({"summary": summary, "facts": []}))
    model(server).verdicts["figures as PDF"] = ("unclear", "Unsure which format.")
    engine = LLMEngine(LLMSettings(model="test-model", base_url=server.base_url, backoff=0.01))
    result = run_dream(s, engine)
    assert result.status == "committed", result.problems
    assert [x.split(": ", 1)[1][:5] for x in result.left_out] == ["DV302"]
    assert result.judge["judge_rejected"] == 1 and result.judge["judge_requests"] >= 1
    judged = [r for r in server.requests if r["messages"][0]["content"] == SYSTEM]
    assert judged and all(r["model"] == "test-model" for r in judged)
    summary_text = (s.memory / "sessions/summaries/2026-01-06-marta.md").read_text()
    assert "Marta is a nurse" in summary_text and "figures as PDF" not in summary_text
