"""pytest-rollout-parity: the migration gate between two NeMo Gym rollout files.

The public names (``__all__``) need no pytest: they come from the pure core. The plugin's entry
point is imported from this package in every pytest run, so they are imported on first use: a run
that loads the plugin without using it never imports the core.
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
        rollout_pairs,
        summary_dict,
    )

__all__ = [
    "CompareInputError",
    "CompareResult",
    "TaskComparison",
    "TaskSide",
    "Verdict",
    "compare_files",
    "compare_rollouts",
    "load_rollouts",
    "rollout_pairs",
    "summary_dict",
]


def __getattr__(name: str) -> Any:
    """Import a public name from the core's entrance, on first use.

    Not cached here: looked up in ``sys.modules`` each time, so a name always comes from the module
    the plugin uses too, also after an in-process pytester run dropped the modules it imported.
    """
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(".core", __name__), name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
