"""The region and the colour of one point, from its posterior and its behavioural outcomes.

A run's outcome is one of three behaviours, counted apart: it **completed** the task, it
**asked** (asked, obtained authorisation or stopped, where that is the right outcome; the
run's label ``should_ask``), or it **failed** (proceeded wrongly, or errored). Completing and
asking both pass. With θ the point's pass rate under a Beta(1, 1) prior updated by its runs:

* **works** when P(θ > bar) ≥ prob;
* **fails** when P(θ < floor) ≥ prob;
* **uncertain** otherwise; and **not run** when the point has no runs.

An uncertain point is labelled by what would settle it: **needs a change** when its runs
already say P(θ < bar) ≥ prob (more runs will not lift it over the bar), else **needs
evidence** (its posterior is still wide: more runs decide it).

The colour is the behaviour the point shows most (ties go to the worse): completes, asks, or
fails.

>>> v = classify(PointCounts(completed=19, asked=0, failed=1), bar=0.8, floor=0.5, prob=0.9)
>>> v.region, v.colour, round(v.p_works, 3)
('works', 'completes', 0.942)
>>> classify(PointCounts(completed=1, asked=1, failed=1), bar=0.8, floor=0.5, prob=0.9).label
'needs evidence'
>>> classify(PointCounts(completed=70, failed=30), bar=0.8, floor=0.5, prob=0.9).label
'needs a change'
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from ..errors import UsageError

REGIONS = ("works", "uncertain", "fails", "not run")
COLOURS = ("completes", "asks", "fails")
#: The prior every point starts from (stated with every chart).
PRIOR = (1.0, 1.0)


@dataclass(frozen=True)
class PointCounts:
    """Runs at one point by behaviour; ``failed`` holds errors and wrong moves alike."""

    completed: int = 0
    asked: int = 0
    failed: int = 0

    @property
    def passes(self) -> int:
        return self.completed + self.asked

    @property
    def runs(self) -> int:
        return self.completed + self.asked + self.failed

    def __add__(self, other: "PointCounts") -> "PointCounts":
        return PointCounts(self.completed + other.completed, self.asked + other.asked, self.failed + other.failed)


@dataclass(frozen=True)
class PointVerdict:
    """What the posterior says of one point."""

    region: str
    colour: str | None           # None when not run
    label: str | None            # 'needs evidence' or 'needs a change' for an uncertain point
    p_works: float               # P(θ > bar)
    p_fails: float               # P(θ < floor)
    mean: float
    lo: float
    hi: float


def check_thresholds(bar: float, floor: float, prob: float) -> None:
    """The chart's three numbers: ``0 < floor ≤ bar < 1`` and ``0.5 < prob < 1``.

    >>> check_thresholds(0.5, 0.8, 0.9)
    Traceback (most recent call last):
    ...
    fluke.errors.UsageError: --floor 0.8 is above --bar 0.5: the floor is the rate below which a point fails
    """
    if not 0 < bar < 1:
        raise UsageError(f"--bar {bar:g} must be between 0 and 1")
    if not 0 < floor < 1:
        raise UsageError(f"--floor {floor:g} must be between 0 and 1")
    if floor > bar:
        raise UsageError(f"--floor {floor:g} is above --bar {bar:g}: the floor is the rate below which a point fails")
    if not 0.5 < prob < 1:
        raise UsageError(f"--prob {prob:g} must be above 0.5 and below 1 (how sure a region must be)")


def region_probs(passes, runs, bar: float, floor: float):
    """(P(θ > bar), P(θ < floor)) under the Beta(1, 1) prior, for numbers or arrays.

    >>> [round(float(x), 3) for x in region_probs(9, 10, 0.8, 0.5)]
    [0.678, 0.006]
    """
    a = PRIOR[0] + np.asarray(passes, dtype=float)
    b = PRIOR[1] + np.asarray(runs, dtype=float) - np.asarray(passes, dtype=float)
    return stats.beta.sf(bar, a, b), stats.beta.cdf(floor, a, b)


def regions_of(passes, runs, bar: float, floor: float, prob: float) -> np.ndarray:
    """The region of each point (array form of :func:`classify`'s region, for simulations).

    >>> regions_of([20, 0, 5, 0], [20, 6, 10, 0], 0.8, 0.5, 0.9).tolist()
    ['works', 'fails', 'uncertain', 'not run']
    """
    passes, runs = np.asarray(passes), np.asarray(runs)
    above, below = region_probs(passes, runs, bar, floor)
    out = np.where(above >= prob, "works", np.where(below >= prob, "fails", "uncertain")).astype(object)
    out[runs == 0] = "not run"
    return out


def classify(counts: PointCounts, *, bar: float, floor: float, prob: float, level: float = 0.9) -> PointVerdict:
    """The region, colour and label of one point (see the module's docstring)."""
    a, b = PRIOR[0] + counts.passes, PRIOR[1] + counts.runs - counts.passes
    above, below = (float(x) for x in region_probs(counts.passes, counts.runs, bar, floor))
    lo, hi = (float(x) for x in stats.beta.ppf([(1 - level) / 2, (1 + level) / 2], a, b))
    mean = a / (a + b)
    if counts.runs == 0:
        return PointVerdict("not run", None, None, above, below, mean, lo, hi)
    region = "works" if above >= prob else "fails" if below >= prob else "uncertain"
    label = None
    if region == "uncertain":
        label = "needs a change" if 1 - above >= prob else "needs evidence"
    ranked = [(counts.failed, 2, "fails"), (counts.asked, 1, "asks"), (counts.completed, 0, "completes")]
    return PointVerdict(region, max(ranked)[2], label, above, below, mean, lo, hi)
