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
