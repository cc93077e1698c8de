"""Would the difference hold on new tasks? B − A with the scenarios as a sample.

The question is about the population of scenarios the runs' scenarios were drawn from, so the
unit is the scenario: each arm's pass rate (the mean over strata of passes/trials) has a
standard error clustered by scenario (CR2, Bell–McCaffrey degrees of freedom; with one stratum
per scenario, the scenario means' t on G − 1), and so has their difference.

A symmetric t interval on the difference covered 86–88% where few scenarios meet a pass rate
near 1 (30 × 1 run per arm at 0.99, 10 × 2/20 runs at 0.9: issue 35's atlas): a share near its
bound is skewed, and its standard error shrinks with the room it has. The interval here is the
Newcombe hybrid score interval (MOVER, Zou and Donner) built from each arm's Wilson score
interval on its effective sample size (:func:`fluke.inference.wilson_effective`, the one
``fluke interval`` uses), with the two arms' correlation over scenarios from the same CR2
sandwich:

    low  = d − √((B − l_B)² + (u_A − A)² − 2ρ (B − l_B)(u_A − A))
    high = d + √((u_B − B)² + (A − l_A)² − 2ρ (u_B − B)(A − l_A))

It is never of zero width (an arm that passed, or failed, every run gets a Wilson bound on one
draw per scenario), stays inside [−100, +100] points, and coincides with the t interval when the
rates are far from their bounds and the scenarios many.

>>> r = new_tasks_interval([20, 18, 19, 17], [20] * 4, [15, 12, 16, 14], [20] * 4)
>>> round(r.low, 1), round(r.high, 1), r.df
(-36.8, -6.5, 3.0)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special

from ..format import fmt_df
from ..inference import check_level, clustered_interval, wilson_effective

__all__ = ["NewTasksInterval", "new_tasks_interval"]


@dataclass(frozen=True)
class NewTasksInterval:
    """B − A in points on new tasks: (low, high) at ``confidence_level``, or NaN and ``reason``."""

    low: float
    high: float
    confidence_level: float
    scenarios: int
    df: float
    method: str
    reason: str | None = None


def new_tasks_interval(passes_a, trials_a, passes_b, trials_b, scenarios=None, *,
                       confidence_level: float = 0.95) -> NewTasksInterval:
    """The new-tasks interval of B − A in points (see the module docstring).

    One entry per stratum; ``scenarios`` names each stratum's scenario (the cluster), by
    default every stratum its own. Fewer than two scenarios give no interval, and say why.

    >>> new_tasks_interval([3], [4], [2], [4]).reason
    'one scenario: an interval over scenarios needs two'
    >>> r = new_tasks_interval([1] * 30, [1] * 30, [1] * 30, [1] * 30)   # every run passed
    >>> r.low < 0 < r.high and r.high - r.low > 10
    True
    """
    level = check_level(confidence_level, "confidence_level")
    pa, na, pb, nb = (np.asarray(x, dtype=float).reshape(-1) for x in (passes_a, trials_a, passes_b, trials_b))
    labels = np.arange(pa.size) if scenarios is None else np.asarray(scenarios).reshape(-1)
    g = int(np.unique(labels).size)
    nan = math.nan
    if g < 2:
        return NewTasksInterval(nan, nan, level, g, nan, "none", "one scenario: an interval over scenarios needs two")
    ra, rb = pa / na, pb / nb
    # the plain CR2 pieces (scale="t": the Wilson step is taken here, on each arm)
    fit_a, fit_b, fit_d = (clustered_interval(v, labels, confidence_level=level, unit="scenario", scale="t")
                           for v in (ra, rb, rb - ra))
    se_a, se_b = fit_a.standard_error, fit_b.standard_error
    t = float(special.stdtrit(fit_d.df, 0.5 + level / 2))
    a, b = fit_a.statistic, fit_b.statistic
    low_a, high_a = wilson_effective(a, se_a, t, float(na.sum()), g)
    low_b, high_b = wilson_effective(b, se_b, t, float(nb.sum()), g)
    cov = (se_a * se_a + se_b * se_b - fit_d.standard_error ** 2) / 2
    rho = min(max(cov / (se_a * se_b), -1.0), 1.0) if se_a > 0 and se_b > 0 else 0.0
    down_b, up_a = b - low_b, high_a - a
    up_b, down_a = high_b - b, a - low_a
    d = b - a
    low = d - math.sqrt(max(down_b * down_b + up_a * up_a - 2 * rho * down_b * up_a, 0.0))
    high = d + math.sqrt(max(up_b * up_b + down_a * down_a - 2 * rho * up_b * down_a, 0.0))
    sandwich = "cluster means" if fit_d.method == "cluster means" else "CR2 sandwich"
    method = f"Newcombe's hybrid of the arms' Wilson scores on effective sizes, {sandwich}, t on {fmt_df(fit_d.df)} df"
    return NewTasksInterval(100 * max(low, -1.0), 100 * min(high, 1.0), level, g, float(fit_d.df), method)
