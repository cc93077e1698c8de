"""Where runs die (Cox against lifelines, per-step strata), looking again, and the fix-check bar."""

import math

import numpy as np
import pandas as pd
import pytest

from fluke.comparison import (
    DIFFERENT,
    compare_where,
    fix_check,
    hazard_ratio_limit,
    per_step,
    rerun_bar,
    sequential_evalues,
    sequential_test,
    stratified_cox,
    stratified_pvalues,
)

from ._oracles import hr_limit, logrank_by_loop


@pytest.mark.parametrize("seed", range(4))
def test_stratified_cox_equals_lifelines_efron(seed):
    lifelines = pytest.importorskip("lifelines")
    rng = np.random.default_rng(seed)
    n = int(rng.integers(150, 600))
    group = rng.random(n) < 0.5
    strata = rng.integers(0, int(rng.integers(1, 8)), n)
    # tied integer event indices, B's hazard higher
    time = np.minimum(rng.geometric(np.where(group, 0.25, 0.18)), 12)
    died = (time < 12) & (rng.random(n) < 0.9)
    frame = pd.DataFrame({"T": time, "E": died.astype(int), "G": group.astype(int), "S": strata})
    fit = lifelines.CoxPHFitter().fit(frame, "T", "E", strata=["S"])
    ours = stratified_cox(time, died, group, strata=strata)
    assert ours.log_hr == pytest.approx(fit.params_["G"], abs=1e-6)
    assert ours.se == pytest.approx(fit.standard_errors_["G"], abs=1e-6)
    low, high = np.exp(fit.confidence_intervals_.values[0])
    assert (ours.low, ours.high) == pytest.approx((low, high), rel=1e-5)
    assert "Efron" in ours.estimator


def test_where_limit_comes_from_the_information_not_the_deaths():
    # 100 against 900 runs, 30% dying at steps 1..5, nothing changed
    rng = np.random.default_rng(3)
    time = rng.integers(1, 6, 1000)
    died = rng.random(1000) < 0.3
    group = np.arange(1000) < 100
    found = compare_where(time, died, group)
    _, variance = logrank_by_loop(time, died, group, np.zeros(1000))
    assert found.survival.detection_limit == pytest.approx(hr_limit(variance))
    assert found.survival.detection_limit > 1.7          # D alone would have said about 1.38
    assert found.allocation == "900:100"
    assert any("proportional hazards" in a for a in found.assumptions)
    assert "allocation A:B 900:100" in found.summary()


def test_per_step_stratified_by_scenario_does_not_invent_a_step():
    # arm A mostly runs the hard scenario, arm B the easy one; within each, nothing changed
    rng = np.random.default_rng(4)

    def arm(n_hard, n_easy):
        return np.r_[np.where(rng.random(n_hard) < 0.6, 1, 4), np.where(rng.random(n_easy) < 0.1, 1, 4)]

    time = np.r_[arm(400, 100), arm(100, 400)]
    died = time == 1
    group = np.r_[np.zeros(500), np.ones(500)].astype(bool)
    scen = np.r_[np.zeros(400), np.ones(100), np.zeros(100), np.ones(400)]
    pooled = per_step(time, died, group)
    stratified = per_step(time, died, group, strata=scen)
    assert pooled.steps[0].qvalue < 1e-10
    assert stratified.stratified and stratified.steps[0].qvalue > 0.05
    step = stratified.steps[0]
    assert (step.deaths_a + step.deaths_b) == int(died.sum())


def test_sequential_test_holds_alpha_over_20_looks_and_the_fixed_test_does_not():
    # 1,000 unchanged pairs, 20 looks of 10 scenarios × 4 runs per arm each (rates differ by scenario)
    rng = np.random.default_rng(2026)
    reps, looks, strata, n = 1000, 20, 10, 4
    p = rng.uniform(0.2, 0.8, (reps, 1, strata))
    fa = rng.binomial(n, np.broadcast_to(p, (reps, looks, strata)))
    fb = rng.binomial(n, np.broadcast_to(p, (reps, looks, strata)))
    trials = np.full(fa.shape, n)
    e = sequential_evalues(fa, trials, fb, trials)
    anytime = float((e.max(axis=1) >= 20).mean())
    # the fixed-sample stratified test on the cumulative counts, read at every look
    ca, cb, ct = np.cumsum(fa, axis=1), np.cumsum(fb, axis=1), np.cumsum(trials, axis=1)
    pv = stratified_pvalues(ca.reshape(-1, strata), ct.reshape(-1, strata), cb.reshape(-1, strata),
                            ct.reshape(-1, strata), method="cmh").reshape(reps, looks)
    fixed = float((pv < 0.05).any(axis=1).mean())
    se = math.sqrt(0.05 * 0.95 / reps)
    assert anytime <= 0.05 + 2 * se             # at most α (it is conservative: about 1–2%)
    assert fixed > 0.05 + 6 * se                # looking 20 times at a fixed-sample test: about 25%
    # and it does detect a real change: B fails at odds ratio 3
    odds = p / (1 - p) * 3
    fb_changed = rng.binomial(n, np.broadcast_to(odds / (1 + odds), (reps, looks, strata)))
    power = float((sequential_evalues(fa, trials, fb_changed, trials).max(axis=1) >= 20).mean())
    assert power > 0.9


def test_sequential_test_names_where_it_stopped():
    found = sequential_test([[1, 1], [1, 0], [0, 1]], [[8, 8]] * 3, [[6, 7], [7, 6], [8, 7]], [[8, 8]] * 3)
    assert found.verdict == DIFFERENT and found.stopped_at == 1 + int(np.argmax(np.array(found.evalues) >= 20))
    assert found.pvalue == pytest.approx(1 / max(found.evalues))


def _arm(q, trials, rng, offset=0):
    inputs = np.repeat([f"s{i}" for i in range(q.size)], trials)
    order = np.tile(np.arange(trials) + offset, q.size)
    return inputs, rng.random(inputs.size) < np.repeat(q, trials), order


def test_fix_check_without_control_never_says_improved_and_its_bar_is_what_a_rerun_fixes():
    rng = np.random.default_rng(8)
    gaps, p_values = [], []
    for _ in range(200):
        q = rng.beta(0.5, 1.5, 60)                      # heterogeneous inputs, nothing changed
        first, cand = _arm(q, 4, rng), _arm(q, 4, rng, 4)
        check = fix_check(first, cand)
        p_values.append(check.by_input.pvalue)
        assert check.by_input.improved == 0 and check.difference_once is None
        assert not any(f.flagged and f.failures_candidate * f.trials_reference < f.failures_reference
                       * f.trials_candidate for f in check.flags)
        gaps.append(check.candidate.fixed_once.estimate - check.bar.once)
    assert all(math.isnan(p) for p in p_values)
    gaps = np.array(gaps)
    # the bar (1 − C of the first run) predicts the re-run's "fixed" share: no bias beyond MC error
    assert abs(gaps.mean()) < 4 * gaps.std(ddof=1) / math.sqrt(gaps.size)


def test_rerun_bar_within_three_against_a_loop():
    f, n = np.array([3, 1, 4, 0, 2]), np.array([4, 4, 4, 4, 4])
    bar = rerun_bar(f, n, tries=3)
    # P(fail 3 more | failed once): ordered 4-tuples of distinct trials, all failed, over those starting failed
    num = sum(fi * (fi - 1) * (fi - 2) * (fi - 3) for fi in f)
    den = sum(fi * (ni - 1) * (ni - 2) * (ni - 3) for fi, ni in zip(f, n, strict=True))
    assert bar.within == pytest.approx(1 - num / den)
    assert bar.once == pytest.approx(1 - (f * (f - 1)).sum() / (f * (n - 1)).sum())


def test_hazard_ratio_limit_is_undefined_without_information():
    assert math.isinf(hazard_ratio_limit(0.0))
    assert stratified_cox([3, 3], [False, False], [False, True]).reason == "no deaths"


def test_zero_information_is_too_small_to_tell_however_many_deaths():
    # a08/a09: two million runs all dying at one step, and strata that hold one arm each, carry
    # no information; D would have printed a limit of about 1.004 and "no significant difference"
    from fluke.comparison import TOO_SMALL, compare_survival

    n = 10**6
    same_step = compare_survival(np.full(2 * n, 5), np.ones(2 * n, bool), np.arange(2 * n) >= n)
    assert same_step.verdict == TOO_SMALL and math.isinf(same_step.detection_limit)
    assert "no information" in same_step.summary()
    rng = np.random.default_rng(3)
    time, died = rng.integers(1, 6, 800), rng.random(800) < 0.4
    group = np.arange(800) >= 400
    apart = compare_survival(time, died, group, strata=group.astype(int))
    assert apart.verdict == TOO_SMALL and apart.logrank.variance == 0
