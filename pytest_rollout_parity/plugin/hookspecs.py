"""Hook specifications a conftest.py can implement to take part in the gate."""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import pluggy

if TYPE_CHECKING:
    import pytest

    from ..core import TaskComparison, Verdict

hookspec = pluggy.HookspecMarker("pytest")


@hookspec(firstresult=True)
def pytest_parity_verdict(comparison: TaskComparison, config: pytest.Config) -> Optional[Verdict]:
    """Decide the outcome of one task's item, or return None to keep the default.

    Called once per parity item as it runs, with the task's comparison. The task's category in the
    summary stays what the data says; the item's outcome follows the returned verdict, and the
    summary counts how many verdicts hooks changed. Example: accept reviewed flips::

        # conftest.py
        from pytest_rollout_parity import Verdict

        KNOWN = {"fix-git": "flaky upstream test, reviewed in #123"}

        def pytest_parity_verdict(comparison, config):
            if comparison.category == "flipped" and comparison.task in KNOWN:
                return Verdict.passed(KNOWN[comparison.task])
            return None
    """
