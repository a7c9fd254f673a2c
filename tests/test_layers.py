"""Boundaries: memoryfs never imports dream or cli; dream never imports cli; inside dream,
the claim checker (gates), the engines, the page model (wiki) and the language modules never
import a phase or anything above the phases, and the phases hand each other return values."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FORBIDDEN = {"memoryfs": ("dream", "cli"), "dream": ("cli",)}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_lower_layers_never_import_higher_ones(package: str) -> None:
    offenders = []
    for path in sorted((ROOT / package).rglob("*.py")):
        bad = _imports(path) & set(FORBIDDEN[package])
        if bad:
            offenders.append(f"{path.relative_to(ROOT)} imports {sorted(bad)}")
    assert not offenders, offenders


def test_no_grab_bag_modules() -> None:
    banned = {"utils.py", "helpers.py", "misc.py", "common.py"}
    found = [
        p
        for pkg in ("memoryfs", "dream", "cli")
        for p in (ROOT / pkg).rglob("*.py")
        if p.name in banned
    ]
    assert not found


def _modules(package: str) -> list[tuple[str, Path]]:
    return [
        (".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__"), p)
        for p in sorted((ROOT / package.replace(".", "/")).rglob("*.py"))
    ]


def _dotted_imports(path: Path) -> set[str]:
    """Every module ``path`` imports, by full dotted name (``from a.b import c`` gives both
    ``a.b`` and ``a.b.c``, since ``c`` may be a module)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def _under(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


# Above the phases: what runs them (the run, its operations and front ends).
ABOVE_PHASES = (
    "dream.phases",
    "dream.runner",
    "dream.health",
    "dream.evaluation",
    "dream.multistore",
    "dream.watch",
    "dream.demo",
)
BELOW_PHASES = ("dream.gates", "dream.engines", "dream.wiki", "dream.language")


@pytest.mark.parametrize("package", BELOW_PHASES)
def test_gates_engines_and_the_page_model_never_import_a_phase(package: str) -> None:
    offenders = [
        f"{name} imports {sorted(n for n in _dotted_imports(path) if _under(n, ABOVE_PHASES))}"
        for name, path in _modules(package)
        if any(_under(n, ABOVE_PHASES) for n in _dotted_imports(path))
    ]
    assert not offenders, offenders


def test_the_language_modules_stand_alone() -> None:
    """dream.language (word lists, sentences, dates, entities) imports nothing of Dream's
    but itself: the engines, the gates and the page model all build on it."""
    offenders = [
        f"{name} imports {sorted(bad)}"
        for name, path in _modules("dream.language")
        if (
            bad := {n for n in _dotted_imports(path) if _under(n, ("dream",))}
            - {n for n in _dotted_imports(path) if _under(n, ("dream.language",))}
        )
    ]
    assert not offenders, offenders


def test_only_the_cli_imports_the_evaluation() -> None:
    offenders = [
        name
        for package in ("memoryfs", "dream")
        for name, path in _modules(package)
        if not _under(name, ("dream.evaluation",))
        and any(_under(n, ("dream.evaluation",)) for n in _dotted_imports(path))
    ]
    assert not offenders, offenders


def test_phases_hand_on_return_values_not_shared_fields() -> None:
    """No phase sets a field of the run's ``Workset`` (``ws.x = ...``): what one phase makes
    for the next is its return value (``Summarized``, ``Attached``)."""
    offenders = []
    for name, path in _modules("dream.phases"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[ast.expr] = []
            if isinstance(node, ast.Assign):
                targets = list(node.targets)
            elif isinstance(node, ast.AugAssign | ast.AnnAssign):
                targets = [node.target]
            for target in targets:
                if (
                    isinstance(target, ast.Attribute)
                    and isinstance(target.value, ast.Name)
                    and target.value.id == "ws"
                ):
                    offenders.append(f"{name}:{node.lineno} sets ws.{target.attr}")
    assert not offenders, offenders
    for phase in ("summarize", "attach"):
        tree = ast.parse((ROOT / "dream" / "phases" / f"{phase}.py").read_text(encoding="utf-8"))
        run = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "run")
        returns = ast.unparse(run.returns) if run.returns else "None"
        assert returns != "None", f"dream.phases.{phase}.run returns nothing"


def test_only_the_fleet_imports_celery_and_redis() -> None:
    """Celery and redis-py are the [fleet] extra: no other module imports them (lazily or
    not), and inside the fleet only ``dream.fleet.app`` imports Celery."""
    offenders = []
    for package in ("memoryfs", "dream", "cli"):
        for name, path in _modules(package):
            used = {n for n in _dotted_imports(path) if _under(n, ("celery", "redis", "kombu"))}
            allowed: set[str] = set()
            if _under(name, ("dream.fleet",)):
                allowed = {n for n in used if _under(n, ("redis",))}
            if name == "dream.fleet.app":
                allowed = used
            if used - allowed:
                offenders.append(f"{name} imports {sorted(used - allowed)}")
    assert not offenders, offenders
