"""Each task item's default pytest outcome, from the category the core gave the task.

The core decides what a task is (its category, and in margin mode whether a flip is shown to be a
regression) and words the reasons; this is where those decisions become pytest's outcomes:
identical passes, a flip fails (or, in margin mode, is an expected failure when not shown to be a
regression), and a task the gate could not compare is an expected failure (a failure under
`--parity-strict`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Optional

from ..core import FlipJudgement, TaskComparison, Verdict, uncompared_reason


def default_verdict(
    comparison: TaskComparison,
    render_flip: Callable[[], str],
    *,
    strict: bool,
    judgement: Optional[FlipJudgement] = None,
) -> Verdict:
    """passed / failed / xfail for the task's category; ``render_flip`` is called only for a failure.

    ``judgement`` is margin mode's view of a flip: one not shown to be a regression xfails.
    """
    return _by_category(comparison, render_flip, strict, judgement).by("category")


def _by_category(
    comparison: TaskComparison, render_flip: Callable[[], str], strict: bool, judgement: Optional[FlipJudgement]
) -> Verdict:
    category = comparison.category
    if category == "identical":
        return Verdict.passed()
    if category == "flipped":
        if judgement is not None and not judgement.regression:
            return Verdict.xfail(judgement.text)
        return Verdict.failed(render_flip())
    if category == "flipped_agent_error":
        return Verdict.failed(render_flip()) if strict else Verdict.xfail(uncompared_reason(comparison))
    return Verdict.failed(uncompared_reason(comparison)) if strict else Verdict.xfail(uncompared_reason(comparison))
