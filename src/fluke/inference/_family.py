"""Family priors: pool scenarios that share a declared mechanism tag, by empirical Bayes.

The family's Beta(α, β) maximises the beta-binomial marginal likelihood of its scenarios'
counts (type-II maximum likelihood). Families come from declared tags such as ``tool:crm``,
never from folder names: a shared folder is not a shared mechanism.

Known limit: each scenario's own counts help fit the prior it is then updated with (the usual
parametric empirical-Bayes shortcut), so intervals are slightly too narrow for small families.

>>> fit = fit_family_prior([8, 9, 7, 10, 6, 9], [10, 10, 10, 10, 10, 10])
>>> round(fit.prior.alpha / (fit.prior.alpha + fit.prior.beta), 2), fit.scenarios
(0.82, 6)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
from scipy import optimize

from ._beta import UNIFORM, BetaPosterior, Prior, check_counts, log_marginal

__all__ = ["FamilyFit", "FamilyPriors", "fit_family_prior", "family_priors"]

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

    >>> fit = fit_family_prior([2, 3, 1, 4], [4, 4, 4, 4], family="tool:crm")
    >>> fit.prior.name, fit.scenarios, fit.trials
    ('family tool:crm', 4, 16)
    """
    k, n = check_counts(successes, trials)
    k, n = np.atleast_1d(k), np.atleast_1d(n)
    keep = n > 0
    k, n = k[keep], n[keep]
    if k.size < 2:
        raise ValueError(f"family {family!r} has {k.size} scenario(s) with runs; pooling needs at least 2")
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
        result = optimize.minimize(negative, x0, method="L-BFGS-B", bounds=[(lo, hi)] * 2)
        if best is None or result.fun < best.fun:
            best = result
    a, b = np.exp(best.x)
    at_boundary = bool(np.any(np.isclose(best.x, lo, atol=1e-3) | np.isclose(best.x, hi, atol=1e-3)))
    return FamilyFit(family, Prior(float(a), float(b), f"family {family}"), int(k.size), int(n.sum()),
                     float(-best.fun), at_boundary)


@dataclass(frozen=True, eq=False)
class FamilyPriors:
    """One prior per scenario (as a :class:`BetaPosterior` of prior parameters) and the fits."""

    prior: BetaPosterior
    family: tuple[str | None, ...]
    fits: dict[str, FamilyFit] = field(default_factory=dict)
    unpooled: dict[str, str] = field(default_factory=dict)  # family -> why it fell back

    def describe(self, index: int) -> str:
        """The prior of scenario ``index`` in words."""
        fam = self.family[index]
        if fam in self.fits:
            fit = self.fits[fam]
            note = "; at a fitting bound" if fit.at_boundary else ""
            return (f"{fit.prior.describe()} fitted by {fit.method} over {fit.scenarios} scenarios "
                    f"({fit.trials} runs){note}")
        reason = self.unpooled.get(fam, "no mechanism tag declared") if fam else "no mechanism tag declared"
        return f"{self.prior.prior.describe()} ({reason})"


def family_priors(successes, trials, families: Sequence[str | None], *,
                  fallback: Prior = UNIFORM) -> FamilyPriors:
    """A prior for every scenario, pooled within its declared family; ``fallback`` otherwise.

    ``families[i]`` is scenario i's mechanism tag (None when it has none). A family with
    fewer than two scenarios with runs falls back, and says why.

    >>> fp = family_priors([9, 10, 8, 2], [10, 10, 10, 10], ["tool:crm", "tool:crm", "tool:crm", None])
    >>> float(fp.prior.alpha[3]), fp.family[3], sorted(fp.fits)
    (1.0, None, ['tool:crm'])
    """
    k, n = check_counts(successes, trials)
    k, n = np.atleast_1d(k), np.atleast_1d(n)
    fams = tuple(families)
    if len(fams) != k.size:
        raise ValueError(f"families has {len(fams)} entries but there are {k.size} scenarios; give one per scenario")
    alpha = np.full(k.size, fallback.alpha)
    beta = np.full(k.size, fallback.beta)
    fits: dict[str, FamilyFit] = {}
    unpooled: dict[str, str] = {}
    labels = np.array([f if f is not None else "" for f in fams], dtype=object)
    for fam in sorted({f for f in fams if f}):
        members = labels == fam
        with_runs = int(np.sum(n[members] > 0))
        if with_runs < 2:
            unpooled[fam] = f"family {fam} has {with_runs} scenario(s) with runs; pooling needs 2"
            continue
        fit = fit_family_prior(k[members], n[members], family=fam)
        fits[fam] = fit
        alpha[members], beta[members] = fit.prior.alpha, fit.prior.beta
    return FamilyPriors(BetaPosterior(alpha, beta, fallback), fams, fits, unpooled)

