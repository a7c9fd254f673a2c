"""The tree: the packages' folders show the pipeline, and tests/ mirrors them.

Prints the package tree of memoryfs/, dream/ and cli/, modules per package with their line
counts (``pytest -s tests/test_layout.py`` shows it), and fails where a folder asks for
subfolders: more than ``MAX_MODULES`` modules side by side in a package (``__init__.py`` not
counted), or more than ``MAX_TEST_FILES`` test files side by side in a folder of tests/.
Every test folder is a package named after the one it tests (or a whole-system folder such
as e2e/), so ``tests/dream`` is ``tests.dream`` and never hides the real ``dream``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from pathlib import Path

import pytest
from paths import ROOT, TESTS

PACKAGES = ("memoryfs", "dream", "cli")
MAX_MODULES = 15
MAX_TEST_FILES = 15
NOT_TEST_FOLDERS = {"support", "fixtures", "__pycache__"}  # helpers and golden inputs
WHOLE_SYSTEM = {"e2e"}  # test folders that mirror no package: the system through its CLIs


def modules(folder: Path) -> list[Path]:
    """The modules side by side in ``folder``, ``__init__.py`` not counted."""
    return sorted(p for p in folder.glob("*.py") if p.name != "__init__.py")


def files_of_tests(folder: Path) -> list[Path]:
    """The test files side by side in ``folder``."""
    return sorted(folder.glob("test_*.py"))


def packages(top: Path) -> list[Path]:
    """``top`` and every package below it, parents before their subpackages."""
    return sorted(p.parent for p in top.rglob("__init__.py") if "__pycache__" not in p.parts)


def folders_of_tests(tests: Path) -> list[Path]:
    """``tests`` and every folder below it that holds tests (not helpers, not fixtures)."""
    below = (
        p
        for p in tests.rglob("*")
        if p.is_dir() and not NOT_TEST_FOLDERS & set(p.relative_to(tests).parts)
    )
    return [tests, *sorted(below)]


def _lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def tree(top: Path) -> str:
    """Each package under ``top`` with its module and line totals, then its modules."""
    out = []
    for package in packages(top):
        rel = package.relative_to(top.parent)
        indent = "  " * (len(rel.parts) - 1)
        counts = [(m.name, _lines(m)) for m in modules(package)]
        total = sum(n for _, n in counts)
        noun = "module" if len(counts) == 1 else "modules"
        out.append(f"{indent}{package.name}/  ({len(counts)} {noun}, {total:,} lines)")
        out += [f"{indent}  {name:<28}{n:>6}" for name, n in counts]
    return "\n".join(out)


def crowded(folders: Iterable[Path], files: Callable[[Path], list[Path]], limit: int) -> list[str]:
    """The folders holding more than ``limit`` files side by side, each with its files."""
    return [
        f"{folder}: {len(found)} > {limit}: {' '.join(p.name for p in found)}"
        for folder in folders
        if len(found := files(folder)) > limit
    ]


@pytest.mark.parametrize("package", PACKAGES)
def test_no_package_holds_more_than_max_modules_side_by_side(package: str) -> None:
    print(f"\n{tree(ROOT / package)}")
    assert not crowded(packages(ROOT / package), modules, MAX_MODULES)


def test_no_test_folder_holds_more_than_max_test_files_side_by_side() -> None:
    assert not crowded(folders_of_tests(TESTS), files_of_tests, MAX_TEST_FILES)


def test_every_test_folder_is_a_package_named_after_the_one_it_tests() -> None:
    wrong = []
    for folder in folders_of_tests(TESTS)[1:]:
        rel = folder.relative_to(TESTS)
        if not (folder / "__init__.py").is_file():
            wrong.append(f"tests/{rel}: no __init__.py")
        if rel.parts[0] not in WHOLE_SYSTEM and not (ROOT / rel / "__init__.py").is_file():
            wrong.append(f"tests/{rel}: {rel} is no package")
    assert not wrong, wrong


@pytest.mark.parametrize("package", PACKAGES)
def test_the_test_packages_never_hide_the_real_ones(package: str) -> None:
    real = Path(importlib.import_module(package).__file__ or "")
    mirror = Path(importlib.import_module(f"tests.{package}").__file__ or "")
    assert real == ROOT / package / "__init__.py"
    assert mirror == TESTS / package / "__init__.py"


def test_the_checks_see_a_crowded_folder(tmp_path: Path) -> None:
    pkg, tests = tmp_path / "pkg", tmp_path / "tests"
    (pkg / "sub").mkdir(parents=True)
    (tests / "sub").mkdir(parents=True)
    for folder in (pkg, pkg / "sub"):
        (folder / "__init__.py").write_text('"""A package."""\n')
    for i in range(MAX_MODULES):
        (pkg / "sub" / f"m{i}.py").write_text("x = 1\ny = 2\n")
        (tests / "sub" / f"test_m{i}.py").write_text("")
    assert crowded(packages(pkg), modules, MAX_MODULES) == []
    assert crowded(folders_of_tests(tests), files_of_tests, MAX_TEST_FILES) == []
    assert f"  sub/  ({MAX_MODULES} modules, {2 * MAX_MODULES} lines)" in tree(pkg)
    (pkg / "sub" / "one_more.py").write_text("")
    (tests / "sub" / "test_one_more.py").write_text("")
    found = crowded(packages(pkg), modules, MAX_MODULES)
    assert [c.split(":")[0] for c in found] == [str(pkg / "sub")]
    found = crowded(folders_of_tests(tests), files_of_tests, MAX_TEST_FILES)
    assert [c.split(":")[0] for c in found] == [str(tests / "sub")]
