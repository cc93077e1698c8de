"""Scenario rates as a law, and what a shift clipped at 0 does to them.

A regression of δ points moves a scenario's pass share x to x_B = max(x − δ, 0): a scenario
that passes less often than δ cannot fall by δ. Which scenarios sit that low is more than
the pooled rates say when each holds few runs, so the limit reads the rates through a Beta
law: the spread across scenarios, fitted by moments (empirical Bayes), and each scenario's
posterior under it. The moments below are what the power of the stratified test needs,
closed-form through the regularised incomplete beta function.

>>> m = clipped_moments([0.05], [40.0], 0.05)          # Beta(2, 38): mean 0.05
>>> round(float(m.shift[0]), 4)                          # the mean fall is E[min(x, δ)], not δ
0.0368
>>> round(float(clipped_moments([0.5], [np.inf], 0.1).shift[0]), 4)   # a known rate falls by δ
0.1
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special

__all__ = ["ClippedMoments", "clipped_moments", "fitted_concentration", "posterior_law"]

#: the concentration taken as "no spread" (a point mass): beyond it the Beta law is a rate known exactly
_POINT = 1e9


@dataclass(frozen=True)
class ClippedMoments:
    """Per-stratum moments of x and x_B = max(x − δ, 0): E[x], E[x²], E[x_B], E[x_B²], E[x·x_B]."""

    x: np.ndarray
    x2: np.ndarray
    xb: np.ndarray
    xb2: np.ndarray
    xxb: np.ndarray

    @property
    def shift(self) -> np.ndarray:
        """E[x − x_B] = E[min(x, δ)]: how far the share falls on average."""
        return self.x - self.xb


def clipped_moments(mean, concentration, delta: float) -> ClippedMoments:
    """Moments of x ~ Beta(mean·c, (1 − mean)·c) and of x_B = max(x − δ, 0), per stratum.

    ``concentration`` c = a + b; inf (or above 1e9) is a point mass at ``mean``.

    >>> m = clipped_moments([0.3, 0.3], [np.inf, 10.0], 0.0)
    >>> np.allclose(m.xb, m.x) and round(float(m.x2[1]), 4)
    0.1091
    """
    mu = np.asarray(mean, dtype=float).reshape(-1)
    c = np.broadcast_to(np.asarray(concentration, dtype=float).reshape(-1), mu.shape)
    d = float(delta)
    point = ~(c < _POINT) | (mu <= 0) | (mu >= 1)
    cc = np.where(point, 1.0, c)
    second = np.where(point, mu * mu, mu * (mu * cc + 1) / (cc + 1))
    # unclipped where the law has no mass below δ (beyond 12 standard deviations): E[x^k; x > δ] = E[x^k]
    m0, m1, m2 = (mu > d).astype(float), mu * (mu > d), mu * mu * (mu > d)
    m0, m1, m2 = np.where(point, m0, 1.0), np.where(point, m1, mu), np.where(point, m2, second)
    near = ~point & (d > 0) & (mu - 12 * np.sqrt(mu * (1 - mu) / (cc + 1)) < d)
    if near.any():
        # strata with the same counts share one law: each incomplete beta is taken once per law
        laws, back = np.unique(np.stack([mu[near], cc[near]]), axis=1, return_inverse=True)
        back = back.reshape(-1)
        a, b = laws[0] * laws[1], (1 - laws[0]) * laws[1]
        m0[near] = special.betaincc(a, b, d)[back]
        m1[near] = mu[near] * special.betaincc(a + 1, b, d)[back]
        m2[near] = second[near] * special.betaincc(a + 2, b, d)[back]
    return ClippedMoments(x=mu, x2=second, xb=m1 - d * m0, xb2=m2 - 2 * d * m1 + d * d * m0, xxb=m2 - d * m1)


def fitted_concentration(successes, trials) -> float:
    """The concentration a + b of the Beta law of the strata's shares, by the method of moments.

    The spread of the observed shares, less the binomial noise of their runs, is the spread of
    the rates (τ²); inf when the shares vary no more than their runs alone would make them.

    >>> fitted_concentration([5, 5, 5, 5], [10, 10, 10, 10])
    inf
    >>> round(fitted_concentration([1, 9, 2, 8, 5], [10] * 5), 2)
    1.25
    """
    k = np.asarray(successes, dtype=float).reshape(-1)
    n = np.asarray(trials, dtype=float).reshape(-1)
    if k.size < 2:
        return np.inf
    mu = float(k.sum() / n.sum())
    if not 0 < mu < 1:
        return np.inf
    y = k / n
    inv = float(np.mean(1 / n))
    tau2 = (float(np.var(y, ddof=1)) - mu * (1 - mu) * inv) / max(1 - inv, 1e-12)
    if not tau2 > 0:
        return np.inf
    tau2 = min(tau2, mu * (1 - mu) * (1 - 1e-6))
    return mu * (1 - mu) / tau2 - 1


def posterior_law(successes, trials, concentration: float):
    """Each stratum's posterior Beta law (mean, concentration) under the fitted Beta(μc, (1 − μ)c).

    >>> mean, c = posterior_law([0, 10], [10, 10], 10.0)
    >>> mean.tolist(), c.tolist()
    ([0.25, 0.75], [20.0, 20.0])
    """
    k = np.asarray(successes, dtype=float).reshape(-1)
    n = np.asarray(trials, dtype=float).reshape(-1)
    if not np.isfinite(concentration):
        mu = float(k.sum() / n.sum())
        return np.full(k.size, mu), np.full(k.size, np.inf)
    mu = float(k.sum() / n.sum())
    a, b = mu * concentration + k, (1 - mu) * concentration + n - k
    return a / (a + b), a + b
