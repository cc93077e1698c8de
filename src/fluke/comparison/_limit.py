"""The detection limit from power under the alternative, in the direction of a regression.

The limit is the smallest shift δ (in points, the same in every stratum) that the stratified
test would find at level α with the stated power. Power is computed *under the shifted
design*: A at the stratum's pooled failure share q̂ (both arms together, the null estimate),
B at q̂ + δ for a regression (q̂ − δ for an improvement, each clipped to [0, 1]). The
variance under the alternative is larger than V under the null when rates sit near 1, which
is why a limit from V alone over-promised power there.

* **Pooled strata, normal test** (Cochran–Mantel–Haenszel): with w = n_A n_B / N per stratum,
  the numerator moves by Σ w·δ_s; its null standard deviation is √V₀(δ) and its spread under
  the shift √V₁(δ), with the unbiased q(1 − q) = q̂(1 − q̂)·N/(N − 1) inside both; power is
  Φ((Σ w δ_s − z₁₋α/₂ √V₀) / √V₁), solved for δ by bisection.
* **One run per arm in every stratum** (exact McNemar): the fixed and broken pairs are
  trinomial with mean probabilities h − δ·m and h + δ·(1 − m) for a regression (m the mean
  failure share, h = D/(2G) the mean q(1 − q) read off the D discordant of G pairs); power
  is the exact McNemar rejection probability, summed over the law of D.

When even δ = 100 points would not reach the power (no stratum could move in that
direction), the limit is infinite: *too small to tell*. Less information never gives a
smaller limit: the limit only reads the design and the rates, not where the runs happened to
agree.

>>> round(regression_limit([0.5] * 30, [20] * 30, [20] * 30), 1)
8.2
>>> round(regression_limit([0.98] * 30, [10] * 30, [10] * 30), 1)
4.7
>>> regression_limit([0.0] * 5, [3] * 5, [3] * 5)   # every run failed: B cannot fail more
inf
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy import special

from ..errors import UsageError
from ..inference import check_level
from ..inference import lazy_stats as stats
from ._brent import brent_root
from ._ratelaw import BetaLaws, clipped_moments

__all__ = ["DIRECTIONS", "regression_limit", "shift_power", "verdict_interval"]

DIRECTIONS = ("regression", "improvement")
_BISECT = 30


def _arrays(rates_a, trials_a, trials_b):
    p = np.asarray(rates_a, dtype=float).reshape(-1)
    na = np.asarray(trials_a, dtype=float).reshape(-1)
    nb = np.asarray(trials_b, dtype=float).reshape(-1)
    if not (p.size == na.size == nb.size) or p.size == 0:
        raise UsageError("rates and trials need one entry per stratum, at least one", argument="trials_a")
    if np.any(~np.isfinite(p)) or p.min() < 0 or p.max() > 1:
        raise UsageError("pass rates must lie between 0 and 1", argument="rates_a")
    if na.min() < 1 or nb.min() < 1:
        raise UsageError("every stratum needs at least one run per arm", argument="trials_a")
    return 1.0 - p, na, nb


def _falling(q, sign, law):
    """The share that falls under the shift, as a law per stratum: (mean, concentration).

    A regression lowers the pass share 1 − q, an improvement the failure share q; without a
    law each stratum's share is taken as known (a point mass).
    """
    if law is None:
        return (1 - q if sign > 0 else q), np.full(q.size, np.inf)
    mean, concentration = (np.asarray(x, dtype=float).reshape(-1) for x in law)
    return (mean if sign > 0 else 1 - mean), concentration


def _falling_laws(q, sign, law) -> BetaLaws | None:
    """:func:`_falling` as one law per stratum, read once for every δ the root search tries."""
    if law is None:
        return None
    return BetaLaws(*(np.broadcast_to(x, q.shape) for x in _falling(q, sign, law)))


def _normal_power(delta, q, na, nb, alpha, sign, law: BetaLaws | None = None):
    n = na + nb
    w = na * nb / n
    unbiased = np.where(n > 1, n / np.maximum(n - 1, 1), 1.0)
    var_q = q * (1 - q) * unbiased
    if law is None:
        qb = np.clip(q + sign * delta, 0.0, 1.0)
        s = qb - q
        c_b = c_0 = 0.0
    else:
        # the unclipped shift on the plug-in moments, corrected by the expectation under each
        # stratum's rate law of what stopping at 0 takes off: the fall is E[min(y, δ)], not δ,
        # where a scenario may sit below δ; away from 0 the corrections vanish
        s = np.full(q.shape, sign * delta)
        m = law.moments(delta)
        share = nb / n
        unclipped_b = (m.x - delta) - (m.x2 - 2 * delta * m.x + delta * delta)
        c_b = (m.xb - m.xb2) - unclipped_b
        pooled = (na * m.x + nb * m.xb) / n
        pooled2 = (na * na * m.x2 + 2 * na * nb * m.xxb + nb * nb * m.xb2) / (n * n)
        pooled_u = m.x - delta * share
        pooled_u2 = m.x2 - 2 * delta * share * m.x + (delta * share) ** 2
        c_0 = (pooled - pooled2) - (pooled_u - pooled_u2)
    shift = np.abs(s) if law is None else (m.x - m.xb)
    # q_B(1 − q_B) = q(1 − q) + s(1 − 2q) − s² for q_B = q + s; the pooled share moves by s·n_B/N
    var_b = np.maximum(var_q + s * (1 - 2 * q) - s * s + c_b, 0.0)
    v1 = float(np.sum(w * (nb * var_q + na * var_b) / n))
    sp = s * nb / n
    v0 = float(np.sum(w * np.maximum(var_q + sp * (1 - 2 * q) - sp * sp + c_0, 0.0)))
    if not v1 > 0:
        return 0.0
    z = special.ndtri(1 - alpha / 2)
    return float(special.ndtr((float(np.sum(w * shift)) - z * math.sqrt(max(v0, 0.0))) / math.sqrt(v1)))


def _mcnemar_critical(d: np.ndarray, alpha: float) -> np.ndarray:
    """Largest c with 2·P(Bin(d, ½) ≤ c) < α, per d (−1 where none): McNemar rejects min(F, d − F) ≤ c."""
    c = np.floor(stats.binom.ppf(alpha / 2, d, 0.5)).astype(int)
    c = np.where(2 * stats.binom.cdf(c, d, 0.5) >= alpha * (1 + 1e-7), c - 1, c)
    c = np.where(2 * stats.binom.cdf(c + 1, d, 0.5) < alpha, c + 1, c)
    return np.minimum(c, (d - 1) // 2)


@functools.lru_cache(maxsize=64)
def _mcnemar_table(g: int, alpha: float):
    d = np.arange(g + 1)
    c = np.array(_mcnemar_critical(d, alpha))
    d.flags.writeable = c.flags.writeable = False    # cached: shared by every caller, so nobody may change them
    return d, c


def paired_law(q, discordance: float):
    """The one Beta law of a paired design's pass shares: mean 1 − mean(q), spread from the discordance.

    With one run per arm the discordant share estimates 2·E[x(1 − x)]; what the mean's
    x̄(1 − x̄) holds beyond it is the spread of the rates across scenarios, τ² = x̄(1 − x̄) − h.
    Returns (mean, concentration); concentration inf when there is no spread. No law of the
    rates has E[x(1 − x)] above x̄(1 − x̄): a discordance above it is noise and is read at
    that bound (no spread).

    >>> mean, c = paired_law(np.full(40, 0.2), 0.16)
    >>> round(float(mean), 2), c
    (0.8, inf)
    >>> round(paired_law(np.full(40, 0.2), 0.12)[1], 2)
    3.0
    """
    q = np.asarray(q, dtype=float)
    mean = 1.0 - float(q.mean())
    tau2 = mean * (1 - mean) - float(discordance)
    if not tau2 > 1e-12 or not 0 < mean < 1:
        return mean, math.inf
    tau2 = min(tau2, mean * (1 - mean) * (1 - 1e-6))
    return mean, mean * (1 - mean) / tau2 - 1


def _mcnemar_power(delta, q, alpha, sign, discordance=None, law=None):
    if law is None and discordance is not None and np.ndim(discordance) > 0:
        # several discordances the runs allow: the power is the least of them
        return min(_mcnemar_power(delta, q, alpha, sign, float(h)) for h in discordance)
    g = q.size
    if law is None and discordance is not None:
        law = paired_law(q, discordance)
    # y is the share that falls (pass for a regression, failure for an improvement), y_B = max(y − δ, 0):
    # pairs with y in A only, and in B only, are McNemar's discordant pairs
    m = clipped_moments(*_falling(q, sign, law), delta)
    pb = float(np.mean(m.x - m.xxb))
    pf = float(np.mean(m.xb - m.xxb))
    pf, pb = max(pf, 0.0), max(pb, 0.0)
    total = min(pf + pb, 1.0)
    if not total > 0:
        return 0.0
    d, c = _mcnemar_table(g, float(alpha))
    share = pf / (pf + pb)
    ok = c >= 0
    cc = np.where(ok, c, 0)
    reject = np.where(ok, special.bdtr(cc, d, share) + special.bdtrc(d - cc - 1, d, share), 0.0)
    if total >= 1.0:
        law = (d == g).astype(float)
    else:
        law = np.exp(special.gammaln(g + 1) - special.gammaln(d + 1) - special.gammaln(g - d + 1)
                     + special.xlogy(d, total) + special.xlog1py(g - d, -total))
    return float(np.sum(law * reject))


def shift_power(delta: float, rates_a, trials_a, trials_b, *, alpha: float = 0.05,
                direction: str = "regression", discordance: float | None = None, law=None) -> float:
    """Power of the stratified test against a shift of ``delta`` (a share, 0–1) in every stratum.

    ``rates_a`` are the per-stratum pass rates the shift starts from; ``direction`` is
    ``"regression"`` (B lower) or ``"improvement"``. Designs with one run per arm in every
    stratum get the exact McNemar power; ``discordance`` then gives the mean q(1 − q) read
    off the runs (D/(2G)) instead of the one implied by ``rates_a``, and with it the spread of
    the rates (:func:`paired_law`); several discordances give the least power over them. ``law`` is each stratum's
    pass share as a Beta law, (mean, concentration) (:mod:`fluke.comparison._ratelaw`): the
    shift is then clipped at 0 and 1 scenario by scenario under it, not at the known rates.

    >>> round(shift_power(0.05, [0.98] * 30, [6] * 30, [6] * 30), 3)
    0.612
    """
    check_level(alpha, "alpha")
    if direction not in DIRECTIONS:
        raise UsageError(f"direction={direction!r} must be one of {DIRECTIONS}", argument="direction")
    q, na, nb = _arrays(rates_a, trials_a, trials_b)
    sign = 1.0 if direction == "regression" else -1.0
    if np.all(na == 1) and np.all(nb == 1):
        return _mcnemar_power(float(delta), q, alpha, sign, discordance, law)
    return _normal_power(float(delta), q, na, nb, alpha, sign, _falling_laws(q, sign, law))


def regression_limit(rates_a, trials_a, trials_b, *, alpha: float = 0.05, power: float = 0.8,
                     direction: str = "regression", discordance: float | None = None, law=None) -> float:
    """The smallest shift in points found with ``power`` at ``alpha`` (see the module docstring).

    inf when no shift up to 100 points reaches the power.

    >>> round(regression_limit([0.9] * 40, [1] * 40, [1] * 40), 1)
    28.5
    >>> round(regression_limit([0.9] * 40, [1] * 40, [1] * 40, direction="improvement"), 1)
    inf
    """
    check_level(power, "power")
    check_level(alpha, "alpha")
    if direction not in DIRECTIONS:
        raise UsageError(f"direction={direction!r} must be one of {DIRECTIONS}", argument="direction")
    q, na, nb = _arrays(rates_a, trials_a, trials_b)
    sign = 1.0 if direction == "regression" else -1.0
    paired = bool(np.all(na == 1) and np.all(nb == 1))
    laws = None if paired else _falling_laws(q, sign, law)
    seen: dict[float, float] = {}   # the root's search starts at the two ends, already evaluated

    def reach(delta):
        if delta not in seen:
            seen[delta] = (_mcnemar_power(delta, q, alpha, sign, discordance, law) if paired
                           else _normal_power(delta, q, na, nb, alpha, sign, laws))
        return seen[delta]

    if reach(1.0) < power:
        return math.inf
    if reach(0.0) >= power:
        return 0.0
    # the power rises with δ: Brent's root of power(δ) − power, to 1e-9 of a share (as 30 halvings)
    return 100 * brent_root(lambda d: reach(d) - power, 0.0, 1.0, xtol=2.0**-_BISECT)


def _shifted_variance(delta, k, na, nb):
    """V of the stratified numerator under "B − A = δ in every stratum", with the passes fixed.

    Each stratum keeps its pooled passes k: p_A = (k − n_B δ)/N, p_B = p_A + δ, both clipped to
    [0, 1]; the factor N/(N − 1) makes it the hypergeometric V exactly at δ = 0.
    """
    n = na + nb
    lo, hi = max(0.0, -delta), min(1.0, 1.0 - delta)
    pa = np.clip((k - nb * delta) / n, lo, hi)
    pb = pa + delta
    w = na * nb / n
    return float(np.sum(w * w * (pa * (1 - pa) / na + pb * (1 - pb) / nb) * n / np.maximum(n - 1, 1)))


def verdict_interval(passes_a, trials_a, passes_b, trials_b, *, pvalue: float, alpha: float = 0.05):
    """The B − A interval (points) that inverts the stratified test: it excludes 0 exactly when p < α.

    The estimate is the Mantel–Haenszel weighted difference D = Σ w (p̂_B − p̂_A) / Σ w,
    w = n_A n_B / N; the interval is every shift δ with W²(D − δ)² ≤ c²·V(δ), V(δ) the
    numerator's variance under that shift (:func:`_shifted_variance`, V of the CMH test at
    δ = 0). c = z₁₋α/₂, so 0 sits outside exactly when CMH's p is below α; when the verdict's
    test is exact and decides otherwise at 0, c moves just past the CMH statistic's root (the
    least change that makes the interval agree with the test). Returns ``(estimate, low, high)``.

    >>> d, lo, hi = verdict_interval([7, 6], [10, 10], [3, 2], [10, 10], pvalue=0.0211)
    >>> round(d, 1), round(lo, 1), round(hi, 1)
    (-40.0, -64.0, -8.6)
    """
    pa, na, pb, nb = (np.asarray(x, dtype=float).reshape(-1) for x in (passes_a, trials_a, passes_b, trials_b))
    w = na * nb / (na + nb)
    big_w = float(w.sum())
    k = pa + pb
    estimate = float(np.sum(w * (pb / nb - pa / na)) / big_w)
    c = float(special.ndtri(1 - alpha / 2))
    v0 = _shifted_variance(0.0, k, na, nb)
    chi = abs(estimate) * big_w / math.sqrt(v0) if v0 > 0 else 0.0
    if math.isfinite(pvalue) and (chi > c) != (pvalue < alpha):
        # an exact test disagrees with the normal one at 0: move c just past χ, the least change
        # that makes the interval say what the test said
        c = chi * (1 - 1e-9) if pvalue < alpha else chi * (1 + 1e-9)

    def outside(delta):
        return big_w * big_w * (estimate - delta) ** 2 > c * c * _shifted_variance(delta, k, na, nb)

    def bound(inner, outer):
        if not outside(outer):
            return outer
        for _ in range(60):
            mid = (inner + outer) / 2
            if outside(mid):
                outer = mid
            else:
                inner = mid
        return outer

    low, high = bound(estimate, -1.0), bound(estimate, 1.0)
    return 100 * estimate, 100 * low, 100 * high
