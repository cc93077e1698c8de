"""How sure is the mean, given who the independent draws were? (``interval``) and pass@k / pass^k (``passk``).

>>> import os, tempfile
>>> from fluke.ledger import open_ledger
>>> from fluke.record import Identity, Outcome, Run
>>> ledger = open_ledger(os.path.join(tempfile.mkdtemp(), "iv.db"))
>>> _ = ledger.ingest([Run(scenario=f"s{i}", trial=t, identity=Identity(model="m"),
...                        outcome=Outcome(passed=t <= i % 3)) for i in range(6) for t in range(3)])
>>> result = interval(ledger, unit="scenario")
>>> v = result.versions[0]
>>> v.interval.clusters, round(v.interval.statistic, 3)
(6, 0.667)
>>> print(result.render())  # doctest: +ELLIPSIS
version ... (m): mean passed 0.667, 95% CI [0.350, 0.881] clustered by scenario (6 scenarios, 18 runs)
...
>>> round(passk(ledger, ks="1..3").versions[0].rows[2]["pass_hat_k"], 4)  # 2 of 6 scenarios passed 3 of 3
0.3333
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..errors import InputError, UsageError
from ..format import fluke_command, fmt_interval, fmt_num, fmt_range, parse_problem
from ._document import Column, Span, Table, blank, line, note
from ._result import Result
from ._unknowns import apply_to_counts, check_unknown, closing_notes, unknown_fields, unknown_note
from ._select import check_level, require_runs, select_versions, versions as ledger_versions

#: A cluster bootstrap needs at least this many resamples (as ``fluke.inference`` requires).
MIN_RESAMPLES = 10


def _ci(low: float, high: float) -> str:
    return f"[{fmt_num(low, 3)}, {fmt_num(high, 3)}]"


def labels(ledger) -> dict[str, str]:
    """version hash -> identity label, for every version in the ledger."""
    return {v.version: v.label() for v in ledger_versions(ledger)}


def outcome_values(runs: Sequence, outcome: str, unknown: str = "exclude") -> tuple[list[float], list]:
    """(values, runs kept): a run without the chosen outcome is left out (and counted by the caller),
    except that ``unknown="fail"`` counts a run whose ``passed`` is unknown as 0."""
    if outcome not in ("passed", "reward"):
        raise UsageError(f"outcome={outcome!r} must be 'passed' or 'reward'")
    vals, kept = [], []
    fail = outcome == "passed" and unknown == "fail"
    for r in runs:
        v = r.outcome.passed if outcome == "passed" else r.outcome.reward
        if v is None and fail:
            v = 0.0
        if v is not None:
            vals.append(float(v))
            kept.append(r)
    return vals, kept


# -- interval ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class VersionInterval:
    """One version's clustered and naive intervals, variance components and projections."""

    version: str
    label: str | None
    runs: int
    without_outcome: int        # runs left out: no outcome.reward, or an unknown outcome.passed excluded
    interval: Any = None        # fluke.inference.ClusteredInterval, None when no run has the outcome
    variance: Any = None        # fluke.inference.VarianceComponents
    projections: tuple = ()     # fluke.inference.Projection, as recorded / 2x units / ...
    bootstrap: Any = None       # fluke.inference.BootstrapInterval when asked for
    unknowns: int = 0           # runs whose outcome.passed is unknown

    def payload(self) -> dict[str, Any]:
        out: dict[str, Any] = {"version": self.version, "label": self.label, "runs": self.runs,
                               "without_outcome": self.without_outcome, "unknowns": self.unknowns}
        if self.interval is None:
            return out
        ci, vc = self.interval, self.variance
        out["clustered"] = {"statistic": ci.statistic, "standard_error": ci.standard_error, "low": ci.low,
                            "high": ci.high, "df": ci.df, "clusters": ci.clusters, "rows": ci.rows,
                            "method": ci.method, "reason": ci.reason, "conditional_on": ci.conditional_on}
        out["naive"] = vars(ci.naive)
        out["design_effect"] = ci.design_effect
        out["warning"] = ci.warning
        out["variance_components"] = {"unit": vc.unit, "scenario": vc.scenario, "generation": vc.generation,
                                      "raw": list(vc.raw), "units": vc.units, "scenarios_per_unit": vc.scenarios,
                                      "generations_per_scenario": vc.generations, "reasons": list(vc.reasons)}
        out["what_more_buys"] = [vars(p) for p in self.projections]
        if self.bootstrap is not None:
            out["bootstrap"] = vars(self.bootstrap)
        return out


@dataclass(frozen=True)
class IntervalResult(Result):
    """The mean outcome per version with an interval clustered by the declared sampling unit."""

    kind = "interval"
    outcome: str
    unit: str
    weighting: str
    confidence_level: float
    versions: tuple[VersionInterval, ...]
    unknown_policy: str = "fail"

    def payload(self) -> dict[str, Any]:
        return {"outcome": self.outcome, "unit": self.unit, "weighting": self.weighting,
                "confidence_level": self.confidence_level, "versions": [v.payload() for v in self.versions],
                **unknown_fields(sum(v.unknowns for v in self.versions), self.unknown_policy)}

    def blocks(self) -> list:
        out: list = []
        for i, v in enumerate(self.versions):
            out += ([blank()] if i else []) + self._version_blocks(v)
            out.append(unknown_note(v.unknowns, self.unknown_policy))
        return out

    def _version_blocks(self, v: VersionInterval) -> list:
        unit, level, head = self.unit, self.confidence_level, f"version {v.version[:12]} ({v.label})"
        ci = v.interval
        if ci is None:
            return [line(f"{head}: no run has outcome.{self.outcome} ({v.runs} runs)", style="warn")]
        out: list = [line(f"{head}: mean {self.outcome} {fmt_num(ci.statistic, 3)}, {level:.0%} CI "
                          f"{_ci(ci.low, ci.high)} clustered by {unit} ({ci.clusters} {unit}s, {ci.rows} runs)",
                          style="bold")]
        if ci.reason:
            out.append(line(Span("undefined: ", "warn"), ci.reason))
        if ci.warning:
            out.append(line(Span("warning: ", "warn"), f"{ci.warning} (design effect {ci.design_effect:.2f})"))
        rows = [[f"clustered by {unit}", fmt_num(ci.statistic, 3), fmt_num(ci.standard_error, 4),
                 _ci(ci.low, ci.high), f"{ci.clusters} {unit}s"],
                ["naive (row-level)", fmt_num(ci.naive.statistic, 3), fmt_num(ci.naive.standard_error, 4),
                 _ci(ci.naive.low, ci.naive.high), f"{ci.rows} runs"]]
        if v.bootstrap is not None:
            b = v.bootstrap
            rows.append(["cluster bootstrap", fmt_num(b.statistic, 3), fmt_num(b.standard_error, 4),
                         _ci(b.low, b.high), f"{b.clusters} {unit}s"])
        out.append(Table(f"mean {self.outcome}, {ci.rows} runs in {ci.clusters} {unit}s",
                         [Column("interval", key=True), Column("estimate", "right"), Column("SE", "right"),
                          Column(f"{level:.0%} CI", "right"), Column("independent draws")], rows,
                         more="intervals",
                         notes=[f"clustered: {ci.method}, t on {ci.df} df; naive: every run independent, normal"]))
        vc = v.variance
        # One scenario per unit (--unit scenario): there is no "scenario within unit" to speak of.
        flat = unit == "scenario" or any("one scenario per unit" in r for r in vc.reasons)
        parts = [(unit, vc.unit)] + ([] if flat else [(f"scenario within {unit}", vc.scenario)]) + \
            [("generation (run)", vc.generation)]
        comps = [[name, fmt_num(val, 5), fmt_num(math.sqrt(val) if val >= 0 else float("nan"), 4)]
                 for name, val in parts]
        out.append(Table("variance components",
                         [Column("component", key=True), Column("variance", "right"), Column("std. dev.", "right")],
                         comps, more="components",
                         notes=["method of moments, nested"] + [f"note: {r}" for r in vc.reasons]))
        if not v.projections:
            out.append(line(Span("what more evidence would buy: ", "warn"),
                            "undefined while a variance component is (see the notes above)"))
        def panel(label: str) -> str:
            label = label.replace(" per scenario", "").replace(" per unit", "")
            return label.replace("x units", f"x {unit}s")  # the unit by its name: "2x scenarios", "2x tasks"

        more = [[panel(p.label), f"{p.units:g}"] + ([] if flat else [f"{p.scenarios:.3g}"])
                + [f"{p.generations:.3g}" if math.isfinite(p.generations) else "∞",
                   f"{p.runs:.0f}" if math.isfinite(p.runs) else "∞", fmt_num(p.standard_error, 4), f"{p.ratio:.2f}"]
                for p in v.projections]
        heads = [f"{unit}s"] + ([] if flat else [f"scen./{unit}"]) + ["runs/scen.", "runs", "SE", "x now"]
        out += [] if not more else [Table("what more evidence would buy (SE of the mean)",
                                          [Column("panel", key=True)] + [Column(c, "right") for c in heads],
                                          more, more="panels")]
        out.append(note(f"Conditional on: {ci.conditional_on}; version {v.version[:12]}; {v.without_outcome} runs "
                        f"without outcome.{self.outcome} left out"))
        return out


def check_resamples(resamples: int, name: str = "bootstrap") -> int:
    """0 (no bootstrap) or at least :data:`MIN_RESAMPLES` resamples, else a UsageError naming ``name``.

    >>> check_resamples(2000)
    2000
    >>> check_resamples(5)
    Traceback (most recent call last):
    ...
    fluke.errors.UsageError: bootstrap=5: a cluster bootstrap needs at least 10 resamples (or 0 for none)
    """
    if isinstance(resamples, bool) or not isinstance(resamples, int) or not (
            resamples == 0 or resamples >= MIN_RESAMPLES):
        raise UsageError(f"{name}={resamples!r}: a cluster bootstrap needs at least {MIN_RESAMPLES} resamples "
                         "(or 0 for none)")
    return resamples


def interval(ledger, *, unit: str = "unit", version: str | None = None, condition: str | None = None,
             outcome: str = "passed", confidence_level: float = 0.95, bootstrap: int = 0, seed: int = 2026,
             weighting: str = "rows", unknown: str = "fail") -> IntervalResult:
    """The mean ``outcome`` per version, clustered by ``unit`` ("unit": the run's declared unit, or
    "scenario"), beside the naive row-level interval, with variance components and what more
    units or generations would buy; a cluster bootstrap too when ``bootstrap`` resamples are asked for.
    A run whose ``passed`` is unknown counts as 0 (``unknown="fail"``) or is left out (``"exclude"``).
    No run is read: the statistics come from the ledger's per unit × scenario sums
    (:meth:`fluke.ledger.Ledger.unit_cells`) through :class:`fluke.inference.Cells`.
    """
    unknown = check_unknown(unknown)
    if unit not in ("unit", "scenario"):
        raise UsageError(f"unit={unit!r} must be 'unit' or 'scenario'")
    if weighting not in ("rows", "units"):
        raise UsageError(f"weighting={weighting!r} must be 'rows' or 'units'")
    level = check_level(confidence_level, "level")
    check_resamples(bootstrap)
    if outcome not in ("passed", "reward"):
        raise UsageError(f"outcome={outcome!r} must be 'passed' or 'reward'")
    import numpy as np

    from ..inference import Cells, cluster_bootstrap_cells, clustered_interval_cells, variance_components_cells

    infos = require_runs(ledger)
    by_version: dict[str, list] = {}
    for c in ledger.unit_cells(version=select_versions(ledger, version), condition=condition):
        by_version.setdefault(c.version, []).append(c)
    if not by_version:
        raise InputError(ledger.url, None, None, "no runs match",
                         hint="loosen --version/--condition; see what the ledger holds with: "
                              f"{fluke_command(ledger, 'summary')}")
    names, out = labels(ledger), []
    for v in [i.version for i in infos if i.version in by_version]:        # oldest first
        cells = by_version[v]
        units = [c.unit if unit == "unit" else c.scenario for c in cells]
        scenarios = [c.scenario for c in cells]
        runs, missing = sum(c.trials for c in cells), sum(c.unknowns for c in cells)
        passed = outcome == "passed"
        kept = (runs - (missing if unknown == "exclude" else 0)) if passed else sum(c.rewarded for c in cells)
        if not kept:
            out.append(VersionInterval(v, names.get(v), runs, runs, unknowns=missing))
            continue
        if passed:          # the policy on counts: unknowns are failed rows, or left out
            counted = Cells.from_passes(units, scenarios, [c.trials for c in cells], [c.passes for c in cells],
                                        [c.unknowns for c in cells], policy=unknown)
        else:               # rewards: the runs that have one, their sum and sum of squares
            counted = Cells.from_sums(units, scenarios, [c.rewarded for c in cells], [c.reward_sum for c in cells],
                                      [c.reward_squares for c in cells])
        ci = clustered_interval_cells(counted, confidence_level=level, unit=unit, weighting=weighting)
        vc = variance_components_cells(counted)
        boot = (cluster_bootstrap_cells(counted, rng=np.random.default_rng(seed), resamples=bootstrap,
                                        confidence_level=level) if bootstrap else None)
        # what_more_buys needs every component; one unit (say) leaves the unit component undefined
        defined = all(math.isfinite(x) for x in (vc.unit, vc.scenario, vc.generation))
        out.append(VersionInterval(v, names.get(v), runs, runs - kept, ci, vc,
                                   tuple(vc.what_more_buys(2)) if defined else (), boot, missing))
    return IntervalResult(outcome, unit, weighting, level, tuple(out), unknown)


# -- pass@k --------------------------------------------------------------------------------------
def parse_ks(ks: str | Sequence[int]) -> list[int]:
    """Budgets from ``"1..4"``, ``"1,2,5"`` or a list of ints; each at least 1.

    >>> parse_ks("2..4"), parse_ks([1, 5])
    ([2, 3, 4], [1, 5])
    """
    text = ks if isinstance(ks, str) else ",".join(map(str, ks))
    try:
        if ".." in text:
            a, b = text.split("..", 1)
            out = list(range(int(a), int(b) + 1))
        else:
            out = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise UsageError(f"k={text!r}: give a range like 1..4 or a list like 1,2,5") from None
    if not out or min(out) < 1:
        raise UsageError(f"k={text!r}: every k must be at least 1")
    return out


def read_weights(path: str | Path) -> dict[str, float]:
    """A YAML/JSON file mapping each scenario to its weight."""
    import yaml

    try:
        data = yaml.safe_load(Path(path).read_text())
    except (OSError, yaml.YAMLError, UnicodeDecodeError) as exc:
        raise InputError(str(path), None, None, f"cannot read weights ({parse_problem(exc)})") from None
    if not isinstance(data, dict) or not all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                             for v in data.values()):
        raise InputError(str(path), None, None, "must map each scenario to a number (its weight)",
                         hint="e.g. 'airline/1: 2.0'")
    return {str(k): float(v) for k, v in data.items()}


@dataclass(frozen=True)
class VersionPassK:
    """One version's pass@k and pass^k for each budget (``rows``), from its per-scenario counts."""

    version: str
    label: str | None
    scenarios: int
    trials: int
    passes: int
    trials_per_scenario: tuple[int, int]
    weights: str
    rows: tuple[dict, ...]
    per_scenario: dict
    unknowns: int = 0     # runs whose outcome is unknown (among ``trials`` under "fail", left out under "exclude")

    def payload(self) -> dict[str, Any]:
        from ..record import redact_text

        return {"version": self.version, "label": self.label, "scenarios": self.scenarios, "trials": self.trials,
                "passes": self.passes, "unknowns": self.unknowns, "trials_per_scenario": list(self.trials_per_scenario),
                "weights": self.weights, "rows": [dict(r) for r in self.rows],
                # keys are scenario names from runs: redacted here, as fluke.record.redact leaves keys alone
                "per_scenario": {redact_text(k): list(v) for k, v in self.per_scenario.items()}}


@dataclass(frozen=True)
class PassKResult(Result):
    """Unbiased pass@k (at least one of k passes) and pass^k (all k pass) per version."""

    kind = "passk"
    versions: tuple[VersionPassK, ...]
    plugin: bool = False
    unknown_policy: str = "fail"

    def payload(self) -> dict[str, Any]:
        return {"versions": [v.payload() for v in self.versions],
                **unknown_fields(sum(v.unknowns for v in self.versions), self.unknown_policy)}

    def blocks(self) -> list:
        out: list = []
        for i, v in enumerate(self.versions):
            lo, hi = v.trials_per_scenario
            out += [blank()] if i else []
            out.append(line(f"version {v.version[:12]} ({v.label}): {v.passes} of {v.trials} runs passed, "
                            f"{v.scenarios} scenarios, {fmt_range(lo, hi)} trials each", style="bold"))
            for e in v.rows:
                if e["reason"]:
                    out.append(line(Span(f"k={e['k']} undefined: ", "warn"), e["reason"]))
            if self.plugin:
                out.append(line(Span("warning: ", "warn"), "the plug-in column is biased downwards for k > 1; "
                                "it is shown only for comparison"))
            level = f"{100 * v.rows[0]['confidence_level']:g}%" if v.rows else ""
            cols = [Column("k", "right", key=True), Column("pass@k", "right"), Column(f"{level} CI", "right"),
                    Column("pass^k", "right"), Column(f"{level} CI ", "right")]
            cols += [Column("plug-in pass@k (biased)", "right")] if self.plugin else []

            def ci(pair):
                return "—" if pair is None else fmt_interval(*pair)
            rows = [[str(e["k"]), fmt_num(e["pass_at_k"], 4), ci(e.get("pass_at_k_interval")),
                     fmt_num(e["pass_hat_k"], 4), ci(e.get("pass_hat_k_interval"))]
                    + ([fmt_num(e["plugin_pass_at_k"], 4)] if self.plugin else []) for e in v.rows]
            out.append(Table("", cols, rows, limit=None, more="budgets"))
            out += closing_notes(f"{v.weights} scenario weights; the trials of each scenario being exchangeable "
                                 "(independent attempts, no adaptation between them); intervals over "
                                 f"{v.scenarios} scenarios (the unit), on the logit scale; version {v.version[:12]}",
                                 v.unknowns, self.unknown_policy)
        return out


def passk(ledger, *, ks: str | Sequence[int] | None = None, version: str | None = None, condition: str | None = None,
          weights: str | Path | Mapping[str, float] | None = None, plugin: bool = False,
          confidence_level: float = 0.95, unknown: str = "fail") -> PassKResult:
    """pass@k and pass^k per version for each budget in ``ks``, per scenario × condition then averaged
    with ``weights`` (a mapping scenario -> weight, or a YAML/JSON file of one; equal when ``None``).
    ``ks=None`` takes k = 1 … the fewest trials n of any scenario of each version (five trials give
    pass@5), and past n = 10 the 1–2–5 series ending at n (1, 2, 5, …, 5000, 10000 for 10,000). A k above a
    scenario's trial count is undefined, with the reason. Each figure has a
    confidence interval over scenarios (the scenario is the unit). A run whose outcome is unknown
    is a failed trial (``unknown="fail"``) or is left out (``"exclude"``).
    """
    unknown = check_unknown(unknown)
    import warnings

    import numpy as np

    from ..inference import PlugInWarning, default_ks, pass_at_k, pass_at_k_plugin, pass_hat_k

    k_list = None if ks is None else parse_ks(ks)
    source = None if weights is None else (str(weights) if isinstance(weights, (str, Path)) else None)
    declared = read_weights(weights) if source else (None if weights is None else dict(weights))
    require_runs(ledger)
    rows = ledger.counts(version=select_versions(ledger, version), condition=condition)
    if not rows:
        raise InputError(ledger.url, None, None, "no runs match",
                         hint="loosen --version/--condition; see what the ledger holds with: "
                              f"{fluke_command(ledger, 'summary')}")
    names = labels(ledger)
    by_version: dict[str, list] = {}
    for r in rows:
        by_version.setdefault(r.version, []).append(r)
    out = []
    for v, vrows in by_version.items():
        c = np.array([r.passes for r in vrows])
        n = np.array([apply_to_counts(r.trials, r.passes, r.unknowns, unknown)[0] for r in vrows])
        w = None
        if declared is not None:
            missing = [r.scenario for r in vrows if r.scenario not in declared]
            if missing:
                raise InputError(source, None, missing[0], "no weight declared for this scenario",
                                 hint="give every scenario in scope a weight")
            w = [declared[r.scenario] for r in vrows]
        entries = []
        for k in (k_list if k_list is not None else (default_ks(n) or [1])):
            at = pass_at_k(c, n, k, weights=w, confidence_level=confidence_level)
            hat = pass_hat_k(c, n, k, weights=w, confidence_level=confidence_level)
            e = {"k": k, "pass_at_k": at.statistic, "pass_at_k_interval": [at.low, at.high],
                 "pass_hat_k": hat.statistic, "pass_hat_k_interval": [hat.low, hat.high],
                 "confidence_level": confidence_level, "reason": at.reason,
                 "interval_reason": at.interval_reason or hat.interval_reason}
            if plugin:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", PlugInWarning)
                    pl = pass_at_k_plugin(c, n, k, weights=w)
                e["plugin_pass_at_k"], e["warning"] = pl.statistic, pl.warning
            entries.append(e)
        cells = [r.scenario + (f" [{r.condition}]" if r.condition else "") for r in vrows]
        out.append(VersionPassK(v, names.get(v), len(vrows), int(n.sum()), int(c.sum()), (int(n.min()), int(n.max())),
                                ("declared in " + source) if source else ("declared" if declared is not None
                                                                           else "equal"),
                                tuple(entries), dict(zip(cells, zip(c.tolist(), n.tolist(), strict=True), strict=True)),
                                sum(r.unknowns for r in vrows)))
    return PassKResult(tuple(out), plugin, unknown)
