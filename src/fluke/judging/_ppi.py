"""A judge's pass rate corrected by a few human labels: prediction-powered inference (PPI++).

The judge labels every run; people label a random subset. The corrected rate is the judge's
rate on the unlabelled runs, times λ, plus the people's rate minus λ times the judge's rate on
the labelled ones. λ is tuned to make the interval as narrow as the data allow (λ = 0 is the
people alone, λ = 1 plain PPI; Angelopoulos, Duchi & Zrnic 2023), so the corrected interval is
never much wider than the human-only one and is narrower when the judge is informative, while
the judge's bias is removed rather than inherited. With strata, each stratum is corrected on
its own and the results are weighted by the stratum's share of the runs.

>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> truth = rng.random(2000) < 0.6
>>> judge = np.where(truth, rng.random(2000) < 0.95, rng.random(2000) < 0.3)   # biased upwards
>>> est = ppi_mean(truth[:100], judge[:100], judge[100:])
>>> covered = bool(est.low < truth.mean() < est.high)
>>> round(float(truth.mean()), 3), round(float(judge.mean()), 3), round(est.value, 3), covered
(0.605, 0.693, 0.546, True)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ._agreement import LEVEL, wilson


@dataclass(frozen=True)
class RateEstimate:
    """A pass rate with its 95% interval, saying how it was made (and from how many labels)."""

    value: float
    low: float
    high: float
    method: str
    labelled: int
    unlabelled: int
    lam: float | None = None
    se: float | None = None     # the standard error behind the interval (None where it is not a normal one)

    @property
    def width(self) -> float:
        return self.high - self.low

    def to_dict(self) -> dict[str, Any]:
        def clean(x: float | None) -> float | None:
            return None if x is None or math.isnan(x) else float(x)

        return {"value": clean(self.value), "low": clean(self.low), "high": clean(self.high),
                "method": self.method, "labelled": self.labelled, "unlabelled": self.unlabelled,
                "lambda": clean(self.lam), "se": clean(self.se)}


def _z(level: float) -> float:
    from scipy.stats import norm

    return float(norm.ppf(0.5 + level / 2))


def _lambda(y: np.ndarray, f: np.ndarray, f_unlabelled: np.ndarray) -> float:
    """The power-tuning parameter that minimises the estimate's variance, clipped to [0, 1]
    (the same choice as ppi-python's ``ppi_mean_ci``)."""
    n, big_n = len(y), len(f_unlabelled)
    cov = float(np.mean((y - y.mean()) * (f - f.mean())))
    var = float(np.var(np.concatenate([f, f_unlabelled]), ddof=1))
    if var == 0:
        return 0.0
    return float(np.clip(cov / ((1 + n / big_n) * var), 0.0, 1.0))


def _ppi_parts(y: np.ndarray, f: np.ndarray, f_unlabelled: np.ndarray,
               lam: float | None, guard: bool = True) -> tuple[float, float, float]:
    """(estimate, variance, λ) of one stratum.

    With ``guard``, the rectifier's variance is taken with one pseudo-observation at each end of
    its range (-λ and 1) and n - 1 in the denominator: at 30 labels the plain estimate, from
    the same few labels that tuned λ, is too small and the interval covers about 90%; the guard
    brings it back to 95% and fades as the labels grow. Without it the interval is ppi-python's.
    """
    lam = _lambda(y, f, f_unlabelled) if lam is None else lam
    rectifier = y - lam * f
    value = float(lam * f_unlabelled.mean() + rectifier.mean())
    if guard:
        padded = np.concatenate([rectifier, [-lam, 1.0]])
        var = float(np.var(lam * f_unlabelled, ddof=1) / len(f_unlabelled) + np.var(padded, ddof=1) / len(y))
    else:
        var = float(np.var(lam * f_unlabelled) / len(f_unlabelled) + np.var(rectifier) / len(y))
    return value, var, lam


def _quantile(level: float, df: int | None) -> float:
    if df is None:
        return _z(level)
    from scipy.stats import t

    return float(t.ppf(0.5 + level / 2, df))


def ppi_mean(human: Sequence[bool], judge_labelled: Sequence[float], judge_unlabelled: Sequence[float], *,
             lam: float | None = None, level: float = LEVEL, guard: bool = True) -> RateEstimate:
    """The PPI++ pass rate and its normal interval from the people's labels ``human``, the judge's
    labels of the same runs ``judge_labelled`` and of the other runs ``judge_unlabelled``.

    A judge label may be a share (the mean of K replicates) rather than 0/1. ``lam`` fixes λ
    (0: people only, 1: plain PPI); None tunes it. ``guard`` (the default) is the small-sample
    guard of the variance with a t quantile; ``guard=False`` gives ppi-python's normal interval.
    """
    y, f = np.asarray(human, dtype=float), np.asarray(judge_labelled, dtype=float)
    fu = np.asarray(judge_unlabelled, dtype=float)
    if len(y) != len(f):
        raise ValueError("the people's and the judge's labels must cover the same runs")
    if len(y) < 2 or len(fu) < 1:
        return RateEstimate(math.nan, math.nan, math.nan, "PPI++ (too few labels)", len(y), len(fu), None)
    value, var, lam = _ppi_parts(y, f, fu, lam, guard)
    half = _quantile(level, len(y) - 1 if guard else None) * math.sqrt(var)
    method = "PPI++ corrected, t interval with small-sample guard" if guard else "PPI++ corrected, normal interval"
    return RateEstimate(value, value - half, value + half, method, len(y), len(fu), lam, math.sqrt(var))


def ppi_stratified(strata: dict[str, tuple[Sequence[bool], Sequence[float], Sequence[float]]], *,
                   level: float = LEVEL, guard: bool = True) -> RateEstimate:
    """PPI++ within each stratum (``name -> (human, judge_labelled, judge_unlabelled)``), weighted by
    the stratum's share of all runs; λ tuned per stratum.

    >>> est = ppi_stratified({"easy": ([1, 1, 0, 1], [1, 1, 0, 1], [1] * 16),
    ...                       "hard": ([0, 0, 1, 0], [0, 1, 1, 0], [0] * 16)})
    >>> round(est.value, 3), est.labelled, est.unlabelled
    (0.375, 8, 32)
    """
    total = sum(len(h) + len(u) for h, _, u in strata.values())
    value = var = 0.0
    labelled = unlabelled = 0
    for name, (h, f, u) in sorted(strata.items()):
        y, fl, fu = (np.asarray(x, dtype=float) for x in (h, f, u))
        if len(y) < 2 or len(fu) < 1:
            return RateEstimate(math.nan, math.nan, math.nan, f"PPI++ stratified (stratum {name} has too few "
                                "labels)", labelled + len(y), unlabelled + len(fu), None)
        weight = (len(y) + len(fu)) / total
        v, s2, _ = _ppi_parts(y, fl, fu, None, guard)
        value += weight * v
        var += weight ** 2 * s2
        labelled, unlabelled = labelled + len(y), unlabelled + len(fu)
    half = _quantile(level, labelled - len(strata) if guard else None) * math.sqrt(var)
    method = "PPI++ stratified, t interval with small-sample guard" if guard else "PPI++ stratified, normal interval"
    return RateEstimate(value, value - half, value + half, method, labelled, unlabelled, None, math.sqrt(var))


def human_only(human: Sequence[bool], *, unlabelled: int = 0) -> RateEstimate:
    """The people's pass rate alone, with its Wilson interval."""
    y = [bool(x) for x in human]
    low, high = wilson(sum(y), len(y))
    return RateEstimate(sum(y) / len(y) if y else math.nan, low, high, "human labels only, Wilson interval",
                        len(y), unlabelled)


def judge_only(judge: Sequence[float]) -> RateEstimate:
    """The judge's pass rate over every run, with the interval that assumes the judge is right
    (it inherits the judge's bias: shown to be compared, not trusted)."""
    f = [float(x) for x in judge]
    low, high = wilson(round(sum(f)), len(f))
    return RateEstimate(sum(f) / len(f) if f else math.nan, low, high,
                        "judge labels only, Wilson interval (assumes the judge is right)", 0, len(f))


def labels_for_width(width: float, *, rate: float = 0.5, level: float = LEVEL, minimum: int = 30) -> int:
    """How many human labels give a human-only interval of full ``width`` at pass rate ``rate``
    (0.5 is the worst case); PPI++ with an informative judge needs fewer. Never below ``minimum``.

    >>> labels_for_width(0.2), labels_for_width(0.1), labels_for_width(0.5)
    (97, 385, 30)
    """
    if not 0 < width < 1:
        raise ValueError("the target width is a share between 0 and 1, e.g. 0.1 for ±5 points")
    half = width / 2
    return max(minimum, math.ceil(_z(level) ** 2 * rate * (1 - rate) / half ** 2))


def ppi_difference(a: RateEstimate, b: RateEstimate, *, level: float = LEVEL) -> RateEstimate:
    """The difference of two corrected rates from separate runs and separate labels (a − b), with
    the interval from their variances added; NaN (too small to tell) when either is.

    >>> a = RateEstimate(0.70, 0.60, 0.80, "PPI++", 40, 400)
    >>> b = RateEstimate(0.50, 0.40, 0.60, "PPI++", 40, 400)
    >>> d = ppi_difference(a, b)
    >>> round(d.value, 3), round(d.low, 3), round(d.high, 3)
    (0.2, 0.059, 0.341)
    """
    if any(math.isnan(x) for x in (a.value, b.value, a.low, b.low)):
        return RateEstimate(math.nan, math.nan, math.nan, "difference of corrected rates (too few labels)",
                            a.labelled + b.labelled, a.unlabelled + b.unlabelled)
    z = _z(level)
    half = z * math.sqrt(((a.high - a.low) / (2 * z)) ** 2 + ((b.high - b.low) / (2 * z)) ** 2)
    value = a.value - b.value
    return RateEstimate(value, value - half, value + half, "difference of corrected rates, intervals' variances "
                        "added", a.labelled + b.labelled, a.unlabelled + b.unlabelled)
