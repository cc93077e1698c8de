"""What the gate, the luck rate and the reference summary need of graded runs: counts.

A :class:`GradeTally` takes grades one at a time and keeps, per version × scenario, how many
runs there were, how many had an unknown outcome, how many were output ok, how many of those
were lucky, how many broke a hard check and how many failed each soft check; and per version
the sums the reference summary averages. Its size grows with the cases, never with the runs,
so a million grades cost what a thousand do; tallies of parts of a ledger (one per worker
chunk) merge into the tally of the whole. :func:`fluke.grading.evaluate_gate` is this tally over a list of grades.

>>> from fluke.grading import make_grade, Violation
>>> long = Violation("max_steps", "soft", 9, "too long")
>>> tally = GradeTally()
>>> for h in "xyz":
...     tally.add(make_grade(h, "c", [long] if h != "z" else [], True, version="v"))
>>> tally.gate().passed, tally.luck("v").pooled.lucky, tally.runs
(False, 2, 3)
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from ..format import natural_key
from ._agreement import Agreement, AgreementCounts
from ._grade import RunGrade

# a case's counts: runs, unknown outcomes, output ok, lucky, hard runs, {soft check: runs}
_RUNS, _UNKNOWN, _GREEN, _LUCKY, _HARD, _SOFT = range(6)
# a version's reference sums: runs with a recall, complete, precision sum and count, recall
# sum, score sum and count
_REF = 7


class GradeTally:
    """Counts of graded runs per version × scenario (see the module docstring). Picklable."""

    __slots__ = ("cases", "refs", "modes", "runs", "agreements")

    def __init__(self) -> None:
        self.cases: dict[tuple[str | None, str], list] = {}
        self.refs: dict[str | None, list[float]] = {}
        self.modes: dict[str | None, str] = {}
        self.agreements: dict[str | None, AgreementCounts] = {}
        self.runs = 0

    @classmethod
    def of(cls, grades: Iterable[RunGrade]) -> "GradeTally":
        """The tally of ``grades``."""
        tally = cls()
        for g in grades:
            tally.add(g)
        return tally

    def add(self, g: RunGrade) -> None:
        """Count one grade."""
        key = (g.version, g.scenario)
        case = self.cases.get(key)
        if case is None:
            case = self.cases[key] = [0, 0, 0, 0, 0, {}]
        case[_RUNS] += 1
        if g.output_ok is None:
            case[_UNKNOWN] += 1
        elif g.output_ok:
            case[_GREEN] += 1
            if not g.path_ok:
                case[_LUCKY] += 1
        if g.hard:
            case[_HARD] += 1
        if g.soft_checks:
            soft = case[_SOFT]
            for check in g.soft_checks:
                soft[check] = soft.get(check, 0) + 1
        ref = g.reference
        if ref is not None:
            counts = self.agreements.get(g.version)
            if counts is None:
                counts = self.agreements[g.version] = AgreementCounts()
            counts.add(g)
        if ref is not None and ref.recall is not None:
            sums = self.refs.get(g.version)
            if sums is None:
                sums = self.refs[g.version] = [0.0] * _REF
                self.modes[g.version] = ref.mode
            sums[0] += 1
            sums[1] += bool(ref.complete)
            if ref.precision is not None:
                sums[2] += ref.precision
                sums[3] += 1
            sums[4] += ref.recall
            if ref.score is not None:
                sums[5] += ref.score
                sums[6] += 1
        self.runs += 1

    def merge(self, other: "GradeTally") -> None:
        """Add ``other``'s counts (the tally of other runs) to these."""
        for key, theirs in other.cases.items():
            mine = self.cases.get(key)
            if mine is None:
                self.cases[key] = [*theirs[:_SOFT], dict(theirs[_SOFT])]
                continue
            for i in range(_SOFT):
                mine[i] += theirs[i]
            for check, k in theirs[_SOFT].items():
                mine[_SOFT][check] = mine[_SOFT].get(check, 0) + k
        for version, theirs in other.refs.items():
            mine = self.refs.setdefault(version, [0.0] * _REF)
            self.modes.setdefault(version, other.modes[version])
            for i in range(_REF):
                mine[i] += theirs[i]
        for version, theirs in other.agreements.items():
            mine = self.agreements.get(version)
            if mine is None:
                mine = self.agreements[version] = AgreementCounts()
            mine.merge(theirs)
        self.runs += other.runs

    def versions(self) -> list[str | None]:
        """The versions counted, in the order first seen."""
        return list(dict.fromkeys(v for v, _ in self.cases))

    def version_runs(self, version: str | None) -> int:
        """How many runs of ``version`` were counted."""
        return sum(c[_RUNS] for (v, _), c in self.cases.items() if v == version)

    def unknowns(self, version: str | None) -> int:
        """How many runs of ``version`` had an unknown outcome."""
        return sum(c[_UNKNOWN] for (v, _), c in self.cases.items() if v == version)

    def gate(self):
        """The gate (:func:`fluke.grading.evaluate_gate`) over every run counted."""
        from ._verdict import CaseGate, GateResult

        cases = []
        for (version, scenario), c in sorted(self.cases.items(),
                                             key=lambda kv: (str(kv[0][0]), natural_key(kv[0][1]))):
            n, hard_runs, soft = c[_RUNS], c[_HARD], dict(sorted(c[_SOFT].items()))
            reasons = [f"hard violation in {hard_runs} of {n} runs"] if hard_runs else []
            reasons += [f"soft check {check} failed in {k} of {n} runs (a majority)"
                        for check, k in soft.items() if 2 * k > n]
            cases.append(CaseGate(version, scenario, n, hard_runs, soft, bool(reasons), tuple(reasons)))
        return GateResult(passed=not any(c.failed for c in cases), cases=tuple(cases))

    def luck(self, version: str | None, *, prior: Sequence[float] = (0.5, 0.5), level: float = 0.95,
             exclude_unknown: bool = False):
        """The luck rate (:func:`fluke.grading.luck_rate`) of ``version``'s runs, per case and
        pooled; ``exclude_unknown`` leaves runs whose outcome is unknown out of the runs
        counted (they are never output ok, so never lucky either way)."""
        from ._verdict import luck_report

        per: dict[str, list[int]] = {}
        for (v, scenario), c in self.cases.items():
            if v == version:
                runs = c[_RUNS] - (c[_UNKNOWN] if exclude_unknown else 0)
                if runs:
                    row = per.setdefault(scenario, [0, 0, 0])
                    row[0] += c[_LUCKY]
                    row[1] += c[_GREEN]
                    row[2] += runs
        return luck_report(per, prior=prior, level=level)

    def reference(self, version: str | None) -> dict[str, Any] | None:
        """How ``version``'s runs met the spec's reference: ``{"mode", "runs", "complete",
        "precision", "recall", "score"}`` (means; NaN when nothing to average), or None."""
        sums = self.refs.get(version)
        if not sums:
            return None
        n, complete, p, p_n, r, s, s_n = sums
        nan = float("nan")
        return {"mode": self.modes[version], "runs": int(n), "complete": int(complete),
                "precision": p / p_n if p_n else nan, "recall": r / n if n else nan,
                "score": s / s_n if s_n else nan}

    def agreement(self, version: str | None, *, prior: Sequence[float] = (0.5, 0.5),
                  level: float = 0.95) -> Agreement | None:
        """How ``version``'s reference verdicts agree with its recorded outcomes
        (:func:`fluke.grading.reference_agreement`), or None when the spec has no reference."""
        counts = self.agreements.get(version)
        return None if counts is None else counts.result(prior=prior, level=level)
