"""The gate and the luck rate, against counts worked by hand and scipy's Beta quantiles."""

from __future__ import annotations

import numpy as np
import pytest

from fluke.errors import UsageError
from scipy import stats

from fluke.grading import Violation, evaluate_gate, luck_rate, luck_rates, make_grade

HARD = Violation("forbidden", "hard", 1, "x")
SOFT = Violation("max_steps", "soft", 9, "x")
SOFT2 = Violation("repeat", "soft", 4, "x")
WARN = Violation("ungrounded", "warn", 2, "x")


def grades(case, *violation_lists, output_ok=True):
    return [make_grade(f"{case}-{i}", case, list(v), output_ok) for i, v in enumerate(violation_lists)]


def test_hard_fails_on_one_occurrence_in_one_run_of_many():
    rows = grades("c", [], [], [], [], [HARD]) + grades("d", [])
    result = evaluate_gate(rows)
    assert not result.passed
    assert result.reasons == ["c: hard violation in 1 of 5 runs"]


@pytest.mark.parametrize("failing, runs, passed", [(1, 1, False), (1, 2, True), (2, 4, True), (3, 4, False),
                                                   (2, 3, False), (0, 3, True)])
def test_soft_fails_only_on_a_strict_majority(failing, runs, passed):
    rows = grades("c", *([[SOFT]] * failing + [[]] * (runs - failing)))
    assert evaluate_gate(rows).passed is passed


def test_soft_majority_is_per_check_and_warn_never_fails():
    # 2 of 4 over the budget and 2 of 4 repeating: neither check has a majority
    rows = grades("c", [SOFT], [SOFT], [SOFT2], [SOFT2])
    assert evaluate_gate(rows).passed
    assert evaluate_gate(grades("c", [WARN], [WARN], [WARN])).passed


def test_cases_are_separate_for_the_soft_majority():
    rows = grades("a", [SOFT], [SOFT], []) + grades("b", [], [], [SOFT])
    result = evaluate_gate(rows)
    assert not result.passed and [c.scenario for c in result.cases if c.failed] == ["a"]


def test_luck_rate_counts_warnings_and_divides_by_output_ok_runs_only():
    rows = (grades("a", [WARN], [], [], output_ok=True) + grades("a", [HARD], output_ok=False)
            + grades("b", [SOFT], [], output_ok=True) + grades("b", [], output_ok=None))
    report = luck_rate(rows)
    assert (report.pooled.lucky, report.pooled.green, report.pooled.runs) == (2, 5, 7)
    assert report.pooled.statistic == pytest.approx(0.4)
    assert (report.cases["a"].lucky, report.cases["a"].green, report.cases["a"].runs) == (1, 3, 4)
    assert (report.cases["b"].lucky, report.cases["b"].green, report.cases["b"].runs) == (1, 2, 3)
    lo, hi = report.pooled.interval
    assert lo == pytest.approx(stats.beta.ppf(0.025, 2.5, 3.5)) and hi == pytest.approx(stats.beta.ppf(0.975, 2.5, 3.5))
    assert "Jeffreys" in report.conditional_on and "sampling unit: the run" in report.conditional_on


def test_nothing_green_is_undefined_never_zero():
    report = luck_rate(grades("a", [HARD], [], output_ok=False))
    assert report.pooled.statistic is None and report.pooled.interval is None
    assert str(report.pooled) == "— (0 output-ok runs of 2)"
    assert "no run was output-ok" in report.pooled.reason
    assert luck_rate([]).pooled.statistic is None


def test_other_prior_and_level():
    (r,) = luck_rates(np.array([3]), np.array([10]), np.array([12]), prior=(1, 1), level=0.9)
    assert r.interval == pytest.approx((stats.beta.ppf(0.05, 4, 8), stats.beta.ppf(0.95, 4, 8)))
    with pytest.raises(UsageError, match=r"prior=\(0, 1\) must be two positive numbers"):
        luck_rates(np.array([1]), np.array([2]), np.array([2]), prior=(0, 1))
    with pytest.raises(UsageError, match="lucky <= green <= runs"):
        luck_rates(np.array([3]), np.array([2]), np.array([2]))


def test_interval_coverage_by_simulation():
    """The Jeffreys interval covers the true luck rate about 95% of the time (n=40, p=0.2)."""
    rng = np.random.default_rng(2026)
    reps, n, p = 4000, 40, 0.2
    lucky = rng.binomial(n, p, size=reps)
    rows = luck_rates(lucky, np.full(reps, n), np.full(reps, n))
    covered = np.mean([r.interval[0] <= p <= r.interval[1] for r in rows])
    # Monte Carlo standard error sqrt(.95*.05/4000) ~ 0.0034; Jeffreys coverage at small n
    # oscillates around the nominal level by about a point, hence 4 SE + 0.01.
    assert abs(covered - 0.95) < 4 * np.sqrt(0.95 * 0.05 / reps) + 0.01
