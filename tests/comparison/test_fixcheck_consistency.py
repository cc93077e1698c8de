"""Clustered means, the fix check and consistency: oracles, hand counts and coverage by simulation."""

import itertools

import numpy as np
import pytest
import statsmodels.api as sm
from scipy import stats

from fluke.comparison import (
    CLOSING_STATEMENT,
    clustered_mean,
    consistency_from_counts,
    fix_check,
    rerun_rule,
)

from ._realdata import tau1_airline_runs


def test_clustered_se_equals_statsmodels_cluster_robust():
    from fluke.inference import clustered_interval

    rng = np.random.default_rng(8)
    groups = rng.integers(0, 23, 300)
    y = rng.normal(size=300) + rng.normal(size=23)[groups]
    fit = sm.OLS(y, np.ones(300)).fit(cov_type="cluster", cov_kwds={"groups": groups})
    cr1 = clustered_interval(y, groups, sandwich="CR1", scale="t")
    assert cr1.statistic == pytest.approx(fit.params[0])
    assert cr1.standard_error == pytest.approx(fit.bse[0], rel=1e-10)
    # the fix check's interval is CR2 (issue 35): for the mean, each cluster's residual sum S_g is
    # scaled by (1 − n_g/N)^(−1/2), so V = Σ S_g² / (1 − n_g/N) / N²; t on the Bell–McCaffrey df
    ours = clustered_mean(y, groups)
    e = y - y.mean()
    sums = np.bincount(groups, weights=e)
    sizes = np.bincount(groups)
    v = float(np.sum(sums**2 / (1 - sizes / 300))) / 300**2
    assert ours.estimate == pytest.approx(fit.params[0])
    assert ours.se == pytest.approx(np.sqrt(v), rel=1e-10)
    assert "CR2" in ours.method and 1 < ours.df < 22
    half = stats.t.ppf(0.975, ours.df) * ours.se
    assert (ours.low, ours.high) == pytest.approx((ours.estimate - half, ours.estimate + half))


def _c_by_pairs(fail_matrix):
    """C the slow way: over every ordered pair of distinct trials of one scenario."""
    first_failed = again = 0
    for row in fail_matrix:
        for i, j in itertools.permutations(range(len(row)), 2):
            if row[i]:
                first_failed += 1
                again += row[j]
    return again / first_failed


def test_consistency_by_hand_and_by_pairs():
    fails = np.array([[1, 1, 1, 0], [0, 0, 0, 0], [1, 0, 0, 0], [1, 1, 1, 1], [0, 1, 0, 1]])
    c = consistency_from_counts(fails.sum(axis=1), np.full(5, 4))
    assert c.c == pytest.approx(_c_by_pairs(fails))
    assert c.p == pytest.approx(fails.mean())
    assert c.kappa == pytest.approx((c.c - c.p) / (1 - c.p))
    assert c.chance_fixed_once == pytest.approx(1 - c.p)
    assert c.chance_fixed_within3 == pytest.approx(1 - c.p**3)


def test_consistency_interval_covers_kappa_zero_on_pure_chance():
    # failures independent at p = 0.271: κ = 0; the 95% interval should cover 0 about 95% of the time.
    rng = np.random.default_rng(12)
    reps, covered = 400, 0
    failures = rng.binomial(4, 0.271, size=(reps, 50))
    for f in failures:
        lo, hi = consistency_from_counts(f, np.full(50, 4)).kappa_interval
        covered += lo <= 0 <= hi
    # Monte Carlo sd of a 95% coverage over 400 reps is 0.011; allow 3 sd
    assert abs(covered / reps - 0.95) < 0.033


def test_consistency_undefined_is_said():
    assert consistency_from_counts([0, 0], [2, 2]).reason.startswith("no failures")
    assert consistency_from_counts([1, 1], [1, 1]).reason.startswith("no scenario ran twice")
    with pytest.raises(ValueError, match="trials=0 must be at least 1"):
        consistency_from_counts([0], [0])


def test_tau_bench_consistency_and_rerun_rule_by_hand():
    runs = tau1_airline_runs()
    fail = {}
    for r in runs:
        fail.setdefault(r.scenario, {})[r.trial] = not r.outcome.passed
    tasks = sorted(fail)
    matrix = np.array([[fail[t][k] for k in range(4)] for t in tasks], dtype=int)
    assert matrix.shape == (50, 4) and matrix.sum() == 116        # 29 + 28 + 30 + 29 failures
    c = consistency_from_counts(matrix.sum(axis=1), np.full(50, 4))
    assert c.c == pytest.approx(_c_by_pairs(matrix))
    assert c.p == pytest.approx(116 / 200)
    # re-run rule, trials 0-1 against 2-3, counted by hand: a failure at trial t in {0,1} looks at
    # trial t+2 first, then the other of {2, 3}
    once = [1 - matrix[i, t + 2] for i in range(50) for t in (0, 1) if matrix[i, t]]
    within = [1 - matrix[i, 2] * matrix[i, 3] for i in range(50) for t in (0, 1) if matrix[i, t]]
    first = ([r.scenario for r in runs if r.trial < 2], [not r.outcome.passed for r in runs if r.trial < 2],
             [r.trial for r in runs if r.trial < 2])
    rerun = ([r.scenario for r in runs if r.trial >= 2], [not r.outcome.passed for r in runs if r.trial >= 2],
             [r.trial for r in runs if r.trial >= 2])
    rule = rerun_rule(*first, *rerun)
    assert rule.rows == 57 and rule.tries == 2
    assert rule.fixed_once.estimate == pytest.approx(np.mean(once))
    assert rule.fixed_within.estimate == pytest.approx(np.mean(within))


def test_fix_check_flags_the_input_that_broke_and_no_other():
    # one input goes from 20 of 32 failing to 32 of 32; four others stay as they were
    rng = np.random.default_rng(4)
    inputs, failed_first, failed_second = [], [], []
    for name, p in [("broke", None), ("a", 0.3), ("b", 0.5), ("c", 0.2), ("d", 0.6)]:
        if name == "broke":
            f1, f2 = np.r_[np.ones(20), np.zeros(12)], np.ones(32)
        else:
            f1, f2 = rng.random(32) < p, rng.random(32) < p
        inputs += [name] * 32
        failed_first += list(f1)
        failed_second += list(f2)
    order = list(range(32)) * 5
    check = fix_check((inputs, failed_first, order), (inputs, failed_second, order))
    flagged = [f.input for f in check.flags if f.flagged]
    assert flagged == ["broke"]
    broke = next(f for f in check.flags if f.input == "broke")
    assert (broke.failures_candidate, broke.trials_candidate, broke.failures_reference) == (32, 32, 20)
    assert broke.pvalue == pytest.approx(stats.fisher_exact([[32, 0], [20, 12]]).pvalue)
    assert check.reference == "first run" and check.difference_once is None
    assert check.statement == CLOSING_STATEMENT


def test_fix_check_difference_is_clustered_by_input():
    rng = np.random.default_rng(6)
    n_inputs = 40
    inputs = np.repeat([f"i{k}" for k in range(n_inputs)], 3)
    order = np.tile([0, 1, 2], n_inputs)
    first = (inputs, rng.random(inputs.size) < 0.5, order)
    cand = (inputs, rng.random(inputs.size) < 0.2, order)     # a real fix: failures 0.5 -> 0.2
    ctrl = (inputs, rng.random(inputs.size) < 0.5, order)
    check = fix_check(first, cand, ctrl)
    a = rerun_rule(*first, *cand)
    b = rerun_rule(*first, *ctrl)
    assert check.difference_once.estimate == pytest.approx(a.fixed_once.estimate - b.fixed_once.estimate)
    assert check.difference_once.clusters == a.inputs
    assert check.difference_once.low > 0                       # the fix is seen against the control
    assert check.by_input.improved > check.by_input.worsened


def test_fix_check_holds_both_arms_to_the_same_tries():
    inputs = ["a", "b", "c"]
    first = (inputs, [1, 1, 1], [0, 0, 0])
    cand = (inputs * 3, [1, 1, 1, 0, 0, 0, 0, 0, 0], [1, 1, 1, 2, 2, 2, 3, 3, 3])   # passes from try 2
    ctrl = (inputs, [1, 1, 1], [1, 1, 1])                                          # one re-run only
    check = fix_check(first, cand, ctrl)
    assert check.candidate.tries == check.control.tries == 1
    # with one try each, "within" equals "once": nothing fixed on either side, difference 0
    assert check.candidate.fixed_within.estimate == 0.0
    assert check.difference_within.estimate == 0.0
    # alone, the candidate's three tries do count
    assert rerun_rule(*first, *cand).fixed_within.estimate == 1.0
