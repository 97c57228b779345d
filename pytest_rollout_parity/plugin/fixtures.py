"""Parametrizing the `rollout_pair` fixture: one case per joined task for the user's own checks.

The fixture itself (which skips when no rollout files are given) lives in the entry point, so that
it exists in runs that never import the gate.
"""

from __future__ import annotations

import pytest

from .run import ParityRun


def parametrize_rollout_pair(metafunc: pytest.Metafunc, run: ParityRun) -> None:
    """One case per joined task in the items' order; ids are the task labels (an empty one: its item name)."""
    if "rollout_pair" in metafunc.fixturenames:
        ids = [task.task or name for task, name in zip(run.result.tasks, run.names)]
        metafunc.parametrize("rollout_pair", run.result.tasks, ids=ids)
