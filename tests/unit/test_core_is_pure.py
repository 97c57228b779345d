"""The core runs without pytest: every module of `pytest_rollout_parity.core` imports where pytest
and pluggy cannot be imported (pydantic, a declared dependency, may describe the summary's layout)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import pytest_rollout_parity.core as core

pytestmark = pytest.mark.slow  # each test starts an interpreter of its own

BLOCKER = r"""
import importlib, importlib.abc, pkgutil, sys

BLOCKED = ("pytest", "_pytest", "pluggy")

class Blocker(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ImportError(f"blocked for this test: {name}")
        return None

sys.meta_path.insert(0, Blocker())
import pytest_rollout_parity
import pytest_rollout_parity.core as core
names = sorted(info.name for info in pkgutil.walk_packages(core.__path__, core.__name__ + "."))
for name in names:
    importlib.import_module(name)
leaked = sorted(m for m in sys.modules if m.split(".")[0] in BLOCKED)
print(len(names), "modules;", "leaked:", leaked)
"""


def test_every_core_module_imports_without_pytest_or_pluggy() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", BLOCKER], capture_output=True, text=True, cwd=str(Path(__file__).parents[2])
    )
    assert proc.returncode == 0, proc.stderr
    root = Path(core.__path__[0])
    count = sum(1 for path in root.rglob("*.py") if path.name != "__init__.py") + len(list(root.glob("*/__init__.py")))
    assert proc.stdout.split() == [str(count), "modules;", "leaked:", "[]"], proc.stdout


def test_the_blocker_does_block() -> None:
    """The check can fail: a module that imports pytest is refused under the same blocker."""
    code = BLOCKER.split("import pytest_rollout_parity\n")[0] + "import pytest\n"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode != 0 and "blocked for this test: pytest" in proc.stderr
