"""Paired statistics over the compared tasks: is the difference between two runs noise?

Each compared task contributes one pair (old task mean, new task mean) and d = new - old. The
mean of d estimates how much the new server moved the score; its standard error says how much of
that movement sampling alone would explain. When tasks come in groups (tasksets) whose tasks move
together, the per-task errors are not independent, so the standard error is clustered by group
(CR2 with Bell-McCaffrey degrees of freedom, :func:`cr2_mean`). Plain ``math``; the t
quantiles come from :mod:`.t_dist`.
"""

from __future__ import annotations

import math
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Optional

from ..model import CLOSED
from .t_dist import t_ppf

CHANGE_TOLERANCE = 1e-9
"""A task's reward changed when its difference exceeds this (float noise is not a change)."""
LEVEL = 0.05
"""The one-sided level of each equivalence bound (the aggregate's one-sided 95% bounds)."""
MAX_INTRACLASS = 0.99
"""The estimated within-group correlation is capped below 1, where the working model degenerates."""


def scale_exponent(values: Iterable[float]) -> int:
    """The power of two that brings the largest |value| into [0.5, 1).

    Finite rewards may lie anywhere up to 1.8e308, where a difference, a sum or a square leaves the
    float range. Divided by 2**e (exact, short of the subnormal range) no difference or square of
    the values overflows, and multiplying back gives the same figures bit for bit.
    """
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
    """The paired figures over the compared tasks (:func:`paired_stats`); each is ``None`` when
    ``absent`` says why.

    ``ci95`` is the two-sided 95% interval of ``delta``; ``lower_bound``/``upper_bound`` are the
    one-sided 95% bounds (t(0.95, df), corrected for the skewness and kurtosis of d when
    unclustered: :func:`one_sided_bounds`) that an equivalence test (two one-sided tests) compares
    with a margin. ``se`` and ``df`` are the standard error and the t degrees of freedom behind
    them: n - 1, or when clustered over G groups the Bell-McCaffrey degrees of freedom (G - 1 for
    groups of equal size, fewer, and not a whole number, when a few groups hold most tasks).
    Figures past the float range (a difference between rewards near ±1.8e308) read as the
    largest float of their sign; the decisions are taken before that, in scaled units.
    """

    n: int
    old_mean: float | None = None
    new_mean: float | None = None
    delta: float | None = None
    se: float | None = None
    df: float | None = None
    ci95: tuple[float, float] | None = None
    lower_bound: float | None = None
    upper_bound: float | None = None
    clustered_by: str | None = None
    clusters: int | None = None
    absent: str | None = None


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


def shape(values: Sequence[float], mean: float) -> tuple[float, float]:
    """(skewness, excess kurtosis) of ``values`` about ``mean``: the adjusted skewness
    G1 = g1 sqrt(n (n - 1)) / (n - 2) (0 below 3 values) and m4 / m2^2 - 3, with g1 = m3 / m2^(3/2)
    and the moments divided by n; (0, 0) when nothing varies."""
    n = len(values)
    deviations = [v - mean for v in values]
    e = scale_exponent(deviations)  # neither has a unit: in units of the largest deviation, nothing underflows
    deviations = [math.ldexp(d, -e) for d in deviations]
    m2 = math.fsum(d * d for d in deviations) / n
    if m2 <= 0.0:
        return 0.0, 0.0
    m3 = math.fsum(d * d * d for d in deviations) / n
    m4 = math.fsum((d * d) ** 2 for d in deviations) / n
    g1 = m3 / (m2 * math.sqrt(m2))
    return (g1 * math.sqrt(n * (n - 1)) / (n - 2) if n > 2 else 0.0), m4 / (m2 * m2) - 3.0


def one_sided_bounds(
    delta: float, se: float, df: float, n: int, skew: float = 0.0, kurtosis: float = 0.0
) -> tuple[float, float]:
    """The one-sided ``1 - LEVEL`` bounds of a mean of ``n`` values, corrected for their shape.

    - The t quantile takes fewer degrees of freedom when the values are heavy-tailed: the
      variance of s^2 is sigma^4 (2 / (n - 1) + kurtosis / n), and matching a chi-square's
      (Satterthwaite's moment match) gives df = 2 / (2 / df + max(kurtosis, 0) / n).
    - Each bound's quantile moves for the skewness, Hall's (1992) second-order correction of the
      t interval (its Cornish-Fisher term): t -/+ skew (2 t^2 + 1) / (6 sqrt(n)), the move at most
      t / 2 either way (with three values the term alone can exceed t, and a bound would collapse
      onto the mean).
      A positive skew puts a small mean with a small spread together, and the plain bound above
      the mean is then too low; the correction raises it (and the lower bound with it).
    """
    df = 2.0 / (2.0 / df + max(kurtosis, 0.0) / n)
    t = t_ppf(1 - LEVEL, df)
    shift = skew * (2 * t * t + 1) / (6 * math.sqrt(n))
    shift = min(max(shift, -t / 2), t / 2)  # a few values can make the term exceed t itself
    return delta - (t - shift) * se, delta + (t + shift) * se


def paired_stats(
    pairs: Sequence[tuple[float, float]],
    clusters: Sequence[str] | None = None,
    *,
    span: tuple[float, float] = (0.0, 1.0),
    rows: int | None = None,
) -> PairedStats:
    """Paired figures over ``pairs`` of (old task mean, new task mean), d = new - old.

    ``clusters`` gives each task's group label (its taskset); when the tasks span two or more
    groups the standard error is clustered (:func:`cr2_mean`), else it is sd(d)/sqrt(n). Either
    way it is at least the resolution of delta, (span width) / ``rows``: the step by which one of
    the ``rows`` rollouts behind the task means (one a task by default) moves delta when its reward
    moves across the rewards' ``span`` (docs/statistics.md, "No pass on zero spread"). Non-finite
    rewards and a label list of the wrong length are a ``ValueError``; any finite rewards work, in
    units of a power of two (:func:`scale_exponent`).
    """
    n = len(pairs)
    if clusters is not None and len(clusters) != n:
        raise ValueError(f"{len(clusters)} cluster labels for {n} pairs")
    olds = [old for old, _ in pairs]
    news = [new for _, new in pairs]
    for value in (*olds, *news):
        if not math.isfinite(value):
            raise ValueError(f"rewards must be finite, got {value!r}")
    if n == 0:
        return PairedStats(0, absent="no compared tasks")
    if n == 1:
        return PairedStats(1, absent="1 compared task: at least 2 are needed for a spread")
    e = scale_exponent([*olds, *news, *span])
    diffs = [math.ldexp(new, -e) - math.ldexp(old, -e) for old, new in pairs]
    delta = math.fsum(diffs) / n
    skew = kurtosis = 0.0
    if clusters is not None and len(set(clusters)) >= 2:
        fit = cr2_mean(diffs, clusters)
        se, df, label, groups = fit.se, fit.df, "taskset", fit.groups
    else:
        sd = math.sqrt(math.fsum((d - delta) ** 2 for d in diffs) / (n - 1))
        se, df, label, groups = sd / math.sqrt(n), float(n - 1), None, None
        skew, kurtosis = shape(diffs, delta)
    resolution = (math.ldexp(span[1], -e) - math.ldexp(span[0], -e)) / (rows if rows is not None else n)
    se = max(se, resolution)
    half_two_sided = t_ppf(0.975, df) * se
    low, high = one_sided_bounds(delta, se, df, n, skew, kurtosis)
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
    """The exact two-sided sign test over the differences that exceed ``CHANGE_TOLERANCE`` in size:
    min(1, 2 P(X <= min(better, worse))) for X binomial(better + worse, 1/2).

    With binary rewards and one row a side this is McNemar's exact test on the discordant pairs.
    p is 1 when nothing changed. Integer arithmetic throughout; the one division at the end is
    correctly rounded.
    """
    better = sum(1 for d in diffs if d > CHANGE_TOLERANCE)
    worse = sum(1 for d in diffs if d < -CHANGE_TOLERANCE)
    n = better + worse
    term, tail = 1, 1  # C(n, 0)
    for i in range(min(better, worse)):
        term = term * (n - i) // (i + 1)
        tail += term
    return SignTest(better, worse, min(1.0, tail / (1 << (n - 1))) if n else 1.0)


def mcnemar_table(pairs: Sequence[tuple[float, float]]) -> McNemarTable | None:
    """The 2x2 pass/fail table of (old, new) rewards, or ``None`` unless there are some and every
    one is 0 or 1. The caller passes single rows: with repeats a task mean is not a pass or a fail."""
    if not pairs or any(value not in (0.0, 1.0) for pair in pairs for value in pair):
        return None
    count = Counter(pairs)
    return McNemarTable(count[1.0, 1.0], count[1.0, 0.0], count[0.0, 1.0], count[0.0, 0.0])


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


def discrete_bh(tests: Sequence[Optional[tuple[float, float]]], alpha: float) -> DiscreteFdr:
    """BH at ``alpha`` over the ``tests`` (p, smallest attainable p) whose smallest attainable
    p-value is below ``alpha``; None is no test, and the indices are those of ``tests``.

    A discrete test that can never reach ``alpha`` (Fisher's on 3 + 3 rows: 0.1 at best) would
    only raise every other test's bar. Leaving it out (Tarone's idea, which Gilbert 2005 carried
    over to the false discovery rate) never rejects fewer than plain BH, and as the choice depends
    on each test's margins only, the false discovery rate stays at most ``alpha`` for tests valid
    given their margins (docs/statistics.md, "Per-task tests"). The adjusted p-value of the i-th
    smallest of the m counted is the least of m/j p_(j) over j >= i, capped at 1.
    """
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}")
    for test in tests:
        if test is not None and not 0.0 <= test[1] <= test[0] <= 1.0:
            raise ValueError(f"need 0 <= smallest <= p <= 1, got smallest {test[1]!r}, p {test[0]!r}")
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
    """The CR2 standard error of a mean, its Bell-McCaffrey degrees of freedom, the group count and
    the estimated within-group correlation."""

    se: float
    df: float
    groups: int
    rho: float


def _intraclass(groups: Sequence[Sequence[float]], n: int) -> float:
    """The one-way ANOVA estimate of the within-group correlation of the residuals, kept in [0, 1).

    (MSB - MSW) / (MSB + (n0 - 1) MSW) with n0 = (n - sum n_g^2 / n) / (G - 1); 0 when no group
    has two members (no within-group spread to compare with).
    """
    g = len(groups)
    within_df = n - g
    if within_df <= 0:
        return 0.0
    means = [math.fsum(group) / len(group) for group in groups]
    within = math.fsum((x - m) ** 2 for group, m in zip(groups, means) for x in group) / within_df
    between = math.fsum(len(group) * m * m for group, m in zip(groups, means)) / (g - 1)
    n0 = (n - math.fsum(len(group) ** 2 for group in groups) / n) / (g - 1)
    denominator = between + (n0 - 1.0) * within
    if denominator <= 0.0:
        return 0.0
    return min(max((between - within) / denominator, 0.0), MAX_INTRACLASS)


def cr2_mean(values: Sequence[float], labels: Sequence[str]) -> ClusterFit:
    """CR2 (bias-reduced) standard error and Bell-McCaffrey degrees of freedom of ``mean(values)``
    clustered by ``labels`` (at least two distinct, else a ``ValueError``).

    The simple G/(G-1) correction with t(G - 1) holds for groups of equal size only: when one group
    holds much of the data its residuals shrink toward a mean it largely sets itself, and the
    interval is too narrow. CR2 (Bell and McCaffrey 2002; Pustejovsky and Tipton 2018) scales each
    group's residuals back up, and the Bell-McCaffrey (Satterthwaite) degrees of freedom say how
    many groups' worth of information the variance rests on. The working model: residuals
    correlated rho within a group (one-way ANOVA, kept in [0, 0.99]), independent across groups.
    For a mean every matrix has a closed form (derived in docs/statistics.md, "The clustered
    interval"). With p_g = n_g / n, S_g the sum of group g's residuals, phi_g = n_g (1 - rho) +
    rho n_g^2 and Phi = sum_g phi_g:

    - kappa_g^2 = phi_g / E[S_g^2], E[S_g^2] = phi_g (1 - 2 p_g) + p_g^2 Phi; the variance is
      V = sum_g kappa_g^2 S_g^2 / n^2, unbiased for Var(mean(d)) when the working model holds;
    - df = (sum_g Q_gg)^2 / sum_{g,h} Q_gh^2 with
      Q_gh = kappa_g kappa_h (delta_gh phi_g - p_h phi_g - p_g phi_h + p_g p_h Phi) / n^2.

    With G equal groups (any rho) this is the simple correction exactly; with one task per group,
    the plain sd/sqrt(n) with n - 1.
    """
    by_label: dict[str, list[float]] = {}
    for value, label in zip(values, labels):
        by_label.setdefault(label, []).append(value)
    if len(by_label) < 2:
        raise ValueError("clustering needs at least two groups")
    n = len(values)
    mean = math.fsum(values) / n
    groups = [[value - mean for value in group] for group in by_label.values()]
    rho = _intraclass(groups, n)
    shares = [len(group) / n for group in groups]
    phi = [len(group) * (1.0 - rho) + rho * len(group) ** 2 for group in groups]
    phi_total = math.fsum(phi)
    # kappa_g^2 = phi_g / E[S_g^2]: each group's residual sum scaled to its working-model variance
    kappa = [math.sqrt(f / (f * (1.0 - 2.0 * p) + p * p * phi_total)) for f, p in zip(phi, shares)]
    variance = math.fsum((k * math.fsum(group)) ** 2 for k, group in zip(kappa, groups))
    size = len(groups)

    def q(g: int, h: int) -> float:
        """Q_gh times n^2 (above)."""
        own = phi[g] if g == h else 0.0
        return kappa[g] * kappa[h] * (own - shares[h] * phi[g] - shares[g] * phi[h] + shares[g] * shares[h] * phi_total)

    trace = math.fsum(q(g, g) for g in range(size))
    squares = math.fsum(x * x for x in (q(g, h) for g in range(size) for h in range(size)))
    return ClusterFit(se=math.sqrt(variance) / n, df=trace * trace / squares, groups=size, rho=rho)
