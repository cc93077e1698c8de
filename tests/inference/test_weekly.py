"""Week over week: exact regression probabilities, Fisher p-values, graduation, canary chart."""

import numpy as np
import pytest
from scipy import integrate, stats

from fluke.inference import (BetaPosterior, Prior, betabinom_cdf, canary_chart, p_greater, posterior,
                             review_week)


def _quad(a1, b1, a2, b2):
    value, _ = integrate.quad(lambda t: stats.beta.pdf(t, a1, b1) * stats.beta.cdf(t, a2, b2), 0, 1,
                              epsabs=1e-13, limit=200)
    return value


@pytest.mark.parametrize("x, y", [((11, 1), (7, 5)), ((3, 8), (9, 2)), ((51, 1), (4, 3)),
                                  ((2.5, 1.5), (3, 3)), ((2.5, 1.5), (3.2, 2.7))])
def test_p_greater_against_quadrature(x, y):
    got = float(p_greater(BetaPosterior(*map(np.float64, x)), BetaPosterior(*map(np.float64, y))))
    assert got == pytest.approx(_quad(*x, *y), abs=1e-8)


def test_review_regression_progress_graduation():
    old_k, old_n = [10, 5, 9, 3], [10, 10, 10, 10]
    new_k, new_n = [4, 10, 9, 9], [10, 10, 10, 10]
    r = review_week(old_k, old_n, new_k, new_n, frontier=[False, True, False, True], clean_batch=10)
    assert r.regressed.tolist() == [True, False, False, False]
    assert r.progressed.tolist() == [False, True, False, True]
    assert r.graduated.tolist() == [False, True, False, False]       # 9 of 10 is not a clean batch
    for i in range(4):
        table = [[old_k[i], old_n[i] - old_k[i]], [new_k[i], new_n[i] - new_k[i]]]
        assert r.fisher_worse[i] == pytest.approx(stats.fisher_exact(table, alternative="greater")[1])
        assert r.fisher_better[i] == pytest.approx(stats.fisher_exact(table, alternative="less")[1])
        assert r.p_worse[i] == pytest.approx(_quad(1 + old_k[i], 1 + old_n[i] - old_k[i],
                                                   1 + new_k[i], 1 + new_n[i] - new_k[i]), abs=1e-8)


def test_five_against_five_can_settle_a_large_drop_but_not_a_level():
    r = review_week([5], [5], [0], [5])
    assert round(float(r.p_worse[0]), 4) == round(_quad(6, 1, 1, 6), 4) == 0.9989 and r.regressed[0]
    # ...while five clean runs leave P(θ > 0.9) at 0.469: the direction, never the level.
    assert round(float(posterior(5, 5).sf(0.9)), 3) == 0.469


def test_graduation_needs_declared_clean_batch():
    r = review_week([7, 7], [10, 10], [5, 20], [5, 20], frontier=[True, True], clean_batch=10)
    assert r.graduated.tolist() == [False, True]
    with pytest.raises(ValueError, match="pair them"):
        review_week([1], [2], [1, 1], [2, 2])


def test_canary_near_certain_reads_like_the_binomial():
    tight = posterior(9900, 10000)                     # θ pinned near 0.99
    chart = canary_chart(tight, [[9, 8]], [[10, 10]], alarm_at=0.01)   # two canaries, one batch
    # One failure in ten is a ten-percent event, two a half-percent one.
    assert round(float(chart.tail[0, 0]), 3) == round(1 - 0.99 ** 10, 3) == 0.096
    assert round(float(chart.tail[0, 1]), 3) == round(stats.binom.cdf(8, 10, 0.99), 3) == 0.004
    assert chart.alarm[0].tolist() == [False, True]


def test_canary_false_alarm_rate_by_simulation():
    carried = posterior(np.array([100, 30, 8]), np.array([100, 32, 10]))
    n, alarm_at, reps = 10, 0.01, 100_000
    rng = np.random.default_rng(2024)
    theta = rng.beta(carried.alpha, carried.beta, size=(reps, 3))
    k = rng.binomial(n, theta)
    tails = betabinom_cdf(k, np.full(k.shape, n), carried.alpha, carried.beta)
    simulated = (tails <= alarm_at).mean(axis=0)
    chart = canary_chart(carried, k[:1], np.full((1, 3), n), alarm_at=alarm_at)
    exact = chart.false_alarm_rate[0]
    # Independent exact rate: sum the pmf over every count whose tail is at or below alarm_at.
    for c in range(3):
        cdf = stats.betabinom.cdf(np.arange(n + 1), n, carried.alpha[c], carried.beta[c])
        pmf = stats.betabinom.pmf(np.arange(n + 1), n, carried.alpha[c], carried.beta[c])
        assert exact[c] == pytest.approx(pmf[cdf <= alarm_at].sum(), abs=1e-12)
    assert np.all(exact <= alarm_at)
    tolerance = 4 * np.sqrt(exact * (1 - exact) / reps) + 1e-4
    np.testing.assert_array_less(np.abs(simulated - exact), tolerance)


def test_canary_absorbs_quiet_batches_and_holds_out_alarms():
    chart = canary_chart(posterior(50, 50), [[10], [2], [10]], [[10], [10], [10]], alarm_at=0.01)
    assert chart.alarm[:, 0].tolist() == [False, True, False]
    assert (float(chart.final.alpha[0]), float(chart.final.beta[0])) == (71.0, 1.0)


def test_weekly_prior_is_declared():
    r = review_week([5], [5], [5], [5], prior=Prior(2, 2))
    assert r.p_worse[0] == pytest.approx(0.5) and r.prior.alpha == 2
