"""Family priors by empirical Bayes, checked against a brute-force grid and a simulation."""

import numpy as np
import pytest
from scipy import stats

from fluke.inference import family_priors, fit_family_prior, posterior


def test_fit_maximises_the_beta_binomial_likelihood():
    k = np.array([8, 9, 7, 10, 6, 9, 5, 8])
    n = np.full(8, 10)
    fit = fit_family_prior(k, n, family="tool:crm")
    # Independent: scipy's beta-binomial log-pmf on a log grid around the optimum.
    a_grid = fit.prior.alpha * np.exp(np.linspace(-0.5, 0.5, 81))
    b_grid = fit.prior.beta * np.exp(np.linspace(-0.5, 0.5, 81))
    A, B = np.meshgrid(a_grid, b_grid, indexing="ij")
    ll = stats.betabinom.logpmf(k[None, None, :], 10, A[..., None], B[..., None]).sum(axis=-1)
    assert fit.log_likelihood >= ll.max() - 1e-6
    assert fit.log_likelihood == pytest.approx(stats.betabinom.logpmf(k, 10, fit.prior.alpha, fit.prior.beta).sum())
    assert not fit.at_boundary and fit.scenarios == 8 and fit.trials == 80


def test_fit_recovers_a_known_family_prior():
    rng = np.random.default_rng(8)
    theta = rng.beta(8, 2, size=400)
    n = np.full(400, 20)
    k = rng.binomial(n, theta)
    fit = fit_family_prior(k, n)
    mean = fit.prior.alpha / (fit.prior.alpha + fit.prior.beta)
    assert mean == pytest.approx(0.8, abs=0.02)
    assert fit.prior.alpha + fit.prior.beta == pytest.approx(10, rel=0.35)


def test_pooling_by_declared_tag_only():
    k = [9, 10, 8, 2, 1]
    n = [10, 10, 10, 10, 10]
    fp = family_priors(k, n, ["tool:crm", "tool:crm", "tool:crm", "tool:pay", None])
    # A family of one cannot be pooled; it falls back and says why. No tag: the fallback prior.
    assert "tool:pay" in fp.unpooled and sorted(fp.fits) == ["tool:crm"]
    assert "1 scenario(s)" in fp.describe(3) and "no mechanism tag" in fp.describe(4)
    assert "integrated" in fp.describe(0) and "3 scenarios (30 runs)" in fp.describe(0)
    post = posterior(k, n, prior=fp.prior)
    # Unpooled scenarios get exactly the uniform posterior.
    assert post.mean[3:].tolist() == pytest.approx([3 / 12, 2 / 12])
    # Pooled ones shrink toward the family (mean near 0.9): 8/10 above its raw rate, order kept.
    assert 0.8 < post.mean[2] < post.mean[0] < post.mean[1] < 1


def _hierarchical_oracle(k, n, i, bar):
    """P(θ_i > bar | all counts) by brute force in (μ, s) with scipy, independent of the grid."""
    from scipy import integrate, special

    k, n = np.asarray(k, float), np.asarray(n, float)

    def joint(u, mu, want):
        s = (1 - u) ** -2 - 1                      # s = F⁻¹(u) for p(s) = ½(1+s)^(−3/2)
        a, b = mu * s, (1 - mu) * s
        like = np.exp(np.sum(special.betaln(a + k, b + n - k) - special.betaln(a, b)))
        if not want:
            return like
        return like * special.betainc(b + n[i] - k[i], a + k[i], 1 - bar)

    opts = dict(epsabs=1e-10, epsrel=1e-7)
    top = integrate.dblquad(lambda u, mu: joint(u, mu, True), 0, 1, 0, 1 - 1e-9, **opts)[0]
    bottom = integrate.dblquad(lambda u, mu: joint(u, mu, False), 0, 1, 0, 1 - 1e-9, **opts)[0]
    return top / bottom


@pytest.mark.parametrize("k,n", [([5] * 5, [5] * 5), ([2, 3, 1, 4], [4] * 4), ([0, 0, 0], [5, 5, 5]),
                                 ([1, 9, 30, 2], [1, 10, 40, 3])])
def test_family_posterior_matches_brute_force_integration(k, n):
    fp = family_priors(k, n, ["f"] * len(k))
    post = posterior(k, n, prior=fp.prior)
    for i in range(len(k)):
        assert float(post.sf(0.9)[i]) == pytest.approx(_hierarchical_oracle(k, n, i, 0.9), abs=4e-3)


def test_all_pass_family_is_not_certain():
    # a04: type-II ML gives Beta(1000, 0.05) and P(θ > 0.9) = 1.0000 for five 5/5 scenarios.
    k = [5] * 5
    post = posterior(k, k, prior=family_priors(k, k, ["f"] * 5).prior)
    claim = float(post.sf(0.9)[0])
    assert claim < 0.99 and float(post.interval(0.9)[0][0]) < 0.95


def test_claimed_probability_is_calibrated_on_families_from_the_hyperprior():
    """Families drawn from the hyperprior; every claim P(θ_0 > 0.9) against the truth.

    Three scenarios × three runs: only 40 distinct data sets, so each is computed once.
    """
    rng = np.random.default_rng(20261201)
    reps, size, runs, bar = 40_000, 3, 3, 0.9
    mu = rng.random(reps)
    s = (1 - rng.random(reps)) ** -2 - 1
    theta = rng.beta(np.maximum(mu * s, 1e-300)[:, None], np.maximum((1 - mu) * s, 1e-300)[:, None], (reps, size))
    theta = np.nan_to_num(theta, nan=0.0)
    k = rng.binomial(runs, theta)
    keys = [(int(row[0]), tuple(sorted(row[1:]))) for row in k]
    claims = {}
    for key in set(keys):
        counts = [key[0], *key[1]]
        fp = family_priors(counts, [runs] * size, ["f"] * size)
        claims[key] = float(posterior(counts, [runs] * size, prior=fp.prior).sf(bar)[0])
    claim = np.array([claims[key] for key in keys])
    truth = (theta[:, 0] > bar).astype(float)
    for mask in (np.ones(reps, bool), (k == runs).all(axis=1), claim > 0.5, claim <= 0.5):
        gap = claim[mask] - truth[mask]
        assert abs(gap.mean()) < 4 * gap.std() / np.sqrt(mask.sum()) + 1e-3, (mask.sum(), gap.mean())


def test_all_clean_family_reports_the_boundary():
    fit = fit_family_prior([10, 10, 10], [10, 10, 10])
    assert fit.at_boundary


def test_family_needs_one_tag_per_scenario():
    with pytest.raises(ValueError, match="one per scenario"):
        family_priors([1, 2], [2, 2], ["a"])
    with pytest.raises(ValueError, match="pooling needs at least 2"):
        fit_family_prior([1], [2])
