"""Intervals: Wilson's for a share, and a mean clustered by sampling unit (CR2, Bell–McCaffrey df).

The clustered mean is :func:`fluke.inference.clustered_interval` (one mechanism); this module
only keeps the shape the comparisons report, with undefined cases as NaN and a reason.

>>> [round(x, 4) for x in wilson_interval(11, 200)]
[0.031, 0.0958]
>>> m = clustered_mean([1, 0, 1, 1, 0, 0], ["a", "a", "b", "b", "c", "c"])
>>> round(m.estimate, 3), m.clusters
(0.5, 3)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special

from ..inference import check_level
from ..errors import UsageError
from ..inference import clustered_interval

__all__ = ["ClusteredMean", "clustered_mean", "clustered_mean_sums", "wilson_interval"]


def _check_level(confidence_level: float) -> float:
    return check_level(confidence_level, "confidence_level")  # the one level check, in inference


def wilson_interval(successes: int, trials: int, *, confidence_level: float = 0.95) -> tuple[float, float]:
    """Wilson score confidence interval for ``successes`` out of ``trials``.

    >>> wilson_interval(0, 0)
    (nan, nan)
    """
    _check_level(confidence_level)
    if trials < 0:
        raise UsageError(f"trials={trials} must be at least 0", argument="trials")
    if not 0 <= successes <= max(trials, 0):
        raise UsageError(f"successes={successes} must lie between 0 and trials={trials}", argument="successes")
    if trials == 0:
        return (float("nan"), float("nan"))
    z = special.ndtri(0.5 + confidence_level / 2)
    share = successes / trials
    denom = 1 + z * z / trials
    centre = (share + z * z / (2 * trials)) / denom
    half = z / denom * math.sqrt(share * (1 - share) / trials + z * z / (4 * trials * trials))
    return (float(max(0.0, centre - half)), float(min(1.0, centre + half)))


@dataclass(frozen=True)
class ClusteredMean:
    """A mean over rows with a confidence interval clustered by sampling unit.

    The interval is :func:`fluke.inference.clustered_interval`'s, the one ``fluke interval``
    prints: cluster means with t on G − 1 df when clusters are equal, else the CR2 sandwich
    with Bell–McCaffrey degrees of freedom ``df``, through the Wilson score on the effective
    sample size for pass/fail rows (``method`` says which). Its coverage holds with few,
    unequal clusters, where CR1 with t on G − 1 covered 84–89% (issue 35). Undefined (NaN)
    with fewer than two clusters, and ``reason`` says so.
    """

    estimate: float
    se: float
    low: float
    high: float
    rows: int
    clusters: int
    confidence_level: float
    reason: str | None = None
    df: float = float("nan")
    method: str = ""

    @property
    def pvalue(self) -> float:
        """Two-sided p-value of "the mean is 0", t on the interval's degrees of freedom."""
        if not (self.se > 0) or self.clusters < 2:
            return float("nan")
        t = self.estimate / self.se
        df = self.df if self.df > 0 else self.clusters - 1
        return float(2 * special.stdtr(df, -abs(t)))


def clustered_mean(values, clusters, *, confidence_level: float = 0.95) -> ClusteredMean:
    """Mean of ``values`` with an interval clustered by ``clusters`` (labels, one per row): CR2, Bell–McCaffrey df.

    >>> m = clustered_mean([1.0], ["only"])
    >>> m.reason
    'one cluster: no interval'
    """
    _check_level(confidence_level)
    y = np.asarray(values, dtype=float).reshape(-1)
    labels = np.asarray(clusters).reshape(-1)
    if labels.shape != y.shape:
        raise UsageError(f"clusters has {labels.size} entries but values has {y.size}; "
                         "give one per row", argument="clusters")
    nan = float("nan")
    if y.size == 0:
        return ClusteredMean(nan, nan, nan, nan, 0, 0, confidence_level, "no rows")
    return _mean_of(clustered_interval(y, labels, confidence_level=confidence_level), confidence_level)


def clustered_mean_sums(rows, sums, squares, *, confidence_level: float = 0.95) -> ClusteredMean:
    """:func:`clustered_mean` from per-cluster rows, Σy and Σy² (one entry per cluster, in the
    order :func:`clustered_mean` would code their labels; clusters of 0 rows are left out).

    With whole-number values (shares of 0/1 rows, differences of them) the sums are exact, so the
    answer is :func:`clustered_mean`'s on the rows themselves: the fix check sums its rows per
    input as it reads them, and never holds them all.

    >>> m = clustered_mean_sums([2, 2, 2], [1, 2, 0], [1, 2, 0])
    >>> m == clustered_mean([1, 0, 1, 1, 0, 0], ["a", "a", "b", "b", "c", "c"])
    True
    """
    from ..inference import Cells, clustered_interval_cells

    _check_level(confidence_level)
    n = np.asarray(rows, dtype=np.int64).reshape(-1)
    total = np.asarray(sums, dtype=float).reshape(-1)
    square = np.asarray(squares, dtype=float).reshape(-1)
    if not (n.shape == total.shape == square.shape):
        raise UsageError("rows, sums and squares need one entry per cluster", argument="sums")
    keep = n > 0
    n, total, square = n[keep], total[keep], square[keep]
    nan = float("nan")
    rows_all = int(n.sum())
    if rows_all == 0:
        return ClusteredMean(nan, nan, nan, nan, 0, 0, confidence_level, "no rows")
    # the centre Cells.from_rows takes: the mean, where the spread is under 1/1000 of the mean square
    mean = float(total.sum()) / rows_all
    spread = max(float(square.sum()) / rows_all - mean * mean, 0.0)
    shift = 0.0 if spread >= 1e-3 * (spread + mean * mean) else mean
    codes = np.arange(n.size)
    cells = Cells(codes, codes, n, total - n * shift, square - 2 * shift * total + n * shift * shift, codes, codes,
                  shift=shift, binary=bool(np.all(square == total) and np.all(total >= 0)))
    return _mean_of(clustered_interval_cells(cells, confidence_level=confidence_level), confidence_level)


def _mean_of(fit, confidence_level: float) -> ClusteredMean:
    nan = float("nan")
    if fit.clusters < 2:
        return ClusteredMean(fit.statistic, nan, nan, nan, fit.rows, fit.clusters, confidence_level,
                             "one cluster: no interval")
    return ClusteredMean(fit.statistic, fit.standard_error, fit.low, fit.high, fit.rows, fit.clusters,
                         confidence_level, df=float(fit.df), method=fit.method)
