"""No dataclass of the package copies another field for field: a concept has one type.

A class whose every field (name and annotation, 3 or more of them) is also another's is a copy of
that other, or of a part of it.
"""

from __future__ import annotations

import ast
from itertools import permutations
from pathlib import Path

import pytest_rollout_parity

PACKAGE = Path(pytest_rollout_parity.__file__).parent


def dataclass_fields(source: str) -> dict[str, dict[str, str]]:
    """Each dataclass of ``source`` (by name) and its fields: name -> annotation."""
    found = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ClassDef) and any("dataclass" in ast.unparse(d) for d in node.decorator_list):
            found[node.name] = {
                item.target.id: ast.unparse(item.annotation)
                for item in node.body
                if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)
            }
    return found


def copies(sources: dict[str, str]) -> set[tuple[str, str]]:
    """The pairs (copy, original) of dataclasses among ``sources`` (path -> text)."""
    classes = {
        f"{path}:{name}": fields for path, text in sources.items() for name, fields in dataclass_fields(text).items()
    }
    return {
        (a, b) for a, b in permutations(classes, 2) if len(classes[a]) >= 3 and classes[a].items() <= classes[b].items()
    }


def test_no_dataclass_copies_another() -> None:
    sources = {path.relative_to(PACKAGE).as_posix(): path.read_text(encoding="utf-8") for path in PACKAGE.rglob("*.py")}
    assert copies(sources) == set()


def test_the_check_finds_a_copy() -> None:
    original = "@dataclass\nclass A:\n    x: int\n    y: str\n    z: float\n    w: bool\n"
    copy = "@dataclass(frozen=True)\nclass B:\n    x: int\n    y: str\n    z: float\n"
    assert copies({"a.py": original, "b.py": copy}) == {("b.py:B", "a.py:A")}
