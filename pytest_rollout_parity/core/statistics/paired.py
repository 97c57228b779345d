"""The paired section of a comparison: the statistics over the compared tasks and per-task noise.

One pure function of a :class:`CompareResult`, so the items, the terminal section and the JSON
read the same figures. The statistics themselves live in :mod:`.paired_tests` and :mod:`.task_noise`;
this module decides which tasks and rows feed them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Optional

from ..identity.item_names import label_hash
from ..judging.classify import mean_reward
from ..model import CompareResult, TaskComparison, TaskSide
from .left_out import COMPARED_CATEGORIES, LeftOut, left_out
from .paired_tests import (
    DiscreteFdr,
    McNemarTable,
    PairedStats,
    SignTest,
    discrete_bh,
    mcnemar_table,
    paired_stats,
    sign_test,
)
from .task_noise import task_test

TESTED = ("identical", "flipped")
"""The categories whose tasks get a per-task test (with 2+ rows a side): compared, no agent error."""
NO_TASKSET = "(no taskset)"


@dataclass(frozen=True)
class PairedSection:
    """The paired figures over the compared tasks and the per-task tests, by task index.

    ``tests[i]`` is (p, smallest attainable p) of task ``i``'s old rows against its new rows, for
    every compared task without an agent error that has at least 2 rows a side, identical or not:
    the family the multiplicity correction runs over (else None). ``p_values[i]`` is that p-value
    for a flipped task only. ``sign`` is None when no task was compared; ``table`` is None unless
    every compared task has one binary row a side; ``left_out`` is what the paired figures miss.
    """

    stats: PairedStats
    sign: Optional[SignTest]
    table: Optional[McNemarTable]
    tests: tuple[Optional[tuple[float, float]], ...]
    flipped: tuple[bool, ...]
    left_out: LeftOut

    @cached_property
    def p_values(self) -> tuple[Optional[float], ...]:
        """The p-value of each flipped task with 2+ rows a side, by task index (else None)."""
        return tuple(test[0] if test is not None and flip else None for test, flip in zip(self.tests, self.flipped))

    @property
    def tested(self) -> int:
        """How many flipped tasks had enough repeats for a per-task p-value."""
        return sum(1 for p in self.p_values if p is not None)

    def fdr(self, alpha: float) -> DiscreteFdr:
        """BH at ``alpha`` over the family's tests that can reach ``alpha``; indices are task indices."""
        return discrete_bh(self.tests, alpha)


def reward_range(result: CompareResult) -> tuple[float, float]:
    """The range of the scored rewards of both sides, at least [0, 1]: what a mean can span."""
    rewards = [r for t in result.tasks for side in (t.old, t.new) if side is not None for r in row_rewards(side)]
    return min([0.0, *rewards]), max([1.0, *rewards])


def row_rewards(side: TaskSide) -> list[float]:
    """The scored rewards of a side's rows: its unmasked rows with a finite reward (a masked row never counts)."""
    return [f.reward for f in side.facts if f.mask is None and f.reward is not None and math.isfinite(f.reward)]


def task_seed(label: str) -> int:
    """A seed for the task's Monte Carlo draws, stable across runs, processes and machines."""
    return int(label_hash(label), 16)


def task_noise(task: TaskComparison) -> Optional[float]:
    """The per-task p-value of a flipped task with at least 2 rows a side, else None."""
    test = task_noise_test(task) if task.category == "flipped" else None
    return None if test is None else test[0]


def task_noise_test(task: TaskComparison) -> Optional[tuple[float, float]]:
    """(p, smallest attainable p) of a compared task without an agent error, 2+ rows a side; else None."""
    if task.category not in TESTED or task.old is None or task.new is None:
        return None
    if len(task.old.facts) < 2 or len(task.new.facts) < 2:  # task_test's own rule, decided before the seed
        return None
    return task_test(row_rewards(task.old), row_rewards(task.new), seed=task_seed(task.task))


def _clusters(tasks: Sequence[TaskComparison]) -> Optional[list[str]]:
    """Each task's taskset, when the tasks span at least two named tasksets; else None."""
    named = {t.taskset for t in tasks if t.taskset is not None}
    if len(named) < 2:
        return None
    return [t.taskset if t.taskset is not None else NO_TASKSET for t in tasks]


def paired_section(result: CompareResult) -> PairedSection:
    """The paired statistics over the compared tasks (d = new - old of the task means), the sign
    test, the McNemar table when it applies, the per-task tests, and what the figures leave out."""
    compared = [t for t in result.tasks if t.category in COMPARED_CATEGORIES]
    pairs = [((t.old.reward if t.old else None) or 0.0, (t.new.reward if t.new else None) or 0.0) for t in compared]
    rows = sum(min(t.old.reward_rows, t.new.reward_rows) for t in compared if t.old is not None and t.new is not None)
    stats = paired_stats(pairs, _clusters(compared), span=reward_range(result), rows=max(rows, 1))
    sign = sign_test([new - old for old, new in pairs]) if pairs else None
    single = all(
        t.old is not None and t.new is not None and len(t.old.facts) == len(t.new.facts) == 1 for t in compared
    )
    table = mcnemar_table(pairs) if single else None
    tests = tuple(task_noise_test(t) for t in result.tasks)
    flipped = tuple(t.category == "flipped" for t in result.tasks)
    return PairedSection(stats, sign, table, tests, flipped, left_out(result))


def format_p(p: float) -> str:
    """A p-value as people read it: three decimals, or scientific below 0.001."""
    return f"{p:.3f}" if p >= 0.001 else f"{p:.1e}"


def _side_figure(rewards: Sequence[float], binary: bool) -> str:
    if binary:
        return f"{sum(1 for r in rewards if r == 1.0)}/{len(rewards)}"
    return f"{mean_reward(rewards):.4g}"


def noise_text(task: TaskComparison, p: float) -> str:
    """`p = 0.008, 5/5 vs 0/5` (binary rows: passes per side) or `p = 0.03, means 0.82 vs 0.41`."""
    old = row_rewards(task.old) if task.old else []
    new = row_rewards(task.new) if task.new else []
    binary = all(r in (0.0, 1.0) for r in (*old, *new))
    figures = f"{_side_figure(old, binary)} vs {_side_figure(new, binary)}"
    return f"p = {format_p(p)}, {figures}" if binary else f"p = {format_p(p)}, means {figures}"
