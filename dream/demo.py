"""The demo: build a store from the sample memory and show what Dream made of it.

Runs the real pipeline an operator would: ``init`` → ``ingest`` → ``dream run`` (the
embedded engine acts on no skill, so no approval comes first) → ``validate`` → the
prefill and one recall. The sample ships inside the package (``dream.packaged``). Nothing
here is special-cased for the sample: point ``sample`` at any folder with a
``transcripts/`` subfolder of Markdown transcripts.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from dream.engines.embedded.engine import EmbeddedEngine
from dream.errors import DreamError
from dream.packaged import sample_memory
from dream.runner import RunOptions, RunResult, run_dream
from memoryfs.index.index_md import prompt_index
from memoryfs.ingest import ingest
from memoryfs.pages.transcript import parse_transcript
from memoryfs.read.recall import RecallResult, recall
from memoryfs.store.store import Store, init_store
from memoryfs.validate.rules import validate_store

__all__ = ["DemoResult", "default_sample", "run_demo"]


@dataclass(frozen=True)
class DemoResult:
    store: Path
    sessions: int
    turns: int
    run: RunResult
    findings: int
    knowledge_pages: int
    notes: int
    summaries: int
    prefill: str
    question: str
    recall: RecallResult


def default_sample() -> Path:
    """The packaged sample memory (``dream/data/sample_memory/``)."""
    return sample_memory()


def _scope(transcripts: list[Path]) -> tuple[str, str]:
    t = parse_transcript(transcripts[0].read_text(encoding="utf-8"), str(transcripts[0]))
    user, assistant = t.scope.get("user"), t.scope.get("assistant")
    if not user or not assistant:
        raise DreamError(f"{transcripts[0]}: no scope in its frontmatter to give the store")
    return user, assistant


def _first_question(sample: Path) -> str:
    path = sample / "questions.jsonl"
    if path.is_file():
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                q = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(q, dict) and isinstance(q.get("question"), str):
                return q["question"]
    return "What does the user prefer?"


def run_demo(
    sample: Path,
    target: Path | None = None,
    progress: Callable[[str], None] = lambda message: None,
) -> DemoResult:
    transcripts = sorted((sample / "transcripts").glob("*.md"))
    if not transcripts:
        raise DreamError(f"{sample}: no transcripts/*.md to build a store from")
    if target is None:
        target = Path(tempfile.mkdtemp(prefix="memoryfs-demo-")) / "store"
    root = target
    user, assistant = _scope(transcripts)
    progress(f"init {root} ({user} / {assistant})")
    store = init_store(root, user, assistant)
    progress(f"ingest {len(transcripts)} transcripts")
    ingested = ingest(store, transcripts)
    progress("dream run (embedded engine)")
    result = run_dream(store, EmbeddedEngine(), RunOptions())
    store = Store.open(root)
    findings = validate_store(store)
    question = _first_question(sample)
    answer = recall(store, question, budget_tokens=300)
    return DemoResult(
        store=store.root,
        sessions=ingested.changed,
        turns=ingested.turns_added,
        run=result,
        findings=len(findings),
        knowledge_pages=len(store.files("knowledge")),
        notes=len(store.files("notes")),
        summaries=len(store.files("sessions/summaries")),
        prefill=prompt_index(store, 400),
        question=question,
        recall=answer,
    )
