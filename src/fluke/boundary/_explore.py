"""Where the next runs tell most about the boundary: expected information gain under a run budget.

What is uncertain about a point is its region: θ above the bar, between floor and bar, or below
the floor, with probabilities from its Beta posterior (uniform prior). Its uncertainty is the
entropy of those three probabilities, in bits. The expected information gain of ``m`` more runs
at a point is that entropy now minus its expectation after the runs, the expectation taken over
the beta-binomial posterior predictive of their passes (exact: a sum over 0..m passes).

Points are taken as independent, so the gain of a plan is the sum over its points. The budget
is spent one run at a time, each to the point whose next run adds most gain given the runs
already planned there (greedy on the marginal gain; ties go to the point with fewer runs).
Given ``prob``, a point whose region is already decided at that probability (it works or
fails on the chart) gets a run only when no undecided point is left: its remaining entropy
is about a region the chart already states.

>>> plan = plan_exploration([0, 10, 5], [0, 10, 10], budget=6, bar=0.8, floor=0.5)
>>> plan.runs   # the point never run gets them all: it is the least known
(6, 0, 0)
>>> plan_exploration([0, 30, 0], [0, 30, 12], budget=4, bar=0.8, floor=0.5, prob=0.9).runs   # the last two are decided
(4, 0, 0)
>>> plan.gain >= plan.gain_even   # spread evenly, the never-run point also gets all six here
True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
from scipy import special

from ..errors import UsageError
from ._regions import PRIOR

#: What the planner states it maximises.
MEASURE = ("expected information gain about each point's region (θ above the bar, between floor and bar, below "
           "the floor), in bits: entropy of the region now minus its expectation over the beta-binomial "
           "predictive of the next runs; points independent, uniform Beta(1, 1) prior; points already decided "
           "at the chart's probability last")


def region_entropy(a, b, bar: float, floor: float) -> np.ndarray:
    """Entropy in bits of (P(θ > bar), P(floor ≤ θ ≤ bar), P(θ < floor)) for Beta(a, b), elementwise.

    >>> round(float(region_entropy(1, 1, 0.8, 0.5)), 3)
    1.485
    """
    above = 1 - special.betainc(a, b, bar)
    below = special.betainc(a, b, floor)
    mid = np.clip(1 - above - below, 0, 1)
    q = np.stack(np.broadcast_arrays(above, mid, below))
    safe = np.where(q > 0, q, 1.0)
    return np.where(q > 0, -q * np.log2(safe), 0.0).sum(axis=0)


def _predictive(k: np.ndarray, m: int, a: float, b: float) -> np.ndarray:
    """The beta-binomial probabilities of ``k`` passes in ``m`` runs under Beta(a, b)."""
    log = (special.gammaln(m + 1) - special.gammaln(k + 1) - special.gammaln(m - k + 1)
           + special.betaln(k + a, m - k + b) - special.betaln(a, b))
    return np.exp(log)


def expected_gain(passes: int, runs: int, m: int, bar: float, floor: float) -> float:
    """Expected entropy reduction of the region from ``m`` more runs at a point with ``passes``/``runs``.

    The expectation is exact (a sum over the 0..m passes the runs may bring); a peer's beta-binomial
    agrees: ``scipy.stats.betabinom.pmf``.

    >>> round(expected_gain(0, 0, 0, 0.8, 0.5), 3), expected_gain(0, 0, 4, 0.8, 0.5) > 0
    (0.0, True)
    """
    if m <= 0:
        return 0.0
    a, b = PRIOR[0] + passes, PRIOR[1] + runs - passes
    k = np.arange(m + 1)
    after = region_entropy(a + k, b + m - k, bar, floor)
    return float(region_entropy(a, b, bar, floor) - np.dot(_predictive(k, m, a, b), after))


@dataclass(frozen=True)
class Exploration:
    """A plan: runs per point, the expected gain, and the gain of the same budget spread evenly."""

    runs: tuple[int, ...]
    budget: int
    gain: float
    gain_even: float
    gains: tuple[float, ...]          # expected gain per point under the plan
    entropy: tuple[float, ...]        # each point's region entropy now
    measure: str = MEASURE


def even_split(points: int, budget: int, runs: Sequence[int] | None = None) -> list[int]:
    """The budget spread evenly: each next run to the point with the fewest runs so far (first first).

    >>> even_split(3, 5), even_split(3, 3, [4, 0, 1])
    ([2, 2, 1], [0, 2, 1])
    """
    have = list(runs) if runs is not None else [0] * points
    add = [0] * points
    for _ in range(budget):
        i = min(range(points), key=lambda j: (have[j] + add[j], j))
        add[i] += 1
    return add


def plan_exploration(passes: Sequence[int], runs: Sequence[int], *, budget: int, bar: float, floor: float,
            prob: float | None = None) -> Exploration:
    """Spend ``budget`` runs over the points (counts given) where they most reduce region entropy;
    with ``prob``, points already decided at it last (see the module's docstring)."""
    if budget < 1:
        raise UsageError(f"--budget {budget} must be at least 1")
    passes = [int(x) for x in passes]
    runs = [int(x) for x in runs]
    if len(passes) != len(runs) or not runs:
        raise UsageError("explore needs the passes and runs of at least one point, as many of each")
    n = len(runs)
    if prob is None:
        open_ = [True] * n
    else:
        from ._regions import regions_of

        open_ = [r not in ("works", "fails") for r in regions_of(passes, runs, bar, floor, prob)]
    plan = [0] * n
    now = [0.0] * n
    nxt = [expected_gain(passes[i], runs[i], 1, bar, floor) for i in range(n)]
    for _ in range(budget):
        i = max(range(n), key=lambda j: (open_[j], round(nxt[j] - now[j], 12), -(runs[j] + plan[j]), -j))
        plan[i] += 1
        now[i] = nxt[i]
        nxt[i] = expected_gain(passes[i], runs[i], plan[i] + 1, bar, floor)
    even = even_split(n, budget, runs)
    gain_even = sum(expected_gain(passes[i], runs[i], even[i], bar, floor) for i in range(n))
    entropy = region_entropy(np.add(passes, PRIOR[0]), np.subtract(runs, passes) + PRIOR[1], bar, floor)
    return Exploration(tuple(plan), budget, float(sum(now)), float(gain_even), tuple(now),
                       tuple(float(x) for x in np.atleast_1d(entropy)))
