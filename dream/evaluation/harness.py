"""The LoCoMo evaluation: import -> Dream -> recall per question, scored per arm and budget.

For each conversation: a fresh store, the LoCoMo importer's transcripts, one
Dream run (only when an arm reads what Dream writes), then every question of
categories 1-4 through each arm at each budget. From the dataset this module
reads the turns (through :mod:`memoryfs.ingest.locomo`, which ignores the annotations)
and, of ``qa``, only ``question``, ``answer``, ``evidence`` and ``category``.

Arms: ``wiki`` (recall over the whole store), ``no-wiki`` (recall with the
``knowledge`` layer excluded) and ``bm25-turns`` (:mod:`dream.evaluation.baseline`).
The recall and Dream callables are parameters, so tests can pin exact scores
with stubs; by default they are looked up at run time.
"""

from __future__ import annotations

import dataclasses
import importlib
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from dream.errors import DreamError
from dream.evaluation.baseline import Bm25Turns
from dream.evaluation.questions import questions_of
from dream.evaluation.records import (
    ArmItem,
    ArmOutput,
    ConversationRun,
    EvalRun,
    Question,
    QuestionResult,
    Score,
)
from dream.evaluation.scoring import (
    answer_token_recall,
    evidence_recall,
    exact_containment,
    mrr,
    normalize_text,
    ranked_sessions,
    recall_at_k,
    text_refs,
    words,
)
from memoryfs.ingest.locomo import Conversation, load_locomo
from memoryfs.store.atomic import atomic_write_text
from memoryfs.store.config import EmbedSettings
from memoryfs.store.store import Store, init_store
from memoryfs.store.tokens import count_tokens, truncate_to_tokens

__all__ = [
    "ARMS",
    "DEFAULT_ARMS",
    "EvalError",
    "RecallFn",
    "DreamFn",
    "evaluate_locomo",
    "evaluate_conversation",
    "import_conversation",
    "parse_arms",
    "parse_budgets",
    "questions_of",
    "score_output",
]

ARMS = ("wiki", "no-wiki", "bm25-turns", "wiki-hybrid")
DEFAULT_ARMS = ARMS[:3]  # wiki-hybrid needs an embedder (``embed``)
_EXCLUDE = {"wiki": (), "no-wiki": ("knowledge",), "wiki-hybrid": ()}
# recall's first-stage retrieval per arm (``memoryfs.read.dense``), told to recall only
# when the run has an embedder (else every arm is lexical, recall's default)
_MODE = {"wiki": "lexical", "no-wiki": "lexical", "wiki-hybrid": "hybrid"}
SCOPE = {"user": "locomo", "assistant": "eval"}
TOKENIZER = "memoryfs.store.tokens.count_tokens: \\w+ runs and single other non-space characters"
_MAX_DREAM_RUNS = 50  # runs stopped by max-sessions or a deadline are resumed up to this

RecallFn = Callable[..., Any]  # recall(store, question, budget_tokens=N, exclude_layers=(...))
DreamFn = Callable[[Store], Any]  # runs Dream on the store; returns what it did (or None)
Progress = Callable[[str, int, int], None]  # (phase, done, total), as cli.output.ProgressBar


class EvalError(DreamError):
    """The evaluation cannot run as asked (bad option, missing component)."""


def parse_budgets(text: str | Sequence[int]) -> tuple[int, ...]:
    raw = text.split(",") if isinstance(text, str) else list(text)
    out: list[int] = []
    for part in raw:
        try:
            n = int(str(part).strip())
        except ValueError:
            raise EvalError(
                f"budget {part!r} is not a whole number (use e.g. --budget 1000,2000)"
            ) from None
        if n <= 0:
            raise EvalError(f"budget {n} must be positive")
        if n not in out:
            out.append(n)
    if not out:
        raise EvalError("no budget given (use e.g. --budget 1000,2000)")
    return tuple(out)


def parse_arms(text: str | Sequence[str]) -> tuple[str, ...]:
    raw = text.split(",") if isinstance(text, str) else list(text)
    out = [a.strip() for a in raw if a.strip()]
    bad = [a for a in out if a not in ARMS]
    if bad or not out:
        raise EvalError(f"unknown arm {', '.join(bad) or '(none)'}; choose from {', '.join(ARMS)}")
    return tuple(dict.fromkeys(out))


def import_conversation(store: Store, conv: Conversation) -> str:
    """Write the conversation's transcripts into ``store`` and commit them."""
    from memoryfs.ingest import plan_ingest

    with store.lock("write"):
        written = []
        for change, text in plan_ingest(store, list(conv.sessions)):
            if text is None:
                continue
            path = store.transcript_path(change.id)
            atomic_write_text(path, text)
            written.append(path.relative_to(store.root).as_posix())
        turns = sum(len(t.turns) for t in conv.sessions)
        return store.commit(
            f"ingest: {len(written)} sessions, {turns} turns (LoCoMo {conv.id})", written
        )


def _as_output(result: Any) -> ArmOutput:
    """Adapt a recall result (anything with ``text`` and ranked ``items``)."""
    items = tuple(
        ArmItem(
            path=str(getattr(it, "path", "")),
            layer=str(getattr(it, "layer", "")),
            text=str(getattr(it, "text", "")),
            citations=tuple(str(c) for c in getattr(it, "citations", ()) or ()),
        )
        for it in getattr(result, "items", ()) or ()
    )
    return ArmOutput(text=str(getattr(result, "text", "") or ""), items=items)


def score_output(
    q: Question, out: ArmOutput, arm: str, budget: int, latency_ms: float, keep_text: bool = False
) -> Score:
    """Score what ``arm`` showed for ``q``; text beyond the budget is cut off and flagged."""
    full = out.text
    text = full
    items = out.items
    over = count_tokens(full) > budget
    if over:
        text = truncate_to_tokens(full, budget)
        cut, whole = normalize_text(text), normalize_text(full)
        items = tuple(i for i in items if (t := normalize_text(i.text)) in cut or t not in whole)
    norm = normalize_text(text)
    ranked = ranked_sessions((i.path, i.citations) for i in items)
    cited = text_refs(text).union(*(i.citations for i in items))
    direct, via_cite, missed = evidence_recall(q.gold, norm, cited)
    return Score(
        arm=arm,
        budget=budget,
        tokens=count_tokens(text),
        latency_ms=latency_ms,
        over_budget=over,
        sessions=tuple(ranked[:10]),
        session_r5=recall_at_k(ranked, q.gold_sessions, 5),
        session_r10=recall_at_k(ranked, q.gold_sessions, 10),
        mrr=mrr(ranked, q.gold_sessions),
        ev_direct=direct,
        ev_cited=via_cite,
        answer_tokens=answer_token_recall(q.answer, frozenset(words(text))),
        exact=exact_containment(q.answer, norm),
        missed=tuple(missed),
        text=text if keep_text else "",
    )


def default_recall() -> RecallFn:
    try:
        module = importlib.import_module("memoryfs.read.recall")
    except ImportError as exc:
        raise EvalError(f"recall is not available ({exc}); run only --arms bm25-turns") from None
    fn = getattr(module, "recall", None)
    if not callable(fn):
        raise EvalError("memoryfs.read.recall has no recall() function; run only --arms bm25-turns")
    return fn


def default_dream(engine: str = "embedded") -> DreamFn:
    """``dream run`` as the library runs it, repeated until no session is pending.

    The evaluation store is fresh and belongs to no user, so the run is told to
    accept the shipped skill without an approval record (as ``--allow-unapproved``).
    A run whose gates fail is reported, not fatal: the arms then measure the
    store as Dream left it.
    """
    try:
        module = importlib.import_module("dream.runner")
        engines = importlib.import_module("dream.engines")
        run_dream, load_engine, options = module.run_dream, engines.load_engine, module.RunOptions
    except (ImportError, AttributeError) as exc:
        raise EvalError(f"Dream is not available ({exc}); run only --arms bm25-turns") from None
    chosen = load_engine(engine)

    def _dream(store: Store) -> dict[str, Any]:
        report: dict[str, Any] = {"runs": 0, "sessions": 0, "pagesCreated": 0, "pagesUpdated": 0}
        for _ in range(_MAX_DREAM_RUNS):
            result = run_dream(store, chosen, options(allow_unapproved=True))
            report["runs"] += 1
            report["status"] = result.status
            report["engine"] = result.engine
            report["sessions"] += len(result.sessions)
            report["pagesCreated"] += len(result.pages_created)
            report["pagesUpdated"] += len(result.pages_updated)
            report["problems"] = list(result.problems)[:20]
            report["pendingAfter"] = result.pending_after
            if not (result.stopped and result.pending_after and result.status == "committed"):
                break
        return report

    return _dream


def _report_dict(value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        data = dataclasses.asdict(value)
    elif isinstance(value, dict):
        data = dict(value)
    else:
        return {"result": str(value)}
    return {k: v for k, v in data.items() if isinstance(v, str | int | float | bool | list | dict)}


def evaluate_conversation(
    conv: Conversation,
    store: Store,
    *,
    budgets: Sequence[int],
    arms: Sequence[str],
    recall_fn: RecallFn | None = None,
    dream_fn: DreamFn | None = None,
    limit: int | None = None,
    keep_text: bool = False,
    file: str = "",
    progress: Progress | None = None,
) -> tuple[ConversationRun, list[QuestionResult]]:
    """Evaluate one conversation in ``store`` (a fresh store; the transcripts are imported here)."""
    say = progress or (lambda _phase, _done, _total: None)
    questions, skipped = questions_of(conv)
    if limit is not None:
        questions = questions[:limit]
    import_conversation(store, conv)
    recall_arms = [a for a in arms if a in _EXCLUDE]
    dream_seconds: float | None = None
    dream_report: dict[str, Any] = {}
    if recall_arms:
        recall_fn = recall_fn or default_recall()
        dream_fn = dream_fn or default_dream()
        say(f"{conv.id} dream", 0, 0)
        start = time.perf_counter()
        dream_report = _report_dict(dream_fn(store))
        dream_seconds = time.perf_counter() - start
        store = Store.open(store.root)
    searchers: dict[str, Callable[[str, int], ArmOutput]] = {}
    for arm in arms:
        if arm == "bm25-turns":
            index = Bm25Turns.from_store(store)
            searchers[arm] = index.search
        else:
            assert recall_fn is not None
            exclude = _EXCLUDE[arm]
            how = {"mode": _MODE[arm]} if store.config.embed.on else {}

            def _search(
                question: str,
                budget: int,
                _ex: tuple[str, ...] = exclude,
                _how: dict[str, str] = how,
            ) -> ArmOutput:
                assert recall_fn is not None
                return _as_output(
                    recall_fn(store, question, budget_tokens=budget, exclude_layers=_ex, **_how)
                )

            # One untimed call builds whatever caches recall keeps, so latency is per question.
            _search("warm up", min(budgets))
            searchers[arm] = _search
    results: list[QuestionResult] = []
    for n, q in enumerate(questions, start=1):
        scores: list[Score] = []
        for arm in arms:
            for budget in budgets:
                start = time.perf_counter()
                out = searchers[arm](q.question, budget)
                ms = (time.perf_counter() - start) * 1000
                scores.append(score_output(q, out, arm, budget, ms, keep_text))
        results.append(QuestionResult(question=q, scores=tuple(scores)))
        say(f"{conv.id} questions", n, len(questions))
    run = ConversationRun(
        id=conv.id,
        file=file,
        sessions=len(conv.sessions),
        turns=sum(len(t.turns) for t in conv.sessions),
        questions=len(questions),
        skipped_adversarial=skipped,
        malformed_evidence=sum(len(q.malformed) for q in questions),
        unresolved_evidence=sum(len(q.unresolved) for q in questions),
        dream_seconds=dream_seconds,
        dream=dream_report,
        problems=conv.problems,
    )
    return run, results


def evaluate_locomo(
    paths: Iterable[Path | str],
    *,
    budgets: Sequence[int] = (1000, 2000),
    arms: Sequence[str] = DEFAULT_ARMS,
    recall_fn: RecallFn | None = None,
    dream_fn: DreamFn | None = None,
    stores_dir: Path | None = None,
    limit: int | None = None,
    keep_text: bool = False,
    engine: str = "embedded",
    progress: Progress | None = None,
    embed: EmbedSettings | None = None,
) -> EvalRun:
    """Evaluate every conversation in ``paths``; stores are kept under ``stores_dir`` if given.
    ``embed``: the embedder each store is configured with (``[embed]``), for the
    ``wiki-hybrid`` arm."""
    budgets = parse_budgets(budgets)
    arms = parse_arms(arms)
    if "wiki-hybrid" in arms and (embed is None or not embed.on):
        raise EvalError("the wiki-hybrid arm needs an embedder (--embed-model)")
    if any(a in _EXCLUDE for a in arms):  # fail before any work when a component is missing
        recall_fn = recall_fn or default_recall()
        dream_fn = dream_fn or default_dream(engine)
    convs: list[tuple[str, Conversation]] = []
    for path in paths:
        found = load_locomo(Path(path), SCOPE)
        if not found:  # an empty list would score nothing and print an empty report
            raise EvalError(f"{path}: no LoCoMo conversation in it")
        convs.extend((str(path), conv) for conv in found)
    ids = [c.id for _, c in convs]
    if len(set(ids)) != len(ids):
        raise EvalError("two conversations share an id; pass each file once")
    runs: list[ConversationRun] = []
    results: list[QuestionResult] = []
    for file, conv in convs:
        if stores_dir is not None:
            root = Path(stores_dir) / conv.id
            if root.exists() and any(root.iterdir()):
                raise EvalError(f"{root} already exists; remove it or choose another --out")
            run, res = _run_in(
                root, conv, file, budgets, arms, recall_fn, dream_fn, limit, keep_text, progress,
                embed,
            )  # fmt: skip
            run = dataclasses.replace(run, store=str(root))
        else:
            with tempfile.TemporaryDirectory(prefix=f"eval-{conv.id}-") as tmp:
                run, res = _run_in(
                    Path(tmp) / "store",
                    conv,
                    file,
                    budgets,
                    arms,
                    recall_fn,
                    dream_fn,
                    limit,
                    keep_text,
                    progress,
                    embed,
                )
        runs.append(run)
        results.extend(res)
    return EvalRun(
        budgets=budgets,
        arms=arms,
        conversations=tuple(runs),
        results=tuple(results),
        tokenizer=TOKENIZER,
    )


def _run_in(
    root: Path,
    conv: Conversation,
    file: str,
    budgets: Sequence[int],
    arms: Sequence[str],
    recall_fn: RecallFn | None,
    dream_fn: DreamFn | None,
    limit: int | None,
    keep_text: bool,
    progress: Progress | None,
    embed: EmbedSettings | None = None,
) -> tuple[ConversationRun, list[QuestionResult]]:
    store = init_store(root, SCOPE["user"], SCOPE["assistant"])
    if embed is not None and embed.on:
        store.configure(dataclasses.replace(store.config, embed=embed), "eval: hybrid's embedder")
        store = Store.open(store.root)
    return evaluate_conversation(
        conv,
        store,
        budgets=budgets,
        arms=arms,
        recall_fn=recall_fn,
        dream_fn=dream_fn,
        limit=limit,
        keep_text=keep_text,
        file=file,
        progress=progress,
    )
