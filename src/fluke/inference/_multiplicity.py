"""Multiplicity: the Benjamini–Hochberg step-up procedure, one implementation for every family of tests.

>>> bh_qvalues([0.01, 0.04, 0.03]).tolist()
[0.03, 0.04, 0.04]
"""

from __future__ import annotations

import numpy as np

from ..errors import UsageError

__all__ = ["bh_qvalues", "bh_reject"]

def bh_qvalues(pvalues) -> np.ndarray:
    """Benjamini–Hochberg adjusted p-values (q-values) along the last axis; NaN stays NaN, uncounted.

    A 2-D array is many families at once, one per row (e.g. the steps of many simulated pairs).

    >>> bh_qvalues([0.5, float("nan"), 0.01]).tolist()
    [0.5, nan, 0.02]
    >>> bh_qvalues([[0.01, 0.04], [0.5, 0.2]]).tolist()
    [[0.02, 0.04], [0.5, 0.4]]
    """
    p = np.asarray(pvalues, dtype=float)
    shape = p.shape
    p = np.atleast_2d(p.reshape(-1) if p.ndim <= 1 else p.reshape(-1, shape[-1]))
    ok = ~np.isnan(p)
    if np.any((p[ok] < 0) | (p[ok] > 1)):
        raise UsageError("pvalues must lie in [0, 1]", argument="pvalues")
    m = ok.sum(axis=1, keepdims=True)
    filled = np.where(ok, p, np.inf)
    order = np.argsort(filled, axis=1, kind="stable")
    with np.errstate(invalid="ignore"):
        ranked = np.take_along_axis(filled, order, axis=1) * m / np.arange(1, p.shape[1] + 1)
    monotone = np.minimum.accumulate(ranked[:, ::-1], axis=1)[:, ::-1]
    q = np.empty_like(p)
    np.put_along_axis(q, order, np.minimum(monotone, 1.0), axis=1)
    q[~ok] = np.nan
    return q.reshape(shape)


def bh_reject(pvalues, q: float) -> np.ndarray:
    """Which hypotheses Benjamini–Hochberg rejects at false-discovery rate ``q`` (NaN: not tested).

    >>> bh_reject([0.001, 0.02, 0.04, 0.5, float("nan")], 0.05).tolist()
    [True, True, False, False, False]
    """
    qv = bh_qvalues(np.asarray(pvalues, dtype=float).ravel())
    with np.errstate(invalid="ignore"):
        return np.nan_to_num(qv, nan=np.inf) <= q
