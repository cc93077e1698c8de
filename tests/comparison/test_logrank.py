"""The stratified log-rank against statsmodels' survdiff, on random data and on real runs."""

import numpy as np
import pytest
from statsmodels.duration.survfunc import survdiff

from fluke.comparison import logrank_batch, logrank_test, pass_counts, survival_data

from ._realdata import FINE_TUNED, tau2_runs


def _oracle(time, died, group, strata):
    return survdiff(time, died.astype(int), group.astype(int), strata=strata)


@pytest.mark.parametrize("seed", range(6))
def test_stratified_logrank_equals_survdiff_on_random_data(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(50, 800))
    time = rng.integers(0, int(rng.integers(2, 40)), n)   # many ties, as event indices have
    died = rng.random(n) < rng.uniform(0.2, 0.9)
    group = rng.random(n) < 0.5
    strata = rng.integers(0, int(rng.integers(1, 30)), n)
    chisq, p = _oracle(time, died, group, strata)
    result = logrank_test(time, died, group, strata=strata)
    assert result.statistic == pytest.approx(chisq, abs=1e-9, rel=1e-9)
    assert result.pvalue == pytest.approx(p, abs=1e-9)


def test_unstratified_is_one_stratum_and_matches_survdiff():
    rng = np.random.default_rng(11)
    time = rng.exponential(5, 300).round(1)
    died = rng.random(300) < 0.7
    group = np.repeat(["old", "new"], 150)                # labels, not booleans
    chisq, p = survdiff(time, died.astype(int), group)
    result = logrank_test(time, died, group)
    assert result.strata == 1
    assert result.statistic == pytest.approx(chisq, abs=1e-9)
    assert result.pvalue == pytest.approx(p, abs=1e-9)


def test_batch_equals_one_test_per_row():
    rng = np.random.default_rng(5)
    time = rng.integers(1, 6, (7, 120))
    died = rng.random((7, 120)) < 0.3
    group = np.tile(np.arange(120) >= 60, (7, 1))
    strata = np.tile(np.arange(120) % 12, (7, 1))
    stat, p, deaths = logrank_batch(time, died, group, strata)
    for row in range(7):
        chisq, pv = _oracle(time[row], died[row], group[row], strata[row])
        assert stat[row] == pytest.approx(chisq, abs=1e-9)
        assert p[row] == pytest.approx(pv, abs=1e-9)
        assert deaths[row] == died[row].sum()


def test_no_variance_is_undefined_not_zero():
    result = logrank_test([3, 3], [False, False], [False, True])
    assert np.isnan(result.pvalue) and result.deaths == 0


def test_bad_input_names_the_argument():
    with pytest.raises(ValueError, match="died has 2 entries"):
        logrank_test([1, 2, 3], [True, False], [True, False, True])
    with pytest.raises(ValueError, match="3 distinct values"):
        logrank_test([1, 2, 3], [True, False, True], ["a", "b", "c"])


@pytest.mark.parametrize("domains", [("airline",), ("retail",), ("telecom",), ("airline", "retail", "telecom")])
def test_logrank_on_tau2_bench_runs_equals_survdiff(domains):
    runs_a = [r for d in domains for r in tau2_runs("gpt-4.1", d)]
    runs_b = [r for d in domains for r in tau2_runs(FINE_TUNED, d)]
    # τ²-bench records no failure step: the old last-event times, to check the arithmetic only
    a, b = survival_data(runs_a, unknown_step="last event"), survival_data(runs_b, unknown_step="last event")
    time = np.r_[a.time, b.time]
    died = np.r_[a.died, b.died]
    group = np.r_[np.zeros(a.time.size, bool), np.ones(b.time.size, bool)]
    strata = np.r_[a.scenario, b.scenario].astype(str)
    chisq, p = _oracle(time, died, group, strata)
    result = logrank_test(time, died, group, strata=strata)
    assert result.statistic == pytest.approx(chisq, abs=1e-9)
    assert result.pvalue == pytest.approx(p, abs=1e-9)


def test_tau2_bench_outcome_counts_are_the_files():
    # pass counts read off the files by hand (reward == 1): 10/20, 34/40, 18/40 and 13/20, 34/40, 30/40
    expected = {("gpt-4.1", "airline"): (10, 20), ("gpt-4.1", "retail"): (34, 40),
                ("gpt-4.1", "telecom"): (18, 40), (FINE_TUNED, "airline"): (13, 20),
                (FINE_TUNED, "retail"): (34, 40), (FINE_TUNED, "telecom"): (30, 40)}
    for (model, domain), (passes, n) in expected.items():
        counts, unknown = pass_counts(tau2_runs(model, domain))
        assert (sum(p for p, _ in counts.values()), sum(t for _, t in counts.values())) == (passes, n)
        assert unknown == 0 and len(counts) == n
        # failure steps: only a run whose last message is a tool error has one (one fine-tuned
        # telecom run, counted off the file); every other failed run is left out of "where"
        data = survival_data(tau2_runs(model, domain))
        ends_on_error = 1 if (model, domain) == (FINE_TUNED, "telecom") else 0
        assert data.died_from["failed call"] == int(data.died.sum()) == ends_on_error
        assert data.unknown_step == n - passes - ends_on_error
