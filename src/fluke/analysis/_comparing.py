"""The one place that reads a comparison's verdict and detection limit (for claims and the gate).

``fluke.analysis.compare`` is the comparison; its statistic is being replaced (issue 12: the
pass-rate difference, a Cochran–Mantel–Haenszel test, a detection limit in points). Everything
that only needs *what was concluded* — the pytest plugin's ``not_worse_than`` and the gate's
``compare`` check — reads it through :func:`read_comparison`, so the swap is made here alone.

Fields read today, from ``ComparisonResult.comparison.result`` (a ``SurvivalComparison``):
``verdict``, ``direction`` (``"B"`` when B's runs die earlier), ``pvalue``, ``detection_limit``
(a hazard ratio), ``ceiling``, ``alpha``, ``power``, ``runs_needed_per_arm``, ``runs_a``, ``runs_b``.

>>> LIMIT_UNIT
'hazard ratio'
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

#: What the detection limit and the ceiling are measured in (points, after issue 12).
LIMIT_UNIT = "hazard ratio"


@dataclass(frozen=True)
class ComparisonReading:
    """What a comparison concluded, in the terms a decision needs."""

    verdict: str                 # different | no significant difference | too small to tell
    worse: bool | None           # B worse than A (None unless the verdict is "different")
    pvalue: float
    limit: float                 # the smallest change the runs could have detected
    ceiling: float               # the change asked for
    runs_needed_per_arm: float | None
    runs_a: int
    runs_b: int
    alpha: float
    power: float

    def limit_text(self) -> str:
        """The detection limit said with its unit."""
        shown = f"{self.limit:.3f}" if math.isfinite(self.limit) else "∞ (no information)"
        return f"could not have detected a {LIMIT_UNIT} below {shown} (ceiling {self.ceiling:g})"


def read_comparison(result: Any) -> ComparisonReading:
    """The verdict, direction and detection limit of a :class:`~fluke.analysis.ComparisonResult`."""
    r = result.comparison.result
    return ComparisonReading(
        verdict=r.verdict, worse=None if r.direction is None else r.direction == "B",
        pvalue=float(r.pvalue), limit=float(r.detection_limit), ceiling=float(r.ceiling),
        runs_needed_per_arm=r.runs_needed_per_arm, runs_a=int(r.runs_a), runs_b=int(r.runs_b),
        alpha=float(r.alpha), power=float(r.power))


def compare_options(margin: float | None) -> dict[str, Any]:
    """``compare`` keywords for a non-inferiority margin (the comparison's ceiling, in its unit).

    >>> compare_options(None), compare_options(1.5)
    ({}, {'ceiling': 1.5})
    """
    return {} if margin is None else {"ceiling": float(margin)}
