"""Fisher's exact test on many 2×2 tables at once, and Benjamini–Hochberg q-values.

A table is ``[[a, b], [c, d]]``: arm A's failures and passes in the first row, arm B's in the
second. The two-sided p-value sums the probabilities of every table with the same margins that
is no more likely than the one observed (the same convention as ``scipy.stats.fisher_exact``).

>>> fisher_exact_many([3], [7], [9], [1]).round(4).tolist()
[0.0198]
>>> bh_qvalues([0.01, 0.04, 0.03, 0.20]).round(3).tolist()
[0.04, 0.053, 0.053, 0.2]
"""

from __future__ import annotations

import numpy as np

from ..inference import bh_qvalues  # noqa: F401  (one Benjamini–Hochberg, in inference)
from scipy.special import gammaln

from ..errors import InputError

__all__ = ["bh_qvalues", "fisher_exact_many"]

#: scipy's relative tolerance for "no more likely than the observed table".
_REL_TOL = 1e-7


def fisher_exact_many(a, b, c, d) -> np.ndarray:
    """Two-sided Fisher exact p-values for tables ``[[a, b], [c, d]]`` (arrays of counts).

    >>> fisher_exact_many([0, 5], [10, 5], [0, 5], [10, 5]).tolist()
    [1.0, 1.0]
    """
    a, b, c, d = (np.asarray(x, dtype=np.int64).reshape(-1) for x in (a, b, c, d))
    if not (a.shape == b.shape == c.shape == d.shape):
        raise InputError(None, None, "a", "a, b, c and d must have one entry per table")
    if a.size and min(a.min(), b.min(), c.min(), d.min()) < 0:
        raise InputError(None, None, "a", "table counts must be at least 0")
    if a.size == 0:
        return np.empty(0)
    tables, which = np.unique(np.stack([a, b, c, d], axis=1), axis=0, return_inverse=True)
    return _pvalues(*tables.T)[which.reshape(-1)]      # equal tables (common at large counts) once


#: A support point whose probability is below the observed table's by this factor (in logs) is
#: left out of the two-sided sum: at most e^-50 of it for each point, so under 1e-15 of the
#: p-value even for a million points (the probability is log-concave in the support point, so
#: the points left out are exactly those beyond a window around the mode).
_TAIL_LOG = 50.0
#: Support points evaluated at a time (tables × window width): the memory of one block.
_BLOCK_POINTS = 1 << 21


def _pvalues(a, b, c, d) -> np.ndarray:
    """The p-values of distinct tables; log C(n, k) read from one table of log k! (the same
    numbers as evaluating log-gamma at every support point, at the cost of an index).

    Each table's sum runs over the window around its mode outside which every table is
    :data:`_TAIL_LOG` below the observed one in log probability (so negligible), found from the
    normal approximation's width and checked at both ends (the whole support where the check
    fails), and the windows are summed a block of tables at a time: a table of 25,000 trials an
    arm costs a few hundred points, not 25,000, and the memory stays bounded.
    """
    row1, col1 = a + b, a + c
    total = a + b + c + d
    lo = np.maximum(0, row1 + col1 - total)
    hi = np.minimum(row1, col1)
    log_fact = gammaln(np.arange(int(total.max()) + 2) + 1.0)

    def log_choose(n, k):
        return log_fact[n] - log_fact[k] - log_fact[n - k]

    base = log_choose(total, row1)

    def logpmf(x):
        return log_choose(col1, x) + log_choose(total - col1, row1 - x) - base

    observed = logpmf(a)
    mode = np.clip((row1 + 1) * (col1 + 1) // (total + 2), lo, hi)
    with np.errstate(invalid="ignore", divide="ignore"):
        var = row1 * col1 * (total - row1) * (total - col1) / (total.astype(float) ** 2 * (total - 1))
    sd = np.sqrt(np.nan_to_num(var, nan=0.0, posinf=0.0))
    drop = np.maximum(logpmf(mode) - observed, 0.0) + _TAIL_LOG
    half = np.ceil(1.5 * sd * np.sqrt(2 * drop)).astype(np.int64) + 2
    left, right = np.maximum(lo, mode - half), np.minimum(hi, mode + half)
    cut = observed - _TAIL_LOG
    whole = ((left > lo) & (logpmf(left) >= cut)) | ((right < hi) & (logpmf(right) >= cut))
    left, right = np.where(whole, lo, left), np.where(whole, hi, right)
    width = right - left + 1
    p = np.empty(a.size)
    order = np.argsort(width, kind="stable")
    start = 0
    while start < order.size:
        rows = max(1, _BLOCK_POINTS // int(width[order[start]]))
        i = order[start:start + rows]
        # widths ascend, so the block's widest table is its last
        while i.size > 1 and i.size * int(width[i[-1]]) > _BLOCK_POINTS:
            i = i[: max(1, i.size // 2)]
        span = int(width[i[-1]])
        x = left[i][:, None] + np.arange(span)[None, :]
        valid = x <= right[i][:, None]
        xs = np.where(valid, x, left[i][:, None])
        point = log_choose(col1[i][:, None], xs) + log_choose((total - col1)[i][:, None],
                                                              row1[i][:, None] - xs) - base[i][:, None]
        keep = valid & (point <= observed[i][:, None] + np.log1p(_REL_TOL))
        p[i] = np.where(keep, np.exp(point), 0.0).sum(axis=1)
        start += i.size
    return np.minimum(p, 1.0)
