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

    Where the shift runs into 0 (a pass share below δ), the stratum's pass share x is its
    posterior under the Beta law fitted across the strata by moments: the fall is E[min(x, δ)]
    and the variances gain what clipping at 0 changes, each expectation integrated numerically
    (scipy's quad over the Beta density), not by the incomplete-beta forms fluke uses.
    """
    from scipy.integrate import quad
    from scipy.optimize import brentq

    k = np.array([na + nb - fa - fb for (fa, na), (fb, nb) in cells], dtype=float)
    big_n = np.array([na + nb for (_, na), (_, nb) in cells], dtype=float)
    mu = k.sum() / big_n.sum()
    inv = float(np.mean(1 / big_n))
    tau2 = (float(np.var(k / big_n, ddof=1)) - mu * (1 - mu) * inv) / (1 - inv) if len(cells) > 1 else 0.0
    conc = mu * (1 - mu) / tau2 - 1 if tau2 > 0 and 0 < mu < 1 else math.inf

    def expect(f, a, b, delta):
        if not math.isfinite(conc):
            return f(mu, max(mu - delta, 0.0))
        dens = stats.beta(a, b).pdf
        lo = quad(lambda x: f(x, 0.0) * dens(x), 0, delta, limit=200)[0] if delta > 0 else 0.0
        return lo + quad(lambda x: f(x, x - delta) * dens(x), delta, 1, limit=200)[0]

    def reach(delta):
        shift = v0 = v1 = 0.0
        for ((fa, na), (fb, nb)), ks, ns in zip(cells, k, big_n, strict=True):
            n, q = na + nb, (fa + fb) / (na + nb)
            w = na * nb / n
            var_q = q * (1 - q) * n / (n - 1)
            a, b = mu * conc + ks, (1 - mu) * conc + ns - ks
            share = nb / n
            # clipped minus unclipped, under the stratum's law: B's variance, and the pooled share's
            c_b = expect(lambda x, xb: xb * (1 - xb) - (x - delta) * (1 - x + delta), a, b, delta)
            c_0 = expect(lambda x, xb: ((1 - share) * x + share * xb) * (1 - (1 - share) * x - share * xb)
                         - (x - delta * share) * (1 - x + delta * share), a, b, delta)
            s = delta
            v1 += w * (nb * var_q + na * max(var_q + s * (1 - 2 * q) - s * s + c_b, 0.0)) / n
            sp = s * share
            v0 += w * max(var_q + sp * (1 - 2 * q) - sp * sp + c_0, 0.0)
            shift += w * expect(lambda x, xb: x - xb, a, b, delta)
        return stats.norm.cdf((shift - stats.norm.ppf(1 - alpha / 2) * math.sqrt(v0)) / math.sqrt(v1)) - power

    return 100 * brentq(reach, 1e-9, 1.0)
