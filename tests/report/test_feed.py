"""Report sections fed from the other capabilities' real results.

Each test imports its capability with ``importorskip``: on a branch without it the test
skips; once merged it checks the section against numbers computed independently here.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import beta

from fluke.ledger import CountRow
from fluke.report import (
    ReportData,
    board_from,
    calibration_from,
    comparison_from,
    contrasts_from,
    explorer_run,
    luck_from,
    null_from,
    render_html,
    suite_questions_from,
    uniform_beta_board,
    violations_from,
)

from ..conftest import TAU_AIRLINE, need
from ._build import tau_runs


@pytest.fixture(scope="module")
def runs():
    return tau_runs(need(TAU_AIRLINE))


def test_luck_and_violations_from_real_grades(runs):
    grading = pytest.importorskip("fluke.grading")
    tools = sorted({e.tool for r in runs for e in r.tool_calls})
    spec = grading.load_spec({"tools": tools, "required": ["get_user_details"], "max_steps": 30})
    grades = [grading.grade_run(r, spec) for r in runs]
    section = luck_from(grading.luck_rate(grades))
    green = sum(bool(g.output_ok) for g in grades)
    lucky = sum(bool(g.output_ok) and not g.path_ok for g in grades)
    assert (section.pooled.green, section.pooled.lucky) == (green, lucky) and green == 84
    by_case = {c.case: c for c in section.cases}
    assert len(by_case) == 50
    for case in ("airline/0", "airline/1"):
        mine = [g for g in grades if g.scenario == case]
        assert by_case[case].green == sum(bool(g.output_ok) for g in mine)
        if by_case[case].green == 0:
            assert by_case[case].share is None  # nothing green: no luck to measure, never 0
    marks = violations_from(grades)
    flagged = [r for r in runs if marks.get(r.hash)]
    assert len(flagged) == sum(bool(g.violations) for g in grades) > 0
    shown = explorer_run(flagged[0], marks[flagged[0].hash])
    assert [(v.check, v.index) for v in shown.violations] == [(v["check"], v["index"]) for v in marks[flagged[0].hash]]


def test_comparison_from_the_pass_rate_comparison(runs):
    from scipy.stats import norm

    comparison = pytest.importorskip("fluke.comparison")
    arm_a = [r for r in runs if r.trial < 2]
    arm_b = [r for r in runs if r.trial >= 2]
    found = comparison.compare_versions(arm_a, arm_b)
    section = comparison_from((("trials 0–1", "a" * 64), ("trials 2–3", "b" * 64)), found)
    # the section carries what fluke compare prints: the pass-rate verdict, p and limit in points
    assert section.verdict == found.verdict and section.pvalue == pytest.approx(found.pass_rates.pvalue)
    assert section.detection_limit == pytest.approx(found.pass_rates.detection_limit) and section.ceiling == 5.0
    # an independent check of the limit: 100 (z + z_power) sqrt(V) / sum of n_a n_b / (n_a + n_b)
    per: dict = {}
    for arm, rs in ((0, arm_a), (1, arm_b)):
        for r in rs:
            cell = per.setdefault(r.scenario, [[0, 0], [0, 0]])
            cell[arm][0] += r.outcome.passed is not True
            cell[arm][1] += 1
    v = w = 0.0
    for (fa, na), (fb, nb) in per.values():
        n, f = na + nb, fa + fb
        v += na * nb * f * (n - f) / (n * n * (n - 1))
        w += na * nb / n
    assert section.detection_limit == pytest.approx(100 * (norm.ppf(0.975) + norm.ppf(0.8)) * v ** 0.5 / w)
    page = render_html(ReportData(comparison=section))
    assert found.verdict in page and "could not have detected a difference in pass rate below" in page


def test_null_calibration_from_real_pvalues():
    comparison = pytest.importorskip("fluke.comparison")
    p = np.random.default_rng(5).uniform(size=300)
    section = null_from(comparison.null_calibration(p, alpha=0.05))
    assert sum(section.histogram) == section.pairs == 300
    assert section.false_alarms == int((p < 0.05).sum())
    assert section.histogram == np.histogram(p, bins=len(section.histogram), range=(0, 1))[0].tolist()


def test_contrasts_from_a_factorial_design():
    design = pytest.importorskip("fluke.design")
    rng = np.random.default_rng(2)
    env = np.repeat(np.arange(12), 4)
    memory = np.tile(["off", "off", "on", "on"], 12)
    retry = np.tile([1, 3, 1, 3], 12)
    y = 0.5 + 0.1 * (memory == "on") + rng.normal(0, 0.05, size=48)
    result = design.factorial_contrasts(y, env, {"memory": memory, "retry": retry},
                                        levels={"memory": ("off", "on"), "retry": (1, 3)})
    section = contrasts_from(result)
    by = {c.label: c for c in section.contrasts}
    first = result.contrasts[0]
    assert (by[first.name].estimate, by[first.name].lo, by[first.name].hi) == (first.statistic, first.low, first.high)
    diffs = [y[(env == e) & (memory == "on")].mean() - y[(env == e) & (memory == "off")].mean() for e in range(12)]
    assert any(c.estimate == pytest.approx(np.mean(diffs)) for c in section.contrasts)


def test_board_questions_and_calibration_from_inference():
    inference = pytest.importorskip("fluke.inference")
    if not hasattr(inference, "posterior"):
        pytest.skip("this build's fluke.inference has no posterior()")
    k, n = np.array([5, 3, 0, 8]), np.array([5, 4, 4, 10])
    cells = [(f"s{i}", "", int(a), int(b)) for i, (a, b) in enumerate(zip(k, n, strict=True))]
    belief = inference.posterior(k, n)
    board = board_from(belief, cells, version="v" * 64, label="m", bar=0.9, level=0.95)
    ours = uniform_beta_board([CountRow("v", s, c, b, a) for s, c, a, b in cells], version="v", label="m")
    for x, y in zip(board.rows, ours.rows, strict=True):
        assert (x.mean, x.lo, x.hi, x.p_above_bar) == pytest.approx((y.mean, y.lo, y.hi, y.p_above_bar))
    answers = inference.suite_questions(belief, bar=0.9)
    block = suite_questions_from(answers, version="v" * 64, label="m", conditional_on="uniform prior")
    clear = next(q for q in block.questions if q.name.startswith("P(every"))
    assert clear.value == pytest.approx(np.prod(beta(1 + k, 1 + n - k).sf(0.9)))
    p = np.array([0.9, 0.8, 0.2, 0.6, 0.95, 0.1])
    y = np.array([1, 1, 0, 0, 1, 1])
    score = inference.score_predictions(p, y).overall
    cal = calibration_from(score)
    assert cal.brier == pytest.approx(np.mean((p - y) ** 2)) and sum(b.n for b in cal.bins) == cal.n == 6
