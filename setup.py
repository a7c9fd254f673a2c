"""Build hook: record the commit a wheel is built from (everything else is in pyproject.toml).

The wheel gets ``memoryfs/_build.json`` (``{"commit", "dirty"}``), read at run time by
``memoryfs.version``. From a Git checkout the commit comes from ``git``; an sdist carries
the file, so a wheel built from the sdist (as ``python -m build`` does) keeps it. The file
is written into the build's copy of the package, never into the source tree, and not for
an editable install (it runs from the checkout and asks ``git`` itself). No network.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.sdist import sdist

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from memoryfs.version import BUILD_FILE, checkout_commit, read_build_file  # noqa: E402


def _build_info() -> str | None:
    """The build file's text: from ``git`` here, else the file an unpacked sdist holds."""
    found = checkout_commit(HERE) or read_build_file(HERE / "memoryfs" / BUILD_FILE)
    if found is None:
        return None
    commit, dirty = found
    return json.dumps({"commit": commit, "dirty": dirty}) + "\n"


class BuildPy(build_py):
    def run(self) -> None:
        super().run()
        info = _build_info()
        if info is not None and not getattr(self, "editable_mode", False):
            Path(self.build_lib, "memoryfs", BUILD_FILE).write_text(info, encoding="utf-8")


class Sdist(sdist):
    def make_release_tree(self, base_dir: str, files: list[str]) -> None:
        super().make_release_tree(base_dir, files)
        info = _build_info()
        if info is not None:
            target = Path(base_dir, "memoryfs", BUILD_FILE)
            target.unlink(missing_ok=True)  # a hard link to the source tree's file, if any
            target.write_text(info, encoding="utf-8")


setup(cmdclass={"build_py": BuildPy, "sdist": Sdist})
