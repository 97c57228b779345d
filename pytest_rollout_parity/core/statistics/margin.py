"""Margin mode: decide on evidence instead of on every flip (docs/statistics.md, "Margin mode in detail").

Both one-sided bounds must lie inside [-M, +M]: a score that moved up is as suspect as one that moved
down (a verifier that passes everything).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from ..model import TaskComparison
from .paired import LeftOut, PairedSection, format_p, noise_text
from .paired_tests import DiscreteFdr, PairedStats

EQUIVALENCE_ITEM = "parity-aggregate"
"""The item name of the equivalence decision; a task whose item name would collide takes the collision suffix."""


@dataclass(frozen=True)
class Equivalence:
    """The decision (bounds None: none) and its item's message, verdict first: the node id names the item."""

    margin: float
    lower_bound: Optional[float]
    upper_bound: Optional[float]
    passed: bool
    #: empty when the decision is read back from a JSON summary, which does not carry it
    message: str = field(default="", metadata={"exclude": True})


def left_out_text(left: LeftOut) -> str:
    """`left out (masked or missing): 2.0% of tasks on the old side, 5.0% on the new side; ...`."""
    if not left.old and not left.new and not left.old_rows and not left.new_rows:
        return "no task left out (masked or missing) on either side"
    # some task is left out, or has a masked row: there are tasks
    text = (
        f"left out (masked or missing): {left.old / left.tasks:.1%} of {left.tasks} tasks on the old side, "
        f"{left.new / left.tasks:.1%} on the new side"
    )
    if left.old_rows or left.new_rows:
        text += f"; masked rows of compared tasks left out of their means: {left.old_rows} old, {left.new_rows} new"
    if left.delta_range is not None:
        (low, high), (lowest, highest) = left.delta_range, left.reward_range
        what = "task or row" if left.new_rows else "task"
        text += (
            f"; had every {what} left out on the new side scored {lowest:g} or {highest:g} there, "
            f"Δ over the {left.range_tasks} tasks with an old reward would lie in [{low:.4f}, {high:.4f}]"
        )
    return text


def equivalence(stats: PairedStats, margin: float, left: Optional[LeftOut] = None) -> Equivalence:
    """Two one-sided tests of Δ against ±``margin``; absent statistics fail with their reason. ``left``
    only adds to the message: the decision is over the compared tasks."""
    where = f"margin ±{margin:g}"
    tail = f"; {left_out_text(left)}" if left is not None else ""
    if stats.absent is not None or stats.lower_bound is None or stats.upper_bound is None or stats.delta is None:
        return Equivalence(margin, None, None, False, f"no decision at {where}: {stats.absent}{tail}")
    low, high = stats.lower_bound, stats.upper_bound
    figures = f"Δ = {stats.delta:.4f} (new - old), one-sided 95% bounds [{low:.4f}, {high:.4f}], n = {stats.n}"
    if stats.clustered_by is not None and stats.df is not None:
        figures += (
            f", standard error clustered by {stats.clustered_by} ({stats.clusters} groups, CR2, "
            f"{stats.df:.1f} degrees of freedom)"
        )
    figures += tail
    broken = []
    if low < -margin:
        broken.append(f"lower bound {low:.4f} < -{margin:g}: the new side may score lower than the margin allows")
    if high > margin:
        broken.append(f"upper bound {high:.4f} > +{margin:g}: the new side may score higher than the margin allows")
    if not broken:
        return Equivalence(margin, low, high, True, f"equivalent within {where}: {figures}")
    return Equivalence(margin, low, high, False, f"not shown equivalent within {where}: {'; '.join(broken)}; {figures}")


@dataclass(frozen=True)
class FlipJudgement:
    """A flip in margin mode: a regression (fails) or not shown to be one (xfails, ``text`` the reason)."""

    regression: bool
    text: str


def disagreement_text(count: int) -> str:
    """Why a flip of the same trajectories fails whatever the margin: no sampling noise is left."""
    rollouts = "1 rollout" if count == 1 else f"{count} rollouts"
    return (
        f"verifier disagreement: {rollouts} of the same trajectories scored differently by the two "
        "verifiers; no sampling noise explains it"
    )


def judge_flips(section: PairedSection, tasks: list[TaskComparison], fdr: DiscreteFdr) -> list[Optional[FlipJudgement]]:
    """The judgement of every flipped task, by task index (None for the other categories)."""
    return [
        judge_flip(task, test, adjusted, fdr) if task.category == "flipped" else None
        for task, test, adjusted in zip(tasks, section.tests, fdr.adjusted)
    ]


def judge_flip(
    task: TaskComparison, test: Optional[tuple[float, float]], adjusted: Optional[float], fdr: DiscreteFdr
) -> FlipJudgement:
    """Fail a flip only when its BH-adjusted p-value (over the tests that can reach alpha) is below alpha."""
    alpha = fdr.alpha
    if task.disagreements:
        return FlipJudgement(True, disagreement_text(task.disagreements))
    if test is None:
        old_rows, new_rows = (len(side.facts) if side else 0 for side in (task.old, task.new))
        few = f"{old_rows} row(s) old, {new_rows} new: too few repeats for a per-task test"
        why = "single row a side" if old_rows == new_rows == 1 else few
        return FlipJudgement(False, f"flipped; {why}: judged in the aggregate")
    p, smallest = test
    noise = f"flipped within noise: {noise_text(task, p)}"
    if adjusted is None:
        why = f"cannot reach alpha {alpha:g} with these rows (smallest attainable p = {format_p(smallest)}), so not counted"
        return FlipJudgement(False, f"{noise}; {why}")
    over = f"(BH over the {len(fdr.counted)} of {fdr.tests} tested task(s) that can reach it)"
    if adjusted < alpha:
        return FlipJudgement(True, f"not noise: BH-adjusted p = {format_p(adjusted)} < alpha {alpha:g} {over}")
    return FlipJudgement(False, f"{noise}; BH-adjusted p = {format_p(adjusted)} >= alpha {alpha:g} {over}")
