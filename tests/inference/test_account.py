"""The running account: discount, footprint, change detection, surprise and reset."""

import numpy as np
import pytest
from scipy import stats

from fluke.inference import (detect_change, discount, footprint_discount, posterior, running_account,
                             surprise, betabinom_cdf)


def test_carried_batch_three_of_five():
    carried = posterior(50, 50)
    assert (float(carried.alpha), float(carried.beta)) == (51.0, 1.0)
    assert round(float(surprise(carried, 3, 5)), 4) == 0.0065
    assert float(surprise(carried, 3, 5)) == pytest.approx(stats.betabinom.cdf(3, 5, 51, 1), rel=1e-12)
    plain = carried.update(3, 5)
    assert (float(plain.alpha), float(plain.beta)) == (54.0, 3.0)
    assert round(float(plain.mean), 3) == 0.947


def test_change_detection_four_to_one():
    change = detect_change(posterior(50, 50), 3, 5, odds=4)
    assert round(float(change.p_changed), 3) == 0.872
    assert round(float(change.changed.mean), 3) == 0.571
    # Independent: Bayes' rule with scipy's beta-binomial pmf.
    m_unchanged = stats.betabinom.pmf(3, 5, 51, 1)
    m_changed = stats.betabinom.pmf(3, 5, 1, 1)
    expected = 0.2 * m_changed / (0.2 * m_changed + 0.8 * m_unchanged)
    assert float(change.p_changed) == pytest.approx(expected, rel=1e-10)
    mix_mean = (1 - expected) * 54 / 57 + expected * 4 / 7
    assert float(change.mixture.mean) == pytest.approx(mix_mean, rel=1e-10)


def test_discount_ten_old_five_new():
    old = posterior(10, 10)
    full = discount(old, 1.0).update(5, 5)
    assert (float(full.alpha), float(full.beta)) == (16.0, 1.0)
    assert round(float(full.sf(0.9)), 3) == 0.815
    assert round(float(discount(old, 0.0).update(5, 5).sf(0.9)), 3) == 0.469
    # Keeping 0.3 of ten runs: Beta(4, 1) → Beta(9, 1) after five clean, 1 − 0.9^9.
    part = discount(old, 0.3).update(5, 5)
    assert float(part.alpha) == pytest.approx(9.0) and float(part.sf(0.9)) == pytest.approx(1 - 0.9 ** 9)


def test_footprint_discounts_only_touched_scenarios():
    delta = footprint_discount([{"tool:crm", "x"}, {"tool:search"}, set()], ["tool:crm"], inside=0.0)
    old = posterior([10, 10, 10], [10, 10, 10])
    carried = discount(old, delta)
    assert carried.alpha.tolist() == [1.0, 11.0, 11.0]
    with pytest.raises(ValueError, match="inside=1.5"):
        footprint_discount([set()], [], inside=1.5)
    with pytest.raises(ValueError, match="delta=2.0"):
        discount(old, 2.0)


def test_betabinom_cdf_matches_scipy():
    rng = np.random.default_rng(3)
    n = rng.integers(1, 60, 500)
    k = rng.integers(0, n + 1)
    a, b = rng.uniform(0.2, 80, 500), rng.uniform(0.2, 10, 500)
    np.testing.assert_allclose(betabinom_cdf(k, n, a, b), stats.betabinom.cdf(k, n, a, b), rtol=1e-9, atol=1e-14)


def test_account_resets_on_the_change_and_carries_otherwise():
    # Two scenarios over three versions; the second drops at version 2.
    k = [[50, 50], [5, 3], [5, 4]]
    n = [[50, 50], [5, 5], [5, 5]]
    acc = running_account(k, n, odds=4)
    assert acc.reset.tolist() == [[False, False], [False, True], [False, False]]
    assert acc.since[:, 1].tolist() == [0, 1, 1]
    assert acc.since[:, 0].tolist() == [0, 0, 0]
    # Scenario 0 carries: Beta(61, 1) at the end; scenario 1 restarts: uniform + 3/5 + 4/5.
    assert (float(acc.final.alpha[0]), float(acc.final.beta[0])) == (61.0, 1.0)
    assert (float(acc.final.alpha[1]), float(acc.final.beta[1])) == (8.0, 4.0)
    assert round(float(acc.p_changed[1, 1]), 3) == 0.872
    assert np.isnan(acc.p_changed[0]).all() and np.isnan(acc.surprise[0]).all()


def test_plain_account_is_inertia():
    acc = running_account([[50], [3]], [[50], [5]])
    assert round(float(acc.mean[1, 0]), 3) == 0.947 and not acc.reset.any()
    assert round(float(acc.surprise[1, 0]), 4) == 0.0065


def test_account_discount_by_footprint_per_scenario():
    delta = footprint_discount([{"tool:crm"}, {"tool:search"}], ["tool:crm"], inside=0.0)
    acc = running_account([[10, 10], [5, 5]], [[10, 10], [5, 5]], delta=delta)
    assert acc.p_above[1].round(3).tolist() == [0.469, 0.815]


def test_no_runs_on_a_version_is_undefined_surprise_not_a_number_made_up():
    acc = running_account([[10], [0]], [[10], [0]], odds=4)
    assert np.isnan(acc.surprise[1, 0]) and not acc.reset[1, 0]
    assert acc.p_changed[1, 0] == pytest.approx(0.2)


def test_account_input_shape_checked():
    with pytest.raises(ValueError, match="versions, scenarios"):
        running_account([5, 5], [5, 5])
    with pytest.raises(ValueError, match="odds=-1"):
        detect_change(posterior(5, 5), 1, 5, odds=-1)


def test_running_account_equals_composing_the_steps_by_hand():
    rng = np.random.default_rng(21)
    n = rng.integers(0, 12, size=(4, 30))
    k = rng.binomial(n, rng.uniform(0.2, 1, size=30))
    acc = running_account(k, n, delta=0.7, odds=3, bar=0.8)
    start = posterior(np.zeros(30), np.zeros(30))
    state = start.update(k[0], n[0])
    for t in range(1, 4):
        carried = discount(state, 0.7)
        change = detect_change(carried, k[t], n[t], odds=3)
        np.testing.assert_allclose(acc.mean[t], change.mixture.mean)
        np.testing.assert_allclose(acc.p_above[t], change.mixture.sf(0.8))
        np.testing.assert_allclose(acc.p_changed[t], change.p_changed)
        reset = (n[t] > 0) & (change.p_changed >= 0.5)
        assert acc.reset[t].tolist() == reset.tolist()
        alpha = np.where(reset, change.changed.alpha, change.unchanged.alpha)
        beta = np.where(reset, change.changed.beta, change.unchanged.beta)
        state = type(state)(alpha, beta)
    np.testing.assert_allclose(acc.final.alpha, state.alpha)


def test_false_reset_rate_by_simulation():
    # Nothing changed: batches drawn from the carried predictive. The exact chance of a reset is
    # the predictive mass of the batches whose P(changed) ≥ 0.5; the simulation must agree.
    carried = posterior(40, 45)
    size = 10
    counts = np.arange(size + 1)
    p_changed = detect_change(posterior(np.full(size + 1, 40), np.full(size + 1, 45)), counts,
                              np.full(size + 1, size), odds=4).p_changed
    exact = stats.betabinom.pmf(counts, size, 41, 6)[p_changed >= 0.5].sum()
    rng = np.random.default_rng(99)
    reps = 40_000
    k = rng.binomial(size, rng.beta(41, 6, reps))
    acc = running_account(np.vstack([np.full(reps, 40), k]), np.vstack([np.full(reps, 45), np.full(reps, size)]),
                          odds=4, bar=None)
    simulated = acc.reset[1].mean()
    assert abs(simulated - exact) < 4 * np.sqrt(exact * (1 - exact) / reps)
    assert 0 < exact < 0.05
    assert float(carried.mean) == pytest.approx(41 / 47)


def test_planted_change_is_caught_far_more_often_than_a_false_reset():
    rng = np.random.default_rng(5)
    reps = 4000
    k_old = rng.binomial(50, 0.95, reps)
    k_same = rng.binomial(20, 0.95, reps)
    k_drop = rng.binomial(20, 0.6, reps)
    n = np.vstack([np.full(reps, 50), np.full(reps, 20)])
    same = running_account(np.vstack([k_old, k_same]), n, odds=4, bar=None).reset[1].mean()
    drop = running_account(np.vstack([k_old, k_drop]), n, odds=4, bar=None).reset[1].mean()
    assert drop > 0.8 and same < 0.02
