"""Cheaper and not worse: a non-inferiority margin on the pass rate, and the paired spend difference.

B is *not worse* than A by a margin of m points when the lower end of the interval for B − A
lies above −m. The interval is the comparison's own (``compare``: the stratified test inverted,
paired by scenario), two-sided at 1 − α, so a B truly m points worse is called not worse at most
α / 2 of the time. B is *cheaper* when the interval for the mean spend difference per run, paired
by scenario (the mean over shared scenarios of B's mean spend minus A's, Student t on G − 1), lies
below zero. Either may be undefined: no interval, or no scenario both arms ran with a cost.

>>> r = not_worse((-1.5, 4.0), 2.0, cost=paired_cost_difference(["a", "b", "c"], [2.0, 3.0, 2.5],
...                                                             ["a", "b", "c"], [1.0, 1.8, 1.4]))
>>> r.holds, r.cheaper, round(r.cost_difference, 3)
(True, True, -1.1)
>>> print(r.summary())
not worse: B − A ≥ -1.5 points, above the margin of -2 points; cheaper: B − A = -1.100 per run [-1.348, -0.852]
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from ..errors import UsageError


@dataclass(frozen=True)
class CostDifference:
    """B's mean spend per run minus A's, paired by scenario, with its confidence interval."""

    difference: float
    interval: tuple[float, float]
    scenarios: int
    confidence_level: float
    reason: str | None = None

    def to_dict(self) -> dict:
        fin = [x if math.isfinite(x) else None for x in self.interval]
        return {"difference": None if math.isnan(self.difference) else self.difference, "interval": fin,
                "scenarios": self.scenarios, "confidence_level": self.confidence_level, "reason": self.reason,
                "paired_by": "scenario"}


def paired_cost_difference(scenarios_a, cost_a, scenarios_b, cost_b, *,
                           confidence_level: float = 0.95) -> CostDifference:
    """Mean over shared scenarios of (B's mean known spend − A's), t on G − 1 (runs without a cost left out).

    >>> paired_cost_difference(["a"], [1.0], ["b"], [1.0]).reason
    'no scenario where both arms recorded a cost'
    """
    def means(scen, cost):
        c = np.asarray(cost, dtype=float).reshape(-1)
        s = np.asarray(scen, dtype=object).reshape(-1)
        keep = np.isfinite(c)
        names, index = np.unique(s[keep].astype(str), return_inverse=True)
        total = np.bincount(index, weights=c[keep], minlength=names.size)
        count = np.bincount(index, minlength=names.size)
        return dict(zip(names.tolist(), (total / np.maximum(count, 1)).tolist(), strict=True))

    ma, mb = means(scenarios_a, cost_a), means(scenarios_b, cost_b)
    shared = sorted(set(ma) & set(mb))
    nan = (math.nan, math.nan)
    if not shared:
        return CostDifference(math.nan, nan, 0, confidence_level, "no scenario where both arms recorded a cost")
    d = np.array([mb[s] - ma[s] for s in shared])
    g = d.size
    if g < 2 or np.std(d) == 0:
        return CostDifference(float(d.mean()), nan, g, confidence_level,
                              "one shared scenario" if g < 2 else "no spread across scenarios")
    half = float(stats.t.ppf(0.5 + confidence_level / 2, g - 1) * np.std(d, ddof=1) / math.sqrt(g))
    return CostDifference(float(d.mean()), (float(d.mean() - half), float(d.mean() + half)), g, confidence_level)


@dataclass(frozen=True)
class NonInferiority:
    """Whether B is not worse than A by ``margin`` points, and whether it is cheaper."""

    margin: float
    interval: tuple[float, float]
    cost: CostDifference | None = None

    @property
    def holds(self) -> bool | None:
        """True: not worse; False: the interval reaches below −margin; None: no interval."""
        low = self.interval[0]
        return None if not math.isfinite(low) else bool(low > -self.margin)

    @property
    def cheaper(self) -> bool | None:
        if self.cost is None or not math.isfinite(self.cost.interval[1]):
            return None
        return bool(self.cost.interval[1] < 0)

    @property
    def cost_difference(self) -> float:
        return math.nan if self.cost is None else self.cost.difference

    def summary(self) -> str:
        low = self.interval[0]
        if self.holds is None:
            quality = f"not worse: too small to tell (no interval for B − A; margin {self.margin:g} points)"
        elif self.holds:
            quality = f"not worse: B − A ≥ {low:+.1f} points, above the margin of {-self.margin:g} points"
        else:
            quality = (f"not shown to be not worse: B − A may be as low as {low:+.1f} points, "
                       f"below the margin of {-self.margin:g} points")
        if self.cost is None:
            return quality
        c = self.cost
        if self.cheaper is None:
            return f"{quality}; cheaper: too small to tell ({c.reason or 'no interval'})"
        word = "cheaper" if self.cheaper else "not shown to be cheaper"
        return (f"{quality}; {word}: B − A = {c.difference:+.3f} per run "
                f"[{c.interval[0]:+.3f}, {c.interval[1]:+.3f}]")

    def to_dict(self) -> dict:
        return {"margin_points": self.margin, "interval_points": [x if math.isfinite(x) else None
                                                                  for x in self.interval],
                "not_worse": self.holds, "cheaper": self.cheaper,
                "cost_difference": None if self.cost is None else self.cost.to_dict(), "summary": self.summary()}


def not_worse(interval, margin: float, *, cost: CostDifference | None = None) -> NonInferiority:
    """B against A with a non-inferiority ``margin`` in points, from the interval for B − A in points.

    >>> not_worse((-3.0, 2.0), 2.0).holds, not_worse((float("nan"), float("nan")), 2.0).holds
    (False, None)
    """
    if not (isinstance(margin, (int, float)) and margin > 0 and math.isfinite(margin)):
        raise UsageError(f"margin={margin!r} must be a positive number of points")
    low, high = (float(x) for x in interval)
    return NonInferiority(float(margin), (low, high), cost)
