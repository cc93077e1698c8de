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


def _normal_power(delta, q, na, nb, alpha, sign):
    n = na + nb
    w = na * nb / n
    qb = np.clip(q + sign * delta, 0.0, 1.0)
    shift = np.abs(qb - q)
    unbiased = np.where(n > 1, n / np.maximum(n - 1, 1), 1.0)
    var_q = q * (1 - q) * unbiased
    # q_B(1 − q_B) = q(1 − q) + s(1 − 2q) − s² for q_B = q + s; the pooled share moves by s·n_B/N
    s = qb - q
    var_b = np.maximum(var_q + s * (1 - 2 * q) - s * s, 0.0)
    v1 = float(np.sum(w * (nb * var_q + na * var_b) / n))
    sp = s * nb / n
    v0 = float(np.sum(w * np.maximum(var_q + sp * (1 - 2 * q) - sp * sp, 0.0)))
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


def _mcnemar_power(delta, q, alpha, sign, discordance=None):
    g = q.size
    m = float(q.mean())
    h = float(np.mean(q * (1 - q))) if discordance is None else discordance
    # B cannot fall below 0 nor rise above 1: a shift beyond the mean room there is not a shift
    delta = min(delta, 1 - m) if sign > 0 else min(delta, m)
    pf = max(h - sign * delta * m, 0.0) if sign > 0 else h + delta * m
    pb = h + delta * (1 - m) if sign > 0 else max(h - delta * (1 - m), 0.0)
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
                direction: str = "regression", discordance: float | None = None) -> float:
    """Power of the stratified test against a shift of ``delta`` (a share, 0–1) in every stratum.

    ``rates_a`` are the per-stratum pass rates the shift starts from; ``direction`` is
    ``"regression"`` (B lower) or ``"improvement"``. Designs with one run per arm in every
    stratum get the exact McNemar power; ``discordance`` then gives the mean q(1 − q) read
    off the runs (D/(2G)) instead of the one implied by ``rates_a``.

    >>> round(shift_power(0.05, [0.98] * 30, [6] * 30, [6] * 30), 3)
    0.612
    """
    check_level(alpha, "alpha")
    if direction not in DIRECTIONS:
        raise UsageError(f"direction={direction!r} must be one of {DIRECTIONS}", argument="direction")
    q, na, nb = _arrays(rates_a, trials_a, trials_b)
    sign = 1.0 if direction == "regression" else -1.0
    if np.all(na == 1) and np.all(nb == 1):
        return _mcnemar_power(float(delta), q, alpha, sign, discordance)
    return _normal_power(float(delta), q, na, nb, alpha, sign)


def regression_limit(rates_a, trials_a, trials_b, *, alpha: float = 0.05, power: float = 0.8,
                     direction: str = "regression", discordance: float | None = None) -> float:
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

    def reach(delta):
        if paired:
            return _mcnemar_power(delta, q, alpha, sign, discordance)
        return _normal_power(delta, q, na, nb, alpha, sign)

    if reach(1.0) < power:
        return math.inf
    low, high = 0.0, 1.0
    for _ in range(_BISECT):
        mid = (low + high) / 2
        if reach(mid) >= power:
            high = mid
        else:
            low = mid
    return 100 * high


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
