"""The `rollout_pair` fixture's tests: one case per joined task for the team's own checks.

The fixture itself (which skips when no rollout files are given) lives in the entry point, so that
it exists in runs that never import the gate. Each test that requests it is one of the team's
checks: it carries :data:`CHECK_PROPERTY` (its task) in its reports, so the summary finds it
wherever it ran (an xdist worker's report arrives on the controller with it).
"""

from __future__ import annotations

from typing import Optional

import pytest

from ..core import TaskComparison
from .run import ParityRun

FIXTURE = "rollout_pair"
#: the user property of a team's check: the label of the task it checks
CHECK_PROPERTY = "parity_check"
#: the team's checks this process collected (before any selection), their tasks by node id
CHECKS_KEY = pytest.StashKey[dict[str, str]]()


def parametrize_rollout_pair(metafunc: pytest.Metafunc, run: ParityRun) -> None:
    """One case per joined task in the items' order; ids are the task labels (an empty one: its item name)."""
    if FIXTURE in metafunc.fixturenames:
        ids = [task.task or name for task, name in zip(run.result.tasks, run.names)]
        metafunc.parametrize(FIXTURE, run.result.tasks, ids=ids)


def check_task(item: pytest.Item) -> Optional[str]:
    """The task a team's check checks (a test that requests `rollout_pair`); None for any other item."""
    if FIXTURE not in getattr(item, "fixturenames", ()):
        return None
    callspec = getattr(item, "callspec", None)
    pair = callspec.params.get(FIXTURE) if callspec is not None else None
    return pair.task if isinstance(pair, TaskComparison) else None


def mark_checks(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Give each of the team's checks among ``items`` its :data:`CHECK_PROPERTY`, and keep their tasks
    by node id in ``config.stash`` (:data:`CHECKS_KEY`)."""
    found = config.stash.setdefault(CHECKS_KEY, {})
    for item in items:
        task = check_task(item)
        if task is None:
            continue
        found[item.nodeid] = task
        if (CHECK_PROPERTY, task) not in item.user_properties:
            item.user_properties.append((CHECK_PROPERTY, task))
