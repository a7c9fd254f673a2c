"""Memory quality evaluation: LoCoMo through import -> Dream -> recall, against a BM25 baseline.

``harness`` runs the pipeline, ``scoring`` holds the pure score functions,
``baseline`` the ``bm25-turns`` arm and ``report`` the JSON, Markdown and chart.
"""

from dream.evaluation.harness import ARMS, EvalError, evaluate_locomo
from dream.evaluation.records import EvalRun
from dream.evaluation.report import render_markdown, summarize, write_outputs

__all__ = [
    "ARMS",
    "EvalError",
    "EvalRun",
    "evaluate_locomo",
    "render_markdown",
    "summarize",
    "write_outputs",
]
