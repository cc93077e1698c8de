"""Severe failures apart: how often runs break a check of each severity, with an exact upper bound.

A low average failure rate can hide a rare failure that no one may ship. Each severity is
counted on its own (a run counts once per severity it broke) and given the Clopper–Pearson
one-sided upper bound: the largest rate that would still give so few failures with probability
at least 1 − level. Zero failures is not "never": 0 of 300 bounds the rate at 1.0% at 95%.

>>> r = severe_rate("hard", 0, 300)
>>> r.text()
'hard: 0 of 300 runs (0.0%), at most 1.0% at 95%'
>>> round(upper_bound(0, 300), 5)
0.00994
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from scipy import stats

from ..errors import UsageError


def upper_bound(k: int, n: int, confidence_level: float = 0.95) -> float:
    """The exact (Clopper–Pearson) one-sided upper confidence bound on a rate from ``k`` of ``n``.

    It is the ``1 − level`` quantile's complement of Beta(k + 1, n − k): 1 when every run failed,
    NaN with no runs.

    >>> round(upper_bound(3, 50), 4), upper_bound(5, 5), upper_bound(0, 0)
    (0.1478, 1.0, nan)
    """
    if not 0 < confidence_level < 1:
        raise UsageError(f"confidence_level={confidence_level!r} must lie strictly between 0 and 1")
    if n < 0 or not 0 <= k <= max(n, 0):
        raise UsageError(f"k={k!r} failures of n={n!r} runs must satisfy 0 <= k <= n")
    if n == 0:
        return math.nan
    if k == n:
        return 1.0
    return float(stats.beta.ppf(confidence_level, k + 1, n - k))


def lower_bound(k: int, n: int, confidence_level: float = 0.95) -> float:
    """The exact one-sided lower confidence bound: 0 with no failure, NaN with no runs.

    >>> lower_bound(0, 10), round(lower_bound(5, 10), 4)
    (0.0, 0.2224)
    """
    upper_bound(k, n, confidence_level)   # the same checks
    if n == 0:
        return math.nan
    return 0.0 if k == 0 else float(stats.beta.ppf(1 - confidence_level, k, n - k + 1))


def clean_runs_needed(at_most: float, confidence_level: float = 0.95) -> int:
    """Runs with no failure at all that bound the rate at ``at_most``: the least n with (1 − at_most)^n ≤ 1 − level.

    >>> clean_runs_needed(0.01), clean_runs_needed(0.05)
    (299, 59)
    """
    if not 0 < at_most < 1:
        raise UsageError(f"at_most={at_most!r} must lie strictly between 0 and 1")
    return int(math.ceil(math.log(1 - confidence_level) / math.log1p(-at_most)))


@dataclass(frozen=True)
class SevereRate:
    """Runs that broke a check of one severity: the count, the rate and its exact upper bound."""

    severity: str
    failures: int
    runs: int
    upper: float
    confidence_level: float

    @property
    def rate(self) -> float:
        return self.failures / self.runs if self.runs else math.nan

    def text(self) -> str:
        from ..format import fmt_pct

        if not self.runs:
            return f"{self.severity}: no runs graded"
        return (f"{self.severity}: {self.failures:,} of {self.runs:,} runs ({fmt_pct(self.rate, 1)}), "
                f"at most {fmt_pct(self.upper, 1)} at {self.confidence_level:.0%}")

    def to_dict(self) -> dict:
        return {"severity": self.severity, "failures": self.failures, "runs": self.runs,
                "rate": None if not self.runs else self.rate,
                "upper_bound": None if math.isnan(self.upper) else self.upper,
                "confidence_level": self.confidence_level, "method": "Clopper–Pearson, one-sided",
                "summary": self.text()}


def severe_rate(severity: str, failures: int, runs: int, *, confidence_level: float = 0.95) -> SevereRate:
    """``failures`` of ``runs`` for one severity, with its upper bound (:func:`upper_bound`).

    >>> severe_rate("soft", 2, 40).text()
    'soft: 2 of 40 runs (5.0%), at most 14.9% at 95%'
    """
    return SevereRate(severity, int(failures), int(runs), upper_bound(int(failures), int(runs), confidence_level),
                      float(confidence_level))
