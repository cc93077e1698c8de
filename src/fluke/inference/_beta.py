"""Beta posteriors over pass counts, and mixtures of them.

A Beta(α, β) prior and k passes in n runs give Beta(α + k, β + n − k). Everything here is
vectorised over scenarios: pass arrays of passes and trials, get arrays back.

>>> post = posterior(5, 5)                     # five clean runs, uniform prior
>>> round(float(post.mean), 3), round(float(post.sf(0.9)), 3)
(0.857, 0.469)
>>> round(float(post.p_all_pass(8)), 4)
0.4286
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special

from ._lazy import lazy_stats as stats
from ..errors import UsageError, UsageTypeError
from ._check import check_level

__all__ = ["Prior", "UNIFORM", "BetaPosterior", "BetaMixture", "posterior", "check_counts",
           "parse_prior", "log_marginal"]


def check_counts(successes, trials, *, names=("successes", "trials")) -> tuple[np.ndarray, np.ndarray]:
    """Validate pass counts once, at the boundary; return them as float arrays of one shape.

    >>> check_counts([3, 5], [5, 5])[0].tolist()
    [3.0, 5.0]
    >>> check_counts(6, 5)
    Traceback (most recent call last):
    ...
    fluke.errors.UsageError: successes=6 must be at most trials=5
    """
    k_name, n_name = names
    k = np.asarray(successes, dtype=float)
    n = np.asarray(trials, dtype=float)
    try:
        k, n = np.broadcast_arrays(k, n)
    except ValueError:
        raise UsageError(f"{k_name} has shape {np.shape(successes)} and {n_name} has shape "
                         f"{np.shape(trials)}; they must match") from None
    for name, arr in ((k_name, k), (n_name, n)):
        bad = ~np.isfinite(arr) | (arr < 0) | (arr != np.round(arr))
        if bad.any():
            raise UsageError(f"{name}={_first(arr, bad)} must be a whole number of runs, at least 0")
    over = k > n
    if over.any():
        raise UsageError(f"{k_name}={_first(k, over)} must be at most {n_name}={_first(n, over)}")
    return k.astype(float), n.astype(float)


def _first(arr: np.ndarray, mask: np.ndarray):
    value = arr[mask].flat[0]
    return int(value) if np.isfinite(value) and value == int(value) else value


@dataclass(frozen=True)
class Prior:
    """A Beta(α, β) prior with a name saying where it came from (printed in every statement).

    >>> Prior(8, 2).describe()
    'Beta(8, 2)'
    >>> UNIFORM.describe()
    'uniform Beta(1, 1)'
    """

    alpha: float
    beta: float
    name: str = ""

    def __post_init__(self) -> None:
        for label, value in (("alpha", self.alpha), ("beta", self.beta)):
            if not (np.isfinite(value) and value > 0):
                raise UsageError(f"prior {label}={value} must be a positive number")

    def describe(self) -> str:
        core = f"Beta({_num(self.alpha)}, {_num(self.beta)})"
        return f"{self.name} {core}" if self.name else core


UNIFORM = Prior(1.0, 1.0, "uniform")


def parse_prior(text: str) -> Prior:
    """A prior from its command-line spelling: ``uniform`` or ``beta:a,b``.

    >>> parse_prior("beta:8,2")
    Prior(alpha=8.0, beta=2.0, name='')
    >>> parse_prior("jeffreys")
    Traceback (most recent call last):
    ...
    fluke.errors.UsageError: prior='jeffreys' is not understood; use uniform, beta:a,b or family
    """
    spelled = text.strip().lower()
    if spelled == "uniform":
        return UNIFORM
    if spelled.startswith("beta:"):
        parts = spelled[5:].split(",")
        try:
            a, b = (float(p) for p in parts)
        except ValueError:
            raise UsageError(f"prior={text!r}: write beta:a,b with two positive numbers, e.g. beta:2,2") from None
        return Prior(a, b)
    raise UsageError(f"prior={text!r} is not understood; use uniform, beta:a,b or family")


def _num(x: float) -> str:
    return f"{x:g}" if abs(x - round(x)) > 1e-9 else str(int(round(x)))


def log_marginal(successes, trials, alpha, beta) -> np.ndarray:
    """Log beta-binomial probability of exactly k passes in n runs under Beta(α, β).

    >>> round(float(np.exp(log_marginal(3, 5, 1, 1))), 4)     # uniform: every k equally likely
    0.1667
    """
    k, n = np.asarray(successes, float), np.asarray(trials, float)
    log_choose = special.gammaln(n + 1) - special.gammaln(k + 1) - special.gammaln(n - k + 1)
    return log_choose + special.betaln(alpha + k, beta + n - k) - special.betaln(alpha, beta)


def _sf(bar, alpha, beta) -> np.ndarray:
    bar = np.asarray(bar, dtype=float)
    return np.where(bar >= 1, 0.0, np.where(bar <= 0, 1.0, special.betainc(beta, alpha, np.clip(1 - bar, 0, 1))))


def _cdf(bar, alpha, beta) -> np.ndarray:
    """P(θ ≤ bar) for θ ~ Beta(α, β): the regularised incomplete beta, 0 below 0 and 1 above 1 (the
    values of ``scipy.stats.beta.cdf``, without importing scipy.stats)."""
    return special.betainc(alpha, beta, np.clip(bar, 0.0, 1.0))


class _Belief:
    """What every belief about θ (one Beta, or a mixture) can answer."""

    def sf(self, bar) -> np.ndarray:  # pragma: no cover - overridden
        raise NotImplementedError

    def cdf(self, bar) -> np.ndarray:
        """P(θ ≤ bar)."""
        return 1.0 - self.sf(bar)

    def interval(self, level: float = 0.9) -> tuple[np.ndarray, np.ndarray]:
        """The equal-tailed credible interval holding ``level`` of the posterior."""
        _check_level(level)
        tail = (1.0 - level) / 2
        return self.quantile(tail), self.quantile(1.0 - tail)

    def quantile(self, q: float) -> np.ndarray:  # pragma: no cover - overridden
        raise NotImplementedError


def _check_level(level: float) -> None:
    check_level(level, "level")


@dataclass(frozen=True, eq=False)
class BetaPosterior(_Belief):
    """Independent Beta(α, β) beliefs, one per scenario (arrays, or scalars for one).

    ``mean`` is also the probability that the next run passes.

    >>> b = BetaPosterior(np.array([6.0, 2.0]), np.array([1.0, 1.0]))
    >>> b.mean.round(3).tolist(), b.p_all_pass(1).round(3).tolist()
    ([0.857, 0.667], [0.857, 0.667])
    """

    alpha: np.ndarray
    beta: np.ndarray
    prior: Prior = UNIFORM

    @property
    def mean(self) -> np.ndarray:
        """Posterior mean of θ = the probability that the next run passes."""
        return self.alpha / (self.alpha + self.beta)

    @property
    def var(self) -> np.ndarray:
        """Posterior variance of θ."""
        s = self.alpha + self.beta
        return self.alpha * self.beta / (s * s * (s + 1))

    def sf(self, bar) -> np.ndarray:
        """P(θ > bar), as I_{1−bar}(β, α) (scipy's regularised incomplete beta, the fast side)."""
        return _sf(bar, self.alpha, self.beta)

    def cdf(self, bar) -> np.ndarray:
        """P(θ ≤ bar), computed directly (not as 1 − sf) so small tails keep their digits."""
        return _cdf(bar, self.alpha, self.beta)

    def quantile(self, q: float) -> np.ndarray:
        """The q-quantile of θ (the inverse regularised incomplete beta, as ``scipy.stats.beta.ppf``)."""
        return special.betaincinv(self.alpha, self.beta, q)

    def p_all_pass(self, m) -> np.ndarray:
        """P(the next m runs all pass) = B(α + m, β) / B(α, β)."""
        return np.exp(special.betaln(self.alpha + m, self.beta) - special.betaln(self.alpha, self.beta))

    def update(self, successes, trials) -> "BetaPosterior":
        """The belief after k more passes in n more runs."""
        k, n = check_counts(successes, trials)
        return BetaPosterior(self.alpha + k, self.beta + n - k, self.prior)

    def predictive_cdf(self, successes, trials) -> np.ndarray:
        """P(K ≤ k) for a batch of n runs under this belief (beta-binomial)."""
        return stats.betabinom.cdf(successes, trials, self.alpha, self.beta)

    def log_marginal(self, successes, trials) -> np.ndarray:
        """Log probability of exactly k passes in n runs under this belief."""
        return log_marginal(successes, trials, self.alpha, self.beta)


@dataclass(frozen=True, eq=False)
class BetaMixture(_Belief):
    """A mixture of Beta beliefs per scenario: ``weight``, ``alpha``, ``beta`` of shape (..., K).

    The change-detection posterior is a two-component mixture (unchanged, changed).

    >>> mix = BetaMixture(np.array([0.5, 0.5]), np.array([9.0, 1.0]), np.array([1.0, 9.0]))
    >>> float(mix.mean), round(float(mix.sf(0.5)), 3)
    (0.5, 0.5)
    """

    weight: np.ndarray
    alpha: np.ndarray
    beta: np.ndarray

    @property
    def prior(self) -> Prior:
        """A name for where a mixture comes from (its components carry the numbers)."""
        return Prior(1.0, 1.0, "mixture")

    @property
    def mean(self) -> np.ndarray:
        return np.sum(self.weight * self.alpha / (self.alpha + self.beta), axis=-1)

    @property
    def var(self) -> np.ndarray:
        s = self.alpha + self.beta
        m = self.alpha / s
        second = m * (self.alpha + 1) / (s + 1)
        return np.sum(self.weight * second, axis=-1) - self.mean ** 2

    def sf(self, bar) -> np.ndarray:
        return np.sum(self.weight * _sf(bar, self.alpha, self.beta), axis=-1)

    def cdf(self, bar) -> np.ndarray:
        return np.sum(self.weight * _cdf(bar, self.alpha, self.beta), axis=-1)

    def quantile(self, q: float) -> np.ndarray:
        # The mixture cdf has no closed inverse: bisect, vectorised, to ~1e-12.
        lo = np.zeros(np.shape(self.mean))
        hi = np.ones_like(lo)
        for _ in range(45):
            mid = (lo + hi) / 2
            below = self._cdf_at(mid) < q
            lo = np.where(below, mid, lo)
            hi = np.where(below, hi, mid)
        return (lo + hi) / 2

    def _cdf_at(self, x: np.ndarray) -> np.ndarray:
        return np.sum(self.weight * _cdf(x[..., None], self.alpha, self.beta), axis=-1)

    def p_all_pass(self, m) -> np.ndarray:
        m = np.asarray(m, float)[..., None] if np.ndim(m) else m
        ratio = np.exp(special.betaln(self.alpha + m, self.beta) - special.betaln(self.alpha, self.beta))
        return np.sum(self.weight * ratio, axis=-1)

    def update(self, successes, trials) -> "BetaMixture":
        """Bayes' rule on both the rates and the component weights."""
        k, n = check_counts(successes, trials)
        k, n = k[..., None], n[..., None]
        with np.errstate(divide="ignore"):       # a zero weight stays zero
            log_w = np.log(self.weight) + log_marginal(k, n, self.alpha, self.beta)
        log_w -= log_w.max(axis=-1, keepdims=True)
        w = np.exp(log_w)
        return BetaMixture(w / w.sum(axis=-1, keepdims=True), self.alpha + k, self.beta + n - k)


def posterior(successes, trials, *, prior: Prior | BetaPosterior = UNIFORM) -> BetaPosterior:
    """The Beta posterior of each scenario's pass rate after k passes in n runs.

    ``prior`` is one :class:`Prior` for every scenario, a :class:`BetaPosterior` holding
    one prior per scenario (a carried and discounted account), or a :class:`BetaMixture`
    per scenario (a family prior integrated over its hyperprior); a mixture prior gives a
    mixture posterior.

    >>> post = posterior([1, 9, 8], [1, 10, 10])
    >>> post.mean.round(3).tolist(), post.sf(0.9).round(4).tolist()
    ([0.667, 0.833, 0.75], [0.19, 0.3026, 0.0896])
    >>> [round(float(x), 3) for x in posterior(1, 1).interval(0.9)]
    [0.224, 0.975]
    """
    k, n = check_counts(successes, trials)
    if isinstance(prior, BetaMixture):
        return prior.update(k, n)
    if isinstance(prior, BetaPosterior):
        a0, b0, named = prior.alpha, prior.beta, prior.prior
    elif isinstance(prior, Prior):
        a0, b0, named = prior.alpha, prior.beta, prior
    else:
        raise UsageTypeError(f"prior={prior!r} must be a Prior (e.g. UNIFORM, Prior(2, 2)), a BetaPosterior "
                                "or a BetaMixture")
    return BetaPosterior(a0 + k, b0 + n - k, named)
