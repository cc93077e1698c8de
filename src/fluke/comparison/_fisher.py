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

from ..errors import UsageError

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
        raise UsageError("a, b, c and d must have one entry per table", argument="a")
    if a.size and min(a.min(), b.min(), c.min(), d.min()) < 0:
        raise UsageError("a, b, c and d (the table counts) must be at least 0", argument="a")
    if a.size == 0:
        return np.empty(0)
    tables, which = np.unique(np.stack([a, b, c, d], axis=1), axis=0, return_inverse=True)
    return _pvalues(*tables.T)[which.reshape(-1)]      # equal tables (common at large counts) once


def _pvalues(a, b, c, d) -> np.ndarray:
    """The p-values of distinct tables; log C(n, k) read from one table of log k! (the same
    numbers as evaluating log-gamma at every support point, at the cost of an index)."""
    row1, col1 = a + b, a + c
    total = a + b + c + d
    lo = np.maximum(0, row1 + col1 - total)
    hi = np.minimum(row1, col1)
    width = int((hi - lo).max()) + 1
    x = lo[:, None] + np.arange(width)[None, :]
    valid = x <= hi[:, None]
    xs = np.where(valid, x, lo[:, None])
    log_fact = gammaln(np.arange(int(total.max()) + 2) + 1.0)

    def log_choose(n, k):
        return log_fact[n] - log_fact[k] - log_fact[n - k]

    base = log_choose(total, row1)[:, None]
    logpmf = log_choose(col1[:, None], xs) + log_choose((total - col1)[:, None], row1[:, None] - xs) - base
    observed = log_choose(col1, a) + log_choose(total - col1, row1 - a) - base[:, 0]
    keep = valid & (logpmf <= observed[:, None] + np.log1p(_REL_TOL))
    p = np.where(keep, np.exp(logpmf), 0.0).sum(axis=1)
    return np.minimum(p, 1.0)
