"""Family priors: pool scenarios that share a declared mechanism tag, hierarchically.

Each member's θ is drawn from the family's Beta(α, β); (α, β) is not fitted but integrated
over a hyperprior, so a family where every run passes still gives a proper, honest
posterior (type-II maximum likelihood runs to its bound there, Beta(1000, 0.05), and claims
P(θ > 0.9) = 1). Families come from declared tags such as ``tool:crm``, never from folder
names: a shared folder is not a shared mechanism.

The hyperprior, written in the family mean μ = α/(α+β) and strength s = α+β:
μ ~ Uniform(0, 1), p(s) = ½(1+s)^(−3/2). Its tail in s is that of Gelman's
p(α, β) ∝ (α+β)^(−5/2); unlike that one it is proper, which matters exactly when every
scenario of a family is at 0 or n passes (Gelman's then puts unbounded mass at s → 0).
The integral is a fixed quadrature grid (logit μ × log s), vectorised; each member's prior
is the family's hyperposterior given the *other* members (leave one out), so updating it
with the member's own runs gives the exact hierarchical posterior, a :class:`BetaMixture`.

>>> fit = fit_family_prior([8, 9, 7, 10, 6, 9], [10, 10, 10, 10, 10, 10])
>>> round(fit.prior.alpha / (fit.prior.alpha + fit.prior.beta), 2), fit.scenarios
(0.82, 6)
>>> fp = family_priors([5, 5, 5, 5, 5], [5] * 5, ["tool:x"] * 5)
>>> round(float(posterior([5] * 5, [5] * 5, prior=fp.prior).sf(0.9)[0]), 2)   # type-II ML: 1.00
0.96
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from ..errors import UsageError
from ._beta import UNIFORM, BetaMixture, BetaPosterior, Prior, check_counts, log_marginal, posterior  # noqa: F401

__all__ = ["FamilyFit", "FamilyPosterior", "FamilyPriors", "HYPERPRIOR", "fit_family_prior", "family_priors",
           "hyperprior_grid"]

#: Bounds on α and β while fitting. A fit that lands on one is reported ``at_boundary``:
#: the data wanted a more extreme prior (e.g. every scenario clean pushes β toward 0).
BOUNDS = (0.05, 1000.0)


@dataclass(frozen=True)
class FamilyFit:
    """The fitted prior of one family, with how much data it rests on."""

    family: str
    prior: Prior
    scenarios: int
    trials: int
    log_likelihood: float
    at_boundary: bool
    method: str = "beta-binomial marginal likelihood (empirical Bayes)"


def fit_family_prior(successes, trials, *, family: str = "family") -> FamilyFit:
    """Fit Beta(α, β) to scenarios of one family by maximising the beta-binomial likelihood.

    A diagnostic (type-II maximum likelihood): :func:`family_priors` integrates over (α, β)
    instead, because this fit runs to a bound when a family all passes or all fails.

    >>> fit = fit_family_prior([2, 3, 1, 4], [4, 4, 4, 4], family="tool:crm")
    >>> fit.prior.name, fit.scenarios, fit.trials
    ('family tool:crm', 4, 16)
    """
    k, n = check_counts(successes, trials)
    k, n = np.atleast_1d(k), np.atleast_1d(n)
    keep = n > 0
    k, n = k[keep], n[keep]
    if k.size < 2:
        raise UsageError(f"family {family!r} has {k.size} scenario(s) with runs; pooling needs at least 2")
    lo, hi = np.log(BOUNDS[0]), np.log(BOUNDS[1])

    def negative(params: np.ndarray) -> float:
        a, b = np.exp(params)
        return -float(np.sum(log_marginal(k, n, a, b)))

    # Start from the method-of-moments guess, clipped into the bounds.
    rates = k / n
    m = float(np.clip(rates.mean(), 0.05, 0.95))
    v = float(rates.var()) or m * (1 - m) / 10
    strength = float(np.clip(m * (1 - m) / v - 1, 0.5, 100))
    start = np.clip(np.log([m * strength, (1 - m) * strength]), lo, hi)
    best = None
    for x0 in (start, np.zeros(2)):
        from scipy import optimize  # here: importing it costs 0.17 s that most verbs never need

        result = optimize.minimize(negative, x0, method="L-BFGS-B", bounds=[(lo, hi)] * 2)
        if best is None or result.fun < best.fun:
            best = result
    a, b = np.exp(best.x)
    at_boundary = bool(np.any(np.isclose(best.x, lo, atol=1e-3) | np.isclose(best.x, hi, atol=1e-3)))
    return FamilyFit(family, Prior(float(a), float(b), f"family {family}"), int(k.size), int(n.sum()),
                     float(-best.fun), at_boundary)


def hyperprior_grid(points_mu: int = 81, points_s: int = 56) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Quadrature nodes (α, β) and normalised log weights of the hyperprior, on logit μ × log s.

    >>> a, b, log_w = hyperprior_grid()
    >>> a.shape, round(float(np.exp(log_w).sum()), 6)
    ((4536,), 1.0)
    """
    z = np.linspace(-10.0, 10.0, points_mu)            # logit μ: resolves μ to 5e-5 of 0 or 1
    u = np.linspace(np.log(1e-3), np.log(1e6), points_s)  # log s
    mu = 1.0 / (1.0 + np.exp(-z))
    s = np.exp(u)
    # p(μ) dμ = μ(1−μ) dz and p(s) ds = ½(1+s)^(−3/2) s du; equal spacing cancels on normalising.
    log_w_mu = np.log(mu) + np.log1p(-mu)
    log_w_s = np.log(0.5) - 1.5 * np.log1p(s) + u
    M, S = np.meshgrid(mu, s, indexing="ij")
    log_w = (log_w_mu[:, None] + log_w_s[None, :]).ravel()
    return (M * S).ravel(), ((1 - M) * S).ravel(), log_w - np.logaddexp.reduce(log_w)


HYPERPRIOR = "μ ~ Uniform(0, 1), p(α+β) = ½(1+α+β)^(−3/2)"


@dataclass(frozen=True)
class FamilyPosterior:
    """What one family's runs say about its (μ, α+β), integrated over the hyperprior."""

    family: str
    scenarios: int
    trials: int
    mean_rate: float              # posterior mean of the family mean μ
    strength: tuple[float, float, float]  # 5%, 50%, 95% posterior quantiles of α+β
    hyperprior: str = HYPERPRIOR

    def describe(self) -> str:
        lo, mid, hi = self.strength
        return (f"family {self.family} pooled over {self.scenarios} scenarios ({self.trials} runs): "
                f"members' θ ~ Beta(μ(α+β), (1−μ)(α+β)) with hyperprior {self.hyperprior}, integrated; "
                f"family mean {self.mean_rate:.3f}, α+β {_g3(mid)} (90%: {_g3(lo)} to {_g3(hi)})")


def _g3(x: float) -> str:
    return f"{x:.3g}"


def _pool(k: np.ndarray, n: np.ndarray, family: str):
    """Leave-one-out hyperposterior weights over the grid for each member, and a summary."""
    a, b, log_prior = hyperprior_grid()
    lm = log_marginal(k[:, None], n[:, None], a[None, :], b[None, :])     # (members, grid)
    total = log_prior + lm.sum(axis=0)
    loo = total[None, :] - lm
    loo -= np.logaddexp.reduce(loo, axis=1, keepdims=True)
    full = np.exp(total - np.logaddexp.reduce(total))
    keep = np.exp(loo).max(axis=0) > 1e-11                  # drop nodes no member's prior uses
    weight = np.exp(loo[:, keep])
    weight /= weight.sum(axis=1, keepdims=True)
    s = a + b
    order = np.argsort(s)
    cum = np.cumsum(full[order])
    quant = tuple(float(s[order][min(np.searchsorted(cum, q), s.size - 1)]) for q in (0.05, 0.5, 0.95))
    summary = FamilyPosterior(family, int(k.size), int(n.sum()), float(np.sum(full * a / s)), quant)
    return weight, a[keep], b[keep], summary


@dataclass(frozen=True, eq=False)
class FamilyPriors:
    """One prior per scenario (a :class:`BetaMixture`, shape (scenarios, nodes)) and the pools.

    A pooled scenario's prior is its family's hyperposterior given the other members; an
    unpooled one holds the fallback prior in one node (the other nodes weigh zero).
    """

    prior: BetaMixture
    family: tuple[str | None, ...]
    fits: dict[str, FamilyPosterior] = field(default_factory=dict)
    unpooled: dict[str, str] = field(default_factory=dict)  # family -> why it fell back
    fallback: Prior = UNIFORM

    def describe(self, index: int) -> str:
        """The prior of scenario ``index`` in words."""
        fam = self.family[index]
        if fam in self.fits:
            return self.fits[fam].describe()
        reason = self.unpooled.get(fam, "no mechanism tag declared") if fam else "no mechanism tag declared"
        return f"{self.fallback.describe()} ({reason})"


def family_priors(successes, trials, families: Sequence[str | None], *,
                  fallback: Prior = UNIFORM) -> FamilyPriors:
    """A prior for every scenario, pooled within its declared family; ``fallback`` otherwise.

    ``families[i]`` is scenario i's mechanism tag (None when it has none). A family with
    fewer than two scenarios with runs falls back, and says why. Update the priors with
    ``posterior(successes, trials, prior=fp.prior)``: the result is the hierarchical
    posterior of every scenario.

    >>> fp = family_priors([9, 10, 8, 2], [10, 10, 10, 10], ["tool:crm", "tool:crm", "tool:crm", None])
    >>> post = posterior([9, 10, 8, 2], [10] * 4, prior=fp.prior)
    >>> post.mean.round(3).tolist(), sorted(fp.fits)
    ([0.877, 0.926, 0.827, 0.25], ['tool:crm'])
    """
    k, n = check_counts(successes, trials)
    k, n = np.atleast_1d(k), np.atleast_1d(n)
    fams = tuple(families)
    if len(fams) != k.size:
        raise UsageError(f"families has {len(fams)} entries but there are {k.size} scenarios; "
                            "give one per scenario")
    fits: dict[str, FamilyPosterior] = {}
    unpooled: dict[str, str] = {}
    labels = np.array([f if f is not None else "" for f in fams], dtype=object)
    pools = {}
    for fam in sorted({f for f in fams if f}):
        members = labels == fam
        with_runs = int(np.sum(n[members] > 0))
        if with_runs < 2:
            unpooled[fam] = f"family {fam} has {with_runs} scenario(s) with runs; pooling needs 2"
            continue
        pools[fam] = (members, *_pool(k[members], n[members], fam))
        fits[fam] = pools[fam][-1]
    width = max([1] + [p[2].size for p in pools.values()])
    weight = np.zeros((k.size, width))
    weight[:, 0] = 1.0
    alpha = np.full((k.size, width), fallback.alpha)
    beta = np.full((k.size, width), fallback.beta)
    for members, w, a, b, _ in pools.values():
        rows = np.flatnonzero(members)
        weight[rows] = 0.0
        weight[rows, :a.size] = w
        alpha[rows, :a.size], beta[rows, :a.size] = a, b
    return FamilyPriors(BetaMixture(weight, alpha, beta), fams, fits, unpooled, fallback)
