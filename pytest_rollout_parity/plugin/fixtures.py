"""The `rollout_pair` fixture: one case per joined task for the user's own per-task checks."""

from __future__ import annotations

import pytest

from .run import ParityRun


@pytest.fixture
def rollout_pair() -> None:
    """A task's comparison; parametrized per task when --parity-old/--parity-new are given."""
    pytest.skip("rollout_pair needs --parity-old and --parity-new (no rollout files to compare)")


def parametrize_rollout_pair(metafunc: pytest.Metafunc, run: ParityRun) -> None:
    """One case per joined task in the items' order; ids are the task labels (an empty one: its item name)."""
    if "rollout_pair" in metafunc.fixturenames:
        ids = [task.task or name for task, name in zip(run.result.tasks, run.names)]
        metafunc.parametrize("rollout_pair", run.result.tasks, ids=ids)
