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

__all__ = ["BetaLaws", "ClippedMoments", "clipped_moments", "fitted_concentration", "posterior_law"]

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

    ``concentration`` c = a + b; inf (or above 1e9) is a point mass at ``mean``. For many
    shifts of the same laws, build :class:`BetaLaws` once and ask it for each δ.

    >>> m = clipped_moments([0.3, 0.3], [np.inf, 10.0], 0.0)
    >>> np.allclose(m.xb, m.x) and round(float(m.x2[1]), 4)
    0.1091
    """
    return BetaLaws(mean, concentration).moments(delta)


class BetaLaws:
    """Each stratum's Beta law (mean, concentration), read once for the moments at many shifts.

    What does not depend on δ (the second moment, where the law has mass, which strata share
    one law) is computed here; :meth:`moments` then takes each incomplete beta function once
    per distinct law near δ. The limit's root search asks for some twenty shifts of the same
    10,000 strata: finding the distinct laws at each one was most of a leaderboard's limit.

    >>> laws = BetaLaws([0.05, 0.05, 0.5], [40.0, 40.0, np.inf])
    >>> laws.distinct, [round(float(x), 4) for x in laws.moments(0.05).shift]
    (1, [0.0368, 0.0368, 0.05])
    """

    def __init__(self, mean, concentration) -> None:
        mu = np.asarray(mean, dtype=float).reshape(-1)
        c = np.broadcast_to(np.asarray(concentration, dtype=float).reshape(-1), mu.shape)
        self.mu = mu
        self.point = point = ~(c < _POINT) | (mu <= 0) | (mu >= 1)
        self.cc = cc = np.where(point, 1.0, c)
        self.second = np.where(point, mu * mu, mu * (mu * cc + 1) / (cc + 1))
        # below this the law has no mass worth counting (12 standard deviations under the mean)
        self.floor = mu - 12 * np.sqrt(mu * (1 - mu) / (cc + 1))
        self._laws = None

    @property
    def distinct(self) -> int:
        """How many distinct laws the strata that are not point masses hold."""
        return self._index()[0].shape[1]

    def _index(self):
        if self._laws is None:
            spread = ~self.point
            laws, back = np.unique(np.stack([self.mu[spread], self.cc[spread]]), axis=1, return_inverse=True)
            where = np.full(self.mu.size, -1)
            where[spread] = back.reshape(-1)
            self._laws = (laws, where)
        return self._laws

    def moments(self, delta: float) -> ClippedMoments:
        """The moments of x and x_B = max(x − δ, 0) under each stratum's law."""
        mu, point, second = self.mu, self.point, self.second
        d = float(delta)
        # unclipped where the law has no mass below δ: E[x^k; x > δ] = E[x^k]
        m0, m1, m2 = (mu > d).astype(float), mu * (mu > d), mu * mu * (mu > d)
        m0, m1, m2 = np.where(point, m0, 1.0), np.where(point, m1, mu), np.where(point, m2, second)
        near = ~point & (d > 0) & (self.floor < d)
        if near.any():
            # strata with the same counts share one law: each incomplete beta is taken once per law
            laws, where = self._index()
            back = where[near]
            used = np.zeros(laws.shape[1], dtype=bool)
            used[back] = True
            pick = np.flatnonzero(used)
            a, b = laws[0, pick] * laws[1, pick], (1 - laws[0, pick]) * laws[1, pick]
            slot = np.zeros(laws.shape[1], dtype=np.intp)
            slot[pick] = np.arange(pick.size)
            back = slot[back]
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
