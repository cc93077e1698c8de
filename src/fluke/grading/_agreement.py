"""Does the reference measure what the benchmark rewards? Its verdict against the recorded outcome.

A run *meets the reference* when grading left no ``reference``, ``reference_extra`` or
``reference_order`` violation (:attr:`fluke.grading.RunGrade.reference_ok`). Set beside the
run's recorded outcome (``outcome.passed``: the benchmark's own reward), every run falls in
one cell of a 2×2 table; the **agreement** is the share of runs on the diagonal, with an
equal-tailed credible interval from its Beta posterior (Jeffreys Beta(½, ½) unless another
prior is given). Runs with no reference verdict (``reference: gold`` on a run without gold)
or an unknown outcome are left out and counted. The sampling unit is the run: trials of one
task are treated as independent, which they are not quite (a task that is hard for the
reference is hard in every trial), so the interval is, if anything, too narrow. The first
:data:`KEPT` disagreeing runs are kept, in the order graded, with the first reference
violation's message (the reason the reference failed the run) when there is one.

>>> from fluke.grading import load_spec, grade_run
>>> from fluke.record import Run, ToolCall, Outcome
>>> spec = load_spec({"reference": [{"tool": "cancel", "args": {"id": "X"}}], "reference_mode": "state",
...                   "writes": ["cancel", "book"], "ground": False})
>>> def run(scenario, passed, *calls):
...     return Run(scenario=scenario, outcome=Outcome(passed=passed),
...                events=[ToolCall(tool=t, args=a, ok=True) for t, a in calls])
>>> grades = [grade_run(run("t1", True, ("cancel", {"id": "X"})), spec),
...           grade_run(run("t1", False, ("book", {"id": "X"})), spec),
...           grade_run(run("t2", True, ("cancel", {"id": "X"}), ("book", {"id": "Y"})), spec)]
>>> found = reference_agreement(grades)
>>> str(found)
'66.7% (2/3 runs), 95% CrI [17.7%, 96.1%]'
>>> [(d.scenario, d.reference_ok, d.output_ok, d.why) for d in found.disagreeing]
[('t2', False, True, "extra write `book(id='Y')` at event 1: the reference makes no such change")]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Sequence

#: The checks whose violations mean a run did not meet its reference.
REFERENCE_CHECKS = frozenset({"reference", "reference_extra", "reference_order"})
#: How many disagreeing runs a tally keeps (per version; the counts cover every run).
KEPT = 100


@dataclass(frozen=True)
class Disagreement:
    """One run whose reference verdict differs from its recorded outcome."""

    scenario: str
    trial: int | None
    run_hash: str
    reference_ok: bool
    output_ok: bool
    why: str | None      # the first reference violation's message (None when the run met it)

    def to_dict(self) -> dict[str, Any]:
        return {"scenario": self.scenario, "trial": self.trial, "run_hash": self.run_hash,
                "reference_ok": self.reference_ok, "output_ok": self.output_ok, "why": self.why}


@dataclass(frozen=True)
class Agreement:
    """The reference's verdict against the recorded outcome over a set of runs.

    ``table[(reference_ok, output_ok)]`` counts the runs of each cell; ``statistic`` (the
    share on the diagonal) and ``interval`` are None with a ``reason`` when no run had both.
    """

    mode: str | None
    table: dict[tuple[bool, bool], int]
    no_verdict: int
    unknown: int
    disagreeing: tuple[Disagreement, ...]
    statistic: float | None
    interval: tuple[float, float] | None
    level: float
    prior: tuple[float, float]
    reason: str | None = None

    @property
    def runs(self) -> int:
        """Runs with both a reference verdict and a known outcome."""
        return sum(self.table.values())

    @property
    def agree(self) -> int:
        return self.table[True, True] + self.table[False, False]

    def __str__(self) -> str:
        if self.statistic is None:
            return f"— ({self.reason})"
        from ._verdict import share_text

        return share_text(self.statistic, self.agree, self.runs, "runs", self.level, self.interval)

    def to_dict(self) -> dict[str, Any]:
        t = self.table
        return {"mode": self.mode, "runs": self.runs, "agree": self.agree, "statistic": self.statistic,
                "interval": self.interval, "level": self.level,
                "prior": {"alpha": self.prior[0], "beta": self.prior[1]}, "reason": self.reason,
                "table": {"reference_ok_output_ok": t[True, True], "reference_ok_output_fail": t[True, False],
                          "reference_fail_output_ok": t[False, True], "reference_fail_output_fail": t[False, False]},
                "no_verdict": self.no_verdict, "unknown_outcome": self.unknown,
                "disagreeing": [d.to_dict() for d in self.disagreeing],
                "disagreeing_kept": len(self.disagreeing), "disagreeing_total": self.runs - self.agree}


def reference_ok(grade: Any) -> bool | None:
    """Did ``grade``'s run meet its reference? None when the spec has none or the run had no gold."""
    ref = grade.reference
    if ref is None or ref.reason:
        return None
    return not any(v.check in REFERENCE_CHECKS for v in grade.violations)


class AgreementCounts:
    """The counts and the kept disagreements of one version, built a grade at a time and
    merged in order (what :class:`fluke.grading.GradeTally` keeps). Picklable."""

    __slots__ = ("cells", "no_verdict", "unknown", "kept", "mode")

    def __init__(self) -> None:
        self.cells = [0, 0, 0, 0]      # index 2 * (not reference_ok) + (not output_ok)
        self.no_verdict = self.unknown = 0
        self.kept: list[Disagreement] = []
        self.mode: str | None = None

    def add(self, grade: Any) -> None:
        met = reference_ok(grade)
        if self.mode is None and grade.reference is not None:
            self.mode = grade.reference.mode
        if met is None:
            self.no_verdict += 1
            return
        out = grade.output_ok
        if out is None:
            self.unknown += 1
            return
        self.cells[2 * (not met) + (not out)] += 1
        if met != out and len(self.kept) < KEPT:
            why = next((v.message for v in grade.violations if v.check in REFERENCE_CHECKS), None)
            self.kept.append(Disagreement(grade.scenario, grade.trial, grade.run_hash, met, bool(out), why))

    def merge(self, other: "AgreementCounts") -> None:
        self.cells = [a + b for a, b in zip(self.cells, other.cells, strict=True)]
        self.no_verdict += other.no_verdict
        self.unknown += other.unknown
        self.kept += other.kept[:KEPT - len(self.kept)]
        self.mode = self.mode or other.mode

    def result(self, *, prior: Sequence[float] = (0.5, 0.5), level: float = 0.95) -> Agreement:
        """The :class:`Agreement` these counts give."""
        from ._verdict import _check_prior, credible_interval

        a, b = _check_prior(prior, level)
        tt, tf, ft, ff = self.cells
        table = {(True, True): tt, (True, False): tf, (False, True): ft, (False, False): ff}
        n, k = tt + tf + ft + ff, tt + ff
        if not n:
            return Agreement(self.mode, table, self.no_verdict, self.unknown, tuple(self.kept), None, None,
                             level, (a, b), "no run had both a reference verdict and a known outcome: "
                                            "too few to tell")
        interval = tuple(float(x) for x in credible_interval(k, n, (a, b), level))
        return Agreement(self.mode, table, self.no_verdict, self.unknown, tuple(self.kept), k / n, interval,
                         level, (a, b))


def reference_agreement(grades: Iterable[Any], *, prior: Sequence[float] = (0.5, 0.5),
                        level: float = 0.95) -> Agreement:
    """The agreement of the reference's verdict with the recorded outcome over ``grades``
    (one version's; see the module docstring for an example)."""
    counts = AgreementCounts()
    for g in grades:
        counts.add(g)
    return counts.result(prior=prior, level=level)
