"""Is there enough evidence, and does the new side cover the old side's tasks (docs/semantics.md,
"Evidence budget")? A task the gate could not compare is an expected failure on its own; too many
mean too little evidence to speak for the new server, whatever its flips say. A new server that
crashes on every task makes each an agent error, no flip: the budget limits how many, and a
one-sided Fisher test of the sides' agent-error rates says when the new side errs more than chance.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Optional

from ..model import CompareResult

COVERAGE_NAME = "parity-coverage"
"""The item name of the coverage check; a task whose item name would collide takes the collision suffix."""

OFF = "off"

#: The categories of a task the gate could not compare, as the coverage message counts them.
UNCOMPARED = {"missing": "missing", "masked": "masked", "flipped_agent_error": "agent error"}
#: the one-sided level below which the new side's agent-error rate is clearly above the old side's
RATE_LEVEL = 0.01


@dataclass(frozen=True)
class Limit:
    """At most ``count`` tasks, or at most ``percent`` % of the old side's tasks rounded down to a
    whole task (a budget never allows a larger share than it names: 20% of 2 tasks allows none);
    neither: no limit."""

    text: str
    count: Optional[int] = None
    percent: Optional[float] = None

    def allowed(self, old_tasks: int) -> Optional[int]:
        """The most tasks allowed among ``old_tasks``; None when the limit is off."""
        if self.count is not None:
            return self.count
        if self.percent is not None:
            return math.floor(self.percent * old_tasks / 100 + 1e-9)
        return None


def parse_limit(text: str) -> Limit:
    """`N` (tasks), `P%` (of the old side's tasks) or `off`; ValueError naming what is wrong."""
    value = text.strip()
    if value.lower() == OFF:
        return Limit(OFF)
    try:
        if value.endswith("%"):
            percent = float(value[:-1])
            if math.isfinite(percent) and 0 <= percent <= 100:
                return Limit(value, percent=percent)
        elif int(value) >= 0:
            return Limit(value, count=int(value))
    except ValueError:
        pass
    raise ValueError("must be a count of tasks (3), a percentage of the old side's tasks (10%) or off")


@dataclass(frozen=True)
class ErrorRates:
    """Each side's agent-error rate over its rows of the tasks both sides have, and the one-sided
    p-value that the new side's rate is no higher than the old side's (docs/semantics.md)."""

    old_errors: int
    old_rows: int
    new_errors: int
    new_rows: int
    p_value: float
    level: float

    @property
    def clearly_higher(self) -> bool:
        """The new side's agent-error rate is clearly above the old side's."""
        higher = self.new_errors / max(self.new_rows, 1) > self.old_errors / max(self.old_rows, 1)
        return higher and self.p_value < self.level

    @property
    def text(self) -> str:
        """`agent-error rate 10/10 rows (100.0%) on the new side against 0/10 (0.0%) on the old side ...`."""
        new = f"{self.new_errors}/{self.new_rows} rows ({self.new_errors / max(self.new_rows, 1):.1%})"
        old = f"{self.old_errors}/{self.old_rows} ({self.old_errors / max(self.old_rows, 1):.1%})"
        above = "clearly above" if self.clearly_higher else "not clearly above"
        return (
            f"agent-error rate {new} on the new side, {above} {old} on the old side "
            f"(one-sided Fisher p = {self.p_value:.3g}, level {self.level:g})"
        )


def _log_comb(n: int, k: int) -> float:
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)


def fisher_greater(new_errors: int, new_rows: int, old_errors: int, old_rows: int) -> float:
    """One-sided Fisher exact p-value that the new side's share of errors is no higher than the old
    side's: P(X >= new_errors) for X hypergeometric (the errors of both sides shared at random)."""
    errors, rows = new_errors + old_errors, new_rows + old_rows
    total = _log_comb(rows, new_rows)
    terms = [  # never empty: x = min(errors, new_rows) leaves at most rows - errors clean new rows
        _log_comb(errors, x) + _log_comb(rows - errors, new_rows - x) - total
        for x in range(new_errors, min(errors, new_rows) + 1)
        if new_rows - x <= rows - errors
    ]
    peak = max(terms)
    return min(1.0, math.exp(peak) * math.fsum(math.exp(t - peak) for t in terms))


def error_rates(result: CompareResult, level: float = RATE_LEVEL) -> Optional[ErrorRates]:
    """The sides' :class:`ErrorRates`; None when neither side reports an agent error."""
    both = [(t.old, t.new) for t in result.tasks if t.old is not None and t.new is not None]
    old_rows, new_rows = (sum(len(sides[index].facts) for sides in both) for index in (0, 1))
    old_errors, new_errors = (
        sum(1 for sides in both for f in sides[index].facts if f.agent_error and f.mask is None) for index in (0, 1)
    )
    if not old_errors and not new_errors:
        return None
    p = fisher_greater(new_errors, new_rows, old_errors, old_rows)
    return ErrorRates(old_errors, old_rows, new_errors, new_rows, p, level)


@dataclass(frozen=True)
class Coverage:
    """How much of the old side the gate could compare, against the budget and the finer limits,
    the sides' agent-error rates, and the item's message."""

    old_tasks: int
    missing: int
    masked: int
    max_missing: Limit
    max_masked: Limit
    max_uncompared: Limit
    passed: bool
    message: str
    #: old-side tasks not compared for any reason (missing, masked on either side, an agent error)
    uncompared: int = 0
    agent_errors: int = 0
    error_rates: Optional[ErrorRates] = None
    nothing_compared: bool = False


def _part(what: str, found: int, total: int, limit: Limit, unit: str = "old task(s)") -> tuple[bool, str]:
    allowed = limit.allowed(total)
    over = allowed is not None and found > allowed
    shown = "off" if allowed is None else limit.text + (f" = {allowed}" if limit.percent is not None else "")
    return over, f"{found} of {total} {unit} {what} ({'over ' if over else ''}the limit {shown})"


def coverage(
    result: CompareResult,
    max_missing: Limit,
    max_masked: Limit,
    unreported: Optional[tuple[int, int]] = None,
    *,
    max_uncompared: Limit,
    error_rates: Optional[ErrorRates] = None,
) -> Coverage:
    """Old-side tasks the gate could not compare, against one budget (``max_uncompared``) and the
    finer limits; ``unreported`` (the new run's coverage file: its rollouts that failed or never
    reported, of those expected) is held against the missing limit too. Clearly higher
    ``error_rates`` fail the check, and so does a comparison that compared nothing. The message's
    first line names what broke a limit (or that none did); the next lines the rest."""
    old = [t for t in result.tasks if t.old is not None]
    missing = sum(1 for t in old if t.new is None)
    masked = sum(1 for t in old if t.new is not None and t.new.masked)
    lost = [t for t in old if t.category in UNCOMPARED]
    reasons = Counter(UNCOMPARED[t.category] for t in lost)
    why = ", ".join(f"{reasons[name]} {name}" for name in UNCOMPARED.values() if reasons[name])
    parts = [
        _part(f"not compared{f' ({why})' if why else ''}", len(lost), len(old), max_uncompared),
        _part("missing from the new side", missing, len(old), max_missing),
        _part("masked on the new side", masked, len(old), max_masked),
    ]
    if unreported is not None:
        what = "failed or never reported (the new run's coverage file)"
        parts.append(_part(what, *unreported, max_missing, unit="expected rollout(s)"))
    if error_rates is not None:
        parts.append((error_rates.clearly_higher, error_rates.text))
    nothing = result.compared == 0
    if nothing:
        parts.insert(0, (True, "no task was compared: there is no evidence either way"))
    over = [text for broke, text in parts if broke]
    within = [text for broke, text in parts if not broke]
    message = "the gate has enough evidence: " + "; ".join(within)
    if over:
        rerun = "rerun what was lost (the tasks not compared), or check the files and the join key"
        message = "; ".join(over) + "".join(f"\n    {text}" for text in [*within, rerun])
    return Coverage(
        len(old),
        missing,
        masked,
        max_missing,
        max_masked,
        max_uncompared,
        not over,
        message,
        uncompared=len(lost),
        agent_errors=reasons["agent error"],
        error_rates=error_rates,
        nothing_compared=nothing,
    )
