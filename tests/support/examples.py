"""Run a module's docstring examples (doctest) as one test, in order, sharing names.

The examples of the documented API build their store in the module docstring and use
it in each method's, so they run in source order with one namespace; their temporary
folders go under the test's ``tmp_path``.
"""

from __future__ import annotations

import doctest
import io
import tempfile
from pathlib import Path
from types import ModuleType

import pytest

FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def run_examples(module: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> int:
    """Run every example of ``module``; fails the test with doctest's report on a
    mismatch. Returns how many examples ran."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    tests = [t for t in doctest.DocTestFinder().find(module) if t.examples]
    tests.sort(key=lambda t: t.lineno or 0)
    out = io.StringIO()
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    names: dict[str, object] = {}
    for test in tests:
        test.globs = names
        runner.run(test, out=out.write, clear_globs=False)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, out.getvalue()
    return result.attempted
