"""The core's one entrance: the plugin imports the core only through `pytest_rollout_parity.core`,
whose imports are the names the package outside the core takes from it; no two modules share a name."""

from __future__ import annotations

import ast
import graphlib
from collections import Counter
from pathlib import Path

import pytest_rollout_parity.core as core

PACKAGE = Path(core.__file__).parents[1]


def names_taken_from_the_core() -> set[str]:
    """The names the plugin, the package's own entrance and its command take from the core (by a
    `from ..core import` or as `core.<name>`, which a test can patch)."""
    files = [*(PACKAGE / "plugin").glob("*.py"), PACKAGE / "__init__.py", PACKAGE / "__main__.py"]
    taken = set()
    for path in files:
        level = 2 if path.parent.name == "plugin" else 1
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == level and node.module == "core":
                taken |= {alias.name for alias in node.names}
            elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "core":
                taken.add(node.attr)
    return taken


def test_the_entrance_lists_what_it_imports_and_what_is_taken() -> None:
    imported = {name for name, value in vars(core).items() if not name.startswith("_") and name != "annotations"}
    imported -= {name for name in imported if type(getattr(core, name)).__name__ == "module"}
    assert sorted(imported - names_taken_from_the_core()) == []  # no name kept for no one


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
