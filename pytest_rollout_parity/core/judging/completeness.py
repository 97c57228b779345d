"""Completeness as part of the verdict: does the new side cover the old side's tasks?

A task the new run never wrote (missing) or wrote without a verdict (masked) xfails on its own;
too many of them mean the new run is unfinished or broken, whatever its flips say. The limits are
a count or a percentage of the old side's tasks; the rule is in docs/semantics.md, "Coverage".
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

from ..model import CompareResult

COVERAGE_NAME = "parity-coverage"
"""The item name of the coverage check; a task whose item name would collide takes the collision suffix."""

#: The defaults: a finished run misses no task and masks few (docs/semantics.md, "Coverage").
DEFAULT_MAX_MISSING = "20%"
DEFAULT_MAX_MASKED = "30%"
OFF = "off"


@dataclass(frozen=True)
class Limit:
    """At most ``count`` tasks, or at most ``percent`` % of the old side's tasks rounded up to a whole
    task (so any percentage above 0 allows one lost task); neither: no limit."""

    text: str
    count: Optional[int] = None
    percent: Optional[float] = None

    def allowed(self, old_tasks: int) -> Optional[int]:
        """The most tasks allowed among ``old_tasks``; None when the limit is off."""
        if self.count is not None:
            return self.count
        if self.percent is not None:
            return math.ceil(self.percent * old_tasks / 100 - 1e-9)
        return None


def parse_limit(text: str) -> Limit:
    """`N` (tasks), `P%` (of the old side's tasks) or `off`; ValueError naming what is wrong."""
    value = text.strip()
    if value.lower() == OFF:
        return Limit(OFF)
    try:
        if value.endswith("%"):
            percent = float(value[:-1])
            if not (math.isfinite(percent) and 0 <= percent <= 100):
                raise ValueError
            return Limit(value, percent=percent)
        count = int(value)
        if count < 0:
            raise ValueError
        return Limit(value, count=count)
    except ValueError:
        raise ValueError("must be a count of tasks (3), a percentage of the old side's tasks (10%) or off") from None


@dataclass(frozen=True)
class Coverage:
    """How much of the old side the new side covers, against both limits, and the item's message."""

    old_tasks: int
    missing: int
    masked: int
    max_missing: Limit
    max_masked: Limit
    passed: bool
    message: str


def _part(what: str, found: int, total: int, limit: Limit, unit: str = "old task(s)") -> tuple[bool, str]:
    allowed = limit.allowed(total)
    over = allowed is not None and found > allowed
    shown = "off" if allowed is None else limit.text + (f" = {allowed}" if limit.percent is not None else "")
    return over, f"{found} of {total} {unit} {what} ({'over ' if over else ''}the limit {shown})"


def coverage(result: CompareResult, max_missing: Limit, max_masked: Limit,
             unreported: Optional[tuple[int, int]] = None) -> Coverage:
    """The new side's coverage of the old side's tasks: missing from it, and masked on it.

    ``unreported`` is, from the new run's own coverage file when it has one, how many of its
    expected rollouts failed or never reported, and how many it expected: held against the missing
    limit too (a count of rollouts, or a percentage of the expected ones).
    The message's first line names what broke a limit (or that none did); the next lines the rest.
    """
    old = [t for t in result.tasks if t.old is not None]
    missing = sum(1 for t in old if t.new is None)
    masked = sum(1 for t in old if t.new is not None and t.new.masked)
    parts = [_part("missing from the new side", missing, len(old), max_missing),
             _part("masked on the new side", masked, len(old), max_masked)]
    if unreported is not None:
        lost, expected = unreported
        parts.append(_part("failed or never reported (the new run's coverage file)", lost, expected, max_missing,
                           unit="expected rollout(s)"))
    over = [text for broke, text in parts if broke]
    within = [text for broke, text in parts if not broke]
    if not over:
        message = "the new side covers the old side's tasks: " + "; ".join(within)
    else:
        message = "; ".join(over) + "".join(f"\n    {text}" for text in within) + (
            "\n    an unfinished or broken new run? --parity-max-missing and --parity-max-masked set the limits "
            "(off switches one off)")
    return Coverage(len(old), missing, masked, max_missing, max_masked, not over, message)
