"""The verdict rule shared by every comparison, and the survival comparison of two arms.

One rule decides every comparison (pass rates, the log-rank, null calibration): *different*
when p < α; else *too small to tell* when the detection limit is undefined or above the
declared ceiling; else *no significant difference*. An undefined p-value (no information) is
*too small to tell*, never *no significant difference*.

The log-rank's detection limit is the smallest hazard ratio the test could have detected at
α and power: exp((z₁₋α/₂ + z_power)/√V) with V the test's information (the summed
hypergeometric variance). For 1:1 allocation V ≈ D/4 with D deaths, which gives the familiar
exp(2(z₁₋α/₂ + z_power)/√D) (:func:`detection_limit`); V is the one to use, since it counts
only deaths that could have fallen in either arm.

>>> round(detection_limit(48), 3), round(hazard_ratio_limit(12.0), 3)
(2.245, 2.245)
>>> verdict_of(0.01, 9.0, alpha=0.05, ceiling=5.0), verdict_of(float("nan"), 0.0, alpha=0.05, ceiling=5.0)
('different', 'too small to tell')
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special

from ..errors import UsageError
from ..format import fmt_is
from ..inference import check_level
from ._logrank import LogRankResult, logrank_test

__all__ = [
    "CLOSING_STATEMENT",
    "DIFFERENT",
    "NO_DIFFERENCE",
    "TOO_SMALL",
    "SurvivalComparison",
    "compare_survival",
    "detection_limit",
    "detection_z",
    "hazard_ratio_limit",
    "runs_needed_per_arm",
    "verdict_of",
    "verdicts_of",
]

DIFFERENT = "different"
NO_DIFFERENCE = "no significant difference"
TOO_SMALL = "too small to tell"

#: Printed at the end of every comparison: what a difference between stored runs is evidence of.
CLOSING_STATEMENT = (
    "This compares the stored runs above. A difference between two sets of stored runs is a "
    "difference between those runs; it speaks for the versions only as far as these runs stand "
    "for them (same inputs, same conditions, independent draws).")


def detection_z(alpha: float, power: float) -> float:
    """z₁₋α/₂ + z_power: how many standard errors a detectable effect must span.

    >>> round(detection_z(0.05, 0.8), 4)
    2.8016
    """
    check_level(alpha, "alpha")
    check_level(power, "power")
    return float(special.ndtri(1 - alpha / 2) + special.ndtri(power))


def verdicts_of(pvalue, limit, *, alpha: float, ceiling: float) -> np.ndarray:
    """The verdict rule on arrays of p-values and detection limits (one verdict per entry).

    >>> verdicts_of([0.01, 0.3, 0.3], [9.0, 9.0, 2.0], alpha=0.05, ceiling=5.0).tolist()
    ['different', 'too small to tell', 'no significant difference']
    """
    p = np.asarray(pvalue, dtype=float)
    lim = np.asarray(limit, dtype=float)
    different = np.isfinite(p) & (p < alpha)
    too_small = ~different & (~np.isfinite(p) | ~np.isfinite(lim) | (lim > ceiling))
    out = np.full(np.broadcast(p, lim).shape, NO_DIFFERENCE, dtype=object)
    out[np.broadcast_to(too_small, out.shape)] = TOO_SMALL
    out[np.broadcast_to(different, out.shape)] = DIFFERENT
    return out


def verdict_of(pvalue: float, limit: float, *, alpha: float, ceiling: float) -> str:
    """The verdict of one comparison from its p-value and detection limit (see the module docstring).

    >>> verdict_of(0.2, 3.0, alpha=0.05, ceiling=5.0)
    'no significant difference'
    """
    return str(verdicts_of(pvalue, limit, alpha=alpha, ceiling=ceiling).reshape(-1)[0])


def hazard_ratio_limit(variance: float, *, alpha: float = 0.05, power: float = 0.8) -> float:
    """Minimum detectable hazard ratio from the log-rank information V (inf when V = 0).

    >>> hazard_ratio_limit(0.0)
    inf
    """
    z = detection_z(alpha, power)
    if not variance > 0:
        return math.inf
    return math.exp(z / math.sqrt(variance))


def detection_limit(deaths: int, *, alpha: float = 0.05, power: float = 0.8) -> float:
    """Minimum detectable hazard ratio with ``deaths`` deaths in both arms, 1:1 allocation.

    The approximation V ≈ D/4 of :func:`hazard_ratio_limit`, for planning before any run.

    >>> detection_limit(0)
    inf
    """
    if deaths < 0:
        raise UsageError(f"deaths={deaths} must be at least 0", argument="deaths")
    z = detection_z(alpha, power)
    if deaths == 0:
        return math.inf
    return math.exp(2 * z / math.sqrt(deaths))


def runs_needed_per_arm(*, deaths: int, runs: int, ceiling: float = 1.3, alpha: float = 0.05,
                        power: float = 0.8) -> int | None:
    """Runs per arm that would bring the detection limit down to ``ceiling``.

    Assumes the pooled share of runs that die (``deaths`` of ``runs``, both arms) stays as it
    is; None when no run died, since then nothing says how many would.

    >>> runs_needed_per_arm(deaths=17, runs=40, ceiling=1.3)
    537
    """
    if ceiling <= 1:
        raise UsageError(f"ceiling={ceiling!r} must exceed 1 (a hazard ratio)", argument="ceiling")
    if runs <= 0 or deaths <= 0:
        return None
    needed_deaths = (2 * detection_z(alpha, power) / math.log(ceiling)) ** 2
    return math.ceil(needed_deaths / (2 * deaths / runs))


@dataclass(frozen=True)
class SurvivalComparison:
    """Arm B against arm A: the stratified log-rank, the detection limit and the verdict."""

    logrank: LogRankResult
    runs_a: int
    runs_b: int
    deaths_a: int
    deaths_b: int
    detection_limit: float
    verdict: str
    runs_needed_per_arm: int | None
    alpha: float
    power: float
    ceiling: float

    @property
    def statistic(self) -> float:
        return self.logrank.statistic

    @property
    def pvalue(self) -> float:
        return self.logrank.pvalue

    @property
    def direction(self) -> str | None:
        """Which arm's runs die earlier (only said when the verdict is *different*)."""
        if self.verdict != DIFFERENT:
            return None
        return "B" if self.logrank.observed > self.logrank.expected else "A"

    def summary(self) -> str:
        """One line: the verdict, the p-value and the detection limit (always)."""
        p = fmt_is("p", self.pvalue, kind="p")  # the one p-value formatter, as every other output prints it
        limit = f"{self.detection_limit:.3f}" if math.isfinite(self.detection_limit) else "∞ (no information)"
        line = f"{self.verdict} ({p}"
        line += f"; runs die earlier in {self.direction})" if self.direction else ")"
        line += f"; could not have detected a hazard ratio below {limit}"
        if self.verdict == TOO_SMALL:
            line += f", and {self.ceiling:g} was asked for"
            if self.runs_needed_per_arm is not None:
                line += f"; about {self.runs_needed_per_arm:,} runs per arm would be needed"
        else:
            line += f" (ceiling {self.ceiling:g})"
        return line + f"; {self.deaths_a + self.deaths_b:,} deaths in {self.runs_a + self.runs_b:,} runs"


def compare_survival(time, died, group, *, strata=None, alpha: float = 0.05, power: float = 0.8,
                     ceiling: float = 1.3, weights=None) -> SurvivalComparison:
    """Compare arm B (``group`` True) with arm A on when their runs die, stratified by ``strata``.

    The detection limit is :func:`hazard_ratio_limit` of the test's information V; the verdict
    is :func:`verdict_of`. ``runs_needed_per_arm`` scales V with the runs (same design, more
    runs per stratum) until the limit reaches ``ceiling``. ``weights`` says how many runs each
    entry stands for (counted runs).

    >>> import numpy as np
    >>> time = np.r_[np.full(20, 4), np.full(5, 1), np.full(22, 4), np.full(3, 2)]
    >>> died = np.r_[np.zeros(20), np.ones(5), np.zeros(22), np.ones(3)].astype(bool)
    >>> group = np.r_[np.zeros(25), np.ones(25)].astype(bool)
    >>> result = compare_survival(time, died, group)
    >>> result.verdict, round(result.detection_limit, 2)
    ('too small to tell', 7.82)
    """
    if ceiling <= 1:
        raise UsageError(f"ceiling={ceiling!r} must exceed 1 (a hazard ratio)", argument="ceiling")
    result = logrank_test(time, died, group, strata=strata, weights=weights)
    died_arr = np.asarray(died, dtype=bool).reshape(-1)
    group_arr = np.asarray(group).reshape(-1)
    if group_arr.dtype != bool:
        labels = np.unique(group_arr)
        group_arr = group_arr == labels[-1]
    w = np.ones(group_arr.size, dtype=np.int64) if weights is None else np.asarray(weights).astype(np.int64)
    runs_b = int(w[group_arr].sum())
    runs_a = int(w.sum()) - runs_b
    deaths_b = int(w[died_arr & group_arr].sum())
    deaths_a = int(w[died_arr].sum()) - deaths_b
    limit = hazard_ratio_limit(result.variance, alpha=alpha, power=power)
    verdict = verdict_of(result.pvalue, limit, alpha=alpha, ceiling=ceiling)
    needed = None
    if verdict == TOO_SMALL and result.variance > 0:
        # V grows in proportion to the runs when the design is repeated
        scale = (detection_z(alpha, power) / math.log(ceiling)) ** 2 / result.variance
        needed = math.ceil(scale * max(runs_a, runs_b))
    return SurvivalComparison(result, runs_a, runs_b, deaths_a, deaths_b, limit, verdict, needed,
                              alpha, power, ceiling)
