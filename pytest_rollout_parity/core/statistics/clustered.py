"""The clustered standard error of a mean: CR2 (bias-reduced) with Bell-McCaffrey degrees of freedom.

The paired delta is the mean of d over n tasks, a regression of d on an intercept. When the tasks
come in G groups (tasksets) the cluster-robust variance sums each group's residuals. The simple
G/(G-1) correction with t(G - 1) is right when the groups are of equal size; when one group holds
much of the data its residuals are shrunk toward a mean it largely sets itself, and the interval is
too narrow. CR2 (Bell and McCaffrey 2002; Pustejovsky and Tipton 2018) scales each group's
residuals back up, and the Bell-McCaffrey (Satterthwaite) degrees of freedom say how many groups'
worth of information the variance really rests on.

Both are defined against a working model of the errors. Ours is the one that matters for
tasksets: residuals correlated rho within a group, independent across groups, Phi_g =
(1 - rho) I + rho J for a group of n_g tasks (J the matrix of ones), rho estimated from the data
(one-way ANOVA, kept in [0, 0.99]). With p_g = n_g / n, S_g the sum of group g's residuals
d_i - mean(d), phi_g = 1'Phi_g 1 = n_g (1 - rho) + rho n_g^2 and Phi = sum_g phi_g, every
matrix of the method has a closed form for an intercept-only model:

- The residuals are e = M d with M = I - 11'/n, and M 1_g = 1_g - p_g 1 (1_g: ones on group g,
  zeros elsewhere), so E[S_g^2] = (1_g - p_g 1)' Phi (1_g - p_g 1) = phi_g (1 - 2 p_g) + p_g^2 Phi.
  Phi_g and the block of M Phi M are both of the form a I + b J, so the CR2 adjustment matrix A_g
  (A_g (M Phi M)_gg A_g = Phi_g) is too; it has the ones vector as an eigenvector, and only its
  eigenvalue there, kappa_g, reaches the estimate: 1'A_g e_g = kappa_g S_g with
  kappa_g^2 = phi_g / E[S_g^2]. The variance is

      V = sum_g kappa_g^2 S_g^2 / n^2,

  unbiased for Var(mean(d)) = Phi / n^2 when the working model holds.
- V = sum_g (u_g'd)^2 with u_g = (kappa_g / n) M 1_g, a quadratic form in d; Satterthwaite's
  approximation of its distribution gives df = (sum_g Q_gg)^2 / sum_{g,h} Q_gh^2 with
  Q_gh = u_g' Phi u_h = kappa_g kappa_h (delta_gh phi_g - p_h phi_g - p_g phi_h + p_g p_h Phi) / n^2.

With rho = 0 these reduce to kappa_g^2 = 1 / (1 - p_g) and
df = 1 / (sum_g p_g^2 + (sum_g a_g)^2 - sum_g a_g^2), a_g = p_g^2 / (1 - p_g). With G equal groups
(any rho) V = G/(G-1) sum_g S_g^2 / n^2 and df = G - 1: the simple correction exactly, so nothing
changes where the groups are equal. With one task per group it is the plain sd/sqrt(n) with n - 1.
When one group holds half the tasks, df falls to a few, and the bounds widen as they must.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

MAX_INTRACLASS = 0.99
"""The estimated within-group correlation is capped below 1, where the working model degenerates."""


@dataclass(frozen=True)
class ClusterFit:
    """The CR2 standard error of a mean, its Bell-McCaffrey degrees of freedom and the group count."""

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
    """CR2 standard error and Bell-McCaffrey degrees of freedom of ``mean(values)`` clustered by ``labels``.

    The working model is the module's: residuals correlated ``rho`` within a group (estimated).
    Needs at least two distinct labels (else a ``ValueError``): with one group there is no
    between-group spread.
    """
    n = len(values)
    if len(labels) != n:
        raise ValueError(f"{len(labels)} cluster labels for {n} values")
    mean = math.fsum(values) / n if n else 0.0
    by_label: dict[str, list[float]] = {}
    for value, label in zip(values, labels):
        by_label.setdefault(label, []).append(value - mean)
    groups = list(by_label.values())
    if len(groups) < 2:
        raise ValueError("clustering needs at least two groups")
    rho = _intraclass(groups, n)
    shares = [len(group) / n for group in groups]
    phi = [len(group) * (1.0 - rho) + rho * len(group) ** 2 for group in groups]
    phi_total = math.fsum(phi)
    # kappa_g^2 = phi_g / E[S_g^2]: each group's residual sum scaled to its working-model variance
    kappa = [math.sqrt(f / (f * (1.0 - 2.0 * p) + p * p * phi_total)) for f, p in zip(phi, shares)]
    variance = math.fsum((k * math.fsum(group)) ** 2 for k, group in zip(kappa, groups))
    size = len(groups)
    q = [
        [
            kappa[g]
            * kappa[h]
            * (
                (phi[g] if g == h else 0.0)
                - shares[h] * phi[g]
                - shares[g] * phi[h]
                + shares[g] * shares[h] * phi_total
            )
            for h in range(size)
        ]
        for g in range(size)
    ]
    trace = math.fsum(q[g][g] for g in range(size))
    squares = math.fsum(x * x for row in q for x in row)
    return ClusterFit(se=math.sqrt(variance) / n, df=trace * trace / squares, groups=size, rho=rho)
