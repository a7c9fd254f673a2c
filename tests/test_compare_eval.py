"""bench/compare_eval.py: two evaluations' per-question scores, a paired bootstrap interval."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import paths
import pytest

from dream.evaluation.records import EvalRun, Question, QuestionResult, Score
from dream.evaluation.report import to_json

SCRIPT = paths.ROOT / "bench" / "compare_eval.py"


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("compare_eval", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["compare_eval"] = module
    spec.loader.exec_module(module)
    return module


def _score(arm: str, budget: int, s5: float | None, evc: float | None, ans: float) -> Score:
    return Score(
        arm=arm,
        budget=budget,
        tokens=budget // 2,
        latency_ms=1.0,
        over_budget=False,
        sessions=(),
        session_r5=s5,
        session_r10=s5,
        mrr=s5,
        ev_direct=evc,
        ev_cited=evc,
        answer_tokens=ans,
        exact=ans == 1.0,
    )


def _write(path: Path, values: list[tuple[float | None, float | None, float]]) -> Path:
    """A results.json as ``dream eval locomo`` writes it: one question per value triple,
    the same scores for the wiki arm at 1,000 and 2,000 tokens, no-wiki always 0.5."""
    results = []
    for i, (s5, evc, ans) in enumerate(values):
        q = Question(
            conversation="conv-t",
            index=i,
            question=f"question {i}?",
            answer="an answer",
            category=2 if i % 2 else 4,
            gold={} if evc is None else {f"s1#t{i}": "a turn"},
            gold_sessions=() if evc is None else ("s1",),
        )
        scores = tuple(
            _score(arm, budget, s5, evc, ans)
            if arm == "wiki"
            else _score(arm, budget, 0.5, 0.5, 0.5)
            for arm in ("wiki", "no-wiki")
            for budget in (1000, 2000)
        )
        results.append(QuestionResult(question=q, scores=scores))
    run = EvalRun(
        budgets=(1000, 2000),
        arms=("wiki", "no-wiki"),
        conversations=(),
        results=tuple(results),
        tokenizer="test",
    )
    path.write_text(json.dumps(to_json(run)), encoding="utf-8")
    return path


def test_identical_runs_differ_by_nothing(tmp_path: Path) -> None:
    cmp = _script()
    values = [(1.0, 0.5, 0.25), (0.0, 1.0, 1.0), (0.5, None, 0.0)] * 10
    a = cmp.load_scores(_write(tmp_path / "a.json", values), "wiki", "")
    b = cmp.load_scores(_write(tmp_path / "b.json", values), "wiki", "")
    rows = cmp.compare(a, b)
    assert [(r.budget, r.metric) for r in rows] == [
        (budget, m) for budget in (1000, 2000) for m in ("session_r5", "ev_cited", "answer_tokens")
    ]
    for r in rows:
        assert (r.diff, r.low, r.high, r.up, r.down) == (0.0, 0.0, 0.0, 0, 0)
        assert r.noise
    # a question with no resolvable evidence has no evidence score: left out of Ev cited only
    assert {r.metric: r.questions for r in rows[:3]} == {
        "session_r5": 30,
        "ev_cited": 20,
        "answer_tokens": 30,
    }


def test_a_change_on_many_questions_is_above_the_noise(tmp_path: Path) -> None:
    cmp = _script()
    before = [(0.0, 0.0, 0.0)] * 40
    after = [(1.0, 0.0, 0.0)] * 20 + [(0.0, 0.0, 0.0)] * 20  # S@5 up on half the questions
    rows = cmp.compare(
        cmp.load_scores(_write(tmp_path / "a.json", before), "wiki", ""),
        cmp.load_scores(_write(tmp_path / "b.json", after), "wiki", ""),
    )
    s5 = next(r for r in rows if r.metric == "session_r5" and r.budget == 1000)
    assert s5.diff == pytest.approx(0.5)
    assert (s5.up, s5.down) == (20, 0)
    # a share of 0.5 over 40 questions: standard error ~0.08, so the interval is about 0.34-0.66
    assert 0.25 < s5.low < 0.5 < s5.high < 0.75
    assert not s5.noise
    evc = next(r for r in rows if r.metric == "ev_cited" and r.budget == 1000)
    assert evc.noise and evc.diff == 0.0


def test_a_change_on_one_question_is_noise(tmp_path: Path) -> None:
    cmp = _script()
    before = [(0.0, 0.5, 0.5)] * 40
    after = [(1.0, 0.5, 0.5)] + [(0.0, 0.5, 0.5)] * 39
    rows = cmp.compare(
        cmp.load_scores(_write(tmp_path / "a.json", before), "wiki", ""),
        cmp.load_scores(_write(tmp_path / "b.json", after), "wiki", ""),
    )
    s5 = rows[0]
    assert s5.diff == pytest.approx(1 / 40)
    assert s5.low == 0.0 and s5.high > 0.0  # most draws miss the one question, some hold it
    assert s5.noise


def test_arm_and_category_choose_the_questions(tmp_path: Path) -> None:
    cmp = _script()
    values = [(float(i % 3 == 0), 0.5, 0.5) for i in range(12)]
    path = _write(tmp_path / "a.json", values)
    temporal = cmp.load_scores(path, "wiki", "temporal")
    assert sorted(i for _, i in temporal) == [1, 3, 5, 7, 9, 11]
    nowiki = cmp.load_scores(path, "no-wiki", "")
    assert {row[1000]["session_r5"] for row in nowiki.values()} == {0.5}


def test_cli_prints_the_table_and_refuses_other_questions(tmp_path: Path) -> None:
    a = _write(tmp_path / "a.json", [(0.0, 0.5, 0.5)] * 10)
    b = _write(tmp_path / "b.json", [(1.0, 0.5, 0.5)] * 10)
    other = _write(tmp_path / "c.json", [(1.0, 0.5, 0.5)] * 9)
    ok = subprocess.run(
        [sys.executable, str(SCRIPT), str(a), str(b), "--draws", "200"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert ok.returncode == 0, ok.stderr
    lines = ok.stdout.splitlines()
    assert lines[2] == (
        "| 1000 | S@5 | 10 | 0.0000 | 1.0000 | +1.0000 | [+1.0000, +1.0000] | 10/0 |  |"
    )
    assert lines[3].endswith("| noise |")  # Ev cited did not move
    as_json = subprocess.run(
        [sys.executable, str(SCRIPT), str(a), str(b), "--json", "--metric", "exact"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert [(r["budget"], r["metric"]) for r in json.loads(as_json.stdout)] == [
        (1000, "exact"),
        (2000, "exact"),
    ]
    bad = subprocess.run(
        [sys.executable, str(SCRIPT), str(a), str(other)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert bad.returncode == 1 and bad.stdout == ""
    assert bad.stderr.startswith("error: the two results hold different questions (e.g. conv-t#9)")
    assert len(bad.stderr.splitlines()) == 1
    broken = tmp_path / "broken.json"
    broken.write_text("{", encoding="utf-8")
    worse = subprocess.run(
        [sys.executable, str(SCRIPT), str(broken), str(a)], capture_output=True, text=True
    )
    assert worse.returncode == 1 and len(worse.stderr.splitlines()) == 1
    assert "not a `dream eval locomo` results.json" in worse.stderr
