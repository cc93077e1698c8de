"""Family priors by empirical Bayes, checked against a brute-force grid and a simulation."""

import numpy as np
import pytest
from scipy import stats

from fluke.inference import UNIFORM, family_priors, fit_family_prior, posterior


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
    crm = fp.fits["tool:crm"].prior
    assert fp.prior.alpha[:3].tolist() == [crm.alpha] * 3
    # A family of one cannot be pooled; it falls back and says why. No tag: the fallback prior.
    assert "tool:pay" in fp.unpooled and fp.prior.alpha[3] == UNIFORM.alpha
    assert "1 scenario(s)" in fp.describe(3) and "no mechanism tag" in fp.describe(4)
    assert "fitted by beta-binomial marginal likelihood" in fp.describe(0)
    post = posterior(k, n, prior=fp.prior)
    assert float(post.alpha[0]) == pytest.approx(crm.alpha + 9)


def test_all_clean_family_reports_the_boundary():
    fit = fit_family_prior([10, 10, 10], [10, 10, 10])
    assert fit.at_boundary


def test_family_needs_one_tag_per_scenario():
    with pytest.raises(ValueError, match="one per scenario"):
        family_priors([1, 2], [2, 2], ["a"])
    with pytest.raises(ValueError, match="pooling needs at least 2"):
        fit_family_prior([1], [2])
