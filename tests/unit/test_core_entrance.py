"""The core's one entrance: the plugin imports the core only through `pytest_rollout_parity.core`,
whose names resolve lazily to the stage that defines them; no two modules share a name."""

from __future__ import annotations

import ast
import graphlib
import importlib
from collections import Counter
from pathlib import Path

import pytest_rollout_parity.core as core

PACKAGE = Path(core.__file__).parents[1]


def test_every_entrance_name_resolves_to_the_module_the_table_names() -> None:
    assert sorted(core.__all__) == sorted(core._WHERE)
    for name in core.__all__:
        module = importlib.import_module(f"{core.__name__}.{core._WHERE[name]}")
        assert getattr(core, name) is getattr(module, name), name


def test_an_unknown_name_is_an_attribute_error() -> None:
    try:
        core.no_such_name  # noqa: B018
    except AttributeError as exc:
        assert "no_such_name" in str(exc)
    else:
        raise AssertionError("an unknown name resolved")


def test_the_plugin_imports_the_core_only_through_its_entrance() -> None:
    deep = []
    for path in sorted((PACKAGE / "plugin").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 2 and (node.module or "").startswith("core."):
                deep.append(f"{path.name}: from ..{node.module}")
    assert deep == []


def test_no_two_modules_share_a_name() -> None:
    names = Counter(path.stem for path in PACKAGE.rglob("*.py") if path.name != "__init__.py")
    assert [name for name, count in names.items() if count > 1] == []


STAGES = ("reading", "identity", "judging", "statistics", "reports")


def imported_modules(path: Path) -> set[str]:
    """The absolute names of the modules a file imports (relative ones resolved; typing-only included;
    ``from x import name`` gives ``x`` and ``x.name``, which is a module only when ``name`` is one)."""
    package = path.relative_to(PACKAGE.parent).parent.parts
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(package[: len(package) - node.level + 1]) if node.level else ""
            module = ".".join(part for part in (base, node.module) if part)
            found |= {module} if node.module else set()
            found |= {f"{module}.{alias.name}" for alias in node.names}  # a module when the name is one
    return found


def test_stages_import_only_from_earlier_stages() -> None:
    backward = []
    for path in sorted((PACKAGE / "core").rglob("*.py")):
        stage = path.relative_to(PACKAGE / "core").parts[0]
        for module in imported_modules(path) if stage in STAGES else ():
            parts = module.split(".")
            if parts[:2] == ["pytest_rollout_parity", "core"] and parts[2:3] and parts[2] in STAGES:
                if STAGES.index(parts[2]) > STAGES.index(stage):
                    backward.append(f"{path.relative_to(PACKAGE)} imports {module}")
    assert backward == []


def test_the_core_has_no_import_cycle() -> None:
    """No core module imports, through any chain, itself. Every import counts: module-level,
    typing-only (`if TYPE_CHECKING:`) and lazy ones inside functions, since a cycle put off until
    call or check time is still two modules that need each other. A package's own `__init__` is
    not counted as imported by its modules (Python runs it first, whatever they import)."""
    modules = {
        ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__"): path
        for path in (PACKAGE / "core").rglob("*.py")
    }
    graph = {name: set() for name in modules}
    for name, path in modules.items():
        for module in imported_modules(path):
            while module not in modules and "." in module:  # `from . import name` of a non-module
                module = module.rpartition(".")[0]
            if module in modules and module != name:
                graph[name].add(module)
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as exc:
        raise AssertionError(f"import cycle: {' -> '.join(exc.args[1])}") from None
