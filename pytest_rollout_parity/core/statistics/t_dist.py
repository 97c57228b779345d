"""Student's t distribution in plain ``math`` (the runtime carries no scipy): the CDF through the
regularized incomplete beta function, the quantile by Newton steps on it. The degrees of freedom are
positive and finite: every caller's are (n - 1 for n >= 2, or a ratio of positive sums).
"""

from __future__ import annotations

import math
from statistics import NormalDist

_EPS = 1e-16
_TINY = 1e-300
_MAX_CF_TERMS = 100_000


def _log_half_ratio(a: float) -> float:
    """``lgamma(a + 1/2) - lgamma(a)``. For large ``a`` the two large values would cancel (to a relative
    1e-10 at df = 1e5); Stirling's series of each, differenced term by term, loses nothing (within
    5e-16 from a = 30)."""
    if a < 30.0:
        return math.lgamma(a + 0.5) - math.lgamma(a)
    return 0.5 * math.log(a) - 1 / (8 * a) + 1 / (192 * a**3) - 1 / (640 * a**5) + 17 / (14336 * a**7)


def _beta_continued_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function, by the modified Lentz method."""
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c = 1.0
    d = 1.0 - qab * x / qap
    d = _TINY if abs(d) < _TINY else d
    d = 1.0 / d
    h = d
    for m in range(1, _MAX_CF_TERMS + 1):
        m2 = 2 * m
        even = m * (b - m) * x / ((qam + m2) * (a + m2))
        odd = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        for aa in (even, odd):
            d = 1.0 + aa * d
            d = _TINY if abs(d) < _TINY else d
            c = 1.0 + aa / c
            c = _TINY if abs(c) < _TINY else c
            d = 1.0 / d
            delta = d * c
            h *= delta
        if abs(delta - 1.0) <= _EPS:
            return h
    raise ArithmeticError(f"incomplete beta continued fraction did not converge (a={a}, b={b}, x={x})")


def _lower_tail(t: float, df: float) -> float:
    """P(T <= t) for ``t <= 0``, with ``1 - x`` formed without cancellation: small tails keep their
    relative precision."""
    t2 = t * t
    x, xc = df / (df + t2), t2 / (df + t2)
    a, b = df / 2.0, 0.5
    if x <= 0.0:
        return 0.0
    if xc <= 0.0:
        return 0.5
    log_x = math.log1p(-xc) if xc < 0.5 else math.log(x)
    log_xc = math.log1p(-x) if x < 0.5 else math.log(xc)
    log_beta = 0.5 * math.log(math.pi) - _log_half_ratio(a)  # of (a, 1/2)
    log_front = a * log_x + b * log_xc - log_beta
    if x < (a + 1.0) / (a + b + 2.0):
        return 0.5 * (math.exp(log_front) * _beta_continued_fraction(a, b, x) / a)
    return 0.5 * (1.0 - math.exp(log_front) * _beta_continued_fraction(b, a, xc) / b)


def t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with ``df`` degrees of freedom."""
    if math.isnan(t):
        raise ValueError("t must not be NaN")
    return _lower_tail(t, df) if t <= 0.0 else 1.0 - _lower_tail(-t, df)


def t_ppf(p: float, df: float) -> float:
    """The ``p`` quantile of Student's t, ``p`` in (0, 1): the lower tail's (q = min(p, 1 - p), 1 - p
    being exact for p >= 0.5) by Newton's steps from the normal quantile.

    The CDF is convex below 0 and the normal quantile lies between the root and 0 (t's are wider), so
    each step nears the root from that side: no bracket is needed; convergence is quadratic, so a step
    of 1e-10 leaves less than the CDF's own rounding. Within about 1e-9 of p = 0.5 the relative error
    grows (the quantile nears 0); the gate asks for 0.95 and 0.975 only."""
    q = min(p, 1.0 - p)
    log_norm = _log_half_ratio(df / 2.0) - 0.5 * math.log(df * math.pi)  # of the density
    t = NormalDist().inv_cdf(q)
    for _ in range(100):
        step = (_lower_tail(t, df) - q) / math.exp(log_norm - (df + 1.0) / 2.0 * math.log1p(t * t / df))
        t -= step
        if abs(step) <= 1e-10 * abs(t):
            break
    return t if p < 0.5 else -t
