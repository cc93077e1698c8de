"""``calibrate``: how often the log-rank calls unchanged pairs of the staged agent different.

No ledger: every pair is simulated (:func:`fluke.simulate.calibrate_null`). The answer holds when
the Wilson interval of the false-alarm share contains the nominal α.

>>> result = calibrate(pairs=40, tasks=10, runs_per_task=8, seed=1)
>>> result.calibration.pairs, sum(result.calibration.histogram), result.seed
(40, 40, 1)
>>> print(result.render()) # doctest: +ELLIPSIS
called different: ... the nominal 5%, but 40 pairs are too few to tell: ... (--pairs 292)
...
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any

from ..errors import UsageError
from ..format import fmt_is, fmt_pct, fmt_share
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
        nominal = f"the nominal {100 * self.alpha:g}%"
        verdict = f"contains {nominal}" if self.holds else \
            f"{'above' if lo > self.alpha else 'below'} {nominal}"
        need = pairs_to_measure(self.alpha)
        wide = (hi - lo) > self.alpha and cal.pairs < need
        if wide:
            verdict += (f", but {cal.pairs} pairs are too few to tell: the interval is {100 * (hi - lo):.1f} points "
                        f"wide; about {need} pairs would measure the false-alarm rate to ±{50 * self.alpha:g} "
                        f"points (--pairs {need})")
        elif not self.holds:
            verdict = "MISSES " + nominal + f" (the share is {verdict.split()[0]} it)"
        return [
            line(f"called different: {fmt_share(cal.false_alarms, cal.pairs)}, Wilson 95% "
                 f"[{fmt_pct(lo, 1)}, {fmt_pct(hi, 1)}] — {verdict}",
                 style="good" if self.holds and not wide else "warn" if wide else "bad"),
            line(f"{cal.pairs} unchanged pairs ({run.tasks} tasks × {run.runs_per_task} runs per arm), seed "
                 f"{self.seed}; the {self.test} test at α = {self.alpha:g}"),
            line("verdicts: " + ", ".join(f"{k} {v}" for k, v in run.verdicts.items())
                 + f"; detection limit {run.limit_min:.3f} to {run.limit_max:.3f} "
                 + ("points" if self.test == "pass rate" else "(hazard ratio)")
                 + f", ceiling {self.ceiling:g}"),
            Table(f"p-values of the {cal.pairs} pairs in {bins} bins",
                  [Column("p"), Column("", key=True), Column("pairs", "right")], rows, limit=None),
            line(f"uniform p-values? KS {fmt_is('p', cal.ks_pvalue, kind='p')}, chi-square over {bins} bins "
                 f"{fmt_is('p', cal.chi2_pvalue, kind='p')}"),
            note("Conditional on the synthetic staged agent: this measures the test's calibration on that null, "
                 "not on any real agent."),
        ]


def pairs_to_measure(alpha: float, *, z: float = 1.959964) -> int:
    """Pairs whose false-alarm share, at the nominal ``alpha``, has a 95% interval of ±alpha/2.

    The normal approximation n = z² α(1 − α) / (α/2)²; below it, an interval that excludes α
    says little about how far off the test is.

    >>> pairs_to_measure(0.05), pairs_to_measure(0.01)
    (292, 1522)
    """
    import math

    return math.ceil(z * z * alpha * (1 - alpha) / (alpha / 2) ** 2)


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
