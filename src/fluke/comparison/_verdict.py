"""The survival comparison of two arms: log-rank, detection limit and one of three verdicts.

The detection limit is the smallest hazard ratio the design could have detected:
exp(2(z₁₋α/₂ + z_power)/√D) with D the number of deaths in both arms. It prints with every
verdict, so "no difference" is never confused with "could not tell".

>>> round(detection_limit(48), 3)
2.245
>>> runs_needed_per_arm(deaths=54, runs=200, ceiling=1.3)
845
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from ..format import fmt_p
from ._logrank import LogRankResult, logrank_test

__all__ = [
    "CLOSING_STATEMENT",
    "DIFFERENT",
    "NO_DIFFERENCE",
    "TOO_SMALL",
    "SurvivalComparison",
    "compare_survival",
    "detection_limit",
    "runs_needed_per_arm",
]

DIFFERENT = "different"
NO_DIFFERENCE = "no significant difference"
TOO_SMALL = "too small to tell"

#: Printed at the end of every comparison: what a difference between stored runs is evidence of.
CLOSING_STATEMENT = (
    "This compares the stored runs above. A difference between two sets of stored runs is a "
    "difference between those runs; it speaks for the versions only as far as these runs stand "
    "for them (same inputs, same conditions, independent draws).")


def _z(alpha: float, power: float) -> float:
    if not 0 < alpha < 1:
        raise ValueError(f"alpha={alpha!r} must lie strictly between 0 and 1")
    if not 0 < power < 1:
        raise ValueError(f"power={power!r} must lie strictly between 0 and 1")
    return float(stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power))


def detection_limit(deaths: int, *, alpha: float = 0.05, power: float = 0.8) -> float:
    """Minimum detectable hazard ratio with ``deaths`` deaths in both arms (inf with none).

    >>> detection_limit(0)
    inf
    """
    if deaths < 0:
        raise ValueError(f"deaths={deaths} must be at least 0")
    z = _z(alpha, power)
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
        raise ValueError(f"ceiling={ceiling!r} must exceed 1 (a hazard ratio)")
    if runs <= 0 or deaths <= 0:
        return None
    needed_deaths = (2 * _z(alpha, power) / math.log(ceiling)) ** 2
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
        p = fmt_p(self.pvalue)  # the one p-value formatter, as every other output prints it
        limit = f"{self.detection_limit:.3f}" if math.isfinite(self.detection_limit) else "∞ (no deaths)"
        line = f"{self.verdict} (p = {p}"
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
                     ceiling: float = 1.3) -> SurvivalComparison:
    """Compare arm B (``group`` True) with arm A on when their runs die, stratified by ``strata``.

    Verdicts: *different* when p < alpha; otherwise *too small to tell* when the detection
    limit exceeds ``ceiling``, else *no significant difference*.

    >>> import numpy as np
    >>> time = np.r_[np.full(20, 4), np.full(5, 1), np.full(22, 4), np.full(3, 2)]
    >>> died = np.r_[np.zeros(20), np.ones(5), np.zeros(22), np.ones(3)].astype(bool)
    >>> group = np.r_[np.zeros(25), np.ones(25)].astype(bool)
    >>> result = compare_survival(time, died, group)
    >>> result.verdict, round(result.detection_limit, 2)
    ('too small to tell', 7.25)
    """
    if ceiling <= 1:
        raise ValueError(f"ceiling={ceiling!r} must exceed 1 (a hazard ratio)")
    result = logrank_test(time, died, group, strata=strata)
    died_arr = np.asarray(died, dtype=bool).reshape(-1)
    group_arr = np.asarray(group).reshape(-1)
    if group_arr.dtype != bool:
        labels = np.unique(group_arr)
        group_arr = group_arr == labels[-1]
    runs_b = int(group_arr.sum())
    runs_a = int(group_arr.size - runs_b)
    deaths_b = int((died_arr & group_arr).sum())
    deaths_a = int(died_arr.sum()) - deaths_b
    limit = detection_limit(deaths_a + deaths_b, alpha=alpha, power=power)
    needed = None
    if math.isfinite(result.pvalue) and result.pvalue < alpha:
        verdict = DIFFERENT
    elif limit > ceiling:
        verdict = TOO_SMALL
        needed = runs_needed_per_arm(deaths=deaths_a + deaths_b, runs=runs_a + runs_b,
                                     ceiling=ceiling, alpha=alpha, power=power)
    else:
        verdict = NO_DIFFERENCE
    return SurvivalComparison(result, runs_a, runs_b, deaths_a, deaths_b, limit, verdict, needed,
                              alpha, power, ceiling)
