"""The gate and the luck rate: what a batch of graded runs means for the build and for belief.

The **gate** fails on one hard violation anywhere; a soft check fails a case only when a
strict majority of that case's runs fail that check; warnings never fail it.

The **luck rate** is |output ok and path not ok| / |output ok|: of the runs that looked
green, the share that got there on a bad path (warnings count). With no output-ok run it is
undefined ("—"), never 0. Its credible interval is the equal-tailed interval of the Beta
posterior under a Jeffreys Beta(1/2, 1/2) prior unless another prior is given; the sampling
unit is the run, and the pooled figure treats runs of different cases as exchangeable.

>>> from fluke.grading._grade import make_grade, Violation
>>> warn = Violation("ungrounded", "warn", 3, "invented id")
>>> grades = [make_grade("a", "c1", [warn], True), make_grade("b", "c1", [], True),
...           make_grade("c", "c1", [], False)]
>>> report = luck_rate(grades)
>>> report.pooled.lucky, report.pooled.green, str(report.pooled)
(1, 2, '50.0% (1/2 output-ok runs), 95% CrI [6.1%, 93.9%]')
>>> evaluate_gate(grades).passed
True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np
from scipy import stats

from ..errors import UsageError
from ..format import natural_key
from ._grade import RunGrade

JEFFREYS = (0.5, 0.5)


@dataclass(frozen=True)
class LuckRate:
    """The luck rate of a set of runs: counts, the share, and its credible interval.

    ``statistic`` and ``interval`` are None when no run was output-ok (``reason`` says so).
    """

    lucky: int
    green: int
    runs: int
    statistic: float | None
    interval: tuple[float, float] | None
    level: float
    prior: tuple[float, float]
    reason: str | None = None

    def __str__(self) -> str:
        if self.statistic is None:
            return f"— (0 output-ok runs of {self.runs})"
        return share_text(self.statistic, self.lucky, self.green, "output-ok runs", self.level, self.interval)

    def to_dict(self) -> dict:
        return {"lucky": self.lucky, "green": self.green, "runs": self.runs,
                "statistic": self.statistic, "interval": self.interval, "level": self.level,
                "prior": {"alpha": self.prior[0], "beta": self.prior[1]}, "reason": self.reason}


@dataclass(frozen=True)
class LuckReport:
    """The luck rate pooled over every run and per case (scenario)."""

    pooled: LuckRate
    cases: dict[str, LuckRate]
    conditional_on: str

    def to_dict(self) -> dict:
        return {"pooled": self.pooled.to_dict(),
                "cases": {k: v.to_dict() for k, v in self.cases.items()},
                "conditional_on": self.conditional_on}


def _check_prior(prior: Sequence[float], level: float) -> tuple[float, float]:
    if len(prior) != 2 or not all(np.isfinite(prior)) or min(prior) <= 0:
        raise UsageError(f"prior={tuple(prior)!r} must be two positive numbers (alpha, beta)")
    if not 0 < level < 1:
        raise UsageError(f"level={level!r} must be between 0 and 1")
    return float(prior[0]), float(prior[1])


def share_text(statistic: float, k: int, n: int, noun: str, level: float, interval) -> str:
    """A share in percent with its counts and its credible interval, as luck and agreement print it.

    >>> share_text(0.5, 1, 2, "runs", 0.95, (0.061, 0.939))
    '50.0% (1/2 runs), 95% CrI [6.1%, 93.9%]'
    """
    lo, hi = interval
    from ..format import fmt_interval

    return f"{100 * statistic:.1f}% ({k}/{n} {noun}), {100 * level:.0f}% CrI {fmt_interval(lo, hi, percent=True)}"


def credible_interval(k, n, prior: tuple[float, float], level: float):
    """The equal-tailed credible interval of a share from ``k`` of ``n`` under a Beta prior (arrays or numbers).

    >>> [round(float(x), 3) for x in credible_interval(1, 2, (0.5, 0.5), 0.95)]
    [0.061, 0.939]
    """
    a, b = prior
    tail = (1 - level) / 2
    return stats.beta.ppf(tail, a + k, b + n - k), stats.beta.ppf(1 - tail, a + k, b + n - k)


def luck_rates(lucky: np.ndarray, green: np.ndarray, runs: np.ndarray, *,
               prior: Sequence[float] = JEFFREYS, level: float = 0.95) -> list[LuckRate]:
    """Luck rates from count arrays (vectorised; one result per element).

    >>> [str(r) for r in luck_rates(np.array([0, 2]), np.array([0, 4]), np.array([3, 5]))]
    ['— (0 output-ok runs of 3)', '50.0% (2/4 output-ok runs), 95% CrI [12.3%, 87.7%]']
    """
    a, b = _check_prior(prior, level)
    lucky, green, runs = (np.asarray(x, dtype=np.int64) for x in (lucky, green, runs))
    bad = (lucky < 0) | (lucky > green) | (green > runs)
    if np.any(bad):
        i = int(np.argmax(bad))
        raise UsageError(f"counts at position {i} (lucky={lucky[i]}, green={green[i]}, runs={runs[i]}) "
                            "must satisfy 0 <= lucky <= green <= runs")
    lo, hi = credible_interval(lucky, green, (a, b), level)
    share = np.divide(lucky, green, out=np.full(lucky.shape, np.nan), where=green > 0)
    out = []
    for k, g, n, s, l, h in zip(lucky.tolist(), green.tolist(), runs.tolist(), share.tolist(),
                                lo.tolist(), hi.tolist(), strict=True):
        if g == 0:
            out.append(LuckRate(k, g, n, None, None, level, (a, b),
                                "no run was output-ok, so there is nothing to be lucky about"))
        else:
            out.append(LuckRate(k, g, n, s, (l, h), level, (a, b)))
    return out


def luck_rate(grades: Iterable[RunGrade], *, prior: Sequence[float] = JEFFREYS,
              level: float = 0.95) -> LuckReport:
    """The luck rate per case and pooled (see the module docstring).

    Pass the grades of one version; cases are keyed by scenario. Only ``scenario``,
    ``output_ok`` and ``path_ok`` are read, so any object with those will do.
    """
    per: dict[str, list[int]] = {}
    for g in grades:
        row = per.get(g.scenario)
        if row is None:
            row = per[g.scenario] = [0, 0, 0]
        if g.output_ok is True:
            row[1] += 1
            row[0] += not g.path_ok
        row[2] += 1
    return luck_report(per, prior=prior, level=level)


def luck_report(per_case: dict[str, Sequence[int]], *, prior: Sequence[float] = JEFFREYS,
                level: float = 0.95) -> LuckReport:
    """The luck rate from counts: ``per_case`` maps a scenario to (lucky, output ok, runs).

    >>> str(luck_report({"a": (1, 2, 3), "b": (0, 0, 1)}).pooled)
    '50.0% (1/2 output-ok runs), 95% CrI [6.1%, 93.9%]'
    """
    names = sorted(per_case, key=natural_key)
    counts = np.array([per_case[n] for n in names], dtype=np.int64).reshape(len(names), 3)
    totals = counts.sum(axis=0)
    rows = luck_rates(np.append(counts[:, 0], totals[0]), np.append(counts[:, 1], totals[1]),
                      np.append(counts[:, 2], totals[2]), prior=prior, level=level)
    a, b = _check_prior(prior, level)
    cond = (f"sampling unit: the run; {100 * level:.0f}% equal-tailed credible interval under a "
            f"Beta({a:g}, {b:g}) prior{' (Jeffreys)' if (a, b) == JEFFREYS else ''}; "
            "path ok means no violation of any severity")
    return LuckReport(pooled=rows[-1], cases=dict(zip(names, rows[:-1], strict=True)), conditional_on=cond)


@dataclass(frozen=True)
class CaseGate:
    """The gate's view of one case: hard runs, and per soft check how many runs failed it."""

    version: str | None
    scenario: str
    runs: int
    hard_runs: int
    soft: dict[str, int]
    failed: bool
    reasons: tuple[str, ...]


@dataclass(frozen=True)
class GateResult:
    """Whether the batch passes the gate, with the failing cases and why."""

    passed: bool
    cases: tuple[CaseGate, ...]

    @property
    def reasons(self) -> list[str]:
        return [f"{c.scenario}: {r}" for c in self.cases for r in c.reasons]

    def to_dict(self) -> dict:
        return {"passed": self.passed, "reasons": self.reasons,
                "cases": [{"version": c.version, "scenario": c.scenario, "runs": c.runs,
                           "hard_runs": c.hard_runs, "soft": c.soft, "failed": c.failed}
                          for c in self.cases]}


def evaluate_gate(grades: Iterable[RunGrade]) -> GateResult:
    """Hard fails on one occurrence; soft when a strict majority of a case's runs fail that check.

    >>> from fluke.grading._grade import make_grade, Violation
    >>> long = Violation("max_steps", "soft", 9, "too long")
    >>> two_of_three = [make_grade(h, "c", [long] if h != "z" else [], True) for h in "xyz"]
    >>> evaluate_gate(two_of_three).passed, evaluate_gate(two_of_three[1:]).passed   # 2/3 fails; 1/2 does not
    (False, True)
    """
    from ._tally import GradeTally

    return GradeTally.of(grades).gate()
