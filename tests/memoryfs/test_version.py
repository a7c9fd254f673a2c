"""The version and the commit it was built from: a build file, a checkout's Git, or unknown."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import git
import pytest
from paths import ROOT
from typer.testing import CliRunner

from cli.dream_app import app as dream_app
from cli.memoryfs_app import app as memoryfs_app
from memoryfs import __version__
from memoryfs.version import (
    BUILD_FILE,
    VersionInfo,
    checkout_commit,
    read_build_file,
    version_info,
)

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def _info_of(package_parent: Path) -> dict[str, object]:
    """``version_info().to_json()`` of the memoryfs package copied under ``package_parent``,
    in a fresh interpreter that sees only that copy."""
    code = "import json, memoryfs.version as v; print(json.dumps(v.version_info().to_json()))"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, {str(package_parent)!r}); "
         + code],
        capture_output=True, text=True, env=env, cwd=package_parent, timeout=60, check=True,
    )  # fmt: skip
    return json.loads(done.stdout)


def _copy_package(to: Path) -> Path:
    shutil.copytree(
        ROOT / "memoryfs", to / "memoryfs", ignore=shutil.ignore_patterns("__pycache__")
    )
    return to / "memoryfs"


def test_a_checkout_reports_its_head() -> None:
    info = version_info()
    head = git.Repo(ROOT).head.commit.hexsha
    assert (info.version, info.commit, info.source) == (__version__, head, "checkout")
    assert info.pinned.startswith(f"{__version__}+{head[:12]}")


def test_a_built_package_reports_the_commit_its_build_file_names(tmp_path: Path) -> None:
    package = _copy_package(tmp_path)
    (package / BUILD_FILE).write_text(json.dumps({"commit": COMMIT, "dirty": False}))
    info = _info_of(tmp_path)
    assert info == {
        "version": __version__,
        "commit": COMMIT,
        "dirty": False,
        "commitFrom": "build",
        "pinned": f"{__version__}+{COMMIT[:12]}",
    }


def test_without_a_build_file_or_a_checkout_the_commit_is_unknown(tmp_path: Path) -> None:
    _copy_package(tmp_path)
    info = _info_of(tmp_path)
    assert (info["commit"], info["commitFrom"], info["pinned"]) == ("", "", __version__)
    assert VersionInfo(__version__).describe() == f"{__version__} (commit unknown)"


def test_a_repository_around_an_installed_package_is_not_its_checkout(tmp_path: Path) -> None:
    repo = git.Repo.init(tmp_path)  # a project whose .venv holds the installed wheel
    site = tmp_path / ".venv" / "lib" / "site-packages"
    site.mkdir(parents=True)
    _copy_package(site)
    (tmp_path / "x").write_text("x")
    repo.index.add(["x"])
    repo.index.commit("a project")
    assert _info_of(site)["commit"] == ""


def test_checkout_commit_sees_uncommitted_changes(tmp_path: Path) -> None:
    repo = git.Repo.init(tmp_path)
    (tmp_path / "a.txt").write_text("one")
    repo.index.add(["a.txt"])
    head = repo.index.commit("first").hexsha
    (tmp_path / "new.txt").write_text("untracked files do not count")
    assert checkout_commit(tmp_path) == (head, False)
    (tmp_path / "a.txt").write_text("two")
    assert checkout_commit(tmp_path) == (head, True)
    assert checkout_commit(tmp_path / "nothing-here") is None


@pytest.mark.parametrize(
    "text",
    ["", "not json", "[]", '{"commit": "abc"}', json.dumps({"commit": COMMIT, "dirty": "no"})],
)
def test_a_malformed_build_file_is_ignored(tmp_path: Path, text: str) -> None:
    (tmp_path / BUILD_FILE).write_text(text)
    assert read_build_file(tmp_path / BUILD_FILE) is None
    assert read_build_file(tmp_path / "absent.json") is None


def test_version_commands_and_flags_print_the_same_line() -> None:
    line = version_info().describe()
    runner = CliRunner()
    for app in (memoryfs_app, dream_app):
        for argv in (["version"], ["--version"]):
            r = runner.invoke(app, argv)
            assert r.exit_code == 0 and r.stdout == line + "\n", (argv, r.output)
    data = json.loads(runner.invoke(memoryfs_app, ["version", "--json"]).stdout)
    assert data == version_info().to_json() and data["commit"]
