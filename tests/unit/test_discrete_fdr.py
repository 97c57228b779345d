"""Margin mode's per-task multiplicity: BH over the tests that can reach alpha.

The smallest attainable p-values are checked against scipy's Fisher test over every table with the
same margins, and against the permutation test run on every split; the correction against
scipy's Benjamini-Hochberg on the tests a separately written rule keeps.
"""

from __future__ import annotations

import itertools
import random

import pytest
from scipy import stats as sps

from pytest_rollout_parity.core.statistics.paired import fisher_test, permutation_test, task_test
from pytest_rollout_parity.core.statistics.paired_tests import discrete_bh


def fisher_smallest_p(successes: int, a_n: int, b_n: int) -> float:
    """The smallest p-value of Fisher's test with these margins (any split of the passes will do)."""
    a_success = min(successes, a_n)
    return fisher_test(a_success, a_n, successes - a_success, b_n)[1]


@pytest.mark.parametrize("a_n,b_n", [(2, 2), (3, 3), (5, 5), (8, 8), (5, 3), (2, 7)])
def test_fisher_smallest_p_is_the_best_table_with_those_margins(a_n: int, b_n: int) -> None:
    for successes in range(a_n + b_n + 1):
        tables = [(x, successes - x) for x in range(max(0, successes - b_n), min(a_n, successes) + 1)]
        best = min(sps.fisher_exact([[x, a_n - x], [y, b_n - y]]).pvalue for x, y in tables)
        assert fisher_smallest_p(successes, a_n, b_n) == pytest.approx(best, rel=1e-9), (successes, a_n, b_n)


def test_the_figures_the_docs_quote() -> None:
    assert fisher_smallest_p(5, 5, 5) == pytest.approx(2 / 252)  # 5/5 against 0/5
    assert fisher_smallest_p(3, 5, 5) == pytest.approx(1 / 6)  # 3/5 against 0/5: 0.167
    assert fisher_smallest_p(1, 5, 5) == 1.0  # 1/5 against 0/5
    assert fisher_smallest_p(3, 3, 3) == pytest.approx(0.1)  # 3/3 against 0/3: never below 0.05
    assert fisher_smallest_p(10, 5, 5) == 1.0  # always passes on both sides


def test_permutation_smallest_p_is_the_smallest_over_every_split() -> None:
    rng = random.Random(4)
    for _ in range(30):
        k, rest = rng.randint(2, 4), rng.randint(2, 4)
        pooled = [rng.choice([0.0, 0.25, 0.5, 0.5, 1.0]) for _ in range(k + rest)]
        xs, ys = pooled[:k], pooled[k:]
        smallest = permutation_test(xs, ys)[1]
        best = min(
            permutation_test([pooled[i] for i in chosen], [pooled[i] for i in range(k + rest) if i not in chosen])[0]
            for chosen in itertools.combinations(range(k + rest), k)
        )
        assert smallest == pytest.approx(best, abs=1e-12)


def test_monte_carlo_smallest_p_is_one_over_draws_plus_one() -> None:
    xs = [0.1 * i for i in range(12)]
    ys = [0.05 + 0.1 * i for i in range(12)]
    p, smallest = permutation_test(xs, ys, exact_limit=10, draws=99)
    assert smallest == 1 / 100 and smallest <= p


def test_task_test_uses_fisher_for_binary_rows() -> None:
    assert task_test([1.0] * 5, [0.0] * 5) == (pytest.approx(2 / 252), pytest.approx(2 / 252))
    assert task_test([1.0, 1.0, 1.0, 0.0, 0.0], [0.0] * 5) == (pytest.approx(1 / 6), pytest.approx(1 / 6))
    assert task_test([1.0], [0.0, 0.0]) is None


def reference(pvalues: list[float], smallest: list[float], alpha: float) -> dict[int, float]:
    keep = [i for i in range(len(pvalues)) if smallest[i] < alpha]
    if not keep:
        return {}
    adjusted = sps.false_discovery_control([pvalues[i] for i in keep])
    return dict(zip(keep, map(float, adjusted)))


def test_discrete_bh_matches_scipy_over_the_tests_that_can_reach_alpha() -> None:
    rng = random.Random(9)
    for _ in range(300):
        m = rng.randint(0, 40)
        smallest = [rng.choice([2 / 252, 0.0476, 1 / 6, 1.0, rng.random() ** 3]) for _ in range(m)]
        pvalues = [min(1.0, s + rng.random() * (1 - s) * rng.choice([0.0, 0.1, 1.0])) for s in smallest]
        alpha = rng.choice([0.01, 0.05, 0.1])
        got = discrete_bh(list(zip(pvalues, smallest)), alpha)
        expected = reference(pvalues, smallest, alpha)
        assert got.tests == m and list(got.counted) == sorted(expected)
        for i in range(m):
            if i in expected:
                assert got.adjusted[i] == pytest.approx(expected[i], abs=1e-12)
            else:
                assert got.adjusted[i] is None


def test_discrete_bh_rejects_everything_plain_bh_rejects() -> None:
    rng = random.Random(10)
    for _ in range(300):
        m = rng.randint(1, 60)
        smallest = [rng.choice([2 / 252, 0.0476, 1 / 6, 1.0]) for _ in range(m)]
        pvalues = [rng.choice([s, s, 0.5, 1.0]) if s < 1 else 1.0 for s in smallest]
        plain = {i for i, q in enumerate(sps.false_discovery_control(pvalues)) if q < 0.05}
        got = discrete_bh(list(zip(pvalues, smallest)), 0.05)
        ours = {i for i, q in enumerate(got.adjusted) if q is not None and q < 0.05}
        assert plain <= ours


def test_ties_at_the_smallest_attainable_p_are_the_limit() -> None:
    # 1 task 5/5 -> 0/5 among 40 flaky tasks with 5 passes in 10 rows (smallest p 0.0079 too):
    # they are all counted, and one p of 0.0079 among 41 does not survive BH (0.0079 * 41 > 0.05)
    smallest = [2 / 252] * 41
    pvalues = [2 / 252] + [1.0] * 40
    got = discrete_bh(list(zip(pvalues, smallest)), 0.05)
    assert len(got.counted) == 41 and got.adjusted[0] is not None and got.adjusted[0] > 0.05
    # the same task among flips that could never reach 0.05 (3 passes in 10 rows): caught
    got = discrete_bh(list(zip(pvalues, [2 / 252] + [1 / 6] * 40)), 0.05)
    assert got.counted == (0,) and got.adjusted[0] == pytest.approx(2 / 252)


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError, match="alpha"):
        discrete_bh([(0.1, 0.1)], 1.0)
