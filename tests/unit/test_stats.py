"""The statistics module against scipy (a test-only dependency) on generated data.

Exact tests agree within 1e-9, intervals within 1e-6; the clustered standard error is checked
against the textbook formula written out with numpy. Cases come from seeded generators so a
failure reproduces.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import random

import numpy as np
import pytest
from scipy import stats as sps

from pytest_rollout_parity.core.statistics.paired import fisher_test, permutation_test, task_test
from pytest_rollout_parity.core.statistics.paired_tests import (
    DiscreteFdr,
    McNemarTable,
    PairedStats,
    discrete_bh,
    mcnemar_table,
    paired_stats,
    sign_test,
)
from pytest_rollout_parity.core.statistics.t_dist import t_cdf, t_ppf


def permutation_p_value(xs: list[float], ys: list[float], **options: int) -> float:
    return permutation_test(xs, ys, **options)[0]


def close(a: float, b: float, tol: float) -> bool:
    return abs(a - b) <= tol * max(1.0, abs(b))


def no_nan(result: object) -> bool:
    """True when no field (nor an element of a tuple field) is NaN."""
    values: list[object] = []
    for field in dataclasses.fields(result):
        value = getattr(result, field.name)
        values.extend(value if isinstance(value, tuple) else [value])
    return not any(isinstance(v, float) and math.isnan(v) for v in values)


# --- Student's t ------------------------------------------------------------------------------

T_DFS = [*range(1, 41), 50, 99, 250, 1000, 12345, 1e5, 1e6, 1.5, 2.5, 7.3]
T_PROBS = [0.975, 0.95, 0.05, 0.025, 0.995, 0.005, 0.9, 0.1, 0.6, 0.4, 0.5001, 1e-8, 1 - 1e-8]


def test_t_quantiles_match_scipy_on_a_grid():
    for df, p in itertools.product(T_DFS, T_PROBS):
        assert close(t_ppf(p, df), float(sps.t.ppf(p, df)), 1e-9), (p, df)


def test_t_quantiles_match_scipy_on_random_points():
    rng = random.Random(9)
    for _ in range(400):
        p = rng.uniform(1e-6, 1 - 1e-6)
        if abs(p - 0.5) < 1e-6:  # scipy rounds quantiles this close to the median to 0
            continue
        df = rng.choice([rng.randint(1, 60), math.exp(rng.uniform(0, 12))])
        assert close(t_ppf(p, df), float(sps.t.ppf(p, df)), 1e-9), (p, df)


def test_t_cdf_matches_scipy():
    rng = random.Random(10)
    for _ in range(400):
        t = rng.uniform(-40, 40)
        df = rng.choice([rng.randint(1, 60), math.exp(rng.uniform(0, 12))])
        expected = float(sps.t.cdf(t, df))
        # relative in the lower tail, where the quantiles are solved
        assert abs(t_cdf(t, df) - expected) <= 1e-10 * (expected if t < 0 else 1.0) + 1e-300, (t, df)


def test_t_edges():
    assert t_ppf(0.5, 3) == 0.0
    assert t_ppf(0.25, 5) == -t_ppf(0.75, 5)  # 1 - 0.75 is exact (1 - 0.7 is not 0.3)


# --- paired statistics ------------------------------------------------------------------------


def random_pairs(rng: random.Random, n: int) -> list[tuple[float, float]]:
    kind = rng.choice(["binary", "repeats", "continuous"])
    if kind == "binary":
        return [(float(rng.random() < 0.6), float(rng.random() < 0.55)) for _ in range(n)]
    if kind == "repeats":
        return [(rng.randint(0, 5) / 5, rng.randint(0, 5) / 5) for _ in range(n)]
    return [(rng.random(), min(1.0, max(0.0, rng.gauss(0.5, 0.3)))) for _ in range(n)]


def test_unclustered_interval_matches_scipy_ttest():
    rng = random.Random(1)
    for _ in range(80):
        n = rng.randint(2, 80)
        pairs = random_pairs(rng, n)
        d = np.array([new - old for old, new in pairs])
        if np.all(d == d[0]):
            continue  # scipy's interval is NaN without spread; covered by the zero-spread test
        got = paired_stats(pairs)
        assert got.n == n and got.df == n - 1 and got.clustered_by is None and got.absent is None
        assert close(got.old_mean, float(np.mean([o for o, _ in pairs])), 1e-12)
        assert close(got.new_mean, float(np.mean([w for _, w in pairs])), 1e-12)
        assert close(got.delta, float(np.mean(d)), 1e-12)
        assert got.ci95 is not None and got.lower_bound is not None and got.upper_bound is not None
        if sps.sem(d) > 1 / n:  # above the resolution floor: scipy's t interval
            two = sps.ttest_1samp(d, 0.0).confidence_interval(0.95)
            assert abs(got.ci95[0] - two.low) <= 1e-6 and abs(got.ci95[1] - two.high) <= 1e-6
        # the one-sided bounds: se floored at 1/n, df cut by the excess kurtosis, each t quantile
        # moved by Hall's (1992) skewness term with the adjusted skewness G1
        se = max(float(sps.sem(d)), 1 / n)
        df = 2 / (2 / (n - 1) + max(float(sps.kurtosis(d)), 0.0) / n)
        t = sps.t.ppf(0.95, df)
        skew = float(sps.skew(d, bias=False)) if n > 2 else 0.0
        shift = min(max(skew * (2 * t * t + 1) / (6 * math.sqrt(n)), -t / 2), t / 2)
        lower, upper = np.mean(d) - (t - shift) * se, np.mean(d) + (t + shift) * se
        assert abs(got.lower_bound - lower) <= 1e-6 and abs(got.upper_bound - upper) <= 1e-6


def reference_cluster(d: np.ndarray, labels: list[str]) -> tuple[float, int]:
    """Cluster-robust SE of a mean: sqrt(G/(G-1) * sum_g (sum_{i in g} e_i)^2) / n."""
    e = d - d.mean()
    groups = sorted(set(labels))
    score = np.array([e[[lab == g for lab in labels]].sum() for g in groups])
    g = len(groups)
    return float(np.sqrt(g / (g - 1) * np.sum(score**2)) / len(d)), g


def test_equal_clusters_give_the_textbook_formula():
    # with tasksets of equal size, CR2 with Bell-McCaffrey degrees of freedom is exactly the
    # G/(G-1) correction with t(G - 1) (unequal sizes: tests/unit/test_stats_cluster.py)
    rng = random.Random(2)
    for _ in range(150):
        g_count, size = rng.randint(1, 8), rng.randint(1, 9)
        n = g_count * size
        if n < 2:
            continue
        pairs = random_pairs(rng, n)
        labels = [f"set{i % g_count}" for i in range(n)]
        rng.shuffle(labels)
        got = paired_stats(pairs, labels)
        d = np.array([new - old for old, new in pairs])
        if len(set(labels)) < 2:
            assert got.clustered_by is None and got.df == n - 1
            continue
        se, g = reference_cluster(d, labels)
        se = max(se, 1 / n)  # the resolution floor: one rollout's step of delta
        assert got.clustered_by == "taskset" and got.clusters == g and got.df == pytest.approx(g - 1, rel=1e-12)
        assert abs(got.se - se) <= 1e-12
        half = float(sps.t.ppf(0.975, g - 1)) * se
        assert abs(got.ci95[0] - (d.mean() - half)) <= 1e-6
        assert abs(got.ci95[1] - (d.mean() + half)) <= 1e-6
        one = float(sps.t.ppf(0.95, g - 1)) * se
        assert abs(got.lower_bound - (d.mean() - one)) <= 1e-6
        assert abs(got.upper_bound - (d.mean() + one)) <= 1e-6


def test_one_task_per_cluster_is_the_unclustered_interval():
    rng = random.Random(3)
    for _ in range(30):
        n = rng.randint(2, 40)
        pairs = random_pairs(rng, n)
        plain = paired_stats(pairs)
        singletons = paired_stats(pairs, [str(i) for i in range(n)])
        assert singletons.clustered_by == "taskset" and plain.df == n - 1
        assert singletons.df == pytest.approx(n - 1, rel=1e-12)
        assert abs(singletons.se - plain.se) <= 1e-12


def test_one_cluster_falls_back_to_the_plain_interval():
    pairs = [(1.0, 0.0), (0.0, 0.0), (1.0, 1.0), (0.5, 1.0)]
    assert paired_stats(pairs, ["only"] * 4) == paired_stats(pairs)
    assert paired_stats(pairs, ["only"] * 4).clustered_by is None


@pytest.mark.parametrize("pairs", [[], [(1.0, 0.0)]])
def test_fewer_than_two_tasks_leave_every_figure_absent(pairs):
    got = paired_stats(pairs)
    assert got.n == len(pairs) and got.absent
    figures = {f.name: getattr(got, f.name) for f in dataclasses.fields(PairedStats)}
    assert {k for k, v in figures.items() if v is not None} == {"n", "absent"}


def test_no_spread_gives_the_resolutions_interval_not_a_point():
    # every difference the same: the standard error is the step one rollout moves delta by, not 0
    for pairs in ([(1.0, 1.0)] * 5, [(0.0, 1.0)] * 3, [(0.25, 0.75), (0.5, 1.0)]):
        n = len(pairs)
        for labels in (None, ["a", "b"] * (n // 2) + ["a"] * (n % 2)):
            for rows in (None, 4 * n):
                got = paired_stats(pairs, labels, rows=rows)
                assert no_nan(got) and got.se == pytest.approx(1 / (rows or n)) and got.df is not None
                half = sps.t.ppf(0.95, got.df) / (rows or n)
                assert got.delta is not None and got.lower_bound == pytest.approx(got.delta - half)
                assert got.upper_bound == pytest.approx(got.delta + half)


def test_no_generated_input_gives_nan():
    rng = random.Random(4)
    for _ in range(300):
        n = rng.randint(0, 8)
        pairs = random_pairs(rng, n)
        labels = [rng.choice("ab") for _ in range(n)] if rng.random() < 0.5 else None
        assert no_nan(paired_stats(pairs, labels))


# --- sign test and McNemar --------------------------------------------------------------------


def test_sign_test_matches_scipy_binomtest():
    cases = [(k, n) for n in range(0, 21) for k in range(n + 1)]
    rng = random.Random(5)
    cases += [(rng.randint(0, n), n) for n in (rng.randint(21, 400) for _ in range(60))]
    for better, changed in cases:
        diffs = [0.4] * better + [-1.0] * (changed - better) + [0.0, 5e-10, -5e-10]
        got = sign_test(diffs)
        assert (got.better, got.worse) == (better, changed - better)
        expected = 1.0 if changed == 0 else sps.binomtest(better, changed, 0.5).pvalue
        assert close(got.p, expected, 1e-9), (better, changed)


def test_sign_test_counts_only_changes_beyond_the_tolerance():
    assert sign_test([1e-9, -1e-9, 2e-9, -3e-9, 0.0]) == sign_test([1.0, -1.0])
    assert sign_test([]).p == 1.0 and sign_test([0.0, 0.0]).p == 1.0


def test_mcnemar_table_and_its_exact_test():
    rng = random.Random(6)
    for _ in range(100):
        pairs = [(float(rng.random() < 0.7), float(rng.random() < 0.6)) for _ in range(rng.randint(1, 60))]
        table = mcnemar_table(pairs)
        assert table == McNemarTable(
            both_pass=pairs.count((1.0, 1.0)),
            old_only=pairs.count((1.0, 0.0)),
            new_only=pairs.count((0.0, 1.0)),
            both_fail=pairs.count((0.0, 0.0)),
        )
        discordant = table.old_only + table.new_only
        expected = 1.0 if discordant == 0 else sps.binomtest(table.new_only, discordant, 0.5).pvalue
        assert close(sign_test([new - old for old, new in pairs]).p, expected, 1e-9)


def test_mcnemar_table_needs_binary_rewards():
    assert mcnemar_table([(1.0, 0.0), (0.5, 1.0)]) is None
    assert mcnemar_table([]) is None
    assert mcnemar_table([(1, 0), (True, False)]) == McNemarTable(0, 2, 0, 0)


# --- per-task noise ---------------------------------------------------------------------------


def test_fisher_matches_scipy_on_every_small_table():
    for a_n, b_n in itertools.product(range(1, 6), repeat=2):
        for a, b in itertools.product(range(a_n + 1), range(b_n + 1)):
            expected = sps.fisher_exact([[a, a_n - a], [b, b_n - b]]).pvalue
            assert close(fisher_test(a, a_n, b, b_n)[0], expected, 1e-9), (a, a_n, b, b_n)


def test_fisher_matches_scipy_on_random_tables():
    rng = random.Random(7)
    for _ in range(300):
        a_n, b_n = rng.randint(1, 60), rng.randint(1, 60)
        a, b = rng.randint(0, a_n), rng.randint(0, b_n)
        expected = sps.fisher_exact([[a, a_n - a], [b, b_n - b]]).pvalue
        assert close(fisher_test(a, a_n, b, b_n)[0], expected, 1e-9), (a, a_n, b, b_n)


def abs_mean_gap(x: np.ndarray, y: np.ndarray, axis: int) -> np.ndarray:
    return np.abs(np.mean(x, axis=axis) - np.mean(y, axis=axis))


def scipy_exact_permutation(xs: list[float], ys: list[float]) -> float:
    """Share of splits with |mean gap| >= the observed one (scipy's relative tolerance, 100 eps)."""
    return sps.permutation_test(
        (xs, ys),
        abs_mean_gap,
        permutation_type="independent",
        alternative="greater",
        n_resamples=np.inf,
        vectorized=True,
    ).pvalue


def test_exact_permutation_matches_scipy():
    rng = random.Random(8)
    for case in range(60):
        nx, ny = rng.randint(2, 6), rng.randint(2, 6)
        if case % 2:
            draw = lambda: rng.choice([0.0, 0.25, 0.5, 0.75, 1.0])  # noqa: E731 - ties on purpose
        else:
            draw = rng.random
        xs, ys = [draw() for _ in range(nx)], [draw() for _ in range(ny)]
        assert close(permutation_p_value(xs, ys), scipy_exact_permutation(xs, ys), 1e-9), (xs, ys)


def test_permutation_two_sided_is_symmetric_and_one_when_no_gap():
    xs, ys = [0.1, 0.9, 0.4], [0.3, 0.2, 0.8, 0.7]
    assert permutation_p_value(xs, ys) == permutation_p_value(ys, xs)
    assert permutation_p_value([0.5, 0.5], [0.5, 0.5, 0.5]) == 1.0


def test_monte_carlo_is_seeded_and_close_to_the_exact_value():
    rng = random.Random(11)
    xs = [rng.random() for _ in range(9)]
    ys = [rng.random() + 0.25 for _ in range(9)]
    exact = permutation_p_value(xs, ys)  # C(18, 9) = 48620 splits: enumerated
    first = permutation_p_value(xs, ys, exact_limit=1000, seed=3)
    assert first == permutation_p_value(xs, ys, exact_limit=1000, seed=3)
    assert first != exact and abs(first - exact) <= 0.02
    hits = first * 10_001
    assert abs(hits - round(hits)) < 1e-6 and round(hits) >= 1  # (count + 1) / (draws + 1)


def test_many_rows_use_monte_carlo_with_a_floor_above_zero():
    xs, ys = [1.0] * 10 + [0.9] * 5, [0.0] * 10 + [0.1] * 5  # C(30, 15) splits: sampled
    assert permutation_p_value(xs, ys) == 1 / 10_001


def test_task_test_dispatch():
    assert task_test([1.0], [0.0, 1.0]) is None
    assert task_test([1.0, 0.0], [0.0]) is None
    binary_old, binary_new = [1.0] * 5, [0.0] * 5
    assert task_test(binary_old, binary_new) == fisher_test(5, 5, 0, 5)
    assert close(task_test(binary_old, binary_new)[0], sps.fisher_exact([[5, 0], [0, 5]]).pvalue, 1e-9)
    graded_old, graded_new = [1.0, 0.5, 1.0], [0.0, 0.5]
    assert task_test(graded_old, graded_new) == permutation_test(graded_old, graded_new)


# --- Benjamini-Hochberg -----------------------------------------------------------------------


def benjamini_hochberg(pvalues: list[float]) -> list[float]:
    """Plain BH: discrete BH over tests that can all reach alpha (smallest attainable p 0)."""
    return list(discrete_bh([(p, 0.0) for p in pvalues], 0.5).adjusted)


def test_benjamini_hochberg_matches_scipy():
    rng = random.Random(12)
    for _ in range(200):
        m = rng.randint(1, 60)
        pool = [rng.random() ** 3 for _ in range(4)] + [0.0, 1.0]
        ps = [rng.random() ** 2 if rng.random() < 0.6 else rng.choice(pool) for _ in range(m)]
        expected = sps.false_discovery_control(ps, method="bh")
        got = benjamini_hochberg(ps)
        assert len(got) == m
        assert all(close(g, float(e), 1e-9) for g, e in zip(got, expected)), ps


def test_benjamini_hochberg_edges():
    assert benjamini_hochberg([]) == []
    assert benjamini_hochberg([0.02]) == [0.02]
    assert discrete_bh([None, (0.02, 0.0), None], 0.05) == DiscreteFdr(0.05, 1, (1,), (None, 0.02, None))


def test_the_bounds_never_collapse_onto_delta():
    # Hall's term is capped at t / 2: with three tasks d = 0, -1, 0 it alone exceeds t (G1 = -1.73)
    rng = random.Random(5)
    for pairs in [[(1.0, 1.0), (1.0, 0.0), (0.0, 0.0)], *(random_pairs(rng, rng.randint(2, 12)) for _ in range(200))]:
        got = paired_stats(pairs)
        assert got.delta is not None and got.lower_bound is not None and got.upper_bound is not None
        # the floor keeps se > 0, and each quantile at least t / 2 (scipy's t at n - 1, kurtosis lowers df)
        assert got.se is not None and got.se >= 1 / len(pairs)
        least = sps.t.ppf(0.95, len(pairs) - 1) / 2 * got.se
        assert got.lower_bound <= got.delta - least + 1e-12 and got.upper_bound >= got.delta + least - 1e-12
