"""P(first): which version has the highest mean pass rate over the strata, with the versions exchangeable.

Every version ran the same strata, and the quantity ranked is a version's mean true pass rate
over *those* strata. The strata's difficulty is common to every version, so it cancels from
every comparison (the draws are paired by stratum); what separates two versions' observed
means is the binomial noise of their runs and the versions' true effects. The model:

* ``m_v``, version v's observed mean over the S strata of its per-stratum pass share, is
  ``N(θ_v, σ_v²)``, with ``σ_v² = Σ_s q_vs (1 − q_vs) / n_vs / S²``: ``q_vs`` is the stratum's pass
  share pooled over every version, ``(passes + ½) / (trials + 1)`` (so never 0 or 1), moved on the
  logit by the offset that gives the version its own smoothed mean share (:func:`_noise`); the
  normal is the law of a mean of many bounded shares, an approximation on few strata and runs
  (calibrated in bench/atlas.py down to 3 versions × 10 strata × 5 runs and 4 × 50 × 1);
* the versions are exchangeable: ``θ_v = μ + δ_v``, ``δ_v ~ N(0, τ²)`` independently, μ flat;
* τ (how far versions' mean rates are apart) has a half-Cauchy prior of scale ``2 σ̄``, with σ̄²
  the harmonic mean of the σ_v² (twice the typical standard error of a version's mean: a prior
  that lets the data say the versions are far apart and lets them be nearly equal), and is
  integrated over on a grid of :data:`TAU_GRID` quantiles of that prior.

Given τ, μ has a normal posterior and each θ_v is the observed mean pulled toward μ by
``B_v = σ_v² / (σ_v² + τ²)``: when the versions look no more spread than their noise the
posterior of τ sits near 0 and nearly equal versions are shrunk toward each other, which
independent per-version posteriors never do (they over-claimed the apparent leader among nearly
equal versions: bench/atlas.py, 8 versions × 100 × 3 runs, a claim of 0.54 against 0.24 truly
first). Each draw takes τ from its posterior, then μ, then every θ_v; a version's P(first) is
the share of draws in which its θ is the highest, a draw with k versions tied at the top
giving each 1/k, so the column sums to 1.

The cost is O(versions × strata) for the variances and O(versions × (draws + grid)) for the
rest: no per-stratum draws.

>>> post = first_posterior([[9, 9, 8], [1, 2, 1], [9, 9, 8]], [[10] * 3] * 3, draws=400)
>>> round(float(post.p_first.sum()), 6), float(post.p_first[1]), bool(abs(post.p_first[0] - post.p_first[2]) < 0.15)
(1.0, 0.0, True)
>>> bool(post.tau_low < post.tau < post.tau_high)
True
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["FirstPosterior", "PRIOR_SCALE", "TAU_GRID", "first_posterior"]

#: τ's half-Cauchy prior has this many times the typical standard error of a version's mean as its scale.
PRIOR_SCALE = 2.0
#: Quantiles of τ's prior the posterior is evaluated on (equal prior mass each).
TAU_GRID = 512
#: At most this many Newton steps for each version's logit offset in :func:`_noise` (the mean of q is
#: monotone in it; they stop once every step is under 1e-9).
_NEWTON = 30
#: Joint draws held at once (draws × versions floats).
_CHUNK = 2_000_000


@dataclass(frozen=True)
class FirstPosterior:
    """P(first) per version and the posterior of τ (the spread of the versions' mean rates) it rests on.

    ``tau`` is τ's posterior median, ``tau_low``/``tau_high`` its 95% equal-tailed interval and
    ``prior_scale`` the half-Cauchy prior's scale, all as shares (× 100 for points).
    """

    p_first: np.ndarray
    tau: float
    tau_low: float
    tau_high: float
    prior_scale: float
    draws: int

    def describe(self) -> str:
        """The model in one phrase, for what a leaderboard says P(first) rests on.

        >>> print(FirstPosterior(np.array([0.5, 0.5]), 0.021, 0.002, 0.09, 0.03, 2000).describe())
        ... # doctest: +NORMALIZE_WHITESPACE
        the version effects shrunk toward each other (effects ~ N(0, τ²); τ = 2.1 points, 95% 0.2–9.0,
        under a half-Cauchy prior of scale 3.0 points); 2000 draws paired by stratum, ties split
        """
        return (f"the version effects shrunk toward each other (effects ~ N(0, τ²); τ = {100 * self.tau:.1f} points, "
                f"95% {100 * self.tau_low:.1f}–{100 * self.tau_high:.1f}, under a half-Cauchy prior of scale "
                f"{100 * self.prior_scale:.1f} points); {self.draws} draws paired by stratum, ties split")

    def to_dict(self) -> dict:
        """The JSON form: the model's name, τ and its interval in points, the prior's scale, the draws.

        >>> FirstPosterior(np.array([1.0, 0.0]), 0.1, 0.05, 0.2, 0.01, 100).to_dict()["tau_points"]
        10.0
        """
        return {"model": "exchangeable version effects ~ N(0, tau^2), tau ~ half-Cauchy(prior_scale), integrated",
                "tau_points": 100 * self.tau, "tau_interval_points": [100 * self.tau_low, 100 * self.tau_high],
                "prior_scale_points": 100 * self.prior_scale, "draws": self.draws}


def _expit(x: np.ndarray) -> np.ndarray:
    """The logistic function, without overflow at any x (and without importing scipy at start-up)."""
    return 0.5 * (1 + np.tanh(0.5 * x))


def _noise(k: np.ndarray, n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each version's observed mean over the strata and its sampling variance.

    The variance sums ``q (1 − q) / n`` over the version's strata, with ``q`` the stratum's pooled
    share moved on the logit by one offset per version, the offset that makes the version's mean
    of ``q`` its own smoothed mean share (a few Newton steps; the pooled share alone overstates a
    version's noise by Jensen's inequality when the versions are far apart, which made P(first)
    under-confident there).

    Two versions at 9 and 1 of 10 in both strata: the pooled share, 0.5, would give each a
    variance of 2 × 0.25 / 10 / 2² = 0.0125; at their own rates (about 0.86 and 0.14) it is under half:

    >>> means, variance = _noise(np.array([[9.0, 9.0], [1.0, 1.0]]), np.full((2, 2), 10.0))
    >>> means.tolist(), [round(float(x), 4) for x in variance]
    ([0.9, 0.1], [0.0059, 0.0059])
    """
    s = k.shape[1]
    pooled = (k.sum(axis=0) + 0.5) / (n.sum(axis=0) + 1.0)
    means = (k / n).mean(axis=1)
    target = ((k + 0.5) / (n + 1.0)).mean(axis=1)
    logit = np.log(pooled / (1 - pooled))[None, :]
    offset = np.zeros(k.shape[0])
    for _ in range(_NEWTON):
        q = _expit(logit + offset[:, None])
        step = (q.mean(axis=1) - target) / np.maximum((q * (1 - q)).mean(axis=1), 1e-12)
        offset -= np.clip(step, -2.0, 2.0)
        if np.abs(step).max() < 1e-9:
            break
    q = np.clip(_expit(logit + offset[:, None]), 1e-9, 1 - 1e-9)     # a variance never 0 in floating point
    variance = (q * (1 - q) / n).sum(axis=1) / (s * s)
    return means, variance


def _tau_posterior(means: np.ndarray, variance: np.ndarray, scale: float):
    """τ's grid, its posterior weights, and for each grid point μ's posterior mean and variance."""
    u = (np.arange(TAU_GRID) + 0.5) / TAU_GRID
    tau = scale * np.tan(0.5 * np.pi * u)                     # quantiles of the half-Cauchy prior
    total = tau[:, None] ** 2 + variance[None, :]              # grid × versions: the marginal variance of m_v
    weight = 1 / total
    mu_var = 1 / weight.sum(axis=1)
    mu_mean = (weight * means[None, :]).sum(axis=1) * mu_var
    # the marginal likelihood of the means given τ, μ integrated out (flat prior)
    log_like = (0.5 * np.log(mu_var) - 0.5 * np.log(total).sum(axis=1)
                - 0.5 * (weight * (means[None, :] - mu_mean[:, None]) ** 2).sum(axis=1))
    post = np.exp(log_like - log_like.max())
    return tau, post / post.sum(), mu_mean, mu_var


def first_posterior(passes, trials, *, draws: int = 2000, seed: int = 0) -> FirstPosterior:
    """P(first) per version (rows) over the strata (columns), with the versions' effects shrunk toward each other.

    See the module docstring for the model. ``draws`` joint draws from ``seed``.

    >>> post = first_posterior([[8, 9, 7], [8, 9, 7]], [[10] * 3] * 2, draws=4000)
    >>> [round(float(x), 1) for x in post.p_first]
    [0.5, 0.5]
    """
    k = np.asarray(passes, dtype=float)
    n = np.asarray(trials, dtype=float)
    v = k.shape[0]
    means, variance = _noise(k, n)
    scale = PRIOR_SCALE * float(np.sqrt(1 / np.mean(1 / variance)))
    tau, post, mu_mean, mu_var = _tau_posterior(means, variance, scale)
    cdf = np.cumsum(post)
    rng = np.random.default_rng(seed)
    draws = int(draws)
    share = np.zeros(v)
    chunk = max(1, _CHUNK // v)
    for start in range(0, draws, chunk):
        m = min(chunk, draws - start)
        at = np.minimum(np.searchsorted(cdf, rng.random(m) * cdf[-1], side="right"), TAU_GRID - 1)
        mu = mu_mean[at] + np.sqrt(mu_var[at]) * rng.standard_normal(m)
        pull = variance[None, :] / (variance[None, :] + tau[at, None] ** 2)    # B_v: how far θ_v moves toward μ
        theta = (pull * mu[:, None] + (1 - pull) * means[None, :]
                 + np.sqrt(variance[None, :] * (1 - pull)) * rng.standard_normal((m, v)))
        top = theta >= theta.max(axis=1, keepdims=True) - 1e-12
        share += (top / top.sum(axis=1, keepdims=True)).sum(axis=0)
    low, mid, high = (float(tau[min(int(np.searchsorted(cdf, q * cdf[-1])), TAU_GRID - 1)])
                      for q in (0.025, 0.5, 0.975))
    return FirstPosterior(share / draws, mid, low, high, scale, draws)
