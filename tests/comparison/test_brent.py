"""The detection limit's root search and its per-law moments, held to their slower definitions.

:func:`fluke.comparison._brent.brent_root` replaced ``scipy.optimize.brentq`` (whose import cost
a leaderboard 0.15 s of CPU) and :class:`fluke.comparison._ratelaw.BetaLaws` finds the distinct
laws once for all the shifts the search tries. Both must leave every printed limit as it was:
the same float, not just close, so the tests below compare with ``==``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize, special

from fluke.comparison import design_limits, regression_limit, shift_power
from fluke.comparison._brent import brent_root
from fluke.comparison._ratelaw import BetaLaws, fitted_concentration, posterior_law
from fluke.errors import UsageError


def _functions():
    rng = np.random.default_rng(37)
    out = [("sqrt 2", lambda x: x * x - 2, 0.0, 2.0),
           ("kink", lambda x: abs(x - 0.3) ** 0.5 * (1 if x > 0.3 else -1), 0.0, 1.0),
           ("flat then steep", lambda x: math.tanh(40 * (x - 0.71)), 0.0, 1.0),
           ("root at an end", lambda x: x - 1.0, 0.0, 1.0),
           ("decreasing", lambda x: math.exp(-x) - 0.2, 0.0, 5.0),
           ("step-like", lambda x: (x > 0.123456) - 0.5, 0.0, 1.0)]
    for i in range(40):
        c = rng.normal(size=4)
        root = rng.uniform(0.05, 0.95)
        # increasing in x (a slope of at least 1 + c₀²), so [0, 1] brackets the root r
        out.append((f"cubic {i}", lambda x, c=c, r=root: (x - r) * (1 + c[0] ** 2 + c[1] ** 2 * (x - r) ** 2)
                    + c[2] * math.sin(x - r) ** 2 * (x - r) + 0.1 * c[3] * (x - r) ** 2, 0.0, 1.0))
    return out


@pytest.mark.parametrize("name,f,lo,hi", _functions(), ids=[x[0] for x in _functions()])
@pytest.mark.parametrize("xtol", [2e-12, 2.0**-30, 1e-4])
def test_brent_root_is_brentq_to_the_last_bit(name, f, lo, hi, xtol):
    assert brent_root(f, lo, hi, xtol=xtol) == optimize.brentq(f, lo, hi, xtol=xtol), name


def test_brent_root_refuses_what_brentq_refuses():
    with pytest.raises(UsageError, match="same sign"):
        brent_root(lambda x: x + 1, 0.0, 1.0)
    with pytest.raises(UsageError, match="NaN"):
        brent_root(lambda x: math.nan if x > 0.5 else -1.0, 0.0, 1.0)
    with pytest.raises(RuntimeError):
        optimize.brentq(lambda x: math.tanh(40 * (x - 0.71)), 0.0, 1.0, maxiter=3)
    with pytest.raises(UsageError, match="no root within 3 steps"):
        brent_root(lambda x: math.tanh(40 * (x - 0.71)), 0.0, 1.0, maxiter=3)


def _designs():
    rng = np.random.default_rng(35)
    out = []
    for g, n in [(30, 10), (200, 3), (1000, 5), (40, 20)]:
        base = rng.beta(2, 0.6, g)                  # skewed towards 1: many strata near the top
        na = rng.integers(1, n + 1, g)
        nb = rng.integers(1, n + 1, g)
        pa, pb = rng.binomial(na, base), rng.binomial(nb, base)
        out.append((pa, na, pb, nb))
    return out


@pytest.mark.parametrize("design", range(4))
@pytest.mark.parametrize("direction", ["regression", "improvement"])
def test_the_limit_is_the_brentq_root_of_the_power(design, direction):
    """regression_limit through its own root and its cached laws equals brentq on shift_power, δ by δ anew."""
    pa, na, pb, nb = (np.asarray(x, float) for x in _designs()[design])
    rates = (pa + pb) / (na + nb)
    law = posterior_law(pa + pb, na + nb, fitted_concentration(pa + pb, na + nb))
    limit = regression_limit(rates, na, nb, alpha=0.01, power=0.8, direction=direction, law=law)

    def gap(d):
        return shift_power(d, rates, na, nb, alpha=0.01, direction=direction, law=law) - 0.8

    if gap(1.0) < 0:
        assert limit == math.inf
    else:
        assert limit == 100 * optimize.brentq(gap, 0.0, 1.0, xtol=2.0**-30)
        assert 0 < limit < 100


def test_beta_laws_moments_are_the_per_stratum_incomplete_betas():
    """Each stratum's clipped moments, from its own three incomplete betas (no sharing of laws), to the bit."""
    rng = np.random.default_rng(7)
    mean = rng.choice([0.02, 0.05, 0.3, 0.9, 0.0, 1.0], 500)
    conc = rng.choice([4.0, 40.0, np.inf, 2e9], 500)
    laws = BetaLaws(mean, conc)
    assert laws.distinct == len({(m, c) for m, c in zip(mean, conc, strict=True) if 0 < m < 1 and c < 1e9})
    for delta in (0.0, 0.01, 0.05, 0.2, 0.6):
        m = laws.moments(delta)
        for i in range(mean.size):
            mu, c = mean[i], conc[i]
            if not c < 1e9 or mu <= 0 or mu >= 1:      # a point mass: the share is known
                x2, t0, t1, t2 = mu * mu, float(mu > delta), mu * (mu > delta), mu * mu * (mu > delta)
            else:
                a, b = mu * c, (1 - mu) * c
                x2 = mu * (mu * c + 1) / (c + 1)
                far = mu - 12 * math.sqrt(mu * (1 - mu) / (c + 1)) >= delta or delta <= 0
                t0 = 1.0 if far else special.betaincc(a, b, delta)
                t1 = mu if far else mu * special.betaincc(a + 1, b, delta)
                t2 = x2 if far else x2 * special.betaincc(a + 2, b, delta)
            assert (m.x2[i], m.xb[i], m.xb2[i], m.xxb[i]) == (
                x2, t1 - delta * t0, t2 - 2 * delta * t1 + delta * delta * t0, t2 - delta * t1), (i, delta)


@pytest.mark.parametrize("design", range(4))
def test_design_limits_one_direction_is_that_entry_of_both(design):
    pa, na, pb, nb = _designs()[design]
    both = design_limits(pa, na, pb, nb, alpha=0.05 / 3)
    assert design_limits(pa, na, pb, nb, alpha=0.05 / 3, directions=("regression",)) == both[:1]
    assert design_limits(pa, na, pb, nb, alpha=0.05 / 3, directions=["improvement"]) == both[1:]
    assert design_limits(pa, na, pb, nb, alpha=0.05 / 3, directions=("improvement", "regression")) == both[::-1]


def test_design_limits_one_direction_paired():
    rng = np.random.default_rng(3)
    base = rng.uniform(0.2, 0.95, 120)
    pa, pb = rng.binomial(1, base), rng.binomial(1, base)
    ones = np.ones(120)
    both = design_limits(pa, ones, pb, ones)
    assert math.isfinite(both[0])
    assert design_limits(pa, ones, pb, ones, directions=("regression",)) == both[:1]
    assert design_limits(pa, ones, pb, ones, directions=("improvement",)) == both[1:]


def test_design_limits_names_a_bad_direction():
    with pytest.raises(UsageError, match="directions"):
        design_limits([5], [10], [5], [10], directions=("sideways",))
    with pytest.raises(UsageError, match="directions"):
        design_limits([5], [10], [5], [10], directions=())
