"""pytest-rollout-parity: the migration gate between two NeMo Gym rollout files.

The public names come from the pure core, imported on first use: the plugin's entry point imports
this package in every pytest run, and a run that leaves the gate unused imports none of the core.
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
    """A public name from the core, looked up each time (not cached): also after an in-process
    pytester run dropped the modules it imported, it comes from the module the plugin uses."""
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(".core", __name__), name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
