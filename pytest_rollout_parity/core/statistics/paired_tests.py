"""Paired statistics over the compared tasks: is the difference between two runs noise?

Each compared task contributes one pair (old task mean, new task mean) and d = new - old. The
mean of d estimates how much the new server moved the score; its standard error says how much of
that movement sampling alone would explain. When tasks come in groups (tasksets) whose tasks move
together, the per-task errors are not independent, so the standard error is clustered by group
(CR2 with Bell-McCaffrey degrees of freedom, :mod:`.clustered`). Plain ``math``; the t
quantiles come from :mod:`.t_dist`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Optional

from ..model import CLOSED
from .clustered import cr2_mean
from .t_dist import t_ppf

CHANGE_TOLERANCE = 1e-9
"""A task's reward changed when its difference exceeds this (float noise is not a change)."""


@dataclass(frozen=True)
class PairedStats:
    """The paired figures over the compared tasks; each is ``None`` when ``absent`` says why.

    ``ci95`` is the two-sided 95% interval of ``delta``; ``lower_bound``/``upper_bound`` are the
    one-sided 95% bounds (t(0.95, df)) that an equivalence test (two one-sided tests) compares
    with a margin. ``se`` and ``df`` are the standard error and the t degrees of freedom behind
    them: n - 1, or when clustered over G groups the Bell-McCaffrey degrees of freedom (G - 1 for
    groups of equal size, fewer, and not a whole number, when a few groups hold most tasks).
    """

    n: int
    old_mean: float | None
    new_mean: float | None
    delta: float | None
    se: float | None
    df: float | None
    ci95: tuple[float, float] | None
    lower_bound: float | None
    upper_bound: float | None
    clustered_by: str | None
    clusters: int | None
    absent: str | None


@dataclass(frozen=True)
class SignTest:
    """How many tasks got better and worse, and the exact two-sided sign-test p-value."""

    __pydantic_config__ = CLOSED

    better: int
    worse: int
    p: float


@dataclass(frozen=True)
class McNemarTable:
    """Old pass/fail against new pass/fail for binary rewards, one row a side."""

    __pydantic_config__ = CLOSED

    both_pass: int
    old_only: int
    new_only: int
    both_fail: int


def _check_finite(values: Sequence[float], what: str) -> None:
    for value in values:
        if not math.isfinite(value):
            raise ValueError(f"{what} must be finite, got {value!r}")


def _absent(n: int, reason: str) -> PairedStats:
    return PairedStats(n, None, None, None, None, None, None, None, None, None, None, reason)


def paired_stats(
    pairs: Sequence[tuple[float, float]],
    clusters: Sequence[str] | None = None,
    *,
    clustered_by: str = "taskset",
) -> PairedStats:
    """Paired figures over ``pairs`` of (old task mean, new task mean), d = new - old.

    ``clusters`` gives each task's group label (its taskset); when the tasks span two or more
    groups the standard error is clustered (CR2, t with Bell-McCaffrey degrees of freedom) and the result's
    ``clustered_by`` names the grouping, otherwise the plain sd(d)/sqrt(n) with n - 1 is used.
    Fewer than 2 pairs: every figure is ``None`` and ``absent`` says why. Non-finite rewards and a
    label list of the wrong length are a ``ValueError``.
    """
    n = len(pairs)
    if clusters is not None and len(clusters) != n:
        raise ValueError(f"{len(clusters)} cluster labels for {n} pairs")
    olds = [old for old, _ in pairs]
    news = [new for _, new in pairs]
    _check_finite(olds, "old rewards")
    _check_finite(news, "new rewards")
    if n == 0:
        return _absent(0, "no compared tasks")
    if n == 1:
        return _absent(1, "1 compared task: at least 2 are needed for a spread")
    diffs = [new - old for old, new in pairs]
    delta = math.fsum(diffs) / n
    if clusters is not None and len(set(clusters)) >= 2:
        fit = cr2_mean(diffs, clusters)
        se, df, label, groups = fit.se, fit.df, clustered_by, fit.groups
    else:
        sd = math.sqrt(math.fsum((d - delta) ** 2 for d in diffs) / (n - 1))
        se, df, label, groups = sd / math.sqrt(n), float(n - 1), None, None
    half_two_sided = t_ppf(0.975, df) * se
    half_one_sided = t_ppf(0.95, df) * se
    return PairedStats(
        n=n,
        old_mean=math.fsum(olds) / n,
        new_mean=math.fsum(news) / n,
        delta=delta,
        se=se,
        df=df,
        ci95=(delta - half_two_sided, delta + half_two_sided),
        lower_bound=delta - half_one_sided,
        upper_bound=delta + half_one_sided,
        clustered_by=label,
        clusters=groups,
        absent=None,
    )


def binomial_two_sided_half(k: int, n: int) -> float:
    """Exact two-sided p-value of k successes in n fair coin flips: min(1, 2 P(X <= min(k, n-k))).

    Integer arithmetic throughout; the one division at the end is correctly rounded.
    """
    if not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n, got k={k}, n={n}")
    if n == 0:
        return 1.0
    low = min(k, n - k)
    term, tail = 1, 1  # C(n, 0)
    for i in range(low):
        term = term * (n - i) // (i + 1)
        tail += term
    return min(1.0, tail / (1 << (n - 1)))


def sign_test(diffs: Sequence[float], tol: float = CHANGE_TOLERANCE) -> SignTest:
    """The exact two-sided sign test over the differences that exceed ``tol`` in size.

    With binary rewards and one row a side this is McNemar's exact test on the discordant pairs.
    p is 1 when nothing changed.
    """
    _check_finite(diffs, "differences")
    better = sum(1 for d in diffs if d > tol)
    worse = sum(1 for d in diffs if d < -tol)
    return SignTest(better, worse, binomial_two_sided_half(better, better + worse))


def mcnemar_table(pairs: Sequence[tuple[float, float]]) -> McNemarTable | None:
    """The 2x2 pass/fail table of (old, new) rewards, or ``None`` unless every reward is 0 or 1.

    The caller passes single rows (one a side); with repeats a task mean is not a pass or a fail.
    An empty sequence has no table either.
    """
    if not pairs or any(value not in (0.0, 1.0) for pair in pairs for value in pair):
        return None
    both_pass = sum(1 for old, new in pairs if old == 1.0 and new == 1.0)
    old_only = sum(1 for old, new in pairs if old == 1.0 and new == 0.0)
    new_only = sum(1 for old, new in pairs if old == 0.0 and new == 1.0)
    return McNemarTable(both_pass, old_only, new_only, len(pairs) - both_pass - old_only - new_only)


def benjamini_hochberg(pvalues: Sequence[float]) -> list[float]:
    """Benjamini-Hochberg adjusted p-values (false discovery rate), in the order given.

    adjusted p_(i) = min over j >= i of m/j * p_(j) in ascending order, capped at 1. A p-value
    outside [0, 1] is a ``ValueError``.
    """
    for p in pvalues:
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"p-values must lie in [0, 1], got {p!r}")
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: pvalues[i])
    adjusted = [0.0] * m
    running = 1.0
    for rank in range(m, 0, -1):
        i = order[rank - 1]
        running = min(running, pvalues[i] * m / rank)
        adjusted[i] = running
    return adjusted


@dataclass(frozen=True)
class DiscreteFdr:
    """Benjamini-Hochberg over the tests that can reach significance at ``alpha``.

    ``tests`` is how many tests were given; ``counted`` the indices of those whose smallest
    attainable p-value is below ``alpha``, in the order given; ``adjusted[i]`` the BH-adjusted
    p-value of a counted test over the ``len(counted)`` of them, ``None`` for a test left out.
    """

    alpha: float
    tests: int
    counted: tuple[int, ...]
    adjusted: tuple[Optional[float], ...]


def discrete_bh(pvalues: Sequence[float], smallest: Sequence[float], alpha: float) -> DiscreteFdr:
    """BH at ``alpha`` over the tests whose smallest attainable p-value ``smallest[i]`` is below ``alpha``.

    A discrete test (Fisher's on 5 + 5 rows, say) cannot give every p-value: with 3 passes in all
    the best it can do is 0.167. Such a test can never be significant at 0.05, yet plain BH counts
    it in m and so raises every other test's bar. Leaving it out (Tarone's idea, which Gilbert 2005
    carried over to the false discovery rate) costs nothing: BH never rejects a p-value above
    ``alpha``, so every test plain BH rejects is still counted, and over fewer tests it rejects
    at least as many. The choice depends only on each test's smallest attainable p-value, which its
    margins fix whatever the outcome; for tests valid given their margins (Fisher's exact test, a
    permutation test) BH over that fixed set keeps the false discovery rate at most ``alpha``
    (times the share of true nulls among the counted) when the tests are independent or positively
    dependent, as BH does.
    """
    if len(smallest) != len(pvalues):
        raise ValueError(f"{len(smallest)} smallest p-values for {len(pvalues)} p-values")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}")
    for p, low in zip(pvalues, smallest):
        if not 0.0 <= low <= p <= 1.0:
            raise ValueError(f"need 0 <= smallest <= p <= 1, got smallest {low!r}, p {p!r}")
    counted = tuple(i for i, low in enumerate(smallest) if low < alpha)
    adjusted: list[Optional[float]] = [None] * len(pvalues)
    for index, value in zip(counted, benjamini_hochberg([pvalues[i] for i in counted])):
        adjusted[index] = value
    return DiscreteFdr(alpha, len(pvalues), counted, tuple(adjusted))
