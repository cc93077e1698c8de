"""How far a judge can be trusted: its self-consistency over K repeats, its agreement with people,
and, for pairwise judges, its taste for the first slot; every figure with an interval.

Chance-corrected agreement is shown beside the base rate it corrects for, because κ swings
with prevalence: 90% raw agreement is κ 0.8 at a 50% pass rate and can be κ near 0 at 95%.

>>> judge = [True, True, False, True, False, False, True, True]
>>> human = [True, False, False, True, False, False, True, True]
>>> round(cohen_kappa(judge, human), 4)
0.75
>>> round(krippendorff_alpha([[True, True, False], [False, False, False], [True, True, True]]), 4)
0.6
>>> flip_share([[True, True, False], [False, False, False]])
0.5
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

#: Bootstrap resamples behind every agreement interval (units resampled, fixed seed).
RESAMPLES = 2000
LEVEL = 0.95


@dataclass(frozen=True)
class Estimate:
    """A figure and its 95% interval; ``value`` NaN means too small to tell."""

    value: float
    low: float
    high: float
    n: int
    method: str

    @property
    def defined(self) -> bool:
        return not math.isnan(self.value)

    def to_dict(self) -> dict[str, Any]:
        return {"value": None if math.isnan(self.value) else self.value,
                "low": None if math.isnan(self.low) else self.low,
                "high": None if math.isnan(self.high) else self.high, "n": self.n, "method": self.method}

    def __str__(self) -> str:
        if not self.defined:
            return f"too small to tell (n={self.n})"
        from ..format import fmt_interval

        return f"{self.value:.3f} {fmt_interval(self.low, self.high)} (95%, n={self.n})"


def _as_matrix(rows: Sequence[Sequence[bool | None]]) -> np.ndarray:
    """Units x raters as floats, NaN for a missing label."""
    width = max((len(r) for r in rows), default=0)
    out = np.full((len(rows), width), np.nan)
    for i, row in enumerate(rows):
        for j, value in enumerate(row):
            if value is not None:
                out[i, j] = float(bool(value))
    return out


def cohen_kappa(a: Sequence[bool], b: Sequence[bool]) -> float:
    """Cohen's κ of two raters' pass/fail labels of the same runs; NaN when chance agreement is total."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if len(x) == 0:
        return math.nan
    observed = float(np.mean(x == y))
    px, py = float(x.mean()), float(y.mean())
    expected = px * py + (1 - px) * (1 - py)
    return math.nan if expected >= 1 else (observed - expected) / (1 - expected)


def krippendorff_alpha(rows: Sequence[Sequence[bool | None]]) -> float:
    """Krippendorff's α (nominal) over units x replicates, missing labels allowed; units with fewer
    than two labels are not pairable and are left out. NaN when every label is the same."""
    return _alpha(_as_matrix(rows))


def _alpha(m: np.ndarray) -> float:
    if m.size == 0:
        return math.nan
    ones = np.nansum(m, axis=1)
    counts = np.sum(~np.isnan(m), axis=1)
    keep = counts >= 2
    ones, counts = ones[keep], counts[keep]
    zeros = counts - ones
    n = counts.sum()
    n1, n0 = ones.sum(), zeros.sum()
    if n < 2 or n1 == 0 or n0 == 0:
        return math.nan
    disagreement = np.sum(2 * ones * zeros / (counts - 1))
    return float(1 - (n - 1) * disagreement / (2 * n1 * n0))


def fleiss_kappa(rows: Sequence[Sequence[bool | None]]) -> float:
    """Fleiss' κ over units x replicates (every unit with the same number of labels; a unit
    missing one is left out). NaN when every label is the same."""
    return _fleiss(_as_matrix(rows))


def _fleiss(m: np.ndarray) -> float:
    m = m[~np.isnan(m).any(axis=1)] if m.size else m
    if m.shape[0] == 0 or m.shape[1] < 2:
        return math.nan
    k = m.shape[1]
    ones = m.sum(axis=1)
    table = np.column_stack([ones, k - ones])
    agreement = ((table ** 2).sum(axis=1) - k) / (k * (k - 1))
    shares = table.sum(axis=0) / table.sum()
    chance = float((shares ** 2).sum())
    return math.nan if chance >= 1 else float((agreement.mean() - chance) / (1 - chance))


def flip_share(rows: Sequence[Sequence[bool | None]]) -> float:
    """The share of runs (with two labels or more) whose repeats do not all agree."""
    m = _as_matrix(rows)
    counts = np.sum(~np.isnan(m), axis=1)
    m = m[counts >= 2]
    if m.shape[0] == 0:
        return math.nan
    lo, hi = np.nanmin(m, axis=1), np.nanmax(m, axis=1)
    return float(np.mean(lo != hi))


def wilson(successes: int, n: int, level: float = LEVEL) -> tuple[float, float]:
    """The Wilson score interval of a share.

    >>> [round(x, 4) for x in wilson(8, 10)]
    [0.4902, 0.9433]
    """
    if n == 0:
        return math.nan, math.nan
    from scipy.stats import norm

    z = float(norm.ppf(0.5 + level / 2))
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def bootstrap(statistic: Callable[[np.ndarray], float], units: int, method: str, *,
              seed: int = 0, resamples: int = RESAMPLES) -> Estimate:
    """``statistic(index)`` on all units and its percentile interval over units resampled with
    replacement (a fixed seed, so the same data give the same interval)."""
    value = statistic(np.arange(units))
    if units == 0 or math.isnan(value):
        return Estimate(math.nan, math.nan, math.nan, units, method)
    rng = np.random.default_rng(seed)
    draws = np.array([statistic(rng.integers(0, units, units)) for _ in range(resamples)])
    draws = draws[~np.isnan(draws)]
    if len(draws) < resamples / 2:
        return Estimate(value, math.nan, math.nan, units, method)
    low, high = np.quantile(draws, [(1 - LEVEL) / 2, (1 + LEVEL) / 2])
    return Estimate(value, float(low), float(high), units, method)


@dataclass(frozen=True)
class SelfConsistency:
    """How a judge agrees with itself over K repeats of the same runs."""

    runs: int
    replicates: int
    flips: Estimate
    alpha: Estimate
    fleiss: Estimate

    def to_dict(self) -> dict[str, Any]:
        return {"runs": self.runs, "replicates": self.replicates, "flip_share": self.flips.to_dict(),
                "krippendorff_alpha": self.alpha.to_dict(), "fleiss_kappa": self.fleiss.to_dict()}


def self_consistency(rows: Sequence[Sequence[bool | None]]) -> SelfConsistency:
    """Flip share (Wilson interval), Krippendorff's α and Fleiss' κ (bootstrap over runs).

    >>> sc = self_consistency([[True, True, True]] * 6 + [[False, False, True]] * 2 + [[False] * 3] * 4)
    >>> round(sc.flips.value, 3), round(sc.alpha.value, 3)
    (0.167, 0.781)
    """
    # a canonical order of the runs (they are exchangeable units): the bootstrap then gives the same
    # interval for the same judgments whichever order they are read in (judge run, audit, report)
    rows = sorted((list(r) for r in rows), key=lambda r: [-1 if v is None else int(bool(v)) for v in r])
    m = _as_matrix(rows)
    pairable = int(np.sum(np.sum(~np.isnan(m), axis=1) >= 2)) if m.size else 0
    share = flip_share(rows)
    flipped = 0 if math.isnan(share) else round(share * pairable)
    low, high = wilson(flipped, pairable)
    flips = Estimate(share, low, high, pairable, "share of runs whose repeats disagree, Wilson interval")
    alpha = bootstrap(lambda idx: _alpha(m[idx]), len(rows), "Krippendorff's alpha (nominal), bootstrap over runs")
    fleiss = bootstrap(lambda idx: _fleiss(m[idx]), len(rows), "Fleiss' kappa, bootstrap over runs")
    return SelfConsistency(len(rows), m.shape[1] if m.size else 0, flips, alpha, fleiss)


@dataclass(frozen=True)
class HumanAgreement:
    """How a judge's labels agree with people's on the same runs."""

    n: int
    kappa: Estimate
    agreement: Estimate
    bias_points: Estimate
    human_rate: float
    judge_rate: float
    confusion: dict[str, int]

    def to_dict(self) -> dict[str, Any]:
        return {"n": self.n, "cohen_kappa": self.kappa.to_dict(), "agreement": self.agreement.to_dict(),
                "bias_points": self.bias_points.to_dict(), "human_pass_rate": self.human_rate,
                "judge_pass_rate": self.judge_rate, "confusion": self.confusion}


def human_agreement(judge: Sequence[bool], human: Sequence[bool]) -> HumanAgreement:
    """Cohen's κ (bootstrap interval) beside the base rate, raw agreement (Wilson), the judge's
    bias in points (judge pass rate minus the people's, bootstrap) and the confusion matrix.

    >>> h = human_agreement([True, True, False, True], [True, False, False, True])
    >>> h.confusion, round(h.bias_points.value, 1)
    ({'judge_pass_human_pass': 2, 'judge_pass_human_fail': 1, 'judge_fail_human_pass': 0,
      'judge_fail_human_fail': 1}, 25.0)
    """
    j, h = np.asarray(judge, dtype=bool), np.asarray(human, dtype=bool)
    if len(j) != len(h):
        raise ValueError("the judge's and the people's labels must cover the same runs")
    n = len(j)
    kappa = bootstrap(lambda idx: cohen_kappa(j[idx], h[idx]), n, "Cohen's kappa, bootstrap over runs")
    agree = int(np.sum(j == h))
    low, high = wilson(agree, n)
    agreement = Estimate(agree / n if n else math.nan, low, high, n, "share agreeing, Wilson interval")
    bias = bootstrap(lambda idx: 100 * float(j[idx].mean() - h[idx].mean()), n,
                     "judge pass rate minus human pass rate in points, bootstrap over runs")
    confusion = {"judge_pass_human_pass": int(np.sum(j & h)), "judge_pass_human_fail": int(np.sum(j & ~h)),
                 "judge_fail_human_pass": int(np.sum(~j & h)), "judge_fail_human_fail": int(np.sum(~j & ~h))}
    return HumanAgreement(n, kappa, agreement, bias, float(h.mean()) if n else math.nan,
                          float(j.mean()) if n else math.nan, confusion)


def positional_bias(verdicts: Sequence[Any]) -> Estimate:
    """The share of decided pairwise judgments that chose the first slot (0.5 is no bias), with its
    Wilson interval. ``verdicts`` are :class:`fluke.judging.PairVerdict` (their ``slots``)."""
    slots = [s for v in verdicts for s in v.slots if s != "tie"]
    first = sum(s == "first" for s in slots)
    low, high = wilson(first, len(slots))
    return Estimate(first / len(slots) if slots else math.nan, low, high, len(slots),
                    "share of decided judgments choosing the first slot, Wilson interval")
