"""The paired section of a comparison, one pure function so that every report reads the same figures:
which tasks and rows feed :mod:`.paired_tests`, what they leave out, and whether each task's flip
could come from chance alone. docs/statistics.md gives the rules.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Optional

from ..identity.item_names import label_hash
from ..judging.classify import mean_reward
from ..model import COMPARED_CATEGORIES, CompareResult, TaskComparison, TaskSide
from .paired_tests import (
    DiscreteFdr,
    McNemarTable,
    PairedStats,
    SignTest,
    discrete_bh,
    mcnemar_table,
    paired_stats,
    scale_exponent,
    sign_test,
    unscaled,
)

NO_TASKSET = "(no taskset)"
FISHER_RELATIVE_TOLERANCE = 1e-7
"""Tables within this relative distance of the observed probability count as at most as likely."""
PERMUTATION_TOLERANCE = 1e-12
"""A split's |difference of means| within this of the observed one counts as at least as large."""


@dataclass(frozen=True)
class LeftOut:
    """Tasks left out of the paired figures on each side, and delta's range had they scored (its
    fields: docs/json.md)."""

    tasks: int
    old: int
    new: int
    range_tasks: int
    reward_range: tuple[float, float]
    delta_range: Optional[tuple[float, float]]
    #: masked rows left out of compared tasks' means on each side (their tasks are still compared)
    old_rows: int = 0
    new_rows: int = 0


def _out(side: Optional[TaskSide]) -> bool:
    return side is None or side.masked is not None or side.reward is None


def left_out(result: CompareResult) -> LeftOut:
    """Count what is left out on each side; bound delta had each left-out new task or row scored low or high."""
    compared = [t for t in result.tasks if t.category in COMPARED_CATEGORIES]
    rest = [t for t in result.tasks if t.category not in COMPARED_CATEGORIES]
    # (old reward, new mean, the share of the new rows left out: all of them for a task left out there)
    base: list[tuple[float, float, float]] = []
    for t in result.tasks:
        old = t.old.reward if t.old is not None and t.old.masked is None else None
        if old is None or not math.isfinite(old):
            continue
        new = t.new
        if t.category in COMPARED_CATEGORIES and new is not None and new.reward is not None:
            left = len(new.facts) - new.reward_rows if new.masked_rows else 0
            base.append((old, new.reward, left / len(new.facts)))
        elif t.category not in COMPARED_CATEGORIES and _out(new):
            base.append((old, 0.0, 1.0))
    seen = [r for old, new, _ in base for r in (old, new)]
    low, high = min([0.0, *seen]), max([1.0, *seen])
    delta_range: Optional[tuple[float, float]] = None
    if any(share for _, _, share in base):
        # in units of a power of two (exact), so that no sum of finite rewards overflows
        e = scale_exponent([low, high])

        def bound(value: float) -> float:
            scaled = math.ldexp(value, -e)
            filled = (
                (1 - share) * math.ldexp(new, -e) + share * scaled - math.ldexp(old, -e) for old, new, share in base
            )
            return unscaled(math.fsum(filled) / len(base), e)

        delta_range = (bound(low), bound(high))
    return LeftOut(
        tasks=len(result.tasks),
        old=sum(1 for t in rest if _out(t.old)),
        new=sum(1 for t in rest if _out(t.new)),
        range_tasks=len(base),
        reward_range=(low, high),
        delta_range=delta_range,
        old_rows=sum(t.old.masked_rows for t in compared if t.old is not None),
        new_rows=sum(t.new.masked_rows for t in compared if t.new is not None),
    )


@dataclass(frozen=True)
class PairedSection:
    """The paired figures over the compared tasks and the per-task tests, by task index. ``tests``
    holds every task's, identical or not: the family the multiplicity correction runs over;
    ``p_values`` a flipped task's p-value only (None for the others, whose test still counts)."""

    stats: PairedStats
    sign: Optional[SignTest]
    table: Optional[McNemarTable]
    tests: tuple[Optional[tuple[float, float]], ...]
    p_values: tuple[Optional[float], ...]
    left_out: LeftOut

    def fdr(self, alpha: float) -> DiscreteFdr:
        """BH at ``alpha`` over the family's tests that can reach ``alpha``; indices are task indices."""
        return discrete_bh(self.tests, alpha)


def reward_range(result: CompareResult) -> tuple[float, float]:
    """The range of the scored rewards of both sides, at least [0, 1]: what a mean can span."""
    rewards = [r for t in result.tasks for side in (t.old, t.new) if side is not None for r in side.rewards]
    return min([0.0, *rewards]), max([1.0, *rewards])


def task_noise_test(task: TaskComparison) -> Optional[tuple[float, float]]:
    """(p, smallest attainable p) of a compared task without an agent error, 2+ rows a side; else None.
    A verifier disagreement is not tested: no sampling noise explains it (docs/semantics.md)."""
    if task.category not in ("identical", "flipped") or task.old is None or task.new is None or task.disagreements:
        return None
    if len(task.old.rewards) < 2 or len(task.new.rewards) < 2:  # no test: spare most tasks the seed
        return None
    seed = int(label_hash(task.task), 16)  # for its Monte Carlo draws: stable across runs, processes and machines
    return task_test(task.old.rewards, task.new.rewards, seed=seed)


def paired_section(result: CompareResult) -> PairedSection:
    """The paired section over the compared tasks (d = new - old of the task means)."""
    compared = [t for t in result.tasks if t.category in COMPARED_CATEGORIES]
    pairs = [((t.old.reward if t.old else None) or 0.0, (t.new.reward if t.new else None) or 0.0) for t in compared]
    rows = sum(min(t.old.reward_rows, t.new.reward_rows) for t in compared if t.old is not None and t.new is not None)
    # each task's taskset, when the tasks span at least two named tasksets
    named = {t.taskset for t in compared if t.taskset is not None}
    clusters = [t.taskset if t.taskset is not None else NO_TASKSET for t in compared] if len(named) >= 2 else None
    stats = paired_stats(pairs, clusters, span=reward_range(result), rows=max(rows, 1))
    sign = sign_test([new - old for old, new in pairs]) if pairs else None
    single = all(
        t.old is not None and t.new is not None and len(t.old.facts) == len(t.new.facts) == 1 for t in compared
    )
    table = mcnemar_table(pairs) if single else None
    tests = tuple(task_noise_test(t) for t in result.tasks)
    p_values = tuple(
        test[0] if test is not None and t.category == "flipped" else None for t, test in zip(result.tasks, tests)
    )
    return PairedSection(stats, sign, table, tests, p_values, left_out(result))


def format_p(p: float) -> str:
    """A p-value as people read it: three decimals, or scientific below 0.001."""
    return f"{p:.3f}" if p >= 0.001 else f"{p:.1e}"


def noise_text(task: TaskComparison, p: float) -> str:
    """`p = 0.008, 5/5 vs 0/5` (binary rows: passes per side) or `p = 0.03, means 0.82 vs 0.41`."""
    old = task.old.rewards if task.old else ()
    new = task.new.rewards if task.new else ()
    if all(r in (0.0, 1.0) for r in (*old, *new)):  # binary rows: passes per side
        return f"p = {format_p(p)}, {old.count(1.0)}/{len(old)} vs {new.count(1.0)}/{len(new)}"
    return f"p = {format_p(p)}, means {mean_reward(old):.4g} vs {mean_reward(new):.4g}"


def fisher_test(a_success: int, a_n: int, b_success: int, b_n: int) -> tuple[float, float]:
    """Fisher's exact two-sided p-value and the smallest these margins allow. Tables count as at most
    as likely within a relative 1e-7, as R's ``fisher.test``; the exact integer weights round nothing else."""
    successes = a_success + b_success
    low, high = max(0, successes - b_n), min(a_n, successes)
    weights = [math.comb(a_n, x) * math.comb(b_n, successes - x) for x in range(low, high + 1)]
    total = math.comb(a_n + b_n, successes)
    scale = round(1 / FISHER_RELATIVE_TOLERANCE)

    def p(observed: int) -> float:
        return min(1.0, sum(w for w in weights if w * scale <= observed * (scale + 1)) / total)

    return p(weights[a_success - low]), p(min(weights))


def _mean_gap(chosen_sum: float, k: int, total: float, rest: int) -> float:
    return abs(chosen_sum / k - (total - chosen_sum) / rest)


def permutation_test(
    xs: Sequence[float],
    ys: Sequence[float],
    *,
    seed: int = 0,
    exact_limit: int = 100_000,
    draws: int = 10_000,
) -> tuple[float, float]:
    """The two-sided permutation p-value of mean(xs) - mean(ys) and the smallest it can take. Past
    ``exact_limit`` splits, seeded random ones are drawn and, as ``scipy.stats.permutation_test``
    does, the observed split is added once: p = (count + 1) / (draws + 1), never 0."""
    k, rest = len(xs), len(ys)
    # rewards beyond 2 in units of a power of two (exact): no sum of finite rewards overflows, p does not change
    exponent = max(scale_exponent((*xs, *ys)) - 1, 0)
    xs = [math.ldexp(x, -exponent) for x in xs]
    pooled = [*xs, *(math.ldexp(y, -exponent) for y in ys)]
    total = math.fsum(pooled)
    threshold = _mean_gap(math.fsum(xs), k, total, rest) - PERMUTATION_TOLERANCE
    splits = math.comb(k + rest, k)
    if splits <= exact_limit:
        gaps = [_mean_gap(math.fsum(chosen), k, total, rest) for chosen in itertools.combinations(pooled, k)]
        widest = max(gaps) - PERMUTATION_TOLERANCE
        return (sum(1 for gap in gaps if gap >= threshold) / splits, sum(1 for gap in gaps if gap >= widest) / splits)
    rng = random.Random(seed)
    hits = sum(1 for _ in range(draws) if _mean_gap(math.fsum(rng.sample(pooled, k)), k, total, rest) >= threshold)
    return (hits + 1) / (draws + 1), 1 / (draws + 1)


def task_test(
    old_rewards: Sequence[float], new_rewards: Sequence[float], *, seed: int = 0
) -> tuple[float, float] | None:
    """(p, smallest attainable p) of one task's old rows against its new rows; None below 2 rows a side.
    The smallest is fixed by the pooled rows, so choosing the tasks to count by it ignores the split."""
    if len(old_rewards) < 2 or len(new_rewards) < 2:
        return None
    if all(r in (0.0, 1.0) for r in (*old_rewards, *new_rewards)):
        return fisher_test(old_rewards.count(1.0), len(old_rewards), new_rewards.count(1.0), len(new_rewards))
    return permutation_test(old_rewards, new_rewards, seed=seed)
