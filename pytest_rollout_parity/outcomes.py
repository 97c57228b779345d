"""The default outcome of a task's item, by category (CONTRACT.md, Test items)."""

from __future__ import annotations

from typing import Callable

from .model import TaskComparison
from .verdict import Verdict


def _masked_reason(comparison: TaskComparison) -> str:
    parts = []
    for name in ("old", "new"):
        side = comparison.side(name)  # type: ignore[arg-type]
        if side is not None and side.masked:
            parts.append(f"{name} side masked: {side.masked}")
    return f"{comparison.task}: " + "; ".join(parts)


def _missing_reason(comparison: TaskComparison) -> str:
    present, absent = ("old", "new") if comparison.new is None else ("new", "old")
    return f"{comparison.task}: only the {present} side has this task (missing from the {absent} file)"


def _agent_error_reason(comparison: TaskComparison) -> str:
    errors = [
        f"{name} agent error: {side.agent_error}"
        for name in ("old", "new")
        if (side := comparison.side(name)) is not None and side.agent_error  # type: ignore[arg-type]
    ]
    return (
        f"{comparison.task}: old={comparison.old.reward_text() if comparison.old else 'none'} "
        f"new={comparison.new.reward_text() if comparison.new else 'none'} with {'; '.join(errors)}; "
        "not a counted flip: rerun the task"
    )


def default_verdict(comparison: TaskComparison, strict: bool, flip_message: Callable[[], str]) -> Verdict:
    """passed / failed / xfail for the task's category; ``flip_message`` is called only for a failure."""
    category = comparison.category
    if category == "identical":
        return Verdict.passed()
    if category == "flipped":
        return Verdict.failed(flip_message())
    if category == "flipped_agent_error":
        return Verdict.failed(flip_message()) if strict else Verdict.xfail(_agent_error_reason(comparison))
    reason = _masked_reason(comparison) if category == "masked" else _missing_reason(comparison)
    return Verdict.failed(reason) if strict else Verdict.xfail(reason)
