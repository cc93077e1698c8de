"""``compare``: B against A on pass rates first, with the detection limit in points beside the verdict.

Picks both arms out of the ledger and runs :func:`fluke.comparison.compare_counted` (the
stratified pass-rate test; where runs die, only over runs whose failure step is known; per-cell
tests) and records the verdict in the ledger (a ``comparison`` document, which ``fluke simulate
--reveal`` later asks for). The arms are read from the ledger's ``counts`` and ``steps`` tables
(:func:`~fluke.analysis.counted_arm`: no run is read; a million runs over 10,000 scenarios are
170,000 rows of ``steps``, read as columns and reduced by numpy) unless an option needs the
runs themselves: ``spec`` (a failed run dies at its first hard violation, which only grading
the run can tell), trial selectors (``@0-4``) and ``sequential`` (each run's ingest); those
stream every run of both arms (:func:`~fluke.analysis.select_arm`) and
:func:`fluke.comparison.compare_versions` reduces them to the same counts. The answer is the same
either way (a test holds the two equal on real ledgers).

>>> import os, tempfile
>>> from fluke.ledger import open_ledger
>>> from fluke.simulate import support_desk
>>> ledger = open_ledger(os.path.join(tempfile.mkdtemp(), "cmp.db"))
>>> desk = support_desk(scenarios=6, trials=8, planted_factor=4, seed=3)
>>> _ = ledger.ingest(list(desk.version(1)) + list(desk.version(2)))
>>> a, b = (v.version[:12] for v in ledger.versions())
>>> result = compare(ledger, a, b, record=False)
>>> result.to_dict()["kind"], result.verdict, result.pass_rates.strata
('comparison', 'too small to tell', 12)
>>> print(result.render()) # doctest: +ELLIPSIS
too small to tell: B − A = -2.1 points [-13.5, +9.4]
Cochran–Mantel–Haenszel p = 0.723; ...
detection limit: could not have detected a difference below 18.5 points (ceiling 5) in the direction of a regression ...
the interval above is for these runs (inverts the stratified test at 95%, ...); on new tasks ... [-20.8, +17.4] ...
...
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

from ..errors import FlukeError, UsageError
from ..format import fmt_interval, fmt_is, fmt_p, fmt_share, natural_key
from ._document import Column, Heading, Rows, Span, Table, blank, line, note
from ._result import Result
from ._unknowns import check_unknown, unknown_fields, unknown_note
from ._facts import counted_arm
from ._select import Arm, check_level, disjoint, select_arm

#: What a ledger keeps of each comparison (enough for a later reveal to see what was compared).
RECORDED_KEYS = ("a", "b", "verdict", "pvalue", "detection_limit", "scenario")


@dataclass(frozen=True)
class ComparisonResult(Result):
    """Arm B against arm A: pass rates first (the verdict), where runs die where that is known, per cell.

    ``found`` is what :func:`fluke.comparison.compare_versions` returned; ``sequential`` the
    anytime-valid test over the ledger's batches when it was asked for; ``rows`` is how many
    per-step and per-cell rows the text shows (0: none; ``--all`` shows every one).
    """

    kind = "comparison"
    a: Arm
    b: Arm
    found: Any
    scenario: str | None = None
    spec: str | None = None
    rows: int = 8
    recorded: bool = False
    sequential: Any = None
    sequential_power: Any = None
    every: bool = False
    excluded: Any = None    # with --unknown both: the same comparison with unknown outcomes left out
    margin: Any = None      # with a margin: not worse and cheaper (fluke.decisions.NonInferiority)
    subgroups: Any = None   # with groups: B against A per group (fluke.decisions.SubgroupReport)
    per_success: Any = None  # with a margin: (A's, B's) fluke.decisions.CostPerSuccess

    def order_flips(self) -> bool:
        """With both policies: B − A has one sign counting unknowns as failures and the other leaving them out."""
        if self.excluded is None:
            return False
        return self.found.pass_rates.difference * self.excluded.found.pass_rates.difference < 0

    @property
    def verdict(self) -> str:
        return self.found.verdict

    @property
    def pass_rates(self):
        """The primary comparison (:class:`fluke.comparison.PassRateComparison`)."""
        return self.found.pass_rates

    @property
    def detection_limit(self) -> float:
        """The smallest difference in pass rate, in points, these runs could have detected."""
        return self.found.pass_rates.detection_limit

    def conditional_on(self) -> str:
        r = self.found.pass_rates
        versions = (f"runs of A ({', '.join(v[:12] for v in self.a.versions)}) and B "
                    f"({', '.join(v[:12] for v in self.b.versions)})")
        read = ("read run by run (the spec, trial selectors or the batch-by-batch test need the runs)"
                if self.a.counted is None else "read from the ledger's counts and steps tables")
        return f"{versions}; {r.conditional_on()}; the unit is the scenario; {read}"

    def payload(self) -> dict[str, Any]:
        found, r = self.found, self.found.pass_rates
        doc = found.to_dict()
        return {
            "a": {**self.a.describe(), "compared": r.runs_a, "passes": r.passes_a, "unknown": r.unknown[0]},
            "b": {**self.b.describe(), "compared": r.runs_b, "passes": r.passes_b, "unknown": r.unknown[1]},
            "scenario": self.scenario, "spec": self.spec, "verdict": r.verdict, "pvalue": r.pvalue,
            "difference_points": r.difference, "interval_points": list(r.interval),
            "detection_limit": r.detection_limit, "detection_limit_unit": "points", "ceiling": r.ceiling,
            "alpha": r.alpha, "power": r.power, "test": r.test.method, "p_b_below_a": r.p_b_below_a,
            "prior": r.prior, "strata": r.strata, "uninformative": r.uninformative,
            "runs_needed_per_arm": r.runs_needed_per_arm,
            **unknown_fields(r.unknown[0] + r.unknown[1], check_unknown(r.unknown_policy)),
            "summary": r.summary(), **{k: doc[k] for k in ("pass_rates", "where", "cells", "cells_only_a",
                                                             "cells_only_b", "excluded", "died_from")},
            "sequential": None if self.sequential is None else {
                **dataclasses.asdict(self.sequential), "summary": self.sequential.summary(),
                "power": None if self.sequential_power is None else dict(zip(
                    ("regression_points", "batch_by_batch", "fixed_sample"), self.sequential_power, strict=True))},
            "conditional_on": self.conditional_on(), "statement": found.statement,
            **self._excluded_fields(),
            "non_inferiority": None if self.margin is None else self.margin.to_dict(),
            "cost_per_success": None if self.per_success is None else {
                "a": self.per_success[0].to_dict(), "b": self.per_success[1].to_dict()},
            "subgroups": None if self.subgroups is None else self.subgroups.to_dict(),
        }

    def _excluded_fields(self) -> dict[str, Any]:
        if self.excluded is None:
            return {}
        x = self.excluded.found.pass_rates
        return {"unknown_policy": "both", "order_flips": self.order_flips(),
                "exclude": {"verdict": x.verdict, "difference_points": x.difference,
                            "interval_points": list(x.interval), "pvalue": x.pvalue,
                            "detection_limit": x.detection_limit, "compared_a": x.runs_a,
                            "passes_a": x.passes_a, "compared_b": x.runs_b, "passes_b": x.passes_b}}

    def _decision_blocks(self) -> list:
        out: list = []
        if self.margin is not None:
            m = self.margin
            out.append(line(Span("margin: ", "bold"), Span(m.summary(), "good" if m.holds and m.cheaper else None)))
            for name, c in zip("AB", self.per_success or (), strict=False):
                lo, hi = c.interval
                ci = f" [{lo:.4f}, {hi:.4f}]" if math.isfinite(lo) else ""
                said = f"{c.estimate:.4f}{ci}" if math.isfinite(c.estimate) else f"undefined ({c.reason})"
                out.append(line(f"cost per success, {name}: {said} (all {c.runs:,} runs charged over {c.passes:,} "
                                f"passes" + (f"; {c.unknown_cost:,} without a cost" if c.unknown_cost else "") + ")"))
        if self.subgroups is not None:
            s = self.subgroups
            out.append(line(Span("groups: ", "bold"), Span(s.summary(), "bad" if s.harmed else None)))
            if self.rows:
                out.append(Table(f"B − A per group ({s.correction} across {len(s.groups)} groups)",
                                 [Column("group", key=True), Column("cells", "right"), Column("A", "right"),
                                  Column("B", "right"), Column("B − A", "right"), Column("p", "right"),
                                  Column("adjusted", "right")],
                                 [[g.group, str(g.cells), fmt_share(g.passes_a, g.runs_a),
                                   fmt_share(g.passes_b, g.runs_b), f"{g.difference:+.1f}", fmt_p(g.pvalue),
                                   Span(fmt_p(g.adjusted), "bad" if g.harmed else None)] for g in s.groups],
                                 limit=self.rows, more="groups"))
        return out

    def recorded_body(self) -> dict[str, Any]:
        """The part of :meth:`payload` kept in the ledger as a ``comparison`` document."""
        doc = self.payload()
        return {k: doc[k] for k in RECORDED_KEYS}

    def blocks(self) -> list:
        from ..comparison import DIFFERENT, TOO_SMALL

        found, r = self.found, self.found.pass_rates
        style = {DIFFERENT: "bad", TOO_SMALL: "warn"}.get(r.verdict, "good")
        lo, hi = r.interval
        ci = fmt_interval(lo, hi, digits=1, signed=True) if math.isfinite(lo) else f"(no interval: {r.interval_reason})"
        out: list = [
            Heading(f"{r.verdict}: B − A = {r.difference:+.1f} points {ci}"),
            line(Span(f"{r.test.method} {fmt_is('p', r.pvalue, kind='p')}", style),
                 f"; {fmt_is('P(B < A)', r.p_b_below_a)} (prior {r.prior})"),
            line(f"detection limit: {r.limit_clause()}, α = {r.alpha:g}; {r.uninformative} of {r.strata} scenario "
                 "cells carry no information (every run passed, or every run failed, in both arms)"
                 + (f"; about {r.runs_needed_per_arm:,} runs per arm would be needed"
                    if r.verdict == TOO_SMALL and r.runs_needed_per_arm else "")),
            line(f"the interval above is for these runs ({r.interval_method}); {r.new_tasks()}"),
            line(Span("A ", "bold"), self.a.line(), f"   {fmt_share(r.passes_a, r.runs_a)} passed"
                 + _mean_over_cells(r.rate_a, r.passes_a, r.runs_a)),
            line(Span("B ", "bold"), self.b.line(), f"   {fmt_share(r.passes_b, r.runs_b)} passed"
                 + _mean_over_cells(r.rate_b, r.passes_b, r.runs_b)),
        ]
        policy = check_unknown(r.unknown_policy)
        if self.excluded is not None:
            x = self.excluded.found.pass_rates
            xlo, xhi = x.interval
            xci = fmt_interval(xlo, xhi, digits=1, signed=True) if math.isfinite(xlo) else "(no interval)"
            out.append(line(f"leaving unknowns out: {x.verdict}: B − A = {x.difference:+.1f} points {xci}, "
                            f"p = {fmt_p(x.pvalue)}; A {fmt_share(x.passes_a, x.runs_a)}, "
                            f"B {fmt_share(x.passes_b, x.runs_b)} passed"))
            if self.order_flips():
                out.append(line(Span("the order flips: ", "warn"), "B is above A under one policy and below it "
                                "under the other; the unknown outcomes decide this comparison"))
            policy = "both"
        out.append(unknown_note(r.unknown[0] + r.unknown[1], policy))
        out += self._decision_blocks()
        if r.unknown[0] or r.unknown[1]:
            out.append(note(f"unknown outcomes: {r.unknown[0]} in A, {r.unknown[1]} in B"))
        if self.sequential is not None:
            out.append(line(f"batch by batch: {self.sequential.summary()}; the fixed-sample test on the same runs, "
                            f"read once at the end: p = {fmt_p(r.pvalue)}"))
            if self.sequential_power is not None:
                shift, seq_p, fixed_p = self.sequential_power
                out.append(line(f"the price of looking after every batch: against a regression of {shift:.1f} points "
                                f"(the design's limit) the fixed-sample test has power {fixed_p:.2f} and the "
                                f"batch-by-batch test {seq_p:.2f} (simulated, 400 sequences of these batches)"))
        where = found.where
        out += [blank(), line(where.summary())]
        if not where.skipped:
            steps = sorted(where.steps.steps, key=lambda s: (s.qvalue, s.step))
            if steps and self.rows and not (self.every or any(s.pvalue < 0.05 for s in steps)):
                out.append(line(f"deaths per step: none of {len(steps)} steps at p < 0.05, so no table "
                                "(--all lists them)"))
            elif steps and self.rows:
                out.append(Table(
                    "deaths per step, stratified by scenario, BH across steps",
                    [Column("step", "right"), Column("event", key=True), Column("A", "right"), Column("B", "right"),
                     Column("p", "right"), Column("q", "right")],
                    [[str(s.step), s.label or "—", fmt_share(s.deaths_a, s.at_risk_a),
                      fmt_share(s.deaths_b, s.at_risk_b), fmt_p(s.pvalue),
                      Span(fmt_p(s.qvalue), "bad" if s.qvalue < 0.05 else None)] for s in steps],
                    limit=self.rows, more="steps"))
        if found.cells.cells and self.rows and not (self.every or any(c.pvalue < 0.05 for c in found.cells.cells)):
            out.append(line(f"failures per scenario × condition (Fisher exact): none of {len(found.cells.cells)} cells "
                            "at p < 0.05, so no table (--all lists them)"))
        elif found.cells.cells and self.rows:
            cells = sorted(found.cells.cells, key=lambda c: (c.qvalue, natural_key(c.scenario), c.condition))
            out.append(Table(
                "failures per scenario × condition, Fisher exact, BH across cells",
                [Column("cell", key=True), Column("A", "right"), Column("B", "right"), Column("p", "right"),
                 Column("q", "right")],
                Rows(cells, lambda c: [f"{c.scenario} {c.condition}".strip(), fmt_share(c.failures_a, c.trials_a),
                                       fmt_share(c.failures_b, c.trials_b), fmt_p(c.pvalue),
                                       Span(fmt_p(c.qvalue), "bad" if c.qvalue < 0.05 else None)]),
                limit=self.rows, more="cells"))
            out.append(line(f"{len(found.cells.significant())} of {len(found.cells.cells)} cells at q < 0.05"))
        ex = found.excluded
        if ex["a"] or ex["b"]:
            out.append(line(f"left out: {ex['a']} runs of A and {ex['b']} of B in scenarios the other arm never ran"))
        out += [blank(), note(f"Conditional on: {self.conditional_on()}."), note(found.statement)]
        return out


def _load_spec(spec_path: str | None):
    if not spec_path:
        return None
    try:
        from ..grading import load_spec
    except ImportError as exc:  # grading ships in its own sub-package
        raise FlukeError(f"spec={spec_path!r} needs fluke.grading, which this build lacks ({exc})") from None
    return load_spec(spec_path)


def hard_violations(runs, spec_path: str | None) -> dict[str, int] | None:
    """Each failed run's first hard violation under a grading spec (by run hash), for runs with no died_at."""
    spec = _load_spec(spec_path)
    if spec is None:
        return None
    from ..grading import first_hard_index, grade_run

    return {r.hash: first_hard_index(grade_run(r, spec)) for r in runs
            if r.outcome.passed is False and r.outcome.died_at is None}


def _mean_over_cells(rate: float, passes: int, runs: int) -> str:
    """The mean over scenario cells (what B − A, leaderboard and passk use) when it differs from the pooled share."""
    if runs and abs(rate - 100 * passes / runs) >= 0.05:
        return f"; {rate:.1f}% as the mean over scenario cells (the scale of B − A)"
    return ""


def _batches(ledger, arm_a: Arm, arm_b: Arm, unknown: str = "fail"):
    """Per-look counts of both arms, shaped (4, looks, strata); a look is an ingest of either arm.

    A look's tables hold matched runs: in each stratum, the runs of A and of B ranked (by
    ingest, then trial) between the numbers both arms had reached at the previous look and at
    this one. So a baseline ingested once and a candidate ingested in batches give every look
    both arms (an ingest of one arm alone would give tables with no information, and the test
    would never decide). Which runs enter a look depends on counts and order only, never on
    outcomes, so the e-value stays a martingale under no difference; runs not yet matched wait
    for the other arm and whatever is left enters the last look. A run whose outcome is
    unknown is a failure (``"fail"``) or left out (``"exclude"``).
    """
    import numpy as np

    times = {}
    for arm in (arm_a, arm_b):
        times.update(ledger.recorded_times(version=list(arm.versions)))
    looks = sorted({times[r.hash] for r in arm_a.runs + arm_b.runs if r.hash in times})
    keys = sorted({(r.scenario, r.condition_key()) for r in arm_a.runs} & {(r.scenario, r.condition_key())
                                                                            for r in arm_b.runs})
    at, col = {t: i for i, t in enumerate(looks)}, {k: j for j, k in enumerate(keys)}
    from ..comparison import matched_batches

    order: list[dict] = [{}, {}]          # per arm: stratum -> [(look, trial, failed)]
    for side, arm in enumerate((arm_a, arm_b)):
        for r in arm.runs:
            j = col.get((r.scenario, r.condition_key()))
            if j is None or r.hash not in times or not unknown.keeps(r.outcome.passed):
                continue
            order[side].setdefault(j, []).append((at[times[r.hash]], r.trial, r.outcome.passed is not True))
    arms = []
    for side in (0, 1):
        rows = sorted(((look, -1 if trial is None else trial, j, i, failed)
                       for j, rs in order[side].items() for i, (look, trial, failed) in enumerate(rs)))
        arms.append(tuple(np.array([x[k] for x in rows], dtype=int) for k in (2, 0, 4)))
    return matched_batches(*arms[0], *arms[1], looks=len(looks), strata=len(keys))


def _counted_arms(ledger, a: str, b: str, scenario: str | None, condition: str | None):
    """Both arms from the ledger's counts and steps, or None when a selector picks trials."""
    arm_a = counted_arm(ledger, a, scenario=scenario, condition=condition, places=True)
    arm_b = counted_arm(ledger, b, scenario=scenario, condition=condition, places=True)
    if arm_a is None or arm_b is None:
        return None
    disjoint(arm_a, arm_b)
    return arm_a, arm_b


def compare(ledger, a: str, b: str, *, scenario: str | None = None, condition: str | None = None,
            spec: str | None = None, alpha: float = 0.05, power: float = 0.8, ceiling: float = 5.0,
            hazard_ceiling: float = 1.3, unknown: str = "fail", sequential: bool = False, rows: int = 8,
            record: bool = True, seed: int = 0, stream: bool = False, every: bool = False,
            margin: float | None = None, groups: str | None = None, harm: float = 0.0,
            cost: Any = "usd") -> ComparisonResult:
    """Compare arm ``b`` against arm ``a`` (version selectors, ``@TRIALS`` picks trials) on pass rates.

    Strata are scenario × condition cells both arms ran. ``ceiling`` is the detection limit, in
    points, below which "no significant difference" may be said. With ``spec``, a failed run with
    no recorded ``died_at`` dies at its first hard violation (for the analysis of where runs die).
    ``unknown`` says what a run with an unknown outcome counts as: ``"fail"`` (a failure; ``"failure"``
    is the same) or ``"exclude"`` (left out), in the pass rates and in the batch-by-batch test.
    ``sequential`` adds the anytime-valid test over the ledger's ingests (each one a look). With
    ``record`` the verdict is kept in the ledger as a ``comparison`` document. Without ``spec``,
    trial selectors and ``sequential``, no run is read (see the module docstring); ``stream`` reads
    every run all the same (the same answer, slower: the check that the counts are right).
    ``margin`` (points) adds "cheaper and not worse" (:mod:`fluke.analysis._margin_subgroups`: it
    streams both arms' spend); ``groups`` (a condition key, or ``"condition"``) adds B − A per group
    with Holm across groups, flagging a group worse by more than ``harm`` points.
    """
    import numpy as np

    from ..comparison import compare_counted, compare_versions, sequential_test

    check_level(alpha, "alpha")
    check_level(power, "power")
    if not ceiling > 0:
        raise UsageError(f"ceiling={ceiling!r} must be a positive number of points")
    if not hazard_ceiling > 1:
        raise UsageError(f"hazard_ceiling={hazard_ceiling!r} must exceed 1 (a hazard ratio)")
    if rows < 0:
        raise UsageError(f"rows={rows!r} must be at least 0")
    unknown = check_unknown(unknown, both=True)
    if unknown == "both":
        same = dict(scenario=scenario, condition=condition, spec=spec, alpha=alpha, power=power, ceiling=ceiling,
                    hazard_ceiling=hazard_ceiling, sequential=sequential, rows=rows, seed=seed, stream=stream)
        primary = compare(ledger, a, b, unknown="fail", record=record, margin=margin, groups=groups, harm=harm,
                          cost=cost, **same)
        return dataclasses.replace(primary, excluded=compare(ledger, a, b, unknown="exclude", record=False, **same))
    spec = None if spec is None else str(spec)
    loaded = _load_spec(spec)
    options = dict(unknown_policy=unknown, alpha=alpha, power=power, ceiling=ceiling,
                   hazard_ceiling=hazard_ceiling,
                   rng=np.random.default_rng(seed))
    arms = None if loaded is not None or sequential or stream else _counted_arms(ledger, a, b, scenario, condition)
    if arms is not None:
        arm_a, arm_b = arms
        (counts_a, unknown_a), (counts_b, unknown_b) = (arm.counted.pass_counts(unknown) for arm in arms)
        found = compare_counted(counts_a, counts_b, arm_a.counted.places, arm_b.counted.places,
                                unknown=(unknown_a, unknown_b), **options)
    else:
        arm_a = select_arm(ledger, a, scenario=scenario, condition=condition, spec=loaded)
        arm_b = select_arm(ledger, b, scenario=scenario, condition=condition, spec=loaded)
        disjoint(arm_a, arm_b)
        hard = None if loaded is None else {**arm_a.hard, **arm_b.hard}
        found = compare_versions(arm_a.runs, arm_b.runs, hard_index=hard, **options)
    seq = seq_power = None
    if sequential:
        batches = _batches(ledger, arm_a, arm_b, unknown)
        seq = sequential_test(*batches, alpha=alpha)
        limit = found.pass_rates.detection_limit
        if batches.shape[2] and math.isfinite(limit):
            from ..comparison import sequential_power

            runs = batches[1].sum(axis=0) + batches[3].sum(axis=0)
            import numpy as np

            rates = 1 - (batches[0].sum(axis=0) + batches[2].sum(axis=0)) / np.maximum(runs, 1)
            seq_power = (limit, *sequential_power(batches[1], batches[3], rates, limit / 100, alpha=alpha,
                                                  seed=seed))
    noninferior = subgroup = each = None
    if margin is not None or groups:
        from ._margin_subgroups import margin_check, subgroups

        if margin is not None:
            noninferior, each = margin_check(ledger, arm_a, arm_b, found.pass_rates.interval, margin, cost=cost,
                                       unknown=str(unknown), scenario=scenario, condition=condition,
                                       confidence_level=1 - alpha)
        if groups:
            subgroup = subgroups(arm_a, arm_b, groups, unknown=str(unknown), alpha=alpha, harm=harm)
    result = ComparisonResult(arm_a, arm_b, found, scenario=scenario, spec=spec, rows=rows, recorded=record,
                              sequential=seq, sequential_power=seq_power, every=every, margin=noninferior,
                              subgroups=subgroup, per_success=each)
    if record:
        ledger.put_document("comparison", result.recorded_body())
    return result
