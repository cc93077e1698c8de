"""``calibrate``: how often the log-rank calls unchanged pairs of the staged agent different.

No ledger: every pair is simulated (:func:`fluke.simulate.calibrate_null`). The answer holds when
the Wilson interval of the false-alarm share contains the nominal α.

>>> result = calibrate(pairs=40, tasks=10, runs_per_task=8, seed=1)
>>> result.calibration.pairs, sum(result.calibration.histogram), result.seed
(40, 40, 1)
>>> print(result.render()) # doctest: +ELLIPSIS
called different: ... the nominal 5%
...
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any

from ..errors import UsageError
from ..format import fmt_p, fmt_pct, fmt_share
from ._document import Column, Table, line, note
from ._result import Result
from ._select import check_level

CONDITIONAL_ON = "the staged synthetic agent (every stage 0.10); stratified log-rank"


@dataclass(frozen=True)
class NullCalibrationResult(Result):
    """False alarms among unchanged pairs: ``run`` is a :class:`fluke.simulate.NullRun`."""

    kind = "calibration"
    run: Any
    alpha: float
    seed: int
    test: str = "pass rate"
    ceiling: float = 5.0

    @property
    def calibration(self):
        return self.run.calibration

    @property
    def holds(self) -> bool:
        """Whether the Wilson interval of the false-alarm share contains α (``fluke calibrate`` exits 1 if not)."""
        return bool(self.calibration.contains_nominal)

    def payload(self) -> dict[str, Any]:
        run, cal = self.run, self.calibration
        return {
            "pairs": cal.pairs, "false_alarms": cal.false_alarms, "share": cal.share,
            "interval": list(cal.interval), "alpha": self.alpha, "contains_alpha": cal.contains_nominal,
            "verdicts": run.verdicts, "detection_limit_range": [run.limit_min, run.limit_max],
            "histogram": list(cal.histogram), "ks": {"statistic": cal.ks_statistic, "pvalue": cal.ks_pvalue},
            "chi2": {"statistic": cal.chi2_statistic, "pvalue": cal.chi2_pvalue}, "seed": self.seed,
            "tasks": run.tasks, "runs_per_task": run.runs_per_task, "test": self.test, "ceiling": self.ceiling,
            "conditional_on": CONDITIONAL_ON}

    def blocks(self) -> list:
        run, cal = self.run, self.calibration
        lo, hi = cal.interval
        bins = len(cal.histogram)
        top = max(cal.histogram) or 1
        rows = [[f"{i / bins:.2f}–{(i + 1) / bins:.2f}", "█" * round(30 * count / top), str(count)]
                for i, count in enumerate(cal.histogram)]
        return [
            line(f"called different: {fmt_share(cal.false_alarms, cal.pairs)}, Wilson 95% "
                 f"[{fmt_pct(lo, 1)}, {fmt_pct(hi, 1)}] — {'contains' if self.holds else 'MISSES'} "
                 f"the nominal {100 * self.alpha:g}%", style="good" if self.holds else "bad"),
            line(f"{cal.pairs} unchanged pairs ({run.tasks} tasks × {run.runs_per_task} runs per arm), seed "
                 f"{self.seed}; the {self.test} test at α = {self.alpha:g}"),
            line("verdicts: " + ", ".join(f"{k} {v}" for k, v in run.verdicts.items())
                 + f"; detection limit {run.limit_min:.3f} to {run.limit_max:.3f} "
                 + ("points" if self.test == "pass rate" else "(hazard ratio)")
                 + f", ceiling {self.ceiling:g}"),
            Table(f"p-values of the {cal.pairs} pairs in {bins} bins",
                  [Column("p"), Column("", key=True), Column("pairs", "right")], rows, limit=None),
            line(f"uniform p-values? KS p = {fmt_p(cal.ks_pvalue)}, chi-square over {bins} bins "
                 f"p = {fmt_p(cal.chi2_pvalue)}"),
            note("Conditional on the synthetic staged agent: this measures the test's calibration on that null, "
                 "not on any real agent."),
        ]


def calibrate(*, pairs: int = 200, tasks: int = 50, runs_per_task: int = 40, alpha: float = 0.05,
              ceiling: float | None = None, test: str = "pass rate", seed: int | None = None) -> NullCalibrationResult:
    """Compare ``pairs`` unchanged pairs of the staged agent; ``seed=None`` draws one from the OS (kept).

    ``test`` is the comparison calibrated: ``"pass rate"`` (what ``fluke compare`` decides by; its
    ceiling in points, default 5) or ``"log-rank"`` (where runs die; ceiling a hazard ratio, 1.3).
    """
    import numpy as np

    from ..simulate import calibrate_null

    for name, value in (("pairs", pairs), ("tasks", tasks), ("runs_per_task", runs_per_task)):
        if value < 1:
            raise UsageError(f"{name}={value!r} must be at least 1")
    check_level(alpha, "alpha")
    if test not in ("pass rate", "log-rank"):
        raise UsageError(f"test={test!r} must be 'pass rate' or 'log-rank'")
    ceiling = (5.0 if test == "pass rate" else 1.3) if ceiling is None else float(ceiling)
    if test == "log-rank" and not ceiling > 1:
        raise UsageError(f"ceiling={ceiling!r} must exceed 1 (a hazard ratio)")
    if not ceiling > 0:
        raise UsageError(f"ceiling={ceiling!r} must be a positive number of points")
    seed = seed if seed is not None else secrets.randbits(63)
    run = calibrate_null(pairs, tasks=tasks, runs_per_task=runs_per_task, alpha=alpha, ceiling=ceiling, test=test,
                         rng=np.random.default_rng(seed))
    return NullCalibrationResult(run, alpha, seed, test, ceiling)
