"""Suite questions: seed 001's suite figures, and the certification counts by independent search."""

import itertools

import numpy as np
import pytest
from scipy import stats

from fluke.inference import (BetaMixture, poisson_binomial_pmf, posterior, runs_to_certify,
                             suite_questions, suite_runs_to_certify)


def test_fifty_scenarios_at_five_of_five():
    a = suite_questions(posterior([5] * 50, [5] * 50), bar=0.9)
    assert np.all(a.p_below.round(3) == 0.531)
    assert round(a.expected_below, 1) == 26.6
    assert a.p_all_clear == pytest.approx(3.5e-17, rel=0.02)
    assert a.p_all_clear == pytest.approx((1 - 0.9 ** 6) ** 50, rel=1e-9)


def _first_n(condition):
    n = 0
    while not condition(n):
        n += 1
    return n


def test_certification_counts_by_our_own_search():
    # Independent: plain loops over n with the closed form P(θ > 0.9 | n clean) = 1 − 0.9^(n+1).
    one = _first_n(lambda n: 1 - 0.9 ** (n + 1) >= 0.95)
    every = _first_n(lambda n: (1 - 0.9 ** (n + 1)) ** 50 >= 0.95)
    assert (one, every) == (28, 65)
    assert runs_to_certify(posterior(0, 0), bar=0.9, level=0.95).tolist() == [28.0]
    assert suite_runs_to_certify(posterior([0] * 50, [0] * 50), bar=0.9, level=0.95) == 65.0
    # From five clean runs the remaining counts are 23 and 60.
    assert runs_to_certify(posterior(5, 5)).tolist() == [23.0]
    assert suite_runs_to_certify(posterior([5] * 50, [5] * 50)) == 60.0


def test_certify_with_failures_against_linear_search():
    post = posterior([8, 9, 10, 2], [10, 10, 10, 4])
    got = runs_to_certify(post, bar=0.9, level=0.95)
    for i, (a, b) in enumerate(zip(post.alpha, post.beta, strict=True)):
        want = _first_n(lambda m: stats.beta.sf(0.9, a + m, b) >= 0.95)
        assert got[i] == want
    assert runs_to_certify(posterior(200, 200)).tolist() == [0.0]


def test_fifty_at_ten_of_ten_average_precise_members_not():
    post = posterior([10] * 50, [10] * 50)
    a = suite_questions(post, bar=0.9)
    assert round(a.average_mean, 3) == 0.917
    assert round(a.average_sd, 4) == 0.0108
    lo, hi = post.interval(0.9)
    assert (round(float(lo[0]), 3), round(float(hi[0]), 3)) == (0.762, 0.995)


def test_two_suites_same_total_different_answers():
    spread = posterior([8] * 10, [10] * 10)
    split = posterior([10] * 8 + [0] * 2, [10] * 10)
    a, b = suite_questions(spread, bar=0.8), suite_questions(split, bar=0.8)
    assert round(a.average_mean, 2) == round(b.average_mean, 2) == 0.75
    below_a = 10 * stats.beta.cdf(0.8, 9, 3)
    below_b = 8 * stats.beta.cdf(0.8, 11, 1) + 2 * stats.beta.cdf(0.8, 1, 11)
    assert a.expected_below == pytest.approx(below_a) and b.expected_below == pytest.approx(below_b)
    assert round(a.expected_below, 2) == 6.17 and round(b.expected_below, 2) == 2.69
    assert a.p_all_clear == pytest.approx(stats.beta.sf(0.8, 9, 3) ** 10)
    assert b.p_all_clear < 1e-9 < a.p_all_clear
    # The average itself carries different uncertainty in the two suites.
    assert a.average_sd != pytest.approx(b.average_sd, rel=0.05)


def test_poisson_binomial_against_brute_force():
    p = np.array([0.1, 0.5, 0.8, 0.95, 0.3])
    brute = np.zeros(6)
    for outcome in itertools.product([0, 1], repeat=5):
        o = np.array(outcome)
        brute[o.sum()] += np.prod(np.where(o == 1, p, 1 - p))
    np.testing.assert_allclose(poisson_binomial_pmf(p), brute, atol=1e-15)


def test_failures_next_execution_by_simulation():
    post = posterior([3, 5, 1, 9], [5, 5, 4, 10])
    a = suite_questions(post, bar=0.9)
    rng = np.random.default_rng(11)
    theta = rng.beta(post.alpha, post.beta, size=(200_000, 4))
    fails = (rng.random(theta.shape) > theta).sum(axis=1)
    sim = np.bincount(fails, minlength=5) / fails.size
    np.testing.assert_allclose(a.failures_pmf, sim, atol=4 * np.sqrt(0.25 / fails.size))
    assert a.expected_failures == pytest.approx(np.sum(1 - post.mean))
    lo, hi = a.failures_interval(0.9)
    assert lo <= round(a.expected_failures) <= hi


def test_suite_questions_accept_a_mixture():
    mix = BetaMixture(np.array([[0.5, 0.5]] * 3), np.array([[20.0, 2.0]] * 3), np.array([[1.0, 2.0]] * 3))
    a = suite_questions(mix, bar=0.9)
    expected = 0.5 * stats.beta.cdf(0.9, 20, 1) + 0.5 * stats.beta.cdf(0.9, 2, 2)
    np.testing.assert_allclose(a.p_below, expected)


def test_bar_checked():
    with pytest.raises(ValueError, match="bar=1.2"):
        suite_questions(posterior(1, 1), bar=1.2)
    with pytest.raises(ValueError, match="level=1"):
        runs_to_certify(posterior(1, 1), level=1)


def test_all_clear_that_underflows_is_still_printed_honestly():
    a = suite_questions(posterior([40] * 10_000, [50] * 10_000), bar=0.9)
    expected_log10 = 10_000 * np.log10(stats.beta.sf(0.9, 41, 11))
    assert a.p_all_clear == 0.0 and a.log10_p_all_clear == pytest.approx(expected_log10)
    assert a.p_all_clear_text() == "<0.001"  # underflowed to 0.0, printed as below the floor, not as zero
    tiny = stats.beta.sf(0.999999, 1, 6) * stats.beta.sf(0.999999, 6, 1)
    assert 0 < tiny < 0.001
    assert suite_questions(posterior([0, 5], [5, 5]), bar=0.999999).p_all_clear_text() == "<0.001"
    assert suite_questions(posterior([50, 5], [50, 5]), bar=0.5).p_all_clear_text() == \
        f"{stats.beta.sf(0.5, 51, 1) * stats.beta.sf(0.5, 6, 1):.3f}"
