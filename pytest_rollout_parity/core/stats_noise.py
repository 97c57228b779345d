"""Per-task noise: could a task's flip come from chance alone, given its repeats on both sides?

With several rows (repeats) a side, the rows of one task are two small samples; the p-value says
how often a difference at least this large appears when the server change did nothing. Binary
rewards use Fisher's exact test; other rewards an exact permutation test of the difference of
means (seeded Monte Carlo when the splits are too many to enumerate). Plain ``math``/``random``.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Sequence

FISHER_RELATIVE_TOLERANCE = 1e-7
"""Tables within this relative distance of the observed probability count as at most as likely."""

PERMUTATION_TOLERANCE = 1e-12
"""A split's |difference of means| within this of the observed one counts as at least as large."""

EXACT_LIMIT = 100_000
MONTE_CARLO_DRAWS = 10_000


def fisher_exact_two_sided(a_success: int, a_n: int, b_success: int, b_n: int) -> float:
    """Fisher's exact two-sided p-value for ``a_success``/``a_n`` against ``b_success``/``b_n``.

    The sum of the probabilities of every table with the observed margins whose probability is
    at most the observed one (relative tolerance 1e-7, as R's ``fisher.test`` uses). The
    hypergeometric weights are exact integers, so the comparison and the sum carry no rounding.
    """
    if not (0 <= a_success <= a_n and 0 <= b_success <= b_n):
        raise ValueError(f"need 0 <= successes <= rows, got {a_success}/{a_n} and {b_success}/{b_n}")
    successes = a_success + b_success
    low, high = max(0, successes - b_n), min(a_n, successes)
    weights = [math.comb(a_n, x) * math.comb(b_n, successes - x) for x in range(low, high + 1)]
    observed = weights[a_success - low]
    scale = round(1 / FISHER_RELATIVE_TOLERANCE)
    at_most = sum(w for w in weights if w * scale <= observed * (scale + 1))
    return min(1.0, at_most / math.comb(a_n + b_n, successes))


def _mean_gap(chosen_sum: float, k: int, total: float, rest: int) -> float:
    return abs(chosen_sum / k - (total - chosen_sum) / rest)


def permutation_p_value(
    xs: Sequence[float],
    ys: Sequence[float],
    *,
    seed: int = 0,
    exact_limit: int = EXACT_LIMIT,
    draws: int = MONTE_CARLO_DRAWS,
) -> float:
    """Two-sided permutation p-value of mean(xs) - mean(ys) over the pooled rows.

    The share of splits of the pooled rows into groups of ``len(xs)`` and ``len(ys)`` whose
    |difference of means| is at least the observed one less 1e-12. All C(n, len(xs)) splits are
    enumerated when they are at most ``exact_limit`` (the observed split among them); otherwise
    ``draws`` random splits from ``random.Random(seed)`` are drawn and, as for any randomized
    test (and as ``scipy.stats.permutation_test`` does), the observed split is added once:
    p = (count + 1) / (draws + 1), which is never 0.
    """
    k, rest = len(xs), len(ys)
    if k == 0 or rest == 0:
        raise ValueError("both samples need at least one row")
    pooled = [*xs, *ys]
    for value in pooled:
        if not math.isfinite(value):
            raise ValueError(f"rewards must be finite, got {value!r}")
    total = math.fsum(pooled)
    threshold = _mean_gap(math.fsum(xs), k, total, rest) - PERMUTATION_TOLERANCE
    n = k + rest
    splits = math.comb(n, k)
    if splits <= exact_limit:
        hits = sum(
            1
            for chosen in itertools.combinations(pooled, k)
            if _mean_gap(math.fsum(chosen), k, total, rest) >= threshold
        )
        return hits / splits
    rng = random.Random(seed)
    indices = range(n)
    hits = 0
    for _ in range(draws):
        chosen_sum = math.fsum(pooled[i] for i in rng.sample(indices, k))
        if _mean_gap(chosen_sum, k, total, rest) >= threshold:
            hits += 1
    return (hits + 1) / (draws + 1)


def task_p_value(old_rewards: Sequence[float], new_rewards: Sequence[float], *, seed: int = 0) -> float | None:
    """The p-value of one task's old rows against its new rows; ``None`` below 2 rows a side.

    Fisher's exact test when every reward is 0 or 1, else the permutation test of the means.
    """
    if len(old_rewards) < 2 or len(new_rewards) < 2:
        return None
    rows = [*old_rewards, *new_rewards]
    if all(r in (0.0, 1.0) for r in rows):
        old_pass = sum(1 for r in old_rewards if r == 1.0)
        new_pass = sum(1 for r in new_rewards if r == 1.0)
        return fisher_exact_two_sided(old_pass, len(old_rewards), new_pass, len(new_rewards))
    return permutation_p_value(old_rewards, new_rewards, seed=seed)
