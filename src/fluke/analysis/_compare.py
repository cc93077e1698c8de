"""``compare``: B against A on when their runs die, with the detection limit printed beside the verdict.

Picks both arms out of the ledger (:func:`~fluke.analysis.select_arm`), optionally moves each
failed run's death to its first hard violation under a grading spec, runs
:func:`fluke.comparison.compare_runs` and records the verdict in the ledger (a ``comparison``
document, which ``fluke simulate --reveal`` later asks for).

>>> import os, tempfile
>>> from fluke.ledger import open_ledger
>>> from fluke.simulate import support_desk
>>> ledger = open_ledger(os.path.join(tempfile.mkdtemp(), "cmp.db"))
>>> desk = support_desk(scenarios=6, trials=8, planted_factor=4, seed=3)
>>> _ = ledger.ingest(list(desk.version(1)) + list(desk.version(2)))
>>> a, b = (v.version[:12] for v in ledger.versions())
>>> result = compare(ledger, a, b, record=False)
>>> result.to_dict()["kind"], result.verdict, result.comparison.strata
('comparison', 'too small to tell', 12)
>>> print(result.render()) # doctest: +ELLIPSIS
too small to tell (p = 0.637); could not have detected a hazard ratio below 2.425, and 1.3 was asked for; ...
p = 0.637; B's deaths 21 against 19.6 expected; hazard ratio B/A ≈ 1.177
...
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from ..errors import FlukeError, UsageError
from ..format import fmt_num, fmt_p, fmt_share, natural_key
from ._document import Column, Span, Table, blank, line, note
from ._result import Result
from ._select import Arm, check_level, disjoint, select_arm

#: What a ledger keeps of each comparison (enough for a later reveal to see what was compared).
RECORDED_KEYS = ("a", "b", "verdict", "pvalue", "detection_limit", "scenario")


@dataclass(frozen=True)
class ComparisonResult(Result):
    """Arm B against arm A: the stratified log-rank verdict, per-step and per-cell tests.

    ``comparison`` is what :func:`fluke.comparison.compare_runs` returned; ``rows`` is how many
    per-step and per-cell rows the text shows (0: none; ``--all`` shows every one).
    """

    kind = "comparison"
    a: Arm
    b: Arm
    comparison: Any
    scenario: str | None = None
    spec: str | None = None
    rows: int = 8
    recorded: bool = False

    @property
    def verdict(self) -> str:
        return self.comparison.result.verdict

    def conditional_on(self) -> str:
        found = self.comparison
        r = found.result
        return (f"runs of A ({', '.join(v[:12] for v in self.a.versions)}) and B "
                f"({', '.join(v[:12] for v in self.b.versions)}) in the {found.strata} scenario × condition "
                f"strata both ran; log-rank stratified by stratum; α = {r.alpha:g}, power = {r.power:g}, "
                f"ceiling {r.ceiling:g}; died_at from "
                + ", ".join(f"{k} {v}" for k, v in found.died_from.items() if v))

    def payload(self) -> dict[str, Any]:
        from ..comparison import CLOSING_STATEMENT

        found = self.comparison
        r, lr = found.result, found.result.logrank
        return {
            "a": {**self.a.describe(), "compared": r.runs_a, "deaths": r.deaths_a},
            "b": {**self.b.describe(), "compared": r.runs_b, "deaths": r.deaths_b},
            "scenario": self.scenario, "spec": self.spec, "strata": found.strata, "excluded": found.excluded,
            "died_at_from": found.died_from, "verdict": r.verdict, "pvalue": r.pvalue, "statistic": r.statistic,
            "detection_limit": r.detection_limit, "ceiling": r.ceiling, "alpha": r.alpha, "power": r.power,
            "runs_needed_per_arm": r.runs_needed_per_arm, "direction": r.direction,
            "hazard_ratio": lr.hazard_ratio, "observed_b": lr.observed, "expected_b": lr.expected,
            "summary": r.summary(),
            "steps": [dataclasses.asdict(s) for s in found.steps.steps],
            "cells": [dataclasses.asdict(c) for c in found.cells.cells],
            "cells_only_a": list(found.cells.only_a), "cells_only_b": list(found.cells.only_b),
            "conditional_on": self.conditional_on(), "statement": CLOSING_STATEMENT,
        }

    def recorded_body(self) -> dict[str, Any]:
        """The part of :meth:`payload` kept in the ledger as a ``comparison`` document."""
        doc = self.payload()
        return {k: doc[k] for k in RECORDED_KEYS}

    def blocks(self) -> list:
        from ..comparison import CLOSING_STATEMENT, DIFFERENT, TOO_SMALL

        found = self.comparison
        r = found.result
        style = {DIFFERENT: "bad", TOO_SMALL: "warn"}.get(r.verdict, "good")
        summary = r.summary()
        out: list = [
            line(Span(r.verdict, style), summary[len(r.verdict):]),
            line(f"p = {fmt_p(r.pvalue)}; B's deaths {r.logrank.observed:.0f} against {r.logrank.expected:.1f} "
                 f"expected; hazard ratio B/A ≈ {fmt_num(r.logrank.hazard_ratio)}"),
            line(Span("A ", "bold"), self.a.line(), f"   {fmt_share(r.deaths_a, r.runs_a)} died"),
            line(Span("B ", "bold"), self.b.line(), f"   {fmt_share(r.deaths_b, r.runs_b)} died"),
        ]
        if found.steps.steps and self.rows:
            steps = sorted(found.steps.steps, key=lambda s: (s.qvalue, s.step))
            out.append(Table(
                "deaths per step (runs at risk there), Fisher exact, BH across steps",
                [Column("step", "right"), Column("event", key=True), Column("A", "right"), Column("B", "right"),
                 Column("p", "right"), Column("q", "right")],
                [[str(s.step), s.label or "—", fmt_share(s.deaths_a, s.at_risk_a), fmt_share(s.deaths_b, s.at_risk_b),
                  fmt_p(s.pvalue), Span(fmt_p(s.qvalue), "bad" if s.qvalue < 0.05 else None)] for s in steps],
                limit=self.rows, more="steps"))
        if found.cells.cells and self.rows:
            cells = sorted(found.cells.cells, key=lambda c: (c.qvalue, natural_key(c.scenario), c.condition))
            out.append(Table(
                "failures per scenario × condition, Fisher exact, BH across cells",
                [Column("cell", key=True), Column("A", "right"), Column("B", "right"), Column("p", "right"),
                 Column("q", "right")],
                [[f"{c.scenario} {c.condition}".strip(), fmt_share(c.failures_a, c.trials_a),
                  fmt_share(c.failures_b, c.trials_b), fmt_p(c.pvalue),
                  Span(fmt_p(c.qvalue), "bad" if c.qvalue < 0.05 else None)] for c in cells],
                limit=self.rows, more="cells"))
            out.append(line(f"{len(found.cells.significant())} of {len(found.cells.cells)} cells at q < 0.05"))
        ex = found.excluded
        if ex["a"] or ex["b"]:
            out.append(line(f"left out: {ex['a']} runs of A and {ex['b']} of B in scenarios the other arm never ran"))
        if ex["unknown_a"] or ex["unknown_b"]:
            out.append(line(f"left out: {ex['unknown_a'] + ex['unknown_b']} runs with no pass/fail outcome"))
        out += [blank(), note(f"Conditional on: {self.conditional_on()}."), note(CLOSING_STATEMENT)]
        return out


def hard_violations(runs, spec_path: str | None) -> dict[str, int] | None:
    """Each failed run's first hard violation under a grading spec (by run hash), for runs with no died_at."""
    if not spec_path:
        return None
    try:
        from ..grading import first_hard_index, grade_run, load_spec
    except ImportError as exc:  # grading ships in its own sub-package
        raise FlukeError(f"spec={spec_path!r} needs fluke.grading, which this build lacks ({exc})") from None
    spec = load_spec(spec_path)
    return {r.hash: first_hard_index(grade_run(r, spec)) for r in runs
            if r.outcome.passed is False and r.outcome.died_at is None}


def compare(ledger, a: str, b: str, *, scenario: str | None = None, condition: str | None = None,
            spec: str | None = None, alpha: float = 0.05, power: float = 0.8, ceiling: float = 1.3,
            rows: int = 8, record: bool = True) -> ComparisonResult:
    """Compare arm ``b`` against arm ``a`` (version selectors, ``@TRIALS`` picks trials).

    Runs are stratified by scenario × condition; only strata both arms ran are compared. With
    ``spec``, a failed run with no recorded ``died_at`` dies at its first hard violation. With
    ``record`` the verdict is kept in the ledger as a ``comparison`` document.
    """
    from ..comparison import compare_runs

    check_level(alpha, "alpha")
    check_level(power, "power")
    if not ceiling > 1:
        raise UsageError(f"ceiling={ceiling!r} must exceed 1 (a hazard ratio)")
    if rows < 0:
        raise UsageError(f"rows={rows!r} must be at least 0")
    arm_a = select_arm(ledger, a, scenario=scenario, condition=condition)
    arm_b = select_arm(ledger, b, scenario=scenario, condition=condition)
    disjoint(arm_a, arm_b)
    spec = None if spec is None else str(spec)
    hard = hard_violations(arm_a.runs + arm_b.runs, spec)
    found = compare_runs(arm_a.runs, arm_b.runs, hard_index=hard, alpha=alpha, power=power, ceiling=ceiling)
    result = ComparisonResult(arm_a, arm_b, found, scenario=scenario, spec=spec, rows=rows, recorded=record)
    if record:
        ledger.put_document("comparison", result.recorded_body())
    return result
