"""The clustered standard error (core.stats_cluster) against an independent matrix implementation.

The reference below follows Pustejovsky and Tipton (2018) literally, for any design matrix: the
working model Phi (exchangeable within clusters), the CR2 adjustment A_g = D_g' B_g^(-1/2) D_g with
Phi_g = D_g' D_g and B_g = D_g (I - H)_g Phi (I - H)_g' D_g', the sandwich, and the Satterthwaite
degrees of freedom from the vectors p_g = (I - H)_g' A_g X_g (X'X)^-1 c. It shares no code and no
closed form with the module, which reduces all of this to sums over clusters.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from pytest_rollout_parity.core.statistics.paired_tests import MAX_INTRACLASS, cr2_mean, paired_stats


def anova_icc(y: np.ndarray, labels: list[str]) -> float:
    """One-way random-effects ANOVA estimate of the intraclass correlation, clipped to [0, 0.99]."""
    groups = sorted(set(labels))
    n, g = len(y), len(groups)
    members = [y[[lab == k for lab in labels]] for k in groups]
    sizes = np.array([len(m) for m in members], dtype=float)
    grand = y.mean()
    ssb = sum(len(m) * (m.mean() - grand) ** 2 for m in members)
    ssw = sum(((m - m.mean()) ** 2).sum() for m in members)
    if n - g == 0:
        return 0.0
    msb, msw = ssb / (g - 1), ssw / (n - g)
    n0 = (n - (sizes**2).sum() / n) / (g - 1)
    denominator = msb + (n0 - 1) * msw
    if denominator <= 0:
        return 0.0
    return float(np.clip((msb - msw) / denominator, 0.0, MAX_INTRACLASS))


def inverse_sqrt(matrix: np.ndarray) -> np.ndarray:
    values, vectors = np.linalg.eigh(matrix)
    return vectors @ np.diag(values**-0.5) @ vectors.T


def reference_cr2(y: np.ndarray, labels: list[str], x: np.ndarray | None = None) -> tuple[float, float]:
    """(se, df) of the first coefficient of OLS of y on x (default: an intercept), CR2 + BM df."""
    n = len(y)
    x = np.ones((n, 1)) if x is None else x
    contrast = np.zeros(x.shape[1])
    contrast[0] = 1.0
    rho = anova_icc(y, labels)
    groups = sorted(set(labels))
    index = {k: np.array([i for i, lab in enumerate(labels) if lab == k]) for k in groups}
    phi = np.zeros((n, n))
    for rows in index.values():
        phi[np.ix_(rows, rows)] = (1 - rho) * np.eye(len(rows)) + rho
    bread = np.linalg.inv(x.T @ x)
    residual_maker = np.eye(n) - x @ bread @ x.T
    residuals = residual_maker @ y
    meat = np.zeros((x.shape[1], x.shape[1]))
    p_vectors = []
    for rows in index.values():
        d = np.linalg.cholesky(phi[np.ix_(rows, rows)]).T  # Phi_g = D' D
        block = residual_maker[rows, :]
        b = d @ block @ phi @ block.T @ d.T
        a = d.T @ inverse_sqrt(b) @ d
        score = x[rows].T @ a @ residuals[rows]
        meat += np.outer(score, score)
        p_vectors.append(block.T @ a @ x[rows] @ bread @ contrast)
    variance = contrast @ bread @ meat @ bread @ contrast
    omega = np.array([[p @ phi @ q for q in p_vectors] for p in p_vectors])
    df = np.trace(omega) ** 2 / (omega**2).sum()
    return float(np.sqrt(variance)), float(df)


def random_clusters(rng: random.Random) -> tuple[np.ndarray, list[str]]:
    g = rng.randint(2, 9)
    sizes = [rng.choice([1, 1, 2, 3, 5, 8, 20]) for _ in range(g)]
    labels = [f"set-{k}" for k, size in enumerate(sizes) for _ in range(size)]
    rng.shuffle(labels)  # the module must not rely on clusters being contiguous
    effects = {lab: rng.gauss(0, rng.choice([0.0, 0.1, 0.5])) for lab in set(labels)}
    y = np.array([effects[lab] + rng.gauss(0, 0.3) for lab in labels])
    if rng.random() < 0.3:
        y = np.round(y)  # ties and d in {-1, 0, 1}, as binary rewards give
    return y, labels


def test_cr2_matches_the_matrix_definition_on_unequal_clusters() -> None:
    rng = random.Random(18)
    checked = 0
    for _ in range(200):
        y, labels = random_clusters(rng)
        if len(y) < 3 or np.ptp(y) == 0:
            continue
        got = cr2_mean(list(map(float, y)), labels)
        se, df = reference_cr2(y, labels)
        assert got.se == pytest.approx(se, rel=1e-9)
        assert got.df == pytest.approx(df, rel=1e-9)
        assert got.groups == len(set(labels))
        checked += 1
    assert checked > 150


def test_the_reference_is_the_general_formula() -> None:
    # the reference handles any design; with a covariate it still runs, and with an intercept it
    # gives the textbook CR1 on equal clusters: a check that it is not written for this module alone
    rng = np.random.default_rng(3)
    labels = [f"g{i % 4}" for i in range(24)]
    y = rng.normal(size=24)
    x = np.column_stack([np.ones(24), rng.normal(size=24)])
    se, df = reference_cr2(y, labels, x)
    assert se > 0 and 1 <= df <= 3


def test_equal_clusters_reduce_to_g_over_g_minus_1_and_g_minus_1() -> None:
    rng = random.Random(5)
    for _ in range(50):
        g, size = rng.randint(2, 10), rng.randint(1, 12)
        labels = [f"c{i % g}" for i in range(g * size)]
        rng.shuffle(labels)
        values = [rng.choice([-1.0, 0.0, 0.0, 1.0]) + rng.gauss(0, 0.01) for _ in labels]
        got = cr2_mean(values, labels)
        mean = sum(values) / len(values)
        sums = {lab: 0.0 for lab in labels}
        for v, lab in zip(values, labels):
            sums[lab] += v - mean
        cr1 = (g / (g - 1) * sum(s * s for s in sums.values())) ** 0.5 / len(values)
        assert got.se == pytest.approx(cr1, rel=1e-12)
        assert got.df == pytest.approx(g - 1, rel=1e-12)


def test_one_cluster_holding_half_the_tasks_has_few_degrees_of_freedom() -> None:
    # 300 tasks in 30 tasksets, one holding 150: without correlation the working model gives
    # df = 1 / (sum p^2 + (sum a)^2 - sum a^2) with a = p^2 / (1 - p), about 3.7, not 29
    labels = ["big"] * 150 + [f"s{i % 29}" for i in range(150)]
    rng = random.Random(1)
    values = [rng.gauss(0, 1) for _ in labels]
    shares = [150 / 300] + [labels.count(f"s{i}") / 300 for i in range(29)]
    a = [p * p / (1 - p) for p in shares]
    expected = 1 / (sum(p * p for p in shares) + sum(a) ** 2 - sum(x * x for x in a))
    got = cr2_mean(values, labels)
    if got.rho == 0.0:
        assert got.df == pytest.approx(expected, rel=1e-9)
    assert 1.0 <= got.df < 5.0
    stats = paired_stats([(0.0, v) for v in values], labels)
    assert stats.df == pytest.approx(got.df) and stats.se == pytest.approx(got.se)
