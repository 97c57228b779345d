"""pytest-rollout-parity: the migration gate between two NeMo Gym rollout files.

The public names below need no pytest: they come from the pure core. They are imported on first
use, so a pytest run that loads the plugin without using it never imports the core.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .core import (
        CompareInputError,
        CompareResult,
        TaskComparison,
        TaskSide,
        Verdict,
        compare_files,
        compare_rollouts,
        load_rollouts,
        summary_dict,
    )

_PUBLIC = (
    "CompareInputError",
    "CompareResult",
    "TaskComparison",
    "TaskSide",
    "Verdict",
    "compare_files",
    "compare_rollouts",
    "load_rollouts",
    "summary_dict",
)

__all__ = sorted(_PUBLIC)


def __getattr__(name: str) -> Any:
    """Import a public name from the core's entrance, on first use.

    Not cached here: looked up in ``sys.modules`` each time, so a name always comes from the module
    the plugin uses too, also after an in-process pytester run dropped the modules it imported.
    """
    if name not in _PUBLIC:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(".core", __name__), name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_PUBLIC))
