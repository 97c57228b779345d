"""What the paired statistics leave out, and how far it could move delta.

Only compared tasks (a counted reward on both sides) enter the paired figures. A task masked or
missing on a side is left out, so a new server that fails exactly on the hard tasks (and is masked
there) can look equivalent. This module counts the tasks left out on each side and gives a
sensitivity range of delta: the mean of new - old over every task with a counted old reward, had
each task left out on the new side scored the lowest or the highest reward there (0 and 1 for
0/1 rewards; wider when the rewards seen reach beyond).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

from ..model import CompareResult, Side, TaskSide
from .paired_tests import scale_exponent, unscaled

COMPARED_CATEGORIES = ("identical", "flipped", "flipped_agent_error")


@dataclass(frozen=True)
class LeftOut:
    """Tasks left out of the paired figures on each side, and delta's range if they had scored.

    ``tasks`` is every joined task; ``old``/``new`` count the tasks not compared whose side is
    absent or masked there. ``delta_range`` is (low, high) over the ``range_tasks`` tasks with a
    counted old reward, each task left out on the new side scored ``reward_range[0]`` or
    ``reward_range[1]`` there; None when no such task is left out on the new side.
    """

    tasks: int
    old: int
    new: int
    range_tasks: int
    reward_range: tuple[float, float]
    delta_range: Optional[tuple[float, float]]
    #: masked rows left out of compared tasks' means on each side (their tasks are still compared)
    old_rows: int = 0
    new_rows: int = 0

    def share(self, side: Side) -> float:
        """The share of all joined tasks left out on ``side`` (0 when there are none)."""
        return (self.old if side == "old" else self.new) / self.tasks if self.tasks else 0.0


def _out(side: Optional[TaskSide]) -> bool:
    return side is None or side.masked is not None or side.reward is None


def left_out(result: CompareResult) -> LeftOut:
    """Count the tasks (and the rows of compared tasks) left out on each side and bound delta over
    the tasks with an old reward, each left-out task or row on the new side scored low or high."""
    compared = [t for t in result.tasks if t.category in COMPARED_CATEGORIES]
    rest = [t for t in result.tasks if t.category not in COMPARED_CATEGORIES]
    pairs = [
        (t.old, t.new)
        for t in compared
        if t.old is not None and t.new is not None and t.old.reward is not None and t.new.reward is not None
    ]
    whole = [(old.reward or 0.0, new.reward or 0.0) for old, new in pairs if not new.masked_rows]
    partial = [(old, new) for old, new in pairs if new.masked_rows]
    # the old rewards of the tasks left out on the new side only
    left_new = [t.old.reward for t in rest if t.old is not None and not _out(t.old) and _out(t.new)]
    olds_left = [reward for reward in left_new if reward is not None and math.isfinite(reward)]
    seen = [r for t in compared for s in (t.old, t.new) if s is not None and (r := s.reward) is not None]
    low = min([0.0, *seen, *olds_left])
    high = max([1.0, *seen, *olds_left])
    base = len(whole) + len(partial) + len(olds_left)
    delta_range: Optional[tuple[float, float]] = None
    if olds_left or partial:
        # in units of a power of two (exact), so that no sum of finite rewards overflows
        e = scale_exponent([low, high])

        def bound(value: float) -> float:
            scaled = math.ldexp(value, -e)
            total = (
                math.fsum(math.ldexp(new, -e) - math.ldexp(old, -e) for old, new in whole)
                + math.fsum(scaled - math.ldexp(old, -e) for old in olds_left)
                + math.fsum(_filled(new, scaled, e) - math.ldexp(old.reward or 0.0, -e) for old, new in partial)
            )
            return unscaled(total / base, e)

        delta_range = (bound(low), bound(high))
    return LeftOut(
        tasks=len(result.tasks),
        old=sum(1 for t in rest if _out(t.old)),
        new=sum(1 for t in rest if _out(t.new)),
        range_tasks=base,
        reward_range=(low, high),
        delta_range=delta_range,
        old_rows=sum(t.old.masked_rows for t in compared if t.old is not None),
        new_rows=sum(t.new.masked_rows for t in compared if t.new is not None),
    )


def _filled(side: TaskSide, value: float, exponent: int) -> float:
    """The side's mean, in units of 2**``exponent``, had each of its masked rows scored ``value`` (in those units)."""
    scored = side.reward_rows
    masked = len(side.facts) - scored
    return (scored * math.ldexp(side.reward or 0.0, -exponent) + masked * value) / (scored + masked)
