"""The one place that reads a comparison's verdict and detection limit (for claims and the gate).

``fluke.analysis.compare`` is the comparison. Everything that only needs *what was concluded*
— the pytest plugin's ``not_worse_than`` and the gate's ``compare`` check — reads it through
:func:`read_comparison` and asks for it through :func:`compare_options`, so a change of the
comparison's statistic is made here alone.

Fields read, from ``ComparisonResult.pass_rates`` (a ``fluke.comparison.PassRateComparison``):
``verdict``, ``direction`` (``"lower"`` when B's pass rate is below A's), ``pvalue``,
``difference`` and ``detection_limit`` (points), ``ceiling`` (points), ``alpha``, ``power``,
``runs_needed_per_arm``, ``runs_a``, ``runs_b``, ``summary()`` and ``conditional_on()``.

>>> LIMIT_UNIT
'points'
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..errors import UsageError

#: What the detection limit and the ceiling are measured in.
LIMIT_UNIT = "points"


@dataclass(frozen=True)
class ComparisonReading:
    """What a comparison concluded, in the terms a decision needs."""

    verdict: str                 # different | no significant difference | too small to tell
    worse: bool | None           # B worse than A (None unless the verdict is "different")
    pvalue: float
    difference: float            # B − A, in points
    limit: float                 # the smallest change the runs could have detected, in points
    ceiling: float               # the change asked for, in points
    runs_needed_per_arm: float | None
    runs_a: int
    runs_b: int
    alpha: float
    power: float
    summary: str
    conditional_on: str          # strata, runs, unit, α, power, ceiling, prior, unknown outcomes
    improvement_limit: float = math.nan   # the same limit for an improvement of B, in points

    def limit_text(self) -> str:
        """The detection limit in compare's words for the verdict (:func:`fluke.comparison.limit_phrase`)."""
        from ..comparison import limit_phrase

        direction = None if self.worse is None else ("lower" if self.worse else "higher")
        return limit_phrase(self.verdict, direction, self.difference, self.limit, self.improvement_limit,
                            power=self.power, ceiling=self.ceiling)


def read_comparison(result: Any) -> ComparisonReading:
    """The verdict, direction and detection limit of a :class:`~fluke.analysis.ComparisonResult`."""
    r = result.pass_rates
    return ComparisonReading(
        verdict=r.verdict, worse=None if r.direction is None else r.direction == "lower",
        pvalue=float(r.pvalue), difference=float(r.difference), limit=float(r.detection_limit),
        ceiling=float(r.ceiling), runs_needed_per_arm=r.runs_needed_per_arm, runs_a=int(r.runs_a),
        runs_b=int(r.runs_b), alpha=float(r.alpha), power=float(r.power), summary=r.summary(),
        conditional_on=r.conditional_on(), improvement_limit=float(r.improvement_limit))


def compare_options(margin: float | None) -> dict[str, Any]:
    """``compare`` keywords for a margin given as a share of the pass rate (0.05 = 5 points).

    The margin is the comparison's ceiling: the change the runs must be able to see before
    "no significant difference" may be said.

    >>> compare_options(None), compare_options(0.05)
    ({}, {'ceiling': 5.0})
    """
    if margin is None:
        return {}
    if not 0 < margin < 1:
        raise UsageError(f"margin={margin!r} must lie strictly between 0 and 1 (a share: 0.05 is 5 points)")
    return {"ceiling": round(100 * float(margin), 10)}
