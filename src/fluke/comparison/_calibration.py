"""Null calibration: how often does a comparison call unchanged pairs different?

Given the p-values of N comparisons where nothing changed, the false-alarm share (p < alpha)
with its Wilson interval, the p-value histogram in equal bins, and two tests that the p-values
are uniform: Kolmogorov–Smirnov and chi-square over the bins.

>>> import numpy as np
>>> cal = null_calibration(np.random.default_rng(0).random(200))
>>> cal.pairs, len(cal.histogram), cal.false_alarms == int((cal.histogram[0]))
(200, 20, True)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from ..inference import lazy_stats as stats

from ..errors import UsageError
from ._intervals import wilson_interval

__all__ = ["NullCalibration", "null_calibration"]


@dataclass(frozen=True)
class NullCalibration:
    """False alarms among unchanged pairs, and whether their p-values look uniform."""

    pairs: int
    false_alarms: int
    alpha: float
    interval: tuple[float, float]
    histogram: tuple[int, ...]
    ks_statistic: float
    ks_pvalue: float
    chi2_statistic: float
    chi2_pvalue: float
    confidence_level: float

    @property
    def share(self) -> float:
        return self.false_alarms / self.pairs if self.pairs else float("nan")

    @property
    def contains_nominal(self) -> bool:
        """Whether the Wilson interval of the false-alarm share contains alpha."""
        return bool(self.interval[0] <= self.alpha <= self.interval[1])


def null_calibration(pvalues, *, alpha: float = 0.05, bins: int = 20,
                     confidence_level: float = 0.95) -> NullCalibration:
    """Calibration of p-values from unchanged pairs (NaN p-values are refused).

    >>> null_calibration([0.5, 0.01], bins=2).histogram
    (1, 1)
    """
    p = np.asarray(pvalues, dtype=float).reshape(-1)
    if p.size == 0:
        raise UsageError("pvalues is empty: calibration needs at least one pair", argument="pvalues")
    if np.any(~np.isfinite(p)) or np.any((p < 0) | (p > 1)):
        raise UsageError("pvalues must be finite and lie in [0, 1]; a comparison with no deaths has no p-value",
                         argument="pvalues")
    if bins < 2:
        raise UsageError(f"bins={bins} must be at least 2", argument="bins")
    if not 0 < alpha < 1:
        raise UsageError(f"alpha={alpha!r} must lie strictly between 0 and 1", argument="alpha")
    hist = np.histogram(p, bins=bins, range=(0.0, 1.0))[0]
    ks = stats.kstest(p, "uniform")
    chi = stats.chisquare(hist)
    alarms = int((p < alpha).sum())
    return NullCalibration(int(p.size), alarms, alpha,
                           wilson_interval(alarms, int(p.size), confidence_level=confidence_level),
                           tuple(int(h) for h in hist), float(ks.statistic), float(ks.pvalue),
                           float(chi.statistic), float(chi.pvalue), confidence_level)
