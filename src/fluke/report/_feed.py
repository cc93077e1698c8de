"""Turn the results of fluke's other capabilities into report sections.

Each function reads its input by attribute (duck typing), so this module imports none of
``fluke.grading``, ``fluke.inference``, ``fluke.comparison`` or ``fluke.design``: the report
stays a renderer over its own model, and a capability's result type can change without
breaking the import of the report.

>>> null = null_from_pvalues([0.01, 0.3, 0.6, 0.97], bins=4)
>>> null.histogram, null.false_alarms, null.pairs
([1, 1, 1, 1], 1, 4)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict
from typing import Any

import numpy as np

from ._model import (
    Arm,
    Calibration,
    CalibrationBin,
    Comparison,
    Contrast,
    Forest,
    Leaderboard,
    LeaderRow,
    LuckCase,
    LuckRate,
    NullCalibration,
    ScenarioPosterior,
    SuiteBoard,
    SuiteQuestion,
    SuiteQuestions,
)
from ._svg import fmt_p


def _value(obj: Any, name: str) -> Any:
    """An attribute that may be a property or a method."""
    value = getattr(obj, name)
    return value() if callable(value) else value


def _luck_case(case: str, rate: Any) -> LuckCase:
    interval = rate.interval
    return LuckCase(case=case, green=int(rate.green), lucky=int(rate.lucky),
                    share=None if rate.statistic is None else float(rate.statistic),
                    lo=None if interval is None else float(interval[0]),
                    hi=None if interval is None else float(interval[1]))


def luck_from(report: Any) -> LuckRate:
    """A grading luck report (``pooled``, ``cases``: case → rate, ``conditional_on``) as a section.

    A rate has ``lucky``, ``green``, ``statistic`` (None when nothing was green) and ``interval``.
    """
    from ..format import natural_key

    cases = [_luck_case(case, report.cases[case]) for case in sorted(report.cases, key=natural_key)]
    return LuckRate(cases=cases, pooled=_luck_case("pooled", report.pooled),
                    conditional_on=str(getattr(report, "conditional_on", "")))


def violations_from(grades: Iterable[Any]) -> dict[str, list[dict[str, Any]]]:
    """Run hash → violations (check, severity, index, message), from run grades, for the explorer."""
    out: dict[str, list[dict[str, Any]]] = {}
    for grade in grades:
        out.setdefault(grade.run_hash, []).extend(
            {"check": v.check, "severity": v.severity, "index": v.index, "message": v.message}
            for v in grade.violations)
    return out


def comparison_from(arms: Sequence[tuple[str, str]], found: Any, steps: Any | None = None) -> Comparison:
    """A two-arm comparison: ``arms`` = ((label A, version A), (label B, version B)); ``found`` the
    :class:`fluke.comparison.VersionComparison` (the pass-rate verdict, its p-value and detection limit in
    points; the per-step deaths of where runs die) that ``fluke compare`` prints too."""
    (label_a, version_a), (label_b, version_b) = arms
    rates = found.pass_rates
    steps = found.where.steps if steps is None else steps
    rows = sorted(steps.steps, key=lambda r: r.step) if steps is not None else []
    deaths_a = [int(r.deaths_a) for r in rows]
    deaths_b = [int(r.deaths_b) for r in rows]
    qvalues = [None if not np.isfinite(r.qvalue) else float(r.qvalue) for r in rows] if rows else None
    limit = float(rates.detection_limit)
    where = "skipped: " + found.where.reason if found.where.skipped else "over runs whose failure step is known"
    return Comparison(
        arms=[Arm(label=label_a, version=version_a, runs=int(rates.runs_a), deaths=deaths_a),
              Arm(label=label_b, version=version_b, runs=int(rates.runs_b), deaths=deaths_b)],
        steps=[int(r.step) for r in rows], qvalues=qvalues,
        step_labels=[getattr(r, "label", None) for r in rows] if rows else None, verdict=str(rates.verdict),
        pvalue=float(rates.pvalue), detection_limit=limit, ceiling=float(rates.ceiling), alpha=float(rates.alpha),
        difference=float(rates.difference), difference_lo=float(rates.interval[0]),
        difference_hi=float(rates.interval[1]), difference_level=float(rates.confidence_level),
        passes=[int(rates.passes_a), int(rates.passes_b)], uninformative=int(rates.uninformative),
        note=_runs_needed(rates),
        conditional_on=(f"{label_a} ({version_a[:12]}) against {label_b} ({version_b[:12]}); "
                        f"{rates.conditional_on()}; B − A = {rates.difference:+.1f} points; detection limit in "
                        f"points against the declared ceiling {rates.ceiling:g}; deaths per step {where}, "
                        "q-values by Benjamini–Hochberg across steps"))


def _runs_needed(survival: Any) -> str:
    needed = getattr(survival, "runs_needed_per_arm", None)
    if not needed or str(survival.verdict) != "too small to tell":
        return ""
    return (f"To resolve a hazard ratio of {float(survival.ceiling):g}, about {int(needed)} runs per arm would be "
            "needed.")


def null_from(result: Any, *, conditional_on: str = "") -> NullCalibration:
    """A null-calibration result (``histogram``, ``pairs``, ``false_alarms``, ``alpha``, ``interval``)."""
    lo, hi = result.interval
    return NullCalibration(histogram=[int(c) for c in result.histogram], alpha=float(result.alpha),
                           false_alarms=int(result.false_alarms), pairs=int(result.pairs), lo=float(lo), hi=float(hi),
                           conditional_on=conditional_on)


def null_from_pvalues(pvalues: Sequence[float], *, alpha: float = 0.05, bins: int = 20,
                      conditional_on: str = "") -> NullCalibration:
    """A null-calibration section straight from p-values (no interval)."""
    p = np.clip(np.asarray(pvalues, dtype=float), 0.0, 1.0)
    counts, _ = np.histogram(p, bins=bins, range=(0.0, 1.0))
    return NullCalibration(histogram=counts.tolist(), alpha=alpha, false_alarms=int((p < alpha).sum()),
                           pairs=int(p.size), conditional_on=conditional_on)


def contrasts_from(result: Any, *, measure: str = "difference") -> Forest:
    """Factorial contrasts (``contrasts``: rows with ``name``, ``statistic``, ``low``, ``high``)."""
    return Forest(measure=measure, contrasts=[Contrast(label=str(c.name), estimate=float(c.statistic),
                                                       lo=float(c.low), hi=float(c.high)) for c in result.contrasts],
                  conditional_on=str(getattr(result, "conditional_on", "")))


def board_from(belief: Any, cells: Sequence[tuple[str, str, int, int]], *, version: str, label: str,
               bar: float = 0.9, level: float = 0.95, conditional_on: str = "") -> SuiteBoard:
    """Per-scenario posteriors (``mean``, ``interval(level)``, ``sf(bar)`` over arrays, ``prior``)
    for ``cells`` = (scenario, condition, successes, trials), in the same order."""
    mean = np.asarray(_value(belief, "mean"), dtype=float).reshape(-1)
    lo, hi = (np.asarray(x, dtype=float).reshape(-1) for x in belief.interval(level))
    above = np.asarray(belief.sf(bar), dtype=float).reshape(-1)
    prior = getattr(belief, "prior", None)
    rows = [ScenarioPosterior(scenario=s, condition=c, successes=int(k), trials=int(n), mean=float(m), lo=float(a),
                              hi=float(b), p_above_bar=float(p))
            for (s, c, k, n), m, a, b, p in zip(cells, mean, lo, hi, above, strict=True)]
    pair = (float(prior.alpha), float(prior.beta)) if prior is not None else (1.0, 1.0)
    return SuiteBoard(version=version, label=label, bar=bar, level=level, prior=pair, rows=rows,
                      conditional_on=conditional_on)


def suite_questions_from(answers: Any, *, version: str, label: str, conditional_on: str,
                         level: float = 0.9) -> SuiteQuestions:
    """Suite answers (``average_mean``, ``average_sd``, ``expected_below``, ``p_all_clear``,
    ``expected_failures``, ``below_interval(level)``, ``failures_interval(level)``, ``bar``)."""
    bar = float(answers.bar)
    below_lo, below_hi = answers.below_interval(level)
    fail_lo, fail_hi = answers.failures_interval(level)
    n = int(answers.scenarios)
    questions = [
        SuiteQuestion(
            name="average pass rate",
            value=float(answers.average_mean),
            display=f"{answers.average_mean:.3f} (sd {answers.average_sd:.3f})",
            conditional_on=f"{conditional_on}; scenarios weighted equally",
        ),
        SuiteQuestion(
            name=f"scenarios below the bar {bar:g}",
            value=float(answers.expected_below),
            display=f"{answers.expected_below:.1f} of {n} expected ({level:.0%}: {below_lo}–{below_hi})",
            conditional_on=conditional_on,
        ),
        SuiteQuestion(
            name=f"P(every scenario clears {bar:g})",
            value=float(answers.p_all_clear),
            display=fmt_p(float(answers.p_all_clear)),
            conditional_on=f"{conditional_on}; scenarios independent",
        ),
        SuiteQuestion(
            name="failures in the next full execution",
            value=float(answers.expected_failures),
            display=f"{answers.expected_failures:.1f} of {n} expected ({level:.0%}: {fail_lo}–{fail_hi})",
            conditional_on=f"{conditional_on}; one run per scenario",
        ),
    ]
    return SuiteQuestions(version=version, label=label, questions=questions)


def calibration_from(score: Any, *, conditional_on: str = "") -> Calibration:
    """A calibration score (``predictions``, ``brier``, ``baseline_brier``, ``table`` with arrays
    ``lower``, ``upper``, ``count``, ``mean_forecast``, ``observed``); empty bins are left out."""
    t = score.table
    bins = [CalibrationBin(lo=float(a), hi=float(b), mean_forecast=float(m), observed_share=float(o), n=int(c))
            for a, b, c, m, o in zip(t.lower, t.upper, t.count, t.mean_forecast, t.observed, strict=True) if c > 0]
    return Calibration(bins=bins, brier=float(score.brier), baseline_brier=float(score.baseline_brier),
                       n=int(score.predictions), conditional_on=conditional_on)


def leaderboard_from(result: Any) -> Leaderboard:
    """A leaderboard result (``board`` with ``ordered()``, ``groups``, ``strata``, ``scenarios``,
    ``confidence_level``; ``versions`` = (label, hash) pairs; ``conditional_on()``) as a section:
    its standings best first, as the leaderboard gives them, each with its version's hash."""
    b = result.board
    hashes = dict(result.versions)
    return Leaderboard(rows=[LeaderRow(**asdict(s), version=hashes[s.label]) for s in b.ordered()],
                       groups=None if b.groups is None else [list(g) for g in b.groups],
                       strata=int(b.strata), scenarios=int(b.scenarios), level=float(b.confidence_level),
                       conditional_on=str(_value(result, "conditional_on")))
