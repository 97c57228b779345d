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

from .paired_tests import scale_exponent

FISHER_RELATIVE_TOLERANCE = 1e-7
"""Tables within this relative distance of the observed probability count as at most as likely."""

PERMUTATION_TOLERANCE = 1e-12
"""A split's |difference of means| within this of the observed one counts as at least as large."""

EXACT_LIMIT = 100_000
MONTE_CARLO_DRAWS = 10_000


def fisher_test(a_success: int, a_n: int, b_success: int, b_n: int) -> tuple[float, float]:
    """Fisher's exact two-sided p-value for ``a_success``/``a_n`` against ``b_success``/``b_n``, and
    the smallest p-value these margins allow.

    The p-value sums the probabilities of every table with the observed margins whose probability is
    at most the observed one (relative tolerance 1e-7, as R's ``fisher.test`` uses). The hypergeometric
    weights are exact integers, so the comparison and the sum carry no rounding. The smallest is the
    p-value of the least likely table (3 passes in 5 + 5 rows: 3/5 against 0/5 at best, p = 0.167;
    5 passes: 5/5 against 0/5, p = 0.0079): it depends on the margins only, not on how the passes fell.
    """
    if not (0 <= a_success <= a_n and 0 <= b_success <= b_n):
        raise ValueError(f"need 0 <= successes <= rows, got {a_success}/{a_n} and {b_success}/{b_n}")
    successes = a_success + b_success
    low, high = max(0, successes - b_n), min(a_n, successes)
    weights = [math.comb(a_n, x) * math.comb(b_n, successes - x) for x in range(low, high + 1)]
    total = math.comb(a_n + b_n, successes)
    scale = round(1 / FISHER_RELATIVE_TOLERANCE)

    def p(observed: int) -> float:
        return min(1.0, sum(w for w in weights if w * scale <= observed * (scale + 1)) / total)

    return p(weights[a_success - low]), p(min(weights))


def _mean_gap(chosen_sum: float, k: int, total: float, rest: int) -> float:
    return abs(chosen_sum / k - (total - chosen_sum) / rest)


def permutation_test(
    xs: Sequence[float],
    ys: Sequence[float],
    *,
    seed: int = 0,
    exact_limit: int = EXACT_LIMIT,
    draws: int = MONTE_CARLO_DRAWS,
) -> tuple[float, float]:
    """The two-sided permutation p-value of mean(xs) - mean(ys) over the pooled rows, and the
    smallest value it can take for these rows.

    The p-value is the share of splits of the pooled rows into groups of ``len(xs)`` and ``len(ys)``
    whose |difference of means| is at least the observed one less 1e-12 (in units of a power of
    two for rewards beyond 2: :func:`scale_exponent`). All C(n, len(xs)) splits are enumerated when
    they are at most ``exact_limit`` (the observed split among them); otherwise ``draws`` random
    splits from ``random.Random(seed)`` are drawn and, as for any randomized test (and as
    ``scipy.stats.permutation_test`` does), the observed split is added once:
    p = (count + 1) / (draws + 1), which is never 0.

    The smallest is the p-value of the split with the largest gap (it depends on the pooled rows
    only, not on which side each came from); with Monte Carlo draws it is 1 / (draws + 1).
    """
    k, rest = len(xs), len(ys)
    if k == 0 or rest == 0:
        raise ValueError("both samples need at least one row")
    for value in (*xs, *ys):
        if not math.isfinite(value):
            raise ValueError(f"rewards must be finite, got {value!r}")
    # rewards beyond 2 in units of a power of two (exact): no sum of finite rewards overflows, p does not change
    exponent = max(scale_exponent((*xs, *ys)) - 1, 0)
    xs = [math.ldexp(x, -exponent) for x in xs]
    pooled = [*xs, *(math.ldexp(y, -exponent) for y in ys)]
    total = math.fsum(pooled)
    threshold = _mean_gap(math.fsum(xs), k, total, rest) - PERMUTATION_TOLERANCE
    n = k + rest
    splits = math.comb(n, k)
    if splits <= exact_limit:
        gaps = [_mean_gap(math.fsum(chosen), k, total, rest) for chosen in itertools.combinations(pooled, k)]
        widest = max(gaps) - PERMUTATION_TOLERANCE
        return (sum(1 for gap in gaps if gap >= threshold) / splits, sum(1 for gap in gaps if gap >= widest) / splits)
    rng = random.Random(seed)
    indices = range(n)
    hits = 0
    for _ in range(draws):
        chosen_sum = math.fsum(pooled[i] for i in rng.sample(indices, k))
        if _mean_gap(chosen_sum, k, total, rest) >= threshold:
            hits += 1
    return (hits + 1) / (draws + 1), 1 / (draws + 1)


def task_test(
    old_rewards: Sequence[float], new_rewards: Sequence[float], *, seed: int = 0
) -> tuple[float, float] | None:
    """(p, smallest attainable p) of one task's old rows against its new rows; ``None`` below 2 rows a side.

    The smallest attainable p-value is fixed by what the two sides hold together (the passes in
    all, or the pooled rewards), so choosing the tasks to count by it does not look at the split.
    """
    if len(old_rewards) < 2 or len(new_rewards) < 2:
        return None
    rows = [*old_rewards, *new_rewards]
    if all(r in (0.0, 1.0) for r in rows):
        old_pass = sum(1 for r in old_rewards if r == 1.0)
        new_pass = sum(1 for r in new_rewards if r == 1.0)
        return fisher_test(old_pass, len(old_rewards), new_pass, len(new_rewards))
    return permutation_test(old_rewards, new_rewards, seed=seed)
