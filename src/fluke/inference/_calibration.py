"""Do the posteriors deserve belief? Score predictions recorded before a batch against it.

The Brier score, its Murphy decomposition (reliability − resolution + uncertainty), a
reliability table, the always-predict-the-average baseline, and Spiegelhalter's z-test of
calibration, which also says in which direction a predictor errs.

>>> report = score_predictions([0.9, 0.9, 0.2, 0.2], [1, 1, 0, 1])
>>> round(report.overall.brier, 4), round(report.overall.baseline_brier, 4)
(0.175, 0.1875)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
from ._lazy import lazy_stats as stats
from ..errors import UsageError
from ._check import check_level

__all__ = ["brier_score", "BrierDecomposition", "brier_decomposition", "ReliabilityTable",
           "reliability_table", "CalibrationTest", "calibration_test", "CalibrationScore",
           "CalibrationReport", "score_predictions"]


def _check(probability, outcome) -> tuple[np.ndarray, np.ndarray]:
    p = np.atleast_1d(np.asarray(probability, dtype=float)).ravel()
    y = np.atleast_1d(np.asarray(outcome, dtype=float)).ravel()
    if p.size != y.size:
        raise UsageError(f"probability has {p.size} entries and outcome {y.size}; give one outcome per prediction")
    if p.size == 0:
        raise UsageError("there are no predictions to score")
    bad = ~np.isfinite(p) | (p < 0) | (p > 1)
    if bad.any():
        raise UsageError(f"probability={p[bad][0]} must lie in [0, 1]")
    if np.any((y != 0) & (y != 1)):
        raise UsageError(f"outcome={y[(y != 0) & (y != 1)][0]} must be 0 (failed) or 1 (passed)")
    return p, y


def brier_score(probability, outcome) -> float:
    """Mean squared difference between predicted pass probabilities and what happened.

    >>> brier_score([1.0, 0.5], [1, 0])
    0.125
    """
    p, y = _check(probability, outcome)
    return float(np.mean((p - y) ** 2))


def _edges(bins) -> np.ndarray:
    if np.ndim(bins) == 0:
        if int(bins) < 1:
            raise UsageError(f"bins={bins} must be at least 1")
        # Rounded so that the edge printed 0.3 is 0.3, not 0.30000000000000004.
        return np.round(np.linspace(0.0, 1.0, int(bins) + 1), 12)
    edges = np.asarray(bins, dtype=float)
    if edges.ndim != 1 or edges.size < 2 or np.any(np.diff(edges) <= 0) or edges[0] > 0 or edges[-1] < 1:
        raise UsageError("bins must be a count or increasing edges covering [0, 1]")
    return edges


#: A forecast within this of an edge belongs to the bin the edge opens: 0.1 * 3 is
#: 0.30000000000000004 and 0.7 may be stored as 0.69999999999999996.
EDGE_TOLERANCE = 1e-9


def _assign(p: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Right-open bins [lower, upper), the last one closed at 1.0; edges compared with a tolerance.

    >>> _assign(np.array([0.3, 0.1 * 3, 0.7, 0.6, 0.29999, 1.0]), _edges(10)).tolist()
    [3, 3, 7, 6, 2, 9]
    """
    return np.clip(np.searchsorted(edges - EDGE_TOLERANCE, p, side="right") - 1, 0, edges.size - 2)


@dataclass(frozen=True)
class BrierDecomposition:
    """Brier = reliability − resolution + uncertainty + within_bin.

    ``within_bin`` is zero when every forecast in a bin has the same value; otherwise it is
    the part the binning cannot attribute.
    """

    brier: float
    reliability: float
    resolution: float
    uncertainty: float
    within_bin: float


def brier_decomposition(probability, outcome, *, bins=10) -> BrierDecomposition:
    """Murphy's decomposition of the Brier score over forecast bins.

    >>> d = brier_decomposition([0.8, 0.8, 0.3, 0.3], [1, 0, 0, 0], bins=10)
    >>> round(d.reliability - d.resolution + d.uncertainty, 4) == round(d.brier, 4), d.within_bin
    (True, 0.0)
    """
    p, y = _check(probability, outcome)
    edges = _edges(bins)
    idx = _assign(p, edges)
    size = edges.size - 1
    count = np.bincount(idx, minlength=size).astype(float)
    used = count > 0
    mean_p = np.bincount(idx, weights=p, minlength=size)[used] / count[used]
    mean_y = np.bincount(idx, weights=y, minlength=size)[used] / count[used]
    base = y.mean()
    total = p.size
    brier = float(np.mean((p - y) ** 2))
    rel = float(np.sum(count[used] * (mean_p - mean_y) ** 2) / total)
    res = float(np.sum(count[used] * (mean_y - base) ** 2) / total)
    unc = float(base * (1 - base))
    within = brier - (rel - res + unc)
    return BrierDecomposition(brier, rel, res, unc, 0.0 if abs(within) < 1e-12 else float(within))


@dataclass(frozen=True, eq=False)
class ReliabilityTable:
    """Per forecast bin [lower, upper): how many scored runs, their mean forecast, how many passed.

    ``count`` counts *runs*, each scored against the prediction for its scenario made before
    it (``counted`` says so, for the header): one prediction scored on ten runs counts ten.
    """

    lower: np.ndarray
    upper: np.ndarray
    count: np.ndarray
    mean_forecast: np.ndarray     # NaN in empty bins
    passes: np.ndarray
    observed: np.ndarray          # passes / count, NaN in empty bins
    counted: str = "runs"

    def rows(self) -> list[dict]:
        """The non-empty bins as plain dicts (for printing and JSON); ``runs`` is ``count``."""
        return [dict(lower=float(lo), upper=float(hi), count=int(c), runs=int(c), mean_forecast=float(m),
                     passes=int(k), observed=float(o))
                for lo, hi, c, m, k, o in zip(self.lower, self.upper, self.count, self.mean_forecast,
                                              self.passes, self.observed, strict=True) if c > 0]


def reliability_table(probability, outcome, *, bins=10) -> ReliabilityTable:
    """Bin the predictions and set what was predicted beside what happened.

    >>> reliability_table([0.85, 0.85, 0.15], [1, 0, 0], bins=2).rows()[1]["passes"]
    1
    """
    p, y = _check(probability, outcome)
    edges = _edges(bins)
    idx = _assign(p, edges)
    size = edges.size - 1
    count = np.bincount(idx, minlength=size)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_p = np.bincount(idx, weights=p, minlength=size) / count
        passes = np.bincount(idx, weights=y, minlength=size)
        observed = passes / count
    return ReliabilityTable(edges[:-1], edges[1:], count, mean_p, passes.astype(int), observed)


@dataclass(frozen=True)
class CalibrationTest:
    """Spiegelhalter's z: is the Brier score consistent with the predictions being right?

    Under calibration, E[Brier] = mean p(1 − p). z > 0 means the forecasts were too extreme
    (overconfident), z < 0 too timid (underconfident).
    """

    statistic: float
    pvalue: float
    expected_brier: float
    brier_sd: float


def calibration_test(probability, outcome) -> CalibrationTest:
    """Spiegelhalter's z-test of calibration; NaN (undefined) if every forecast is 0, ½ or 1.

    >>> t = calibration_test([0.95] * 20, [1] * 14 + [0] * 6)
    >>> t.statistic > 0, t.pvalue < 0.05
    (True, True)
    """
    p, y = _check(probability, outcome)
    spread = p * (1 - p)
    var = np.sum((1 - 2 * p) ** 2 * spread)
    expected = float(np.mean(spread))
    sd = float(np.sqrt(var) / p.size)
    if var <= 0:
        return CalibrationTest(float("nan"), float("nan"), expected, sd)
    z = float(np.sum((y - p) * (1 - 2 * p)) / np.sqrt(var))
    return CalibrationTest(z, float(2 * stats.norm.sf(abs(z))), expected, sd)


@dataclass(frozen=True, eq=False)
class CalibrationScore:
    """How one set of predictions fared: Brier, the baseline beside it, and a verdict."""

    predictions: int
    brier: float
    baseline_brier: float         # always predicting this group's own pass rate (overall, or the family's)
    skill: float                  # 1 − brier / baseline_brier (NaN when the baseline is 0)
    decomposition: BrierDecomposition
    table: ReliabilityTable
    test: CalibrationTest
    verdict: str                  # "calibrated within noise", "overconfident", "underconfident", "undefined"


@dataclass(frozen=True, eq=False)
class CalibrationReport:
    """Scores overall and per family, at a declared significance level."""

    overall: CalibrationScore
    by_family: dict[str, CalibrationScore] = field(default_factory=dict)
    alpha: float = 0.05
    base_rate: float = float("nan")


def _score(p: np.ndarray, y: np.ndarray, base: float, bins, alpha: float) -> CalibrationScore:
    brier = float(np.mean((p - y) ** 2))
    baseline = float(np.mean((base - y) ** 2))
    test = calibration_test(p, y)
    if np.isnan(test.pvalue):
        verdict = "undefined"
    elif test.pvalue >= alpha:
        verdict = "calibrated within noise"
    else:
        verdict = "overconfident" if test.statistic > 0 else "underconfident"
    skill = 1 - brier / baseline if baseline > 0 else float("nan")
    return CalibrationScore(p.size, brier, baseline, skill, brier_decomposition(p, y, bins=bins),
                            reliability_table(p, y, bins=bins), test, verdict)


def score_predictions(probability, outcome, *, families: Sequence[str | None] | None = None,
                      bins=10, alpha: float = 0.05) -> CalibrationReport:
    """Score pass-probability predictions against outcomes, overall and by family.

    The baseline always predicts the pass rate of the runs it is compared on (overall: the
    batch's; per family: that family's): calibrated by construction, and useless, since it
    says nothing about which scenario will fail. ``probability`` and ``outcome`` are per
    scored *run* (see :func:`match_predictions`).

    >>> r = score_predictions([0.9, 0.9, 0.1, 0.1], [1, 1, 0, 1], families=["a", "a", "b", "b"])
    >>> round(r.overall.brier, 4), sorted(r.by_family), r.by_family["a"].predictions
    (0.21, ['a', 'b'], 2)
    """
    p, y = _check(probability, outcome)
    check_level(alpha, "alpha")
    base = float(y.mean())
    by_family: dict[str, CalibrationScore] = {}
    if families is not None:
        fams = np.array([f if f else "" for f in families], dtype=object)
        if fams.size != p.size:
            raise UsageError(f"families has {fams.size} entries for {p.size} predictions")
        for fam in sorted(set(fams) - {""}):
            mask = fams == fam
            by_family[fam] = _score(p[mask], y[mask], float(y[mask].mean()), bins, alpha)
    return CalibrationReport(_score(p, y, base, bins, alpha), by_family, alpha, base)
