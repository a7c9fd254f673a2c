"""Where the tests find what the repository holds, from one root rather than ``parents[N]``
counted in each test file (a test's depth changes with the folder it sits in)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # tests/support/paths.py -> the repository
TESTS = ROOT / "tests"
SUPPORT = TESTS / "support"  # the shared helpers, importable by name (pyproject's pythonpath)
FIXTURES = TESTS / "fixtures"  # golden inputs and trees
SAMPLE_MEMORY = ROOT / "dream" / "data" / "sample_memory"  # shipped in the wheel
SAMPLE = SAMPLE_MEMORY / "transcripts"
LOCOMO = ROOT.parent / "shared" / "data" / "locomo"  # the shared LoCoMo data, beside the checkout
