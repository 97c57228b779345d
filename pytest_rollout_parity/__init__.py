"""pytest-rollout-parity: the migration gate between two NeMo Gym rollout files.

The public names below need no pytest: they come from the pure core. They are imported on first
use, so a pytest run that loads the plugin without using it never imports the core.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .core.api import compare_files, compare_rollouts
    from .core.errors import CompareInputError
    from .core.loading import load_rollouts
    from .core.model import CompareResult, TaskComparison, TaskSide
    from .core.render_json import summary_dict
    from .core.verdict import Verdict

_PUBLIC = {
    "CompareInputError": "errors",
    "CompareResult": "model",
    "TaskComparison": "model",
    "TaskSide": "model",
    "Verdict": "verdict",
    "compare_files": "api",
    "compare_rollouts": "api",
    "load_rollouts": "loading",
    "summary_dict": "render_json",
}

__all__ = sorted(_PUBLIC)


def __getattr__(name: str) -> Any:
    """Import a public name from the core module that defines it, on first use.

    Not cached here: looked up in ``sys.modules`` each time, so a name always comes from the module
    the plugin uses too, also after an in-process pytester run dropped the modules it imported.
    """
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".core.{module}", __name__), name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_PUBLIC))
