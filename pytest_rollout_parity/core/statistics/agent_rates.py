"""Is the new side's agent-error rate clearly above the old side's?

A new server that crashes on every task turns every task into an agent error, which the gate does
not count as a flip: each such task is an expected failure, a rerun candidate. The evidence budget limits how many
there may be; this test says, with the rates of both sides, when the new side errs more often than
chance allows. The rule is in docs/semantics.md, "Evidence budget".
"""

from __future__ import annotations

import math
from typing import Optional

from ..judging.completeness import ErrorRates
from ..model import CompareResult, TaskSide

#: the one-sided level below which the new side's rate is clearly above the old side's
RATE_LEVEL = 0.01


def _log_comb(n: int, k: int) -> float:
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)


def fisher_greater(new_errors: int, new_rows: int, old_errors: int, old_rows: int) -> float:
    """One-sided Fisher exact p-value that the new side's share of errors is no higher than the old
    side's: P(X >= new_errors) for X hypergeometric (the errors of both sides shared at random)."""
    errors, rows = new_errors + old_errors, new_rows + old_rows
    if errors == 0 or rows == 0:
        return 1.0
    top = min(errors, new_rows)
    if new_errors > top:
        return 0.0
    total = _log_comb(rows, new_rows)
    terms = [
        _log_comb(errors, x) + _log_comb(rows - errors, new_rows - x) - total
        for x in range(new_errors, top + 1)
        if new_rows - x <= rows - errors
    ]
    if not terms:
        return 0.0
    peak = max(terms)
    return min(1.0, math.exp(peak) * math.fsum(math.exp(t - peak) for t in terms))


def error_rates(result: CompareResult, level: float = RATE_LEVEL) -> Optional[ErrorRates]:
    """Each side's agent-error rate over its rows of the tasks both sides have, and the test;
    None when neither side reports an agent error."""
    both = [(t.old, t.new) for t in result.tasks if t.old is not None and t.new is not None]
    old_errors = sum(_errors(old) for old, _ in both)
    new_errors = sum(_errors(new) for _, new in both)
    if not old_errors and not new_errors:
        return None
    old_rows = sum(len(old.facts) for old, _ in both)
    new_rows = sum(len(new.facts) for _, new in both)
    p = fisher_greater(new_errors, new_rows, old_errors, old_rows)
    return ErrorRates(old_errors, old_rows, new_errors, new_rows, p, level)


def _errors(side: TaskSide) -> int:
    return sum(1 for f in side.facts if f.agent_error and f.mask is None)
