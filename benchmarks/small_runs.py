"""Does the equivalence decision keep its 5% on small runs? A vectorised grid from 10 tasks up.

    nice -n 19 python benchmarks/small_runs.py              # the documented grid, 4,000 runs a cell
    python benchmarks/small_runs.py --reps 200 --tasks 10,20 --k 1,3   # a quick look

The grid: T = 10, 20, 50 and 300 tasks, K = 1, 3, 5 and 8 rollouts a task a side, one row per
rollout, and three kinds of reward:

    binary-2     0/1 rewards, each task's pass rate p from Beta(2, 2) (flaky tasks)
    binary-0.3   0/1 rewards, p from Beta(0.3, 0.3) (most tasks always or never pass, as real evals)
    continuous   each rollout's reward from Beta(2 mu, 2 (1 - mu)) around its task's mean mu ~ Beta(2, 2)

The new side's rate (or mean) moves by the true difference D as benchmarks/calibration.py moves it
(``moved``: E[new - old] over tasks is exactly D, every rate stays in [0, 1]). M is 0.05 at 300
tasks, 0.1 at 50 and 0.2 at 10 and 20, where 0.05 cannot be shown at all (the "M" column).

Per cell, each with its Monte Carlo standard error:

    pass at ±M   the equivalence item passes although the true difference is +M or -M (half the
                 runs each): its error, at most 5% promised
    pass at 0    it passes when the servers are the same: its power

The decision is the gate's (pytest_rollout_parity/core/statistics/paired_tests.py): Δ the mean
of d = new - old over the task means, se = max(sd(d) / sqrt(T), 1 / (T K)) (the resolution
floor; rewards in [0, 1]), the t quantile's degrees of freedom cut by the excess kurtosis of d and
each one-sided 95% bound's quantile moved by Hall's skewness term (at most t / 2); pass when both bounds lie
within ±M. It is computed here on whole arrays of runs with numpy and
scipy (benchmark-only dependencies); :func:`check_against_the_gate` runs the first runs of a cell
through ``compare_rollouts`` and ``summary_dict`` and fails on any decision that differs.

The plans (``--plans`` pilot runs a cell, default 10): each pilot, a run of the cell at a true
difference of 0, goes through ``compare_rollouts`` and the core's ``plan``; each lever it offers
(more rollouts over the pilot's tasks, or more tasks: the pilot's and fresh ones from the same
population) is simulated ``--plan-runs`` times at 0 and at -2M, and what it achieved is set beside
what it promised (its power to show equivalence, and to fail the regression). A promise is made
from one pilot, so its error is the spread of (achieved - promised) over the pilots, or the
planned runs' binomial error where that is larger.

It exits 0 when the pooled false-pass rate is at most 5% plus two standard errors, no cell exceeds
5% by more than three, and no lever (pooled: both together) falls short of its promise by more than
three (pooled: two).
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
from calibration import moved
from scipy import stats

from pytest_rollout_parity import compare_rollouts, summary_dict
from pytest_rollout_parity.core.statistics.plan import plan

KINDS = ("binary-2", "binary-0.3", "continuous")
MARGINS = {10: 0.2, 20: 0.2, 50: 0.1, 300: 0.05}
"""M by task count: 0.05 where it can be shown, larger where it cannot."""
NOMINAL = 0.05
RATE_EDGE = 1e-9
"""A continuous task's mean is kept this far inside (0, 1), where Beta(2 mu, 2 (1 - mu)) is defined."""


@dataclass(frozen=True)
class Cell:
    kind: str
    tasks: int
    k: int

    @property
    def margin(self) -> float:
        return MARGINS.get(self.tasks, 0.05 if self.tasks >= 300 else 0.1 if self.tasks >= 50 else 0.2)


def task_rates(rng: np.random.Generator, kind: str, shape: tuple[int, ...]) -> np.ndarray:
    """Tasks' pass rates (or continuous means) drawn from the kind's distribution."""
    return rng.beta(0.3, 0.3, shape) if kind == "binary-0.3" else rng.beta(2.0, 2.0, shape)


def draw(
    rng: np.random.Generator, cell: Cell, difference: float, runs: int, rates: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The rewards of ``runs`` pairs: arrays (runs, tasks, K) for the old and the new side; the tasks'
    rates are ``rates`` (tasks,) when given (the same tasks in every run), else drawn for each run."""
    if rates is None:
        rates = task_rates(rng, cell.kind, (runs, cell.tasks))
    else:
        rates = np.broadcast_to(rates, (runs, cell.tasks))
    shifted = moved(rates, difference)  # elementwise on the array
    if cell.kind == "continuous":
        old_mu = np.clip(rates, RATE_EDGE, 1 - RATE_EDGE)[..., None].repeat(cell.k, -1)
        new_mu = np.clip(shifted, RATE_EDGE, 1 - RATE_EDGE)[..., None].repeat(cell.k, -1)
        return rng.beta(2 * old_mu, 2 * (1 - old_mu)), rng.beta(2 * new_mu, 2 * (1 - new_mu))
    uniform = rng.random((2, runs, cell.tasks, cell.k))
    return (uniform[0] < rates[..., None]).astype(float), (uniform[1] < shifted[..., None]).astype(float)


def bounds_decide(old: np.ndarray, new: np.ndarray, margin: float) -> tuple[np.ndarray, np.ndarray]:
    """The gate's equivalence decision for each run (rewards in [0, 1], one taskset), vectorised:
    (the aggregate passes, the interval lies wholly below -M so the run fails)."""
    _, tasks, k = old.shape
    d = new.mean(-1) - old.mean(-1)
    with np.errstate(invalid="ignore", divide="ignore"):  # runs without spread: no shape (taken as 0)
        skew = np.nan_to_num(stats.skew(d, axis=-1, bias=False), nan=0.0, posinf=0.0, neginf=0.0)
        kurtosis = np.nan_to_num(stats.kurtosis(d, axis=-1), nan=0.0, posinf=0.0, neginf=0.0)
    delta = d.mean(-1)
    se = np.maximum(d.std(-1, ddof=1) / math.sqrt(tasks), 1.0 / (tasks * k))
    t = stats.t.ppf(1 - NOMINAL, 2 / (2 / (tasks - 1) + np.maximum(kurtosis, 0.0) / tasks))
    shift = np.clip(skew * (2 * t * t + 1) / (6 * math.sqrt(tasks)), -t / 2, t / 2)
    low = delta - (t - shift) * se
    high = delta + (t + shift) * se
    return np.asarray((low >= -margin) & (high <= margin)), np.asarray(high < -margin)


def equivalent(old: np.ndarray, new: np.ndarray, margin: float) -> np.ndarray:
    """Whether each run's aggregate passes."""
    return bounds_decide(old, new, margin)[0]


def rows_of(run_old: np.ndarray, run_new: np.ndarray) -> list[list[dict[str, Any]]]:
    """One run's rows, old and new: a row per rollout, task ids in order."""
    return [
        [{"task_id": f"task-{i:04d}", "reward": float(r)} for i, task in enumerate(side) for r in task]
        for side in (run_old, run_new)
    ]


def gate_decisions(old: np.ndarray, new: np.ndarray, margin: float) -> list[bool]:
    """The same runs through the public API: whether each run's aggregate passed."""
    return [
        bool(summary_dict(compare_rollouts(*rows_of(run_old, run_new)), margin=margin)["aggregate"]["passed"])
        for run_old, run_new in zip(old, new)
    ]


def check_against_the_gate(rng: np.random.Generator, cell: Cell, runs: int) -> None:
    """Raise when the vectorised decision differs from the gate's on ``runs`` runs a difference."""
    for difference in (-cell.margin, 0.0, cell.margin):
        old, new = draw(rng, cell, difference, runs)
        ours = [bool(x) for x in equivalent(old, new, cell.margin)]
        gate = gate_decisions(old, new, cell.margin)
        if ours != gate:
            raise AssertionError(f"{cell}: vectorised {ours} against the gate's {gate} at D = {difference:g}")


@dataclass
class Tally:
    runs: int = 0
    boundary_passed: int = 0
    null_passed: int = 0


def simulate(cell: Cell, runs: int, seed: int, batch: int = 500) -> Tally:
    """``runs`` runs at +M and -M (half each) and ``runs`` at 0, in batches that bound the memory."""
    rng = np.random.default_rng([seed, KINDS.index(cell.kind), cell.tasks, cell.k])
    tally = Tally()
    done = 0
    while done < runs:
        size = min(batch, runs - done)
        up = size // 2
        for difference, count in ((cell.margin, up), (-cell.margin, size - up)):
            tally.boundary_passed += int(equivalent(*draw(rng, cell, difference, count), cell.margin).sum())
        tally.null_passed += int(equivalent(*draw(rng, cell, 0.0, size), cell.margin).sum())
        tally.runs += size
        done += size
    return tally


@dataclass
class PlanTally:
    """What one lever of the plans promised and what its planned runs did, summed over runs."""

    runs: int = 0
    promised: float = 0.0
    passed: int = 0
    promised_regression: float = 0.0
    failed: int = 0
    skipped: int = 0
    sizes: list[tuple[int, int]] = field(default_factory=list)
    #: each pilot's (achieved - promised) at 0 and at -2M: the promise is a pilot's, so its error is
    #: the spread of these over the pilots, not the planned runs' binomial error alone
    gaps: list[tuple[float, float]] = field(default_factory=list)

    def short(self, which: int, sigmas: float) -> bool:
        """The achieved share falls below the promise by more than ``sigmas`` standard errors."""
        return shortfall(
            [gap[which] for gap in self.gaps],
            (self.promised, self.promised_regression)[which] / self.runs,
            self.runs,
            sigmas,
        )


def shortfall(gaps: Sequence[float], promised: float, runs: int, sigmas: float) -> bool:
    """The mean of the pilots' gaps lies below 0 by more than ``sigmas`` standard errors: the larger
    of their spread over the pilots and the planned runs' binomial error."""
    n = len(gaps)
    mean = math.fsum(gaps) / n
    spread = math.fsum((g - mean) ** 2 for g in gaps) / (n - 1) / n if n > 1 else 0.0
    binomial = max(promised * (1 - promised), 1 / runs) / runs
    return mean < -sigmas * math.sqrt(max(spread, binomial))


def check_plans(cell: Cell, pilots: int, runs: int, seed: int, max_rows: int = 50_000) -> dict[str, PlanTally]:
    """Plans from ``pilots`` pilot runs at a true difference of 0, each through the core's ``plan``;
    each lever's planned run simulated ``runs`` times at 0 and at -2M on the pilot's tasks (and
    fresh ones from the same population for more tasks). A lever past ``max_rows`` rows is skipped."""
    rng = np.random.default_rng([seed, 2, KINDS.index(cell.kind), cell.tasks, cell.k])
    tallies = {"rollouts": PlanTally(), "tasks": PlanTally()}
    for _ in range(pilots):
        rates = task_rates(rng, cell.kind, (cell.tasks,))
        old, new = draw(rng, cell, 0.0, 1, rates)
        planned = plan(compare_rollouts(*rows_of(old[0], new[0])), cell.margin, NOMINAL)
        for name, lever in (("rollouts", planned.by_rollouts), ("tasks", planned.by_tasks)):
            tally = tallies[name]
            if lever is None or lever.tasks * lever.repeats > max_rows:
                tally.skipped += 1
                continue
            extra = task_rates(rng, cell.kind, (max(lever.tasks - cell.tasks, 0),))
            lever_rates = np.concatenate([rates, extra])[: lever.tasks]
            size = Cell(cell.kind, lever.tasks, lever.repeats)
            tally.sizes.append((lever.tasks, lever.repeats))
            batch = max(1, 2_000_000 // (lever.tasks * lever.repeats))
            passed = failed = 0
            for start in range(0, runs, batch):
                count = min(batch, runs - start)
                passed += int(equivalent(*draw(rng, size, 0.0, count, lever_rates), cell.margin).sum())
                below = bounds_decide(*draw(rng, size, -2 * cell.margin, count, lever_rates), cell.margin)[1]
                failed += int(below.sum())
            tally.passed += passed
            tally.failed += failed
            tally.gaps.append((passed / runs - lever.power, failed / runs - lever.regression_power))
            tally.runs += runs
            tally.promised += lever.power * runs
            tally.promised_regression += lever.regression_power * runs
    return tallies


def share(hits: int, runs: int, places: int = 1) -> str:
    rate = hits / runs
    error = math.sqrt(max(rate * (1 - rate), 1 / runs) / runs)
    return f"{100 * rate:.{places}f}% ± {100 * error:.{places}f}"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=4000, help="runs a cell at ±M, and as many at 0 (default 4000)")
    parser.add_argument("--tasks", default="10,20,50,300", help="task counts, comma-separated")
    parser.add_argument("--k", default="1,3,5,8", help="rollouts a task a side, comma-separated")
    parser.add_argument("--kinds", default=",".join(KINDS), help="reward kinds, comma-separated")
    parser.add_argument("--check", type=int, default=3, help="runs a difference checked against the gate a cell")
    parser.add_argument("--seed", type=int, default=20261203)
    parser.add_argument("--plans", type=int, default=10, help="pilot runs a cell whose plans are checked (0: none)")
    parser.add_argument("--plan-runs", type=int, default=200, help="planned runs simulated a pilot and lever")
    options = parser.parse_args(argv)
    cells = [
        Cell(kind, int(tasks), int(k))
        for kind in options.kinds.split(",")
        for tasks in options.tasks.split(",")
        for k in options.k.split(",")
    ]
    results: list[tuple[Cell, Tally]] = []
    for cell in cells:
        if options.check:
            check_against_the_gate(np.random.default_rng([options.seed, 1, cell.tasks, cell.k]), cell, options.check)
        results.append((cell, simulate(cell, options.reps, options.seed)))
    print(f"{options.reps} runs a cell at ±M and as many at 0; seed {options.seed}; nominal {NOMINAL:.0%}")
    print()
    print("| rewards | tasks | K | M | pass at ±M | pass at 0 |")
    print("|---|---|---|---|---|---|")
    worst: list[str] = []
    for cell, tally in results:
        print(
            f"| {cell.kind} | {cell.tasks} | {cell.k} | {cell.margin:g} | {share(tally.boundary_passed, tally.runs)} "
            f"| {share(tally.null_passed, tally.runs)} |"
        )
        limit = NOMINAL + 3 * math.sqrt(NOMINAL * (1 - NOMINAL) / tally.runs)
        if tally.boundary_passed / tally.runs > limit:
            worst.append(f"{cell.kind} T={cell.tasks} K={cell.k}")
    runs = sum(t.runs for _, t in results)
    passed = sum(t.boundary_passed for _, t in results)
    pooled_limit = NOMINAL + 2 * math.sqrt(NOMINAL * (1 - NOMINAL) / runs)
    print()
    print(
        f"pooled pass at ±M: {share(passed, runs, 2)} over {runs} runs (limit {100 * pooled_limit:.2f}%); "
        f"cells above 5% + 3 standard errors: {', '.join(worst) if worst else 'none'}"
    )
    kept = passed / runs <= pooled_limit and not worst
    if options.plans:
        kept = print_plans(cells, options) and kept
    return 0 if kept else 1


def print_plans(cells: Sequence[Cell], options: argparse.Namespace) -> bool:
    """The plans' table; True when their promises hold, pooled and cell by cell."""
    print()
    print(
        f"plans from {options.plans} pilot runs a cell at a true difference of 0, {options.plan_runs} planned runs "
        "a pilot and lever at 0 and at -2M"
    )
    print()
    print(
        "| rewards | tasks | K | M | lever | planned (median) | promised at 0 | at 0 | promised at -2M | fails at -2M |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    short: list[str] = []
    totals = PlanTally()
    for cell in cells:
        for name, tally in check_plans(cell, options.plans, options.plan_runs, options.seed).items():
            if not tally.runs:
                print(f"| {cell.kind} | {cell.tasks} | {cell.k} | {cell.margin:g} | {name} | not offered | | | | |")
                continue
            tasks, repeats = sorted(tally.sizes)[len(tally.sizes) // 2]
            print(
                f"| {cell.kind} | {cell.tasks} | {cell.k} | {cell.margin:g} | {name} | {tasks} x {repeats} "
                f"| {100 * tally.promised / tally.runs:.1f}% | {share(tally.passed, tally.runs)} "
                f"| {100 * tally.promised_regression / tally.runs:.1f}% | {share(tally.failed, tally.runs)} |"
            )
            if tally.short(0, 3.0) or tally.short(1, 3.0):
                short.append(f"{cell.kind} T={cell.tasks} K={cell.k} {name}")
            totals.gaps.extend(tally.gaps)
            totals.runs += tally.runs
            totals.promised += tally.promised
            totals.passed += tally.passed
            totals.promised_regression += tally.promised_regression
            totals.failed += tally.failed
    pooled_short = []
    for which, (what, promised, hits) in enumerate(
        (("at 0", totals.promised, totals.passed), ("at -2M", totals.promised_regression, totals.failed))
    ):
        print(f"pooled {what}: promised {100 * promised / totals.runs:.2f}%, achieved {share(hits, totals.runs, 2)}")
        if totals.short(which, 2.0):
            pooled_short.append(what)
    print(
        "levers short of their promise by more than 3 standard errors (over the pilots): "
        f"{', '.join(short) if short else 'none'}; pooled short by more than 2: {', '.join(pooled_short) or 'none'}"
    )
    return not short and not pooled_short


if __name__ == "__main__":
    raise SystemExit(main())
