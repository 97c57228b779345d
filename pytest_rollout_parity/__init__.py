"""pytest-rollout-parity: the migration gate between two NeMo Gym rollout files.

The public names below need no pytest: the classification core is plain Python.
"""

from __future__ import annotations

from .api import compare_files, compare_rollouts
from .errors import CompareInputError
from .loading import load_rollouts
from .model import CompareResult, TaskComparison, TaskSide
from .report import summary_dict
from .verdict import Verdict

__all__ = [
    "CompareInputError",
    "CompareResult",
    "TaskComparison",
    "TaskSide",
    "Verdict",
    "compare_files",
    "compare_rollouts",
    "load_rollouts",
    "summary_dict",
]
