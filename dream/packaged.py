"""The files shipped inside the ``dream`` package: the skills and the sample memory.

They live under ``dream/data/`` (``skills/<name>/SKILL.md``, ``sample_memory/``) and are
found with ``importlib.resources``, so a source checkout, an editable install and an
installed wheel resolve them alike. Callers get real file-system paths (the command
engine hands the skill's path to an external agent); a package imported from a zip
archive has its files extracted once, for the life of the process.
"""

from __future__ import annotations

import atexit
import contextlib
from importlib import resources
from pathlib import Path

__all__ = ["DATA", "sample_memory", "skill_file"]

DATA = "data"  # the folder inside the package
_extracted = contextlib.ExitStack()
atexit.register(_extracted.close)


def _path(*parts: str) -> Path:
    target = resources.files("dream").joinpath(DATA, *parts)
    if isinstance(target, Path):
        return target
    return _extracted.enter_context(resources.as_file(target))


def skill_file(name: str) -> Path:
    """``skills/<name>/SKILL.md`` as shipped (it may be missing from a trimmed install)."""
    return _path("skills", name, "SKILL.md")


def sample_memory() -> Path:
    """The sample memory folder (``transcripts/*.md``, ``questions.jsonl``, ``chatlogs/``)."""
    return _path("sample_memory")
