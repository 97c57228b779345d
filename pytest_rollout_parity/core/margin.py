"""Margin mode: decide on evidence instead of on every flip.

The aggregate is an equivalence test (two one-sided tests): the new side is at parity when the
one-sided 95% bounds of the mean difference both lie inside [-M, +M]. A score that moved up is as
suspect as one that moved down (a verifier that passes everything). A single flip then fails only
when its own repeats show it is not noise: its Benjamini-Hochberg adjusted p-value is below alpha.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from .model import TaskComparison
from .paired import PairedSection, format_p, noise_text
from .stats import PairedStats

AGGREGATE_NAME = "parity-aggregate"
"""The item name of the aggregate; a task whose item name would collide takes the collision suffix."""


@dataclass(frozen=True)
class Aggregate:
    """The equivalence decision at margin ``margin`` and the one message its item shows (the verdict
    first: the item's node id names it)."""

    margin: float
    lower_bound: Optional[float]
    upper_bound: Optional[float]
    passed: bool
    message: str


def _num(value: float) -> str:
    return f"{value:.4f}"


def equivalence(stats: PairedStats, margin: float) -> Aggregate:
    """Two one-sided tests of Δ against ±``margin``; absent statistics fail with their reason."""
    where = f"margin ±{margin:g}"
    if stats.absent is not None or stats.lower_bound is None or stats.upper_bound is None or stats.delta is None:
        return Aggregate(margin, None, None, False, f"no decision at {where}: {stats.absent}")
    low, high = stats.lower_bound, stats.upper_bound
    figures = (
        f"Δ = {_num(stats.delta)} (new - old), one-sided 95% bounds [{_num(low)}, {_num(high)}], "
        f"n = {stats.n}"
    )
    if stats.clustered_by is not None:
        figures += f", standard error clustered by {stats.clustered_by} ({stats.clusters} groups)"
    broken = []
    if low < -margin:
        broken.append(f"lower bound {_num(low)} < -{margin:g}: the new side may score lower than the margin allows")
    if high > margin:
        broken.append(f"upper bound {_num(high)} > +{margin:g}: the new side may score higher than the margin allows")
    if not broken:
        return Aggregate(margin, low, high, True, f"equivalent within {where}: {figures}")
    return Aggregate(margin, low, high, False, f"not shown equivalent within {where}: {'; '.join(broken)}; {figures}")


@dataclass(frozen=True)
class FlipJudgement:
    """A flip in margin mode: a regression (fails; ``text`` is a line of its message) or not shown
    to be one (xfails with ``text`` as the reason)."""

    regression: bool
    text: str


def _rows(task: TaskComparison) -> tuple[int, int]:
    return (len(task.old.facts) if task.old else 0, len(task.new.facts) if task.new else 0)


def judge_flip(task: TaskComparison, p: Optional[float], adjusted: Optional[float], alpha: float,
               tested: int) -> FlipJudgement:
    """Fail a flip only when its BH-adjusted p-value (over ``tested`` tasks) is below ``alpha``."""
    if p is None or adjusted is None:
        old_rows, new_rows = _rows(task)
        if old_rows == 1 and new_rows == 1:
            why = "single row a side"
        else:
            why = f"{old_rows} row(s) old, {new_rows} new: too few repeats for a per-task test"
        return FlipJudgement(False, f"flipped; {why}: judged in the aggregate")
    adjusted_text = f"BH-adjusted p = {format_p(adjusted)} over {tested} task(s) tested"
    if adjusted < alpha:
        return FlipJudgement(True, f"not noise: {adjusted_text} < alpha {alpha:g}")
    return FlipJudgement(
        False, f"flipped within noise: {noise_text(task, p)}; {adjusted_text} >= alpha {alpha:g}"
    )


def judge_flips(section: PairedSection, tasks: list[TaskComparison], alpha: float) -> list[Optional[FlipJudgement]]:
    """The judgement of every flipped task, by task index (None for the other categories)."""
    return [
        judge_flip(task, section.p_values[i], section.adjusted[i], alpha, section.tested)
        if task.category == "flipped" else None
        for i, task in enumerate(tasks)
    ]
