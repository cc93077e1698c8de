"""Seed 001's single-scenario figures, and the posterior arithmetic against scipy."""

import numpy as np
import pytest
from scipy import integrate, stats

from fluke.inference import UNIFORM, BetaMixture, Prior, parse_prior, posterior


def test_one_pass_uniform_prior():
    post = posterior(1, 1)
    assert float(post.mean) == pytest.approx(2 / 3, abs=1e-12)
    lo, hi = post.interval(0.9)
    assert (round(float(lo), 3), round(float(hi), 3)) == (0.224, 0.975)


def test_clean_runs_next_pass_and_tail():
    post = posterior([1, 3, 5, 10], [1, 3, 5, 10])
    assert post.mean.round(3).tolist() == [0.667, 0.800, 0.857, 0.917]
    assert post.sf(0.9).round(3).tolist() == [0.190, 0.344, 0.469, 0.686]
    # Independent: under Beta(n+1, 1), P(θ > 0.9) = 1 − 0.9^(n+1).
    np.testing.assert_allclose(post.sf(0.9), 1 - 0.9 ** (np.array([1, 3, 5, 10]) + 1), rtol=1e-12)


def test_next_eight_all_pass_after_five_clean():
    assert round(float(posterior(5, 5).p_all_pass(8)), 4) == 0.4286
    # Independent: the integral of θ^8 against Beta(6, 1).
    value, _ = integrate.quad(lambda t: t ** 8 * stats.beta.pdf(t, 6, 1), 0, 1)
    assert float(posterior(5, 5).p_all_pass(8)) == pytest.approx(value, rel=1e-10)


def test_mixed_results_move_the_upper_tail():
    post = posterior([9, 8], [10, 10])
    assert round(float(post.sf(0.9)[0]), 3) == 0.303
    assert round(float(post.sf(0.9)[1]), 4) == 0.0896


def test_informative_priors_after_five_clean():
    b22 = posterior(5, 5, prior=Prior(2, 2))
    b82 = posterior(5, 5, prior=Prior(8, 2))
    assert round(float(b22.mean), 3) == 0.778
    assert round(float(b82.mean), 3) == 0.867
    assert round(float(b82.sf(0.9)), 3) == 0.415
    # Higher mean than the uniform prior, lower tail above 0.9: confident but sceptical of perfection.
    uniform = posterior(5, 5)
    assert float(b82.mean) > float(uniform.mean)
    assert float(b82.sf(0.9)) < float(uniform.sf(0.9)) == pytest.approx(0.469, abs=5e-4)


def test_vectorised_matches_scipy_beta():
    rng = np.random.default_rng(1)
    n = rng.integers(0, 40, size=200)
    k = rng.binomial(n, 0.7)
    post = posterior(k, n, prior=Prior(2, 3))
    np.testing.assert_allclose(post.mean, stats.beta.mean(2 + k, 3 + n - k))
    np.testing.assert_allclose(post.var, stats.beta.var(2 + k, 3 + n - k))
    np.testing.assert_allclose(post.interval(0.8)[1], stats.beta.ppf(0.9, 2 + k, 3 + n - k))


def test_update_equals_pooled_batches():
    # Carrying with nothing changed is only batching: 50 runs over ten weeks = 50 at once.
    weekly = posterior(0, 0)
    for _ in range(10):
        weekly = weekly.update(4, 5)
    assert (float(weekly.alpha), float(weekly.beta)) == (41.0, 11.0)


def test_mixture_quantile_and_moments_against_sampling():
    mix = BetaMixture(np.array([0.3, 0.7]), np.array([54.0, 4.0]), np.array([3.0, 3.0]))
    rng = np.random.default_rng(7)
    comp = rng.random(400_000) < 0.7
    draws = np.where(comp, rng.beta(4, 3, comp.size), rng.beta(54, 3, comp.size))
    assert float(mix.mean) == pytest.approx(draws.mean(), abs=4 * draws.std() / np.sqrt(draws.size))
    q = float(mix.quantile(0.25))
    assert np.mean(draws <= q) == pytest.approx(0.25, abs=0.004)
    assert float(mix.p_all_pass(3)) == pytest.approx(np.mean(draws ** 3), abs=0.003)


@pytest.mark.parametrize("k, n, message", [
    (6, 5, "successes=6 must be at most trials=5"),
    (-1, 5, "successes=-1 must be a whole number"),
    (1.5, 5, "successes=1.5 must be a whole number"),
])
def test_bad_counts_name_the_argument(k, n, message):
    with pytest.raises(ValueError, match=message):
        posterior(k, n)


def test_parse_prior():
    assert parse_prior("uniform") is UNIFORM
    assert (parse_prior("beta:8,2").alpha, parse_prior("beta:8,2").beta) == (8.0, 2.0)
    with pytest.raises(ValueError, match="beta:a,b"):
        parse_prior("beta:8")
    with pytest.raises(ValueError, match="must be a positive number"):
        Prior(0, 1)
