"""What to run next: the repeats and tasks that would decide a run the gate cannot decide, from the
data at hand (docs/statistics.md, "Planning the next run": the method, its formulas and references).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Optional

from ..identity.item_names import listed
from ..model import COMPARED_CATEGORIES, CompareResult, TaskSide
from .margin import FlipJudgement
from .paired import fisher_test, reward_range
from .paired_tests import LEVEL, heavy_tail_df, moments, scale_exponent, unscaled
from .t_dist import t_cdf, t_ppf

POWER = 0.8
"""The power the plan promises for equivalence at a true difference of 0."""
UPPER_CONFIDENCE = 0.8
"""The plan takes the observed variance at this one-sided upper confidence limit, so that a pilot's
noisy variance more often over- than under-states what the planned run will meet."""
MAX_REPEATS = 1000
"""Beyond this many rollouts a task a side, the rollouts lever is not offered."""
MAX_TASKS = 1_000_000
#: why the old side's tasks the gate could not compare are rerun (and the flips within noise)
RERUN_WHY = {"missing": "missing on the new side", "masked": "masked", "flipped_agent_error": "agent error"}


def tost_power(tasks: int, variance: float, margin: float, *, repeats: int = 1, width: float = 0.0) -> float:
    """The probability that both one-sided 95% bounds of the mean of ``tasks`` differences (true mean 0),
    each a mean over ``repeats`` rollouts of one rollout's ``variance``, lie within ±``margin``:
    ``2 F(M / s - t) - 1``."""
    return max(0.0, 2 * _chance(tasks, variance / repeats, margin, width / repeats) - 1)


def regression_power(tasks: int, variance: float, margin: float, *, repeats: int = 1, width: float = 0.0) -> float:
    """The probability that the run fails at a true difference of -2 ``margin``, however the regression
    falls on the tasks: each task's true difference adds at most 2M width - 4M^2 to its variance (the
    largest spread of differences in [-width, 0] whose mean is -2M)."""
    spread = max(2 * margin * width - 4 * margin * margin, 0.0)
    return _chance(tasks, variance / repeats + spread, margin, width / repeats)


def _chance(tasks: int, variance: float, margin: float, step: float) -> float:
    """``F(M / s - t)``: the chance that a one-sided 95% bound stays on the near side of a line ``margin``
    from the true difference. F is the t distribution with T - 1 degrees of freedom and t its 95%
    quantile; s the standard error, floored at the gate's resolution ``step / T`` as the gate's own is
    (a task's step being width / r)."""
    if tasks < 2:
        return 0.0
    se = max(math.sqrt(variance / tasks), step / tasks)
    if se <= 0:
        return 1.0
    return t_cdf(margin / se - t_ppf(1 - LEVEL, tasks - 1), tasks - 1)


def fewest(power_at: Callable[[int], float], cap: int) -> Optional[int]:
    """The fewest n up to ``cap`` whose power reaches POWER (None: none): power grows with n, so doubling
    brackets the first and a bisection finds it."""
    low, high = 1, 1
    while power_at(high) < POWER:
        if high >= cap:
            return None
        low, high = high + 1, min(2 * high, cap)
    while low < high:
        middle = (low + high) // 2
        if power_at(middle) >= POWER:
            high = middle
        else:
            low = middle + 1
    return high


def flip_repeats(tests: int, alpha: float) -> int:
    """The fewest rollouts a side for which a 1.0 -> 0.0 flip's Fisher p-value (2 / C(2r, r)), adjusted
    over ``tests`` tasks as the one small p-value, is below ``alpha``."""
    repeats = 1
    while fisher_test(repeats, repeats, 0, repeats)[0] * max(tests, 1) >= alpha:
        repeats += 1
    return repeats


@dataclass(frozen=True)
class Rerun:
    """A task to run again, and why."""

    task: str
    why: str


@dataclass(frozen=True)
class Lever:
    """One way to decide the aggregate: tasks x rollouts a task a side, and what it promises."""

    tasks: int
    repeats: int
    #: the power it promises at a true difference of 0, and its power to fail a true difference of -2M
    power: float
    regression_power: float


@dataclass(frozen=True)
class Plan:
    """What would decide the run; for a run that already fails, what decided it."""

    #: the margin the equivalence plan is for; None: no margin, no equivalence plan
    margin: Optional[float]
    power: float
    #: the compared tasks (a verifier disagreement aside), and the rollouts a task a side they have now
    #: (the median of the scored rows)
    tasks: int
    repeats: int
    #: the variance of one rollout's difference the plan assumes, and where it comes from
    rollout_variance: Optional[float]
    variance_source: str
    #: rollouts a side before a 1.0 -> 0.0 flip is told from noise over ``flip_tests`` tasks at ``alpha``
    flip_repeats: int
    alpha: float
    rerun: tuple[Rerun, ...]
    #: more rollouts over the compared tasks that would show equivalence (None: none up to MAX_REPEATS),
    #: or more tasks from the same input dataset at the current rollouts (None: too many), and their promises
    by_rollouts: Optional[Lever]
    by_tasks: Optional[Lever]
    #: the tasks that can reach alpha, which a flip's adjusted p-value counts
    flip_tests: int
    #: what already decided a failing run (then the aggregate is not planned), else None
    decided: Optional[str]

    def lines(self) -> list[str]:
        """The plan as the reports print it, one line each."""
        lines = [
            f"plan ({self.power:.0%} power to show equivalence at a true difference of 0, from the observed variances):"
        ]
        if self.decided is not None:
            lines.append(
                f"    decided: the run fails ({self.decided}); more rollouts or tasks of this pair would not "
                "change that, only a new run of a fixed server would"
            )
        elif self.margin is None:
            lines.append("    equivalence: no margin given, so the aggregate is not planned")
        else:
            lines += [
                f"    equivalence within ±{self.margin:g}, either lever (one rollout's difference has variance "
                f"{self.rollout_variance:.4g}: {self.variance_source}):",
                self._lever_line("more rollouts", self.by_rollouts, self.margin),
                self._lever_line("more tasks", self.by_tasks, self.margin),
            ]
        if self.decided is None:  # more rollouts of a failing pair would not change its verdict
            lines.append(
                f"    a single 1.0 -> 0.0 flip is told from noise with {self.flip_repeats} rollouts a side "
                f"(Fisher's exact test, adjusted over the {self.flip_tests} task(s) that can reach alpha "
                f"{self.alpha:g}: those whose rows vary, and the flipped one)"
            )
        if self.rerun:
            lines.append(f"    rerun {len(self.rerun)} task(s): {listed([f'{r.task} ({r.why})' for r in self.rerun])}")
        return lines

    def _lever_line(self, name: str, lever: Optional[Lever], margin: float) -> str:
        by_rollouts = name == "more rollouts"
        if lever is None and by_rollouts:
            return f"        {name}: no number up to {MAX_REPEATS} suffices with {self.tasks} compared task(s)"
        if lever is None:
            return f"        {name}: more than {MAX_TASKS} tasks would be needed"
        if by_rollouts:
            more = lever.repeats - self.repeats
            now = f"{more} more than the {self.repeats} now" if more > 0 else f"the run has {self.repeats}"
            size = f"{lever.repeats} rollout(s) a task a side over the {lever.tasks} compared tasks ({now})"
        else:
            more = lever.tasks - self.tasks
            now = f"{more} more than the {self.tasks} compared, from the same input dataset"
            size = f"{lever.tasks} tasks ({now if more > 0 else f'the run has {self.tasks}'}) at {lever.repeats} rollout(s) a task a side"
        return (
            f"        {name}: {size}: {lever.power:.1%} power; a regression a margin beyond it "
            f"(true difference {-2 * margin:g}) fails with {lever.regression_power:.1%}"
        )


def rollout_variance(
    compared: Sequence[tuple[TaskSide, TaskSide]], repeats: int, width: float, exponent: int
) -> tuple[float, str]:
    """The variance of one rollout's difference (new - old) and where it comes from, in units of
    2**``exponent``: the tasks' within-task variances when some task has 2+ scored rows a side, else
    the variance of the task means' differences times their rollouts, else as though one of N row
    pairs differed by ``width``: the gate's own floor, so plan and gate agree on what is missing."""
    within = []
    for old_side, new_side in compared:
        if len(old_side.rewards) >= 2 and len(new_side.rewards) >= 2:
            old, new = ([math.ldexp(r, -exponent) for r in side.rewards] for side in (old_side, new_side))
            within.append(moments(old)[1] + moments(new)[1])
    if within and any(value > 0 for value in within):
        observed, spread = moments(within)[:2]
        # the mean of the tasks' variances is known to 2 mean^2 / Var(mean) degrees of freedom
        # (Satterthwaite): few tasks, or a few noisy tasks among stable ones, leave it loose
        df = 2 * observed * observed * len(within) / spread if spread > 0 else float(len(within) - 1)
        return observed * upper_factor(min(df, len(within) * (repeats - 1) * 2.0)), (
            f"the within-task variances of {len(within)} repeated task(s), at their 80% upper confidence limit"
        )
    diffs = [
        math.ldexp(new.reward or 0.0, -exponent) - math.ldexp(old.reward or 0.0, -exponent) for old, new in compared
    ]
    _, variance, _, kurtosis = moments(diffs) if diffs else (0.0, 0.0, 0.0, 0.0)
    if variance > 0:
        df = heavy_tail_df(len(diffs) - 1, kurtosis, len(diffs))  # as the gate's own bounds take heavy tails
        return variance * repeats * upper_factor(df), (
            f"the differences of {len(diffs)} task means, at their 80% upper confidence limit"
        )
    pairs = max(1, len(compared) * repeats)
    # no discordant row pair among N: at the 80% upper confidence limit their rate is -ln(0.2) / N
    # (about 1.6 / N, the rule of three at 80%); one pair, width^2 / N, is the gate's own floor
    differing = -math.log(1 - UPPER_CONFIDENCE)
    return width * width * differing / pairs, (
        f"none observed: as though {differing:.1f} of the {pairs} row pairs had differed by the rewards' range "
        "(the 80% upper confidence limit when none did)"
    )


def upper_factor(df: float) -> float:
    """df / chi2(1 - c, df): a variance on ``df`` degrees of freedom at its upper confidence limit
    c = UPPER_CONFIDENCE (Browne 1995), by Wilson and Hilferty's cube-root approximation."""
    df = max(df, 1.0)
    z = NormalDist().inv_cdf(1 - UPPER_CONFIDENCE)
    step = 2.0 / (9.0 * df)
    return 1.0 / (1.0 - step + z * math.sqrt(step)) ** 3


def plan(
    result: CompareResult,
    margin: Optional[float],
    alpha: float,
    judgements: Optional[Sequence[Optional[FlipJudgement]]] = None,
    decided: Optional[str] = None,
) -> Plan:
    """The plan for the pair at hand; ``decided`` says what already made the run fail (then the
    aggregate is not planned: more of a failing pair would not change its verdict)."""
    # a verifier disagreement is no sampling noise: more rollouts or tasks do not bear on it
    compared = [
        (t.old, t.new)
        for t in result.tasks
        if t.category in COMPARED_CATEGORIES and t.old is not None and t.new is not None and not t.disagreements
    ]
    rows = [min(old.reward_rows, new.reward_rows) for old, new in compared]
    repeats = max(1, int(statistics.median(rows))) if rows else 1
    span = reward_range(result)
    exponent = scale_exponent(span)
    width = math.ldexp(span[1], -exponent) - math.ldexp(span[0], -exponent)
    variance, source = rollout_variance(compared, repeats, width, exponent)
    by_rollouts = by_tasks = None
    if margin is not None and decided is None:
        scaled_margin = math.ldexp(margin, -exponent)

        def power(tasks: int, rollouts: int) -> float:
            return tost_power(tasks, variance, scaled_margin, repeats=rollouts, width=width)

        def lever(tasks: Optional[int], rollouts: Optional[int]) -> Optional[Lever]:
            if tasks is None or rollouts is None:
                return None
            regression = regression_power(tasks, variance, scaled_margin, repeats=rollouts, width=width)
            return Lever(tasks, rollouts, power(tasks, rollouts), regression)

        # more of either, never less than the run has
        needed = fewest(lambda r: power(len(compared), r), MAX_REPEATS)
        by_rollouts = lever(len(compared), None if needed is None else max(needed, repeats))
        needed = fewest(lambda n: power(n, repeats), MAX_TASKS)
        by_tasks = lever(None if needed is None else max(needed, len(compared)), repeats)
    judged = judgements if judgements is not None else [None] * len(result.tasks)
    rerun = tuple(
        Rerun(t.task, RERUN_WHY.get(t.category, "within noise: more repeats"))
        for t, j in zip(result.tasks, judged)
        if t.old is not None
        and (t.category in RERUN_WHY or (t.category == "flipped" and j is not None and not j.regression))
    )
    # a flip's p-value is adjusted over the tasks whose test can reach alpha: those whose rows, both
    # sides together, hold more than one value, and the flipped one
    varying = sum(1 for old, new in compared if len({*old.rewards, *new.rewards}) > 1)
    flip_tests = max(1, min(len(compared), varying + 1))
    return Plan(
        margin=margin,
        power=POWER,
        tasks=len(compared),
        repeats=repeats,
        rollout_variance=unscaled(variance, 2 * exponent) if margin is not None else None,
        variance_source=source,
        flip_repeats=flip_repeats(flip_tests, alpha),
        alpha=alpha,
        rerun=rerun,
        by_rollouts=by_rollouts,
        by_tasks=by_tasks,
        flip_tests=flip_tests,
        decided=decided,
    )
