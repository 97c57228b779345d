"""The plan's formulas and the agent-error rate test, checked against scipy (never the code's own numbers)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from pytest_rollout_parity import compare_rollouts
from pytest_rollout_parity.core.judging.completeness import error_rates, fisher_greater
from pytest_rollout_parity.core.statistics.paired import left_out, paired_section
from pytest_rollout_parity.core.statistics.plan import (
    MAX_REPEATS,
    MAX_TASKS,
    fewest,
    flip_repeats,
    plan,
    regression_power,
    tost_power,
    upper_factor,
)


def _scipy_power(tasks: int, variance: float, margin: float) -> float:
    """2 F(M sqrt(T / v) - t_0.95) - 1 with scipy's t distribution."""
    df = tasks - 1
    shift = margin * math.sqrt(tasks / variance) - stats.t.ppf(0.95, df)
    return max(0.0, 2 * stats.t.cdf(shift, df) - 1)


@given(
    new_errors=st.integers(0, 40),
    new_clean=st.integers(0, 40),
    old_errors=st.integers(0, 40),
    old_clean=st.integers(0, 40),
)
@settings(max_examples=200, deadline=None)
def test_fisher_greater_is_scipys_one_sided_fisher(
    new_errors: int, new_clean: int, old_errors: int, old_clean: int
) -> None:
    ours = fisher_greater(new_errors, new_errors + new_clean, old_errors, old_errors + old_clean)
    theirs = stats.fisher_exact([[new_errors, new_clean], [old_errors, old_clean]], alternative="greater").pvalue
    assert ours == pytest.approx(theirs, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize(
    ("tasks", "variance", "margin"),
    [(2, 0.5, 0.1), (10, 0.05, 0.1), (50, 0.013, 0.05), (300, 0.3, 0.05), (7, 0.001, 0.02)],
)
def test_tost_power_is_the_documented_formula(tasks: int, variance: float, margin: float) -> None:
    assert tost_power(tasks, variance, margin) == pytest.approx(_scipy_power(tasks, variance, margin), abs=1e-7)


@pytest.mark.parametrize(("variance", "margin"), [(0.5, 0.1), (0.2, 0.05), (0.02, 0.05), (1.0, 0.3)])
def test_the_planned_tasks_are_the_fewest_that_reach_80_percent(variance: float, margin: float) -> None:
    tasks = fewest(lambda n: tost_power(n, variance, margin), MAX_TASKS)
    assert tasks is not None
    assert _scipy_power(tasks, variance, margin) >= 0.8
    assert tasks == 2 or _scipy_power(tasks - 1, variance, margin) < 0.8
    # the textbook closed form, normal quantiles: n >= (z_0.95 + z_0.90)^2 v / M^2 (the t's make it larger)
    assert tasks >= (stats.norm.ppf(0.95) + stats.norm.ppf(0.9)) ** 2 * variance / margin**2


@pytest.mark.parametrize(("tasks", "rollout_variance", "margin"), [(50, 0.26, 0.05), (20, 0.4, 0.1), (8, 0.6, 0.05)])
def test_the_planned_rollouts_are_the_fewest_that_reach_80_percent(
    tasks: int, rollout_variance: float, margin: float
) -> None:
    repeats = fewest(lambda r: tost_power(tasks, rollout_variance, margin, repeats=r), MAX_REPEATS)
    assert repeats is not None
    assert _scipy_power(tasks, rollout_variance / repeats, margin) >= 0.8
    assert repeats == 1 or _scipy_power(tasks, rollout_variance / (repeats - 1), margin) < 0.8


def test_one_task_cannot_be_planned_by_rollouts() -> None:
    assert fewest(lambda r: tost_power(1, 0.4, 0.05, repeats=r), MAX_REPEATS) is None


@pytest.mark.parametrize(("tests", "alpha"), [(1, 0.05), (10, 0.05), (100, 0.05), (40, 0.1)])
def test_the_flip_plan_is_the_fewest_repeats_the_bh_rule_lets_fail(tests: int, alpha: float) -> None:
    repeats = flip_repeats(tests, alpha)
    assert stats.fisher_exact([[repeats, 0], [0, repeats]]).pvalue * tests < alpha
    if repeats > 1:
        assert stats.fisher_exact([[repeats - 1, 0], [0, repeats - 1]]).pvalue * tests >= alpha


def test_the_plan_reads_the_within_task_variances() -> None:
    old = [{"task_id": f"t{t}", "reward": r} for t in range(3) for r in (1.0, 0.0, 1.0, 1.0)]
    new = [{"task_id": f"t{t}", "reward": r} for t in range(3) for r in (1.0, 1.0, 0.0, 0.0)]
    planned = plan(compare_rollouts(old, new), 0.3, 0.05)
    within = stats.tvar([1.0, 0.0, 1.0, 1.0]) + stats.tvar([1.0, 1.0, 0.0, 0.0])
    # three tasks alike: the mean is known to 2 degrees of freedom; its 80% upper confidence limit
    within *= 2 / stats.chi2.ppf(0.2, 2)
    assert planned.rollout_variance == pytest.approx(within, rel=0.01)
    assert planned.repeats == 4 and planned.tasks == 3
    assert planned.by_rollouts is not None
    assert planned.rollout_variance is not None
    assert _scipy_power(3, planned.rollout_variance / planned.by_rollouts.repeats, 0.3) >= 0.8


def test_error_rates_count_rows_of_shared_tasks() -> None:
    old = [{"task_id": f"t{t}", "reward": 1.0} for t in range(10)] + [{"task_id": "gone", "reward": 1.0}]
    new = [{"task_id": f"t{t}", "reward": 0.0, "agent_timed_out": True} for t in range(6)]
    new += [{"task_id": f"t{t}", "reward": 1.0} for t in range(6, 10)]
    rates = error_rates(compare_rollouts(old, new))
    assert rates is not None and (rates.new_errors, rates.new_rows, rates.old_errors, rates.old_rows) == (6, 10, 0, 10)
    assert rates.p_value == pytest.approx(stats.fisher_exact([[6, 4], [0, 10]], alternative="greater").pvalue)
    assert rates.clearly_higher


def test_masked_rows_of_compared_tasks_widen_the_left_out_range_by_hand() -> None:
    old = [
        {"task_id": "a", "reward": 1.0},
        {"task_id": "a", "reward": 1.0},
        {"task_id": "b", "reward": 0.0},
        {"task_id": "b", "reward": 0.0},
    ]
    new = [
        {"task_id": "a", "reward": 1.0},
        {"task_id": "a", "reward": 0.0, "mask_sample": True},
        {"task_id": "b", "reward": 0.0},
        {"task_id": "b", "reward": 0.0},
    ]
    left = left_out(compare_rollouts(old, new))
    assert (left.old_rows, left.new_rows, left.old, left.new) == (0, 1, 0, 0)
    # task a's new mean had its masked row scored 0 or 1: 0.5 or 1.0; b's difference is 0
    assert left.delta_range == pytest.approx(((0.5 - 1.0 + 0.0) / 2, (1.0 - 1.0 + 0.0) / 2))


def _scipy_se(tasks: int, repeats: int, variance: float, width: float) -> float:
    return max(math.sqrt(variance / (tasks * repeats)), width / (tasks * repeats))


def _regression_shift(tasks: int, repeats: int, variance: float, width: float, margin: float) -> float:
    """At a true difference of -2M the upper bound -2M + t se lies below -M with probability
    F(M / se - t); se takes the largest spread of task differences in [-width, 0] with mean -2M:
    a share 2M / width of tasks at -width, the rest at 0, variance 2M width - 4M^2."""
    spread = float(np.var([-width] * round(2 * margin / width * 1000) + [0.0] * round((1 - 2 * margin / width) * 1000)))
    se = max(math.sqrt((variance / repeats + spread) / tasks), width / (tasks * repeats))
    return margin / se - stats.t.ppf(0.95, tasks - 1)


@pytest.mark.parametrize(
    ("tasks", "repeats", "variance", "width", "margin"),
    [(10, 4, 0.1, 1.0, 0.1), (300, 1, 0.002, 1.0, 0.05), (2, 50, 0.5, 1.0, 0.2), (40, 8, 0.3, 2.0, 0.05)],
)
def test_both_powers_are_the_documented_formulas(
    tasks: int, repeats: int, variance: float, width: float, margin: float
) -> None:
    se = _scipy_se(tasks, repeats, variance, width)
    shift = margin / se - stats.t.ppf(0.95, tasks - 1)
    equivalence = max(0.0, 2 * stats.t.cdf(shift, tasks - 1) - 1)
    regression = stats.t.cdf(_regression_shift(tasks, repeats, variance, width, margin), tasks - 1)
    figures = {"repeats": repeats, "width": width}
    assert tost_power(tasks, variance, margin, **figures) == pytest.approx(equivalence, abs=1e-7)
    assert regression_power(tasks, variance, margin, **figures) == pytest.approx(regression, abs=1e-7)


def _rows(rewards: list[list[float]], side: str) -> list[dict[str, object]]:
    return [
        {"task_id": f"t{i}", "reward": r, "response_id": f"{side}{i}-{k}"}
        for i, task in enumerate(rewards)
        for k, r in enumerate(task)
    ]


def test_the_plan_offers_both_levers_each_reaching_its_power() -> None:
    # 10 tasks, one rollout a side, all passing: nothing varies, so w = -ln(0.2) / 10, the 80% upper
    # confidence limit of the count of differing row pairs when none of 10 differed
    result = compare_rollouts(_rows([[1.0]] * 10, "o"), _rows([[1.0]] * 10, "n"))
    planned = plan(result, 0.05, 0.05)
    w = -math.log(0.2) / 10
    assert stats.poisson.cdf(0, 10 * w) == pytest.approx(0.2)  # no count at the rate, Poisson: 20%
    assert planned.rollout_variance == pytest.approx(w)
    rollouts, tasks = planned.by_rollouts, planned.by_tasks
    assert rollouts is not None and tasks is not None
    assert rollouts.tasks == 10 and tasks.repeats == 1
    for lever in (rollouts, tasks):
        se = _scipy_se(lever.tasks, lever.repeats, w, 1.0)
        shift = 0.05 / se - stats.t.ppf(0.95, lever.tasks - 1)
        assert lever.power == pytest.approx(2 * stats.t.cdf(shift, lever.tasks - 1) - 1, abs=1e-7)
        assert lever.power >= 0.8
        regression = _regression_shift(lever.tasks, lever.repeats, w, 1.0, 0.05)
        assert lever.regression_power == pytest.approx(stats.t.cdf(regression, lever.tasks - 1), abs=1e-7)
    # the fewest: one rollout fewer, or one task fewer, does not reach 80%
    assert tost_power(10, w, 0.05, repeats=rollouts.repeats - 1, width=1.0) < 0.8
    assert tost_power(tasks.tasks - 1, w, 0.05, repeats=1, width=1.0) < 0.8
    assert any("more rollouts" in line for line in planned.lines())
    assert any("more tasks" in line and "same input dataset" in line for line in planned.lines())


def test_a_failing_run_gets_no_equivalence_plan() -> None:
    result = compare_rollouts(_rows([[1.0]] * 20, "o"), _rows([[0.0]] * 10 + [[1.0]] * 10, "n"))
    planned = plan(result, 0.05, 0.05, decided="the mean difference lies wholly outside the margin ±0.05")
    assert planned.by_rollouts is None and planned.by_tasks is None
    assert any(line.strip().startswith("decided: the run fails") for line in planned.lines())
    assert not any("either lever" in line for line in planned.lines())


def test_the_flip_line_counts_only_the_tasks_that_can_reach_alpha() -> None:
    # 500 tasks at 8 rows a side, 490 always passing and 10 flaky: a 1.0 -> 0.0 flip is counted
    # over the 10 varying tasks and the flipped one, not over 500 (8 rows suffice, where 500 asked 9)
    stable, flaky = [[1.0] * 8] * 490, [[1.0, 0.0] * 4] * 10
    result = compare_rollouts(_rows(stable + flaky, "o"), _rows(stable + flaky, "n"))
    planned = plan(result, 0.05, 0.05)
    assert planned.flip_tests == 11
    assert planned.flip_repeats == flip_repeats(11, 0.05)
    assert stats.fisher_exact([[planned.flip_repeats, 0], [0, planned.flip_repeats]]).pvalue * 11 < 0.05
    assert flip_repeats(500, 0.05) > planned.flip_repeats


@pytest.mark.parametrize("df", [2, 3, 5, 9, 20, 100])
def test_the_upper_confidence_factor_is_the_chi_square_limit(df: int) -> None:
    # Wilson and Hilferty's approximation of df / chi2(0.2, df), within 1% from 2 degrees of freedom
    assert upper_factor(df) == pytest.approx(df / stats.chi2.ppf(0.2, df), rel=0.01)


def test_a_verifier_disagreement_is_neither_noise_nor_planned() -> None:
    """Ten tasks always passing, and one re-verified task whose rescored rollouts cancel (old 1, 0,
    1, 0 and new 0, 1, 1, 0 on the same trajectories): the disagreement fails whatever its p-value, so
    it gets no per-task test, and the plan's variance, levers and flip count leave it out."""

    def rows(rewards: list[list[float]]) -> list[dict[str, object]]:
        return [
            {"task_id": f"t{i}", "reward": r, "_ng_rollout_index": k, "response": {"output": [{"text": f"{i}-{k}"}]}}
            for i, task in enumerate(rewards)
            for k, r in enumerate(task)
        ]

    result = compare_rollouts(
        rows([[1.0] * 4] * 10 + [[1.0, 0.0, 1.0, 0.0]]), rows([[1.0] * 4] * 10 + [[0.0, 1.0, 1.0, 0.0]])
    )
    (flagged,) = [place for place, task in enumerate(result.tasks) if task.disagreements]
    assert result.tasks[flagged].category == "flipped" and result.tasks[flagged].winner is None
    assert paired_section(result).tests[flagged] is None
    planned = plan(result, 0.05, 0.05)
    assert planned.tasks == 10 and planned.flip_tests == 1
    assert planned.variance_source.startswith("none observed")  # the ten stable tasks alone
    decided = plan(result, 0.05, 0.05, decided="1 task(s) failed")
    assert not any("told from noise" in line for line in decided.lines())
