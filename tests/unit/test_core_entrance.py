"""The core's one entrance: the plugin imports the core only through `pytest_rollout_parity.core`,
whose names resolve lazily to the stage that defines them; no two modules share a name."""

from __future__ import annotations

import ast
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


def test_every_stage_says_what_it_takes_and_gives() -> None:
    for init in sorted((PACKAGE / "core").glob("*/__init__.py")):
        doc = ast.get_docstring(ast.parse(init.read_text())) or ""
        assert "Takes" in doc and "gives" in doc, init.parent.name
