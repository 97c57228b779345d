"""What to run next: the repeats and tasks that would decide a run the gate cannot decide.

Computed from the data at hand (docs/statistics.md, "Planning the next run"):

- **Equivalence at 80% power.** The aggregate passes when both one-sided 95% bounds of the mean
  difference lie within ±M. Assuming every task's true difference is 0, a task's difference of
  means over r rollouts a side has variance w / r, where w is the observed variance of one
  rollout's difference (the tasks' within-task variances of both sides, averaged; with one
  rollout a task, the variance of the tasks' differences). Over T tasks the test then passes with
  probability about ``2 F(M sqrt(T r / w) - t) - 1`` (F: the t distribution with T - 1 degrees of
  freedom, t its 95% quantile); the plan is the fewest rollouts r (with the T compared tasks), or
  where no number of rollouts up to :data:`MAX_REPEATS` suffices (fewer than 2 tasks), the fewest
  tasks T at the current rollouts, for which that probability is at least 80%.
- **A single flip.** A task that goes from r/r to 0/r has Fisher's exact two-sided p = 2 / C(2r, r);
  the plan is the fewest r for which that p, times the current count of compared tasks (the
  Benjamini-Hochberg adjustment of a lone small p-value), is below alpha.
- **Which tasks to rerun:** the old side's tasks the gate could not compare, and the flips within noise.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Optional

from ..model import CompareResult, TaskComparison
from .left_out import COMPARED_CATEGORIES
from .margin import FlipJudgement, reward_range
from .paired import row_rewards
from .t_dist import t_cdf, t_ppf

POWER = 0.8
"""The power the plan promises for equivalence at a true difference of 0."""
LEVEL = 0.05
"""The one-sided level of each bound (the aggregate's one-sided 95% bounds)."""
MAX_REPEATS = 1000
"""Beyond this many rollouts a task a side, the plan asks for tasks instead."""
MAX_TASKS = 1_000_000
RERUN_CAP = 10


def tost_power(tasks: int, variance: float, margin: float, level: float = LEVEL) -> float:
    """The probability that both one-sided ``1 - level`` bounds of the mean of ``tasks`` differences
    (each of ``variance``, true mean 0) lie within ±``margin``: ``2 F(M sqrt(T / v) - t) - 1``."""
    if tasks < 2:
        return 0.0
    if variance <= 0:
        return 1.0
    df = tasks - 1
    shift = margin * math.sqrt(tasks / variance) - t_ppf(1 - level, df)
    return max(0.0, 2 * t_cdf(shift, df) - 1)


def tasks_for_power(variance: float, margin: float, power: float = POWER, level: float = LEVEL) -> Optional[int]:
    """The fewest tasks (at least 2) whose differences of ``variance`` reach ``power``; None past MAX_TASKS."""
    if variance <= 0:
        return 2
    low, high = 2, 2
    while tost_power(high, variance, margin, level) < power:
        low, high = high, high * 2
        if high > MAX_TASKS:
            return None
    while low < high:  # power grows with the task count: the first that reaches it
        middle = (low + high) // 2
        if tost_power(middle, variance, margin, level) >= power:
            high = middle
        else:
            low = middle + 1
    return high


def repeats_for_power(
    tasks: int, rollout_variance: float, margin: float, power: float = POWER, level: float = LEVEL
) -> Optional[int]:
    """The fewest rollouts a task a side with which ``tasks`` tasks reach ``power`` (each task's
    difference of means then of variance ``rollout_variance / r``); None when none up to MAX_REPEATS does."""
    if tasks < 2:
        return None
    if tost_power(tasks, rollout_variance / MAX_REPEATS, margin, level) < power:
        return None
    low, high = 1, MAX_REPEATS
    while low < high:
        middle = (low + high) // 2
        if tost_power(tasks, rollout_variance / middle, margin, level) >= power:
            high = middle
        else:
            low = middle + 1
    return high


def flip_p(repeats: int) -> float:
    """Fisher's exact two-sided p of r/r against 0/r: 2 / C(2r, r)."""
    return min(1.0, 2 / math.comb(2 * repeats, repeats))


def flip_repeats(tests: int, alpha: float) -> int:
    """The fewest rollouts a side for which a 1.0 -> 0.0 flip's p-value, adjusted over ``tests``
    tasks (Benjamini-Hochberg, the flip the one small p-value), is below ``alpha``."""
    repeats = 1
    while flip_p(repeats) * max(tests, 1) >= alpha:
        repeats += 1
    return repeats


@dataclass(frozen=True)
class Plan:
    """What would decide the run: rollouts (or tasks) for equivalence, repeats for a flip, tasks to rerun."""

    #: the margin the equivalence plan is for; None: no margin, no equivalence plan
    margin: Optional[float]
    power: float
    #: the compared tasks, and the rollouts a task a side they have now (the median of the scored rows)
    tasks: int
    repeats: int
    #: the variance of one rollout's difference the plan assumes, and where it comes from
    rollout_variance: Optional[float]
    variance_source: str
    #: rollouts a task a side that would show equivalence with the compared tasks (None: cannot suffice)
    rollouts_needed: Optional[int]
    #: tasks that would, at the current rollouts, when rollouts alone cannot (None: not needed or too many)
    tasks_needed: Optional[int]
    #: rollouts a side before a 1.0 -> 0.0 flip is told from noise over ``tasks`` tasks at ``alpha``
    flip_repeats: int
    alpha: float
    #: the tasks to rerun, each with why
    rerun: tuple[tuple[str, str], ...]

    def lines(self) -> list[str]:
        """The plan as the reports print it, one line each."""
        lines = [f"plan ({self.power:.0%} power, assuming a true difference of 0 and the observed variances):"]
        if self.margin is None:
            lines.append("    equivalence: no margin given, so the aggregate is not planned")
        elif self.rollouts_needed is not None:
            lines.append(
                f"    equivalence within ±{self.margin:g}: {self.rollouts_needed} rollouts a task a side over "
                f"the {self.tasks} compared tasks (now {self.repeats}); one rollout's difference has "
                f"variance {self.rollout_variance:.4g} ({self.variance_source})"
            )
        else:
            tasks = (
                f"{self.tasks_needed} compared tasks"
                if self.tasks_needed is not None
                else f"more than {MAX_TASKS} compared tasks"
            )
            lines.append(
                f"    equivalence within ±{self.margin:g}: no number of rollouts suffices with "
                f"{self.tasks} compared task(s); {tasks} at {self.repeats} rollout(s) a task a side; "
                f"one rollout's difference has variance {self.rollout_variance:.4g} ({self.variance_source})"
            )
        lines.append(
            f"    a single 1.0 -> 0.0 flip is told from noise with {self.flip_repeats} rollouts a side "
            f"(Fisher's exact test, adjusted over {max(self.tasks, 1)} task(s) at alpha {self.alpha:g})"
        )
        if self.rerun:
            shown = ", ".join(f"{task} ({why})" for task, why in self.rerun[:RERUN_CAP])
            more = f", ... and {len(self.rerun) - RERUN_CAP} more" if len(self.rerun) > RERUN_CAP else ""
            lines.append(f"    rerun {len(self.rerun)} task(s): {shown}{more}")
        return lines


def _variance(values: Sequence[float]) -> float:
    return statistics.variance(values) if len(values) > 1 else 0.0


def rollout_variance(compared: Sequence[TaskComparison], repeats: int, span: tuple[float, float]) -> tuple[float, str]:
    """The variance of one rollout's difference (new - old) and where it comes from.

    From the tasks' repeats when some task has 2+ scored rows a side (the mean over those tasks of
    the old and the new within-task variances summed); else from the differences of the tasks'
    means, times the rollouts they are over; when neither varies, the largest a reward in the
    rewards' range can have on each side (a pass rate of one half): the data show no variance, and
    a few more rollouts may, so the plan takes the worst case and promises at least its power.
    """
    within = []
    for task in compared:
        if task.old is None or task.new is None:
            continue
        old, new = row_rewards(task.old), row_rewards(task.new)
        if len(old) >= 2 and len(new) >= 2:
            within.append(_variance(old) + _variance(new))
    if within and any(value > 0 for value in within):
        return math.fsum(within) / len(within), f"the within-task variances of {len(within)} repeated task(s)"
    diffs = [(t.new.reward or 0.0) - (t.old.reward or 0.0) for t in compared if t.old is not None and t.new is not None]
    if len(diffs) >= 2 and _variance(diffs) > 0:
        return _variance(diffs) * repeats, f"the differences of {len(diffs)} task means"
    width = span[1] - span[0]
    return width * width / 2, "none observed: the worst case, a pass rate of one half on each side"


def _rerun(result: CompareResult, judgements: Sequence[Optional[FlipJudgement]]) -> tuple[tuple[str, str], ...]:
    found: list[tuple[str, str]] = []
    for task, judgement in zip(result.tasks, judgements):
        if task.old is None:
            continue
        if task.category == "missing":
            found.append((task.task, "missing on the new side"))
        elif task.category == "masked":
            found.append((task.task, "masked"))
        elif task.category == "flipped_agent_error":
            found.append((task.task, "agent error"))
        elif task.category == "flipped" and judgement is not None and not judgement.regression:
            found.append((task.task, "within noise: more repeats"))
    return tuple(found)


def plan(
    result: CompareResult,
    margin: Optional[float],
    alpha: float,
    judgements: Optional[Sequence[Optional[FlipJudgement]]] = None,
    power: float = POWER,
) -> Plan:
    """The plan for the pair at hand (module docstring): what would decide it."""
    compared = [
        t for t in result.tasks if t.category in COMPARED_CATEGORIES and t.old is not None and t.new is not None
    ]
    rows = [min(t.old.reward_rows, t.new.reward_rows) for t in compared if t.old is not None and t.new is not None]
    repeats = max(1, int(statistics.median(rows))) if rows else 1
    variance, source = rollout_variance(compared, repeats, reward_range(result))
    needed = tasks = None
    if margin is not None:
        needed = repeats_for_power(len(compared), variance, margin, power)
        if needed is None:
            tasks = tasks_for_power(variance / repeats, margin, power)
    judged = judgements if judgements is not None else [None] * len(result.tasks)
    return Plan(
        margin=margin,
        power=power,
        tasks=len(compared),
        repeats=repeats,
        rollout_variance=variance if margin is not None else None,
        variance_source=source,
        rollouts_needed=needed,
        tasks_needed=tasks,
        flip_repeats=flip_repeats(len(compared), alpha),
        alpha=alpha,
        rerun=_rerun(result, judged),
    )
