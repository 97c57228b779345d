"""Paired statistics over the compared tasks: how far the new server moved the score (the mean of d =
new - old of the task means) and how much of that sampling alone would explain (docs/statistics.md).
"""

from __future__ import annotations

import math
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Optional

from .t_dist import t_ppf

CHANGE_TOLERANCE = 1e-9
"""A task's reward changed when its difference exceeds this (float noise is not a change)."""
LEVEL = 0.05
"""The one-sided level of each equivalence bound (the aggregate's one-sided 95% bounds)."""
MAX_INTRACLASS = 0.99
"""The estimated within-group correlation is capped below 1, where the working model degenerates."""


def scale_exponent(values: Iterable[float]) -> int:
    """The power of two that brings the largest |value| into [0.5, 1): finite rewards reach 1.8e308,
    where a difference or a square overflows; divided by 2**e (exact) none does, bit for bit."""
    largest = max((abs(value) for value in values), default=0.0)
    return math.frexp(largest)[1] if largest > 0 else 0


def unscaled(value: float, exponent: int) -> float:
    """``value`` times 2**``exponent``; a figure past the float range reads as the largest float of its sign."""
    try:
        return math.ldexp(value, exponent)
    except OverflowError:
        return math.copysign(sys.float_info.max, value)


@dataclass(frozen=True)
class PairedStats:
    """The paired figures (each None when ``absent`` says why). Figures past the float range read as
    the largest float of their sign; the decisions are taken in scaled units."""

    n: int
    old_mean: float | None = None
    new_mean: float | None = None
    delta: float | None = None
    se: float | None = None
    #: n - 1, or when clustered the Bell-McCaffrey degrees of freedom
    df: float | None = None
    ci95: tuple[float, float] | None = None
    #: the one-sided 95% bounds (shape-corrected) an equivalence test compares with a margin
    lower_bound: float | None = None
    upper_bound: float | None = None
    clustered_by: str | None = None
    clusters: int | None = None
    absent: str | None = None


@dataclass(frozen=True)
class SignTest:
    """How many tasks got better and worse, and the exact two-sided sign-test p-value."""

    better: int
    worse: int
    p: float


@dataclass(frozen=True)
class McNemarTable:
    """Old pass/fail against new pass/fail for binary rewards, one row a side."""

    both_pass: int
    old_only: int
    new_only: int
    both_fail: int


def moments(values: Sequence[float]) -> tuple[float, float, float, float]:
    """(mean, variance over n - 1, adjusted skewness G1, excess kurtosis), as docs/statistics.md "No pass
    on zero spread" defines them; variance and shape 0 when nothing varies."""
    n = len(values)
    mean = math.fsum(values) / n
    deviations = [v - mean for v in values]
    e = scale_exponent(deviations)  # in units of the largest deviation, no power of one underflows
    deviations = [math.ldexp(d, -e) for d in deviations]
    m2 = math.fsum(d * d for d in deviations) / n
    if m2 <= 0.0:
        return mean, 0.0, 0.0, 0.0
    m3 = math.fsum(d * d * d for d in deviations) / n
    m4 = math.fsum((d * d) ** 2 for d in deviations) / n
    g1 = m3 / (m2 * math.sqrt(m2))
    skew = g1 * math.sqrt(n * (n - 1)) / (n - 2) if n > 2 else 0.0
    return mean, math.ldexp(m2 * n / (n - 1), 2 * e), skew, m4 / (m2 * m2) - 3.0


def heavy_tail_df(df: float, kurtosis: float, n: int) -> float:
    """Fewer degrees of freedom for heavy tails: Satterthwaite's moment match of the variance's
    spread, from the excess ``kurtosis`` of ``n`` values (none for light tails)."""
    return 2.0 / (2.0 / df + max(kurtosis, 0.0) / n)


def paired_stats(
    pairs: Sequence[tuple[float, float]],
    clusters: Sequence[str] | None = None,
    *,
    span: tuple[float, float] = (0.0, 1.0),
    rows: int | None = None,
) -> PairedStats:
    """Paired figures over ``pairs`` of finite (old, new) task means, clustered by taskset over two or
    more ``clusters``. The standard error is at least the step one of ``rows`` rollouts moves delta by
    (docs/statistics.md, "No pass on zero spread")."""
    n = len(pairs)
    olds = [old for old, _ in pairs]
    news = [new for _, new in pairs]
    if n == 0:
        return PairedStats(0, absent="no compared tasks")
    if n == 1:
        return PairedStats(1, absent="1 compared task: at least 2 are needed for a spread")
    e = scale_exponent([*olds, *news, *span])
    diffs = [math.ldexp(new, -e) - math.ldexp(old, -e) for old, new in pairs]
    delta, variance, skew, kurtosis = moments(diffs)
    if clusters is not None and len(set(clusters)) >= 2:  # the shape corrections are for one sample
        fit = cr2_mean(diffs, clusters)
        se, df, label, groups, skew, kurtosis = fit.se, fit.df, "taskset", fit.groups, 0.0, 0.0
    else:
        se, df, label, groups = math.sqrt(variance / n), float(n - 1), None, None
    resolution = (math.ldexp(span[1], -e) - math.ldexp(span[0], -e)) / (rows if rows is not None else n)
    se = max(se, resolution)
    half_two_sided = t_ppf(0.975, df) * se
    # the one-sided 1 - LEVEL bounds, corrected for the shape of d: fewer degrees of freedom for heavy
    # tails (Satterthwaite's moment match) and Hall's (1992) skewness correction of each quantile.
    # Skewed d puts a small mean with a small spread, where the plain bounds pass too often.
    t = t_ppf(1 - LEVEL, heavy_tail_df(df, kurtosis, n))
    shift = skew * (2 * t * t + 1) / (6 * math.sqrt(n))
    shift = min(max(shift, -t / 2), t / 2)  # a few values can make the term exceed t itself
    low, high = delta - (t - shift) * se, delta + (t + shift) * se
    return PairedStats(
        n=n,
        old_mean=unscaled(math.fsum(math.ldexp(old, -e) for old in olds) / n, e),
        new_mean=unscaled(math.fsum(math.ldexp(new, -e) for new in news) / n, e),
        delta=unscaled(delta, e),
        se=unscaled(se, e),
        df=df,
        ci95=(unscaled(delta - half_two_sided, e), unscaled(delta + half_two_sided, e)),
        lower_bound=unscaled(low, e),
        upper_bound=unscaled(high, e),
        clustered_by=label,
        clusters=groups,
    )


def sign_test(diffs: Sequence[float]) -> SignTest:
    """The exact two-sided sign test (McNemar's for binary rewards, one row a side), in integers: the one
    division at the end is correctly rounded."""
    better = sum(1 for d in diffs if d > CHANGE_TOLERANCE)
    worse = sum(1 for d in diffs if d < -CHANGE_TOLERANCE)
    n = better + worse
    tail = sum(math.comb(n, i) for i in range(min(better, worse) + 1))
    return SignTest(better, worse, min(1.0, tail / (1 << (n - 1))) if n else 1.0)


def mcnemar_table(pairs: Sequence[tuple[float, float]]) -> McNemarTable | None:
    """The 2x2 pass/fail table of single-row (old, new) rewards, None unless all are 0 or 1: with
    repeats a task mean is not a pass or a fail."""
    if not pairs or any(value not in (0.0, 1.0) for pair in pairs for value in pair):
        return None
    count = Counter(pairs)
    return McNemarTable(count[1.0, 1.0], count[1.0, 0.0], count[0.0, 1.0], count[0.0, 0.0])


@dataclass(frozen=True)
class DiscreteFdr:
    """Benjamini-Hochberg over the ``counted`` tests (indices) that can reach ``alpha``, of ``tests``."""

    alpha: float
    tests: int
    counted: tuple[int, ...]
    adjusted: tuple[Optional[float], ...]


def discrete_bh(tests: Sequence[Optional[tuple[float, float]]], alpha: float) -> DiscreteFdr:
    """BH at ``alpha`` over the ``tests`` (p, smallest attainable p) that can reach it. One that never
    can (Fisher's on 3 + 3 rows: 0.1 at best) would only raise the others' bar; leaving it out (Tarone,
    Gilbert 2005) keeps the rate at most ``alpha`` (docs/statistics.md, "Per-task tests")."""
    if not 0.0 < alpha < 1.0:  # the Python API's summary_dict passes it on unchecked
        raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}")
    counted = [(i, test[0]) for i, test in enumerate(tests) if test is not None and test[1] < alpha]
    adjusted: list[Optional[float]] = [None] * len(tests)
    ranked = sorted(counted, key=lambda member: member[1])
    running = 1.0
    for rank in range(len(ranked), 0, -1):
        index, p = ranked[rank - 1]
        running = min(running, p * len(ranked) / rank)
        adjusted[index] = running
    tested = sum(1 for test in tests if test is not None)
    return DiscreteFdr(alpha, tested, tuple(i for i, _ in counted), tuple(adjusted))


@dataclass(frozen=True)
class ClusterFit:
    """The CR2 standard error of a mean, its degrees of freedom, groups and within-group correlation."""

    se: float
    df: float
    groups: int
    rho: float


def cr2_mean(values: Sequence[float], labels: Sequence[str]) -> ClusterFit:
    """CR2 standard error and Bell-McCaffrey degrees of freedom of ``mean(values)`` clustered by
    ``labels`` (2+ distinct). The simple G/(G-1) correction holds for equal groups only: a group holding
    much of the data shrinks its residuals toward a mean it largely sets, and the interval is too
    narrow. The closed forms: docs/statistics.md, "The clustered interval"."""
    by_label: dict[str, list[float]] = {}
    for value, label in zip(values, labels):
        by_label.setdefault(label, []).append(value)
    n = len(values)
    mean = math.fsum(values) / n
    groups = [[value - mean for value in group] for group in by_label.values()]
    # rho: the one-way ANOVA estimate (MSB - MSW) / (MSB + (n0 - 1) MSW) of the residuals'
    # within-group correlation, kept in [0, 1); 0 when no group has two members
    rho, size = 0.0, len(groups)
    if n > size:
        means = [math.fsum(group) / len(group) for group in groups]
        within = math.fsum((x - m) ** 2 for group, m in zip(groups, means) for x in group) / (n - size)
        between = math.fsum(len(group) * m * m for group, m in zip(groups, means)) / (size - 1)
        n0 = (n - math.fsum(len(group) ** 2 for group in groups) / n) / (size - 1)
        denominator = between + (n0 - 1.0) * within
        rho = min(max((between - within) / denominator, 0.0), MAX_INTRACLASS) if denominator > 0.0 else 0.0
    shares = [len(group) / n for group in groups]
    phi = [len(group) * (1.0 - rho) + rho * len(group) ** 2 for group in groups]
    phi_total = math.fsum(phi)
    # kappa_g^2 = phi_g / E[S_g^2]: each group's residual sum scaled to its working-model variance
    kappa = [math.sqrt(f / (f * (1.0 - 2.0 * p) + p * p * phi_total)) for f, p in zip(phi, shares)]
    variance = math.fsum((k * math.fsum(group)) ** 2 for k, group in zip(kappa, groups))

    def q(g: int, h: int) -> float:
        """Q_gh times n^2 (docs/statistics.md)."""
        own = phi[g] if g == h else 0.0
        return kappa[g] * kappa[h] * (own - shares[h] * phi[g] - shares[g] * phi[h] + shares[g] * shares[h] * phi_total)

    trace = math.fsum(q(g, g) for g in range(size))
    squares = math.fsum(x * x for x in (q(g, h) for g in range(size) for h in range(size)))
    return ClusterFit(se=math.sqrt(variance) / n, df=trace * trace / squares, groups=size, rho=rho)
