"""The LoCoMo evaluation harness: exact scores per arm on a small conversation, CLI, real run.

The conversation below has three sessions and known evidence turns. The wiki
arms run a stub recall (injected into the harness) whose outputs are written out
here, so every expected score can be checked by hand; ``bm25-turns`` is the real
baseline, whose outputs on this conversation are derived in the comments.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import typer
from paths import LOCOMO
from typer.testing import CliRunner

from cli.dream_eval_cmds import register
from dream.evaluation import harness
from dream.evaluation.harness import evaluate_locomo
from dream.evaluation.records import ArmItem, ArmOutput, EvalRun
from dream.evaluation.report import render_markdown, summarize, to_json, write_outputs
from memoryfs.store.store import Store
from memoryfs.store.tokens import count_tokens

S1, S2, S3 = "2023-05-08-conv-t-s01", "2023-06-20-conv-t-s02", "2023-08-03-conv-t-s03"
T = "sessions/transcripts/{}.md"


def ref(session: str, turn: int) -> str:
    return T.format(session) + f"#t{turn}"


SECRETS = ("SECRET-SUMMARY", "SECRET-OBSERVATION", "SECRET-EVENT", "SECRET-QUERY")

CONV: dict[str, Any] = {
    "sample_id": "conv-t",
    "conversation": {
        "speaker_a": "Ann",
        "speaker_b": "Ben",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {
                "speaker": "Ann",
                "dia_id": "D1:1",
                "text": "I went to the pottery class yesterday and made a blue bowl.",
            },
            {
                "speaker": "Ben",
                "dia_id": "D1:2",
                "text": "That sounds lovely. I started learning the violin.",
            },
            {
                "speaker": "Ann",
                "dia_id": "D1:3",
                "text": "My sister Clara moved to Lisbon last month.",
            },
        ],
        "session_2_date_time": "10:00 am on 20 June, 2023",
        "session_2": [
            {"speaker": "Ben", "dia_id": "D2:1", "text": "I ran a charity race last Saturday."},
            {"speaker": "Ann", "dia_id": "D2:2", "text": "Great! I adopted a puppy named Biscuit."},
            {
                "speaker": "Ben",
                "dia_id": "D2:3",
                "text": "Look at my neighbour's dog",
                "img_url": ["http://example.invalid/x.jpg"],
                "blip_caption": "a photo of a golden retriever",
                "query": "SECRET-QUERY",
            },
        ],
        "session_3_date_time": "4:00 pm on 3 August, 2023",
        "session_3": [
            {"speaker": "Ann", "dia_id": "D3:1", "text": "Biscuit learned to sit this week."},
            {"speaker": "Ben", "dia_id": "D3:2", "text": "I played the violin at a wedding."},
        ],
        "session_1_summary": "SECRET-SUMMARY",
        "session_1_observation": "SECRET-OBSERVATION",
        "events_session_1": "SECRET-EVENT",
    },
    "qa": [
        {
            "question": "When did Ann go to the pottery class?",
            "answer": "7 May 2023",
            "evidence": ["D1:1"],
            "category": 2,
        },
        {
            "question": "What hobbies does Ben have?",
            "answer": "violin, running",
            "evidence": ["D1:2", "D2:1", "D3:2"],
            "category": 1,
        },
        {
            "question": "What is the name of Ann's puppy?",
            "answer": "Biscuit",
            "evidence": ["D2:2"],
            "category": 4,
        },
        {
            "question": "What did Ann say about her cat?",
            "adversarial_answer": "Tom",
            "evidence": ["D2:2"],
            "category": 5,
        },
        # One normalizable id, one malformed, one naming no turn: scored on the first only.
        {
            "question": "Where did Ann's sister move?",
            "answer": "Lisbon",
            "evidence": ["D:1:3", "D", "D9:9"],
            "category": 4,
        },
        {
            "question": "Would Ann enjoy a ceramics workshop?",
            "answer": "Yes, she likes pottery",
            "evidence": ["D1:1"],
            "category": 3,
        },
        {"question": "What color was Ann's bowl?", "answer": "blue", "evidence": [], "category": 4},
    ],
}

TURN = {
    ref(S1, 1): "I went to the pottery class yesterday and made a blue bowl.",
    ref(S3, 2): "I played the violin at a wedding.",
    ref(S2, 2): "Great! I adopted a puppy named Biscuit.",
}

# The stub recall's ranked items per question: (path, layer, text, citations).
STUB: dict[str, list[tuple[str, str, str, tuple[str, ...]]]] = {
    "When did Ann go to the pottery class?": [
        (
            "knowledge/people/ann.md",
            "knowledge",
            "Ann went to a pottery class on 7 May 2023.",
            (ref(S1, 1),),
        ),
        (
            f"sessions/summaries/{S1}.md",
            "sessions",
            "Ann made a blue bowl at pottery class.",
            (ref(S1, 1),),
        ),
    ],
    "What hobbies does Ben have?": [
        (
            "knowledge/people/ben.md",
            "knowledge",
            "Ben plays the violin and runs charity races.",
            (ref(S1, 2), ref(S2, 1)),
        ),
        ("notes/pets/biscuit.md", "notes", "Biscuit is Ann's puppy.", ()),
        ("notes/hobbies/ben.md", "notes", "Ben ran a charity race on 17 June 2023.", (ref(S2, 1),)),
        (T.format(S3), "sessions", TURN[ref(S3, 2)], ()),
    ],
    "What is the name of Ann's puppy?": [
        (f"sessions/summaries/{S3}.md", "sessions", "Biscuit learned to sit.", (ref(S3, 1),)),
        (T.format(S2), "sessions", TURN[ref(S2, 2)], ()),
    ],
    "Where did Ann's sister move?": [
        (
            "knowledge/people/clara.md",
            "knowledge",
            "Clara, Ann's sister, moved to Lisbon in April 2023.",
            (ref(S1, 3),),
        ),
    ],
    "Would Ann enjoy a ceramics workshop?": [(T.format(S1), "sessions", TURN[ref(S1, 1)], ())],
}


class StubRecall:
    def __init__(self) -> None:
        self.calls: list[tuple[str, int, tuple[str, ...]]] = []

    def __call__(
        self,
        store: Store,
        question: str,
        budget_tokens: int = 1500,
        *,
        exclude_layers: tuple[str, ...] = (),
    ) -> ArmOutput:
        assert (store.root / "memory.toml").is_file()
        self.calls.append((question, budget_tokens, tuple(exclude_layers)))
        items = [
            ArmItem(p, layer, text, cites)
            for p, layer, text, cites in STUB.get(question, [])
            if layer not in exclude_layers
        ]
        return ArmOutput(text="\n".join(i.text for i in items), items=tuple(items))


class StubDream:
    def __init__(self) -> None:
        self.stores: list[Path] = []

    def __call__(self, store: Store) -> dict[str, Any]:
        self.stores.append(store.root)
        files = store.files("sessions/transcripts")
        assert len(files) == 3
        for rel in files:  # the importer left the dataset's annotations out of the store
            text = (store.memory / rel).read_text("utf-8")
            assert not any(s in text for s in SECRETS)
        return {"sessions_summarized": len(files)}


# Expected per arm: question -> (S@5, S@10, MRR, Ev direct, Ev cited, answer tokens, exact).
# bm25-turns at 1,000 tokens shows every turn matching a query word (the speaker
# name matches all of that speaker's turns), best bm25 first:
#   pottery -> D1:1 first; "[8 May 2023]" prefixes give "may 2023" but not "7".
#   hobbies -> no turn has "hobbies"; all of Ben's turns (every gold one) come back.
#   ceramics -> only "Ann" matches; shortest turns first: s3, s2, s1 -> MRR 1/3.
EXPECTED: dict[str, dict[str, tuple[float | None, ...]]] = {
    "wiki": {
        "When did Ann go to the pottery class?": (1, 1, 1, 0, 1, 1, 1),
        "What hobbies does Ben have?": (1, 1, 1, 1 / 3, 1, 0.5, 0),
        "What is the name of Ann's puppy?": (1, 1, 0.5, 1, 1, 1, 1),
        "Where did Ann's sister move?": (1, 1, 1, 0, 1, 1, 1),
        "Would Ann enjoy a ceramics workshop?": (1, 1, 1, 1, 1, 1 / 3, 0),
        "What color was Ann's bowl?": (None, None, None, None, None, 0, 0),
    },
    "no-wiki": {
        "When did Ann go to the pottery class?": (1, 1, 1, 0, 1, 0, 0),
        "What hobbies does Ben have?": (2 / 3, 2 / 3, 1, 1 / 3, 2 / 3, 0.5, 0),
        "What is the name of Ann's puppy?": (1, 1, 0.5, 1, 1, 1, 1),
        "Where did Ann's sister move?": (0, 0, 0, 0, 0, 0, 0),
        "Would Ann enjoy a ceramics workshop?": (1, 1, 1, 1, 1, 1 / 3, 0),
        "What color was Ann's bowl?": (None, None, None, None, None, 0, 0),
    },
    "bm25-turns": {
        "When did Ann go to the pottery class?": (1, 1, 1, 1, 1, 2 / 3, 0),
        "What hobbies does Ben have?": (1, 1, 1, 1, 1, 0.5, 0),
        "What is the name of Ann's puppy?": (1, 1, 1, 1, 1, 1, 1),
        "Where did Ann's sister move?": (1, 1, 1, 1, 1, 1, 1),
        "Would Ann enjoy a ceramics workshop?": (1, 1, 1 / 3, 1, 1, 1 / 3, 0),
        "What color was Ann's bowl?": (None, None, None, None, None, 1, 1),
    },
}
FIELDS = ("session_r5", "session_r10", "mrr", "ev_direct", "ev_cited", "answer_tokens", "exact")
# The "all" rows: means over the 6 scored questions (5 with evidence for session/evidence scores).
EXPECTED_ALL = {
    "wiki": (1, 1, 0.9, 7 / 15, 1, 3.8333333 / 6, 0.5),
    "no-wiki": (11 / 15, 11 / 15, 0.7, 7 / 15, 11 / 15, (1.5 + 1 / 3) / 6, 1 / 6),
    "bm25-turns": (1, 1, 13 / 15, 1, 1, 4.5 / 6, 0.5),
}


@pytest.fixture
def conv_file(tmp_path: Path) -> Path:
    path = tmp_path / "conv-t.json"
    path.write_text(json.dumps(CONV), encoding="utf-8")
    return path


def _run(conv_file: Path, **kw: Any) -> tuple[EvalRun, StubRecall, StubDream]:
    recall, dream = StubRecall(), StubDream()
    run = evaluate_locomo(
        [conv_file], budgets=(1000,), recall_fn=recall, dream_fn=dream, keep_text=True, **kw
    )
    return run, recall, dream


def _approx(values: tuple[Any, ...], abs: float = 1e-9) -> list[Any]:
    return [None if v is None else pytest.approx(float(v), abs=abs) for v in values]


def test_exact_scores_per_question_and_arm(conv_file: Path) -> None:
    run, recall, dream = _run(conv_file)
    # category 5 is skipped
    assert [r.question.question for r in run.results] == list(EXPECTED["wiki"])
    for r in run.results:
        for s in r.scores:
            got = tuple(None if getattr(s, f) is None else float(getattr(s, f)) for f in FIELDS)
            want = EXPECTED[s.arm][r.question.question]
            assert list(got) == _approx(want), (s.arm, r.question.question)
            assert s.budget == 1000 and s.tokens == count_tokens(s.text) and not s.over_budget
            assert not any(x in s.text for x in SECRETS)
    assert len(dream.stores) == 1
    assert {(q, excl) for q, _b, excl in recall.calls if q != "warm up"} == {
        (q, excl) for q in EXPECTED["wiki"] for excl in ((), ("knowledge",))
    }


def test_aggregates_per_category_and_overall(conv_file: Path) -> None:
    run, _, _ = _run(conv_file)
    rows = {(r["arm"], r["category"]): r for r in summarize(run)}
    for arm, expected in EXPECTED_ALL.items():
        row = rows[(arm, "all")]
        assert row["questions"] == 6
        # rows round to 4 places
        assert [row[f] for f in FIELDS] == _approx(expected, abs=1e-4), arm
    single = rows[("wiki", "single-hop")]  # puppy, sister, bowl (no evidence)
    assert single["questions"] == 3
    assert single["mrr"] == pytest.approx(0.75) and single["ev_direct"] == pytest.approx(0.5)
    assert single["answer_tokens"] == pytest.approx(2 / 3, abs=1e-4)
    assert single["exact"] == pytest.approx(2 / 3, abs=1e-4)
    assert rows[("no-wiki", "temporal")]["answer_tokens"] == 0.0
    assert rows[("bm25-turns", "open-domain")]["mrr"] == pytest.approx(1 / 3, abs=1e-4)


def test_malformed_evidence_is_normalized_or_counted_never_fatal(conv_file: Path) -> None:
    run, _, _ = _run(conv_file)
    (conv,) = run.conversations
    sister = next(r.question for r in run.results if "sister" in r.question.question)
    assert list(sister.gold) == [ref(S1, 3)]  # "D:1:3" normalized
    assert sister.malformed == ("D",) and sister.unresolved == ("D9:9",)
    assert (conv.malformed_evidence, conv.unresolved_evidence) == (1, 1)
    assert (conv.questions, conv.skipped_adversarial, conv.sessions, conv.turns) == (6, 1, 3, 8)
    assert conv.dream == {"sessions_summarized": 3} and conv.dream_seconds is not None


def test_packed_evidence_strings_are_split(tmp_path: Path) -> None:
    data = json.loads(json.dumps(CONV))
    data["qa"] = [{"question": "q", "answer": "a", "evidence": ["D1:1; D2:2"], "category": 1}]
    path = tmp_path / "c.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    run = evaluate_locomo([path], budgets=(50,), arms=("bm25-turns",))
    (r,) = run.results
    assert sorted(r.question.gold) == [ref(S1, 1), ref(S2, 2)] and r.question.malformed == ()


def test_bm25_only_needs_no_dream_and_respects_the_budget(conv_file: Path) -> None:
    run = evaluate_locomo([conv_file], budgets=(20, 1000), arms=("bm25-turns",))
    assert run.conversations[0].dream_seconds is None
    small = [s for r in run.results for s in r.scores if s.budget == 20]
    assert small and all(0 < s.tokens <= 20 for s in small)


def test_stores_are_kept_on_request_and_never_overwritten(conv_file: Path, tmp_path: Path) -> None:
    run, _, _ = _run(conv_file, stores_dir=tmp_path / "stores")
    kept = Path(run.conversations[0].store)
    assert (kept / "memory.toml").is_file() and kept.parent == tmp_path / "stores"
    with pytest.raises(harness.EvalError, match="already exists"):
        _run(conv_file, stores_dir=tmp_path / "stores")


def test_reports_json_markdown_and_files(conv_file: Path, tmp_path: Path) -> None:
    run, _, _ = _run(conv_file)
    data = json.loads(json.dumps(to_json(run)))
    assert len(data["questions"]) == 6 and data["questions"][0]["scores"][0]["arm"] == "wiki"
    md = render_markdown(run)
    assert "| wiki | 1000 | 1.00 | 1.00 | 0.90 | 0.47 | 1.00 | 0.64 | 0.50 |" in md
    assert "| conv-t | 3 | 8 | 6 |" in md and "Dream did not commit" not in md
    written = write_outputs(run, tmp_path / "out")
    assert Path(written["results"]).is_file() and Path(written["report"]).read_text() == md


def _app() -> typer.Typer:
    app = typer.Typer()
    register(app)

    @app.command("version")
    def _version() -> None:  # a second command, so "eval" stays a sub-command group
        pass

    return app


def test_cli_eval_locomo_json_and_outputs(
    conv_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(harness, "default_recall", StubRecall)
    monkeypatch.setattr(harness, "default_dream", lambda engine="embedded": StubDream())
    out = tmp_path / "out"
    r = CliRunner().invoke(
        _app(), ["eval", "locomo", str(conv_file), "--budget", "1000", "--out", str(out), "--json"]
    )
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    row = next(x for x in data["summary"] if x["arm"] == "wiki" and x["category"] == "all")
    assert row["mrr"] == pytest.approx(0.9)
    assert (out / "results.json").is_file() and (out / "report.md").is_file()
    r = CliRunner().invoke(_app(), ["eval", "locomo", str(conv_file), "--arms", "bm25-turns"])
    assert r.exit_code == 0 and r.stdout.startswith("# LoCoMo evaluation")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--arms", "wiki,grep"], "unknown arm grep"),
        (["--budget", "lots"], "not a whole number"),
        (["--keep-stores"], "--keep-stores needs --out"),
    ],
)
def test_cli_bad_input_is_one_line_and_exit_1(
    conv_file: Path, args: list[str], message: str
) -> None:
    r = CliRunner().invoke(_app(), ["eval", "locomo", str(conv_file), *args])
    assert r.exit_code == 1 and message in r.stderr and r.stdout == ""
    assert len(r.stderr.strip().splitlines()) == 1


def test_cli_missing_or_bad_file(tmp_path: Path) -> None:
    r = CliRunner().invoke(_app(), ["eval", "locomo", str(tmp_path / "nope.json")])
    assert r.exit_code == 1 and "no such file" in r.stderr
    bad = tmp_path / "bad.json"
    bad.write_text("{", encoding="utf-8")
    r = CliRunner().invoke(_app(), ["eval", "locomo", str(bad), "--arms", "bm25-turns"])
    assert r.exit_code == 1 and "not a readable LoCoMo JSON" in r.stderr
    empty = tmp_path / "empty.json"
    empty.write_text("[]", encoding="utf-8")
    r = CliRunner().invoke(_app(), ["eval", "locomo", str(empty), "--arms", "bm25-turns"])
    assert r.exit_code == 1 and "no LoCoMo conversation in it" in r.stderr and r.stdout == ""


@pytest.mark.slow
def test_real_pipeline_on_a_shared_conversation(tmp_path: Path) -> None:
    """import -> dream run -> recall on conv-30, every arm; structure only, no quality targets."""
    pytest.importorskip("memoryfs.read.recall")
    pytest.importorskip("dream.runner")
    pytest.importorskip("dream.engines.embedded.engine")
    path = LOCOMO / "conv-30.json"
    if not path.is_file():
        pytest.skip("shared LoCoMo data not present")
    run = evaluate_locomo([path], budgets=(1000,), stores_dir=tmp_path / "stores")
    (conv,) = run.conversations
    assert conv.questions == 81 and conv.dream_seconds is not None
    store = Store.open(conv.store)
    assert store.files("sessions/summaries"), "Dream wrote no session summaries"
    for r in run.results:
        assert {s.arm for s in r.scores} == {"wiki", "no-wiki", "bm25-turns"}
        for s in r.scores:
            assert 0 < s.tokens <= 1000 and not s.over_budget, (s.arm, r.question.question)
            for f in FIELDS:
                v = getattr(s, f)
                assert v is None or 0.0 <= float(v) <= 1.0


def test_a_dream_run_that_did_not_commit_is_called_out(conv_file: Path) -> None:
    run = evaluate_locomo(
        [conv_file],
        budgets=(1000,),
        arms=("wiki",),
        recall_fn=StubRecall(),
        dream_fn=lambda store: {"status": "gate-failed"},
    )
    md = render_markdown(run)
    assert "| gate-failed |" in md and "Dream did not commit on conv-t (gate-failed)" in md


def test_the_wiki_hybrid_arm_recalls_hybrid_and_wiki_lexical_on_one_store(
    conv_file: Path,
) -> None:
    from memoryfs.store.config import EmbedSettings

    modes: list[tuple[str, str, bool]] = []
    inner = StubRecall()

    def recall(store: Store, question: str, budget_tokens: int = 1500, **kw: Any) -> ArmOutput:
        modes.append((kw.pop("mode"), question, store.config.embed.on))
        return inner(store, question, budget_tokens, **kw)

    embed = EmbedSettings(backend="endpoint", model="m", endpoint="http://127.0.0.1:9/v1")
    run = evaluate_locomo(
        [conv_file],
        budgets=(1000,),
        arms=("wiki", "wiki-hybrid"),
        recall_fn=recall,
        dream_fn=StubDream(),
        embed=embed,
    )
    assert run.arms == ("wiki", "wiki-hybrid")
    asked = [(m, on) for m, q, on in modes if q != "warm up"]
    assert {m for m, _ in asked} == {"lexical", "hybrid"} and all(on for _, on in asked)
    assert sum(m == "hybrid" for m, _ in asked) == sum(m == "lexical" for m, _ in asked)
    with pytest.raises(harness.EvalError, match="wiki-hybrid arm needs an embedder"):
        evaluate_locomo([conv_file], arms=("wiki-hybrid",), recall_fn=recall, dream_fn=StubDream())
