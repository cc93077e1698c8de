"""Fisher, BH, Wilson, the detection limit and the verdicts, against oracles and seed 002's figures."""

import math

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint

from fluke.comparison import (
    DIFFERENT,
    NO_DIFFERENCE,
    TOO_SMALL,
    bh_qvalues,
    compare_survival,
    detection_limit,
    fisher_exact_many,
    per_cell,
    per_step,
    runs_needed_per_arm,
    wilson_interval,
)

from ._oracles import hr_limit, logrank_by_loop, z_sum


def test_fisher_equals_scipy_on_many_tables():
    rng = np.random.default_rng(2)
    tables = rng.integers(0, 40, (400, 4))
    tables[:40] = rng.integers(0, 3, (40, 4))                  # small and degenerate tables too
    ours = fisher_exact_many(*tables.T)
    for row, p in zip(tables, ours, strict=True):
        expected = stats.fisher_exact(row.reshape(2, 2)).pvalue
        assert p == pytest.approx(expected, rel=1e-9, abs=1e-12)


def test_bh_equals_statsmodels():
    p = np.random.default_rng(3).random(57) ** 3
    assert np.allclose(bh_qvalues(p), multipletests(p, method="fdr_bh")[1], rtol=1e-12)


def test_wilson_11_of_200_is_seed_interval_and_statsmodels():
    low, high = wilson_interval(11, 200)
    assert (round(low, 4), round(high, 4)) == (0.0310, 0.0958)
    sm = proportion_confint(11, 200, method="wilson")
    assert (low, high) == pytest.approx(sm, abs=1e-12)


def test_wilson_rejects_bad_counts():
    with pytest.raises(ValueError, match="successes=5 must lie between 0 and trials=3"):
        wilson_interval(5, 3)


def test_detection_limit_for_48_deaths_is_2_245():
    assert round(detection_limit(48), 3) == 2.245
    z = stats.norm.ppf(0.975) + stats.norm.ppf(0.8)
    assert detection_limit(1084) == pytest.approx(math.exp(2 * z / math.sqrt(1084)))
    assert detection_limit(1084) == pytest.approx(1.186, abs=1e-3)


def test_runs_needed_brings_the_limit_to_the_ceiling():
    needed = runs_needed_per_arm(deaths=54, runs=200, ceiling=1.3)
    # at that size the expected deaths (same death share) give a limit at the ceiling
    assert detection_limit(round(needed * 2 * 54 / 200)) == pytest.approx(1.3, abs=2e-3)
    assert runs_needed_per_arm(deaths=0, runs=200) is None


def _arms(n_a, dead_a, n_b, dead_b, t_dead=1, t_end=4):
    time = np.r_[np.full(n_a, t_end), np.full(n_b, t_end)]
    died = np.zeros(n_a + n_b, bool)
    died[:dead_a] = True
    died[n_a:n_a + dead_b] = True
    time[died] = t_dead
    return time, died, np.arange(n_a + n_b) >= n_a


def test_three_verdicts_and_the_limit_with_each():
    big_diff = compare_survival(*_arms(2000, 300, 2000, 600))
    assert big_diff.verdict == DIFFERENT and big_diff.direction == "B"
    same = compare_survival(*_arms(2000, 540, 2000, 545))
    assert same.verdict == NO_DIFFERENCE and same.detection_limit < 1.3
    small = compare_survival(*_arms(100, 27, 100, 28))
    assert small.verdict == TOO_SMALL and small.detection_limit > 2
    for result in (big_diff, same, small):
        assert f"{result.detection_limit:.3f}" in result.summary()
    assert "runs per arm would be needed" in small.summary()
    # runs needed: V grows with the runs, so scale 100 runs by (z / ln 1.3)² / V
    _, variance = logrank_by_loop(*_arms(100, 27, 100, 28), np.zeros(200))
    assert small.logrank.variance == pytest.approx(variance)
    assert small.runs_needed_per_arm == math.ceil(100 * (z_sum() / math.log(1.3)) ** 2 / variance)
    assert small.detection_limit == pytest.approx(hr_limit(variance))


def test_per_step_counts_the_risk_set_and_matches_scipy():
    time = np.array([1, 1, 2, 2, 3, 4, 4, 1, 2, 2, 3, 3, 4, 4])
    died = np.array([1, 0, 1, 0, 1, 0, 0, 1, 1, 1, 1, 0, 0, 0], bool)
    group = np.arange(14) >= 7
    table = per_step(time, died, group, labels=np.array(["x"] * 14))
    by_step = {s.step: s for s in table.steps}
    assert sorted(by_step) == [1, 2, 3]
    s2 = by_step[2]
    # at risk at step 2: A has times {2,2,3,4,4} = 5, B has {2,2,3,3,4,4} = 6
    assert (s2.deaths_a, s2.at_risk_a, s2.deaths_b, s2.at_risk_b) == (1, 5, 2, 6)
    assert s2.pvalue == pytest.approx(stats.fisher_exact([[1, 4], [2, 4]]).pvalue)
    assert [s.qvalue for s in table.steps] == pytest.approx(
        multipletests([s.pvalue for s in table.steps], method="fdr_bh")[1])


def test_per_cell_fisher_and_bh_across_cells():
    a = {("s1", ""): (20, 32), ("s2", ""): (3, 10), ("s3", "noisy"): (0, 5), ("only-a", ""): (1, 1)}
    b = {("s1", ""): (32, 32), ("s2", ""): (4, 10), ("s3", "noisy"): (1, 5)}
    table = per_cell(a, b)
    assert [c.scenario for c in table.cells] == ["s1", "s2", "s3"]
    ps = [stats.fisher_exact([[20, 12], [32, 0]]).pvalue, stats.fisher_exact([[3, 7], [4, 6]]).pvalue,
          stats.fisher_exact([[0, 5], [1, 4]]).pvalue]
    assert [c.pvalue for c in table.cells] == pytest.approx(ps)
    assert [c.qvalue for c in table.cells] == pytest.approx(multipletests(ps, method="fdr_bh")[1])
    assert [c.scenario for c in table.significant()] == ["s1"]
    assert table.only_a == ("only-a",)
