"""The package as a user installs it: the sdist and wheel carry the skills, the sample memory
and the commit they were built from, and the installed copy runs away from the source tree.

Builds from a copy of the checkout's files (its own Git repository, one commit) with
``python -m build --no-isolation`` (setuptools and build come with the test extra), so the
test needs no network; installs the wheel with ``pip --no-deps --target`` and runs it from
another folder with only that copy importable besides the dependencies. ``.ci/run`` does
the same into a fresh virtual environment and runs ``dream demo`` there.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
from paths import ROOT

DATA = "dream/data/"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    """(wheel, sdist, commit) built from a one-commit copy of the checkout's files."""
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    if listed.returncode != 0:
        pytest.skip("not a Git checkout: nothing to build from")
    src = tmp_path_factory.mktemp("wheel") / "src"
    for rel in filter(None, listed.stdout.split("\0")):
        if (ROOT / rel).is_file():  # the working tree's bytes: uncommitted edits included
            (src / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, src / rel)

    def git(*args: str) -> str:
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        env |= {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid"}
        env |= {"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}
        done = subprocess.run(
            ["git", *args], cwd=src, capture_output=True, text=True, env=env, check=True
        )
        return done.stdout.strip()

    git("init", "-q")
    git("add", "-A")
    git("commit", "-q", "-m", "build me")
    dist = src.parent / "dist"
    done = subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(dist), str(src)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (wheel,) = dist.glob("*.whl")
    (sdist,) = dist.glob("*.tar.gz")
    return wheel, sdist, git("rev-parse", "HEAD")


def _shipped() -> set[str]:
    """The package data the checkout holds (every file under dream/data/)."""
    return {p.relative_to(ROOT).as_posix() for p in (ROOT / DATA).rglob("*") if p.is_file()}


def test_the_wheel_and_the_sdist_carry_the_skills_the_sample_and_the_commit(
    built: tuple[Path, Path, str],
) -> None:
    wheel, sdist, commit = built
    shipped = _shipped()
    assert {f"{DATA}skills/dream/SKILL.md", f"{DATA}skills/memory-agent/SKILL.md"} <= shipped
    assert len([p for p in shipped if p.startswith(f"{DATA}sample_memory/transcripts/")]) >= 25
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        build = json.loads(z.read("memoryfs/_build.json"))
    assert shipped <= names, sorted(shipped - names)
    assert build == {"commit": commit, "dirty": False}
    with tarfile.open(sdist) as t:
        top = t.getnames()[0].split("/")[0]
        in_sdist = {n.removeprefix(f"{top}/") for n in t.getnames()}
    assert shipped | {"memoryfs/_build.json", "setup.py"} <= in_sdist


def test_the_installed_wheel_runs_away_from_the_source_tree(
    built: tuple[Path, Path, str], tmp_path: Path
) -> None:
    wheel, _, commit = built
    site = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index",
         "--target", str(site), str(wheel)],
        capture_output=True, text=True, timeout=300, check=True,
    )  # fmt: skip
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    # the installed copy comes first on the path (the checkout's editable finder comes last)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "MEMORYFS_", "DREAM_"))}
    env["PYTHONPATH"] = str(site)

    def run(app: str, *args: str) -> str:
        code = f"import sys; from cli.{app}_app import main; sys.argv[0] = {app!r}; main()"
        done = subprocess.run(
            [sys.executable, "-c", code, *args],
            cwd=elsewhere, capture_output=True, text=True, env=env, timeout=120, check=False,
        )  # fmt: skip
        assert done.returncode == 0, (args, done.stdout[-2000:], done.stderr[-2000:])
        return done.stdout

    version = json.loads(run("memoryfs", "version", "--json"))
    assert (version["commit"], version["commitFrom"]) == (commit, "build")
    skill = Path(run("dream", "skills", "path").strip())
    assert skill.is_relative_to(site) and skill.is_file()
    sample = site / DATA / "sample_memory" / "transcripts"
    first = sorted(sample.glob("*.md"))[0]
    store = str(elsewhere / "store")
    run("memoryfs", "init", store, "--user", "dana", "--assistant", "atlas")
    run("memoryfs", "ingest", str(first), "--store", store)
    ran = json.loads(run("dream", "run", "--store", store, "--json"))  # no approval first
    assert ran["status"] == "committed" and ran["skill"] == "none"
    assert ran["sourceVersion"].startswith(f"memoryfs={version['pinned']};")
