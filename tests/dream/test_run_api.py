"""``dream.run(store)``: the run as a call, with the embedded engine by default."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from examples import run_examples

import dream.runner
from dream.errors import DreamError
from memoryfs.store.store import init_store


def test_the_run_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert run_examples(dream.runner, tmp_path, monkeypatch) >= 5


def test_dream_run_is_the_function_in_a_fresh_process_either_way_it_is_imported() -> None:
    """``import dream`` loads no run module; ``dream.run`` stays the function after the
    run's module (``dream.runner``) is imported, before or after ``dream``."""
    code = (
        "import sys, types, dream\n"
        "light = 'dream.runner' not in sys.modules\n"
        "from dream.runner import run_dream\n"
        "print(light, isinstance(dream.run, types.FunctionType), run_dream.__name__)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["True", "True", "run_dream"]
    code = "from dream.runner import RunOptions\nimport dream, types\n"
    code += "print(isinstance(dream.run, types.FunctionType))\n"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "True"


def test_a_path_an_engine_name_and_unknown_options(tmp_path: Path) -> None:
    store = init_store(tmp_path / "store", "dana", "atlas")
    assert dream.run(str(store.root), "embedded", allow_unapproved=True).status == (
        "nothing-pending"
    )
    with pytest.raises(DreamError, match="unknown run option.*dryrun"):
        dream.run(store, dryrun=True)
    with pytest.raises(DreamError, match="unknown engine 'nope'"):
        dream.run(store, "nope")
