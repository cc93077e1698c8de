"""Independent computations the comparison tests check fluke against (loops, no fluke code)."""

from __future__ import annotations

import math

import numpy as np
from scipy import stats


def logrank_by_loop(time, died, group, strata):
    """(O − E, V) of arm B by a plain loop over strata and distinct death times."""
    time, died, group, strata = (np.asarray(x) for x in (time, died, group, strata))
    o_minus_e = var = 0.0
    for s in np.unique(strata):
        m = strata == s
        t, d, g = time[m], died[m].astype(bool), group[m].astype(bool)
        for tt in np.unique(t[d]):
            risk = t >= tt
            n, nb = risk.sum(), (risk & g).sum()
            dd, db = (d & (t == tt)).sum(), (d & (t == tt) & g).sum()
            o_minus_e += db - dd * nb / n
            if n > 1:
                var += dd * (nb / n) * (1 - nb / n) * (n - dd) / (n - 1)
    return o_minus_e, var


def z_sum(alpha=0.05, power=0.8):
    return stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power)


def hr_limit(variance, alpha=0.05, power=0.8):
    return math.exp(z_sum(alpha, power) / math.sqrt(variance)) if variance > 0 else math.inf


def mcnemar_power_by_loop(pairs, discordant, failures, delta, alpha=0.05):
    """Exact McNemar power against a regression of ``delta`` in every pair, by a loop over (fixed, broken).

    ``discordant`` (D) and ``failures`` (both arms) are read off ``pairs`` one-run-per-arm
    pairs: the mean q(1 − q) is D/(2G) and the mean failure share failures/(2G). Fixed and
    broken counts are then multinomial; every outcome is tested by scipy's binomtest.
    """
    g = pairs
    h, m = discordant / (2 * g), failures / (2 * g)
    pf, pb = max(h - delta * m, 0.0), h + delta * (1 - m)
    power = 0.0
    for f in range(g + 1):
        for b in range(g + 1 - f):
            if f + b == 0:
                continue
            prob = stats.multinomial.pmf([f, b, g - f - b], g, [pf, pb, 1 - pf - pb])
            if prob > 1e-14 and stats.binomtest(f, f + b, 0.5).pvalue < alpha:
                power += prob
    return power


def regression_limit_by_root(cells, alpha=0.05, power=0.8):
    """The regression limit in points by a root finder over the normal power, cell by cell.

    ``cells`` is ((failures_a, runs_a), (failures_b, runs_b)) per stratum. B fails δ more than
    the stratum's pooled failure share q; the numerator moves by Σ w δ (w = n_A n_B / N), its
    spread under the shift is V1 and under the null V0, q(1 − q) unbiased by N/(N − 1).
    """
    from scipy.optimize import brentq

    def reach(delta):
        shift = v0 = v1 = 0.0
        for (fa, na), (fb, nb) in cells:
            n, q = na + nb, (fa + fb) / (na + nb)
            s = min(q + delta, 1.0) - q
            w = na * nb / n
            var_q = q * (1 - q) * n / (n - 1)
            v1 += w * (nb * var_q + na * (var_q + s * (1 - 2 * q) - s * s)) / n
            v0 += w * (var_q + s * nb / n * (1 - 2 * q) - (s * nb / n) ** 2)
            shift += w * s
        return stats.norm.cdf((shift - stats.norm.ppf(1 - alpha / 2) * math.sqrt(v0)) / math.sqrt(v1)) - power

    return 100 * brentq(reach, 1e-9, 1.0)
