"""Where the runs die: the survival analysis, run only where failure steps are known.

A failed run's failure step is known when the harness recorded ``died_at``, when a spec put
it at the first hard violation, or when the run ends on a failed tool call (an engine that
rejects a call and ends the episode). A failed run that ends any other way has no known
failure step: putting it at its last event would make the test about trajectory length, not
about where runs fail. So those runs are left out and counted, and when no failed run has a
known step the analysis is skipped and says so.

Over the runs that remain: the log-rank stratified by scenario with its limit from the
information V, the hazard ratio from a stratified Cox fit (Efron ties, Wald interval), and
per-step deaths stratified by scenario with Benjamini–Hochberg q-values.

>>> import numpy as np
>>> w = compare_where([1, 2, 3, 3, 1, 1, 3, 3], [1, 1, 0, 0, 1, 1, 0, 0], np.arange(8) >= 4)
>>> w.skipped, w.survival.verdict, w.hazard_ratio.estimator.split(" (")[0]
(False, 'too small to tell', 'stratified Cox partial likelihood')
>>> compare_where([3, 3], [0, 0], [False, True], unknown_step=(1, 1)).skipped
True
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from ..errors import UsageError
from ..format import fmt_interval
from ._cox import HazardRatio, stratified_cox
from ._steps import StepTable, per_step
from ._verdict import SurvivalComparison, compare_survival

__all__ = ["ASSUMPTIONS", "WhereComparison", "compare_where"]

#: What the survival analysis assumes; printed with it.
ASSUMPTIONS = (
    "proportional hazards within each scenario: one hazard ratio holds at every step",
    "runs independent given their scenario; failed runs with no known failure step left out "
    "(this is unbiased only if knowing the step does not depend on the arm)",
)


@dataclass(frozen=True)
class WhereComparison:
    """The survival analysis of where B's runs die against A's, or why it was skipped."""

    skipped: bool
    reason: str | None
    survival: SurvivalComparison | None
    hazard_ratio: HazardRatio | None
    steps: StepTable
    runs_a: int
    runs_b: int
    unknown_step: tuple[int, int]
    assumptions: tuple[str, ...]

    @property
    def allocation(self) -> str:
        """Runs compared per arm, as A:B."""
        return f"{self.runs_a}:{self.runs_b}"

    def to_dict(self) -> dict:
        """Plain data for JSON: every field (the tests nested), the allocation and the summary."""
        out = asdict(self)
        out.update(allocation=self.allocation, summary=self.summary(), unknown_step=list(self.unknown_step),
                   assumptions=list(self.assumptions))
        return out

    def summary(self) -> str:
        """One line: skipped with its reason, or the log-rank summary with the hazard ratio."""
        if self.skipped:
            return f"where: skipped ({self.reason})"
        hr = self.hazard_ratio
        line = f"where: {self.survival.summary()}"
        if not self.survival.logrank.variance > 0:
            line += "; no hazard ratio (the log-rank has no information: no death could have fallen in either arm)"
        elif hr is not None and hr.reason is None:
            line += f"; hazard ratio B/A {hr.estimate:.3f} {fmt_interval(hr.low, hr.high)} ({hr.estimator})"
        elif hr is not None:
            line += f"; hazard ratio undefined ({hr.reason})"
        hidden = self.unknown_step[0] + self.unknown_step[1]
        if hidden:
            line += f"; {hidden} failed runs with no known failure step left out"
        return line + f"; allocation A:B {self.allocation}; assumes " + "; ".join(self.assumptions)


def compare_where(time, died, group, *, strata=None, labels=None, unknown_step: tuple[int, int] = (0, 0),
                  alpha: float = 0.05, power: float = 0.8, ceiling: float = 1.3,
                  confidence_level: float = 0.95, weights=None) -> WhereComparison:
    """Survival of B's runs (``group`` True) against A's over runs whose failure step is known.

    ``time`` is the failure step of failed runs and the last event of passing ones; failed runs
    with no known step must already be left out, their number per arm in ``unknown_step``.
    ``weights`` says how many runs each entry stands for (counted runs, as the ledger's
    ``steps`` table keeps them): the answer is exactly that of the runs one by one.

    >>> w = compare_where([1, 1, 4, 4], [1, 0, 0, 0], [False, True, False, True])
    >>> w.allocation, w.unknown_step
    ('2:2', (0, 0))
    """
    time = np.asarray(time, dtype=float).reshape(-1)
    died = np.asarray(died, dtype=bool).reshape(-1)
    group = np.asarray(group, dtype=bool).reshape(-1)
    if not (time.size == died.size == group.size):
        raise UsageError("time, died and group need one entry per run", argument="died")
    unknown_step = (int(unknown_step[0]), int(unknown_step[1]))
    w = np.ones(time.size, dtype=np.int64) if weights is None else np.asarray(weights).reshape(-1).astype(np.int64)
    runs_b = int(w[group].sum())
    runs_a = int(w.sum()) - runs_b
    if not (died & (w > 0)).any():
        hidden = unknown_step[0] + unknown_step[1]
        reason = ("no failed run has a known failure step: the harness records no died_at and the "
                  f"{hidden} failed runs end without a failed tool call, so where they fail is not known"
                  if hidden else "no run failed")
        return WhereComparison(True, reason, None, None, StepTable(()), runs_a, runs_b, unknown_step,
                               ASSUMPTIONS)
    survival = compare_survival(time, died, group, strata=strata, alpha=alpha, power=power, ceiling=ceiling,
                                weights=weights)
    hr = stratified_cox(time, died, group, strata=strata, confidence_level=confidence_level, weights=weights)
    steps = per_step(time, died, group, labels=labels, strata=strata, weights=weights)
    return WhereComparison(False, None, survival, hr, steps, runs_a, runs_b, unknown_step, ASSUMPTIONS)
