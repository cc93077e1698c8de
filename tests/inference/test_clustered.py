"""Clustered intervals: the seed's repeated-users example, and statsmodels as the CR1 oracle."""

import numpy as np
import pytest

from fluke.inference import (cluster_bootstrap_interval, cluster_robust_ols, clustered_interval,
                             grand_mean_sd)

sm = pytest.importorskip("statsmodels.api")


def _panels(rng, panels, n=40, k=3, r=4, delta=0.02, su=0.06, sv=0.04, se=0.04):
    """The seed's model D = Δ + U_i + V_it + E_itr, `panels` independent panels at once."""
    u = rng.normal(0, su, (panels, n, 1, 1))
    v = rng.normal(0, sv, (panels, n, k, 1))
    e = rng.normal(0, se, (panels, n, k, r))
    return (delta + u + v + e).reshape(panels, n * k * r)


def test_seed_coverage_over_4000_panels():
    rng = np.random.default_rng(20261005)
    panels = _panels(rng, 4000)
    users = np.arange(40).repeat(12)
    results = [clustered_interval(d, users, unit="user", sandwich="CR1", scale="t") for d in panels]
    covered = np.mean([r.low <= 0.02 <= r.high for r in results])
    naive = np.mean([r.naive.low <= 0.02 <= r.naive.high for r in results])
    mc_cluster = np.sqrt(0.95 * 0.05 / 4000)              # ≈ 0.0034
    mc_naive = np.sqrt(0.5 * 0.5 / 4000)                  # ≈ 0.0079
    assert abs(covered - 0.95) < 4 * mc_cluster
    assert abs(covered - 0.9465) < 4 * np.sqrt(2) * mc_cluster    # the seed saw 94.65%
    assert abs(naive - 0.5028) < 4 * np.sqrt(2) * mc_naive        # the seed saw 50.28%
    # the spread of the panel means is the formula's 0.01033, within Monte Carlo error
    sd = panels.mean(axis=1).std(ddof=1)
    assert abs(sd - 0.01033) < 4 * 0.01033 / np.sqrt(2 * 3999)
    assert all(r.method == "cluster means" and r.df == 39 for r in results[:5])
    assert sum(r.warning is not None for r in results) > 3900    # naive is ~3x narrower


def test_seed_grand_mean_sd():
    assert round(grand_mean_sd(0.06, 0.04, 0.04, units=40, scenarios=3, generations=4), 5) == 0.01033


def _unequal(rng, g=60):
    sizes = rng.integers(1, 15, g)
    clusters = np.repeat(np.arange(g), sizes)
    y = rng.normal(0, 1, g)[clusters] + rng.normal(0, 0.7, clusters.size)
    return y, clusters


def test_cr1_standard_error_equals_statsmodels():
    rng = np.random.default_rng(11)
    y, clusters = _unequal(rng)
    ours = clustered_interval(y, clusters, sandwich="CR1", scale="t")
    fit = sm.OLS(y, np.ones((y.size, 1))).fit(cov_type="cluster", cov_kwds={"groups": clusters},
                                              use_t=True)
    assert ours.method == "CR1 sandwich"
    assert ours.standard_error == pytest.approx(fit.bse[0], abs=1e-9)
    assert ours.statistic == pytest.approx(fit.params[0], abs=1e-12)
    low, high = fit.conf_int(alpha=0.05)[0]
    assert ours.low == pytest.approx(low, abs=1e-9) and ours.high == pytest.approx(high, abs=1e-9)


def test_cluster_robust_ols_with_regressors_equals_statsmodels():
    rng = np.random.default_rng(12)
    y, clusters = _unequal(rng, g=45)
    x = np.column_stack([np.ones(y.size), rng.normal(size=y.size), rng.integers(0, 2, y.size)])
    y = y + 0.3 * x[:, 1] - 0.2 * x[:, 2]
    labels = np.array([f"user-{c}" for c in clusters])      # string labels go through a sort
    ours = cluster_robust_ols(x, y, labels)
    fit = sm.OLS(y, x).fit(cov_type="cluster", cov_kwds={"groups": clusters}, use_t=True)
    np.testing.assert_allclose(ours.coefficients, fit.params, rtol=0, atol=1e-10)
    np.testing.assert_allclose(ours.covariance, fit.cov_params(), rtol=0, atol=1e-12)
    np.testing.assert_allclose(ours.standard_errors, fit.bse, rtol=0, atol=1e-9)
    np.testing.assert_allclose(ours.confidence_interval(), fit.conf_int(), rtol=0, atol=1e-9)


def test_balanced_cluster_means_equal_the_sandwich():
    rng = np.random.default_rng(13)
    y = _panels(rng, 1)[0]
    users = np.arange(40).repeat(12)
    fit = sm.OLS(y, np.ones((y.size, 1))).fit(cov_type="cluster", cov_kwds={"groups": users})
    found = clustered_interval(y, users, sandwich="CR1", scale="t")
    assert found.standard_error == pytest.approx(fit.bse[0], abs=1e-12)


def test_units_weighting_targets_the_mean_of_unit_means():
    r = clustered_interval([0.0, 0.0, 0.0, 1.0], ["a", "a", "a", "b"], weighting="units", scale="t")
    assert r.statistic == pytest.approx(0.5) and r.method == "cluster means"
    rows = clustered_interval([0.0, 0.0, 0.0, 1.0], ["a", "a", "a", "b"], sandwich="CR1", scale="t")
    assert rows.statistic == pytest.approx(0.25)


def test_naive_and_clustered_agree_without_clustering_and_no_warning():
    rng = np.random.default_rng(14)
    y = rng.normal(size=600)
    r = clustered_interval(y, np.arange(120).repeat(5), sandwich="CR1", scale="t")
    assert r.warning is None
    assert r.standard_error == pytest.approx(r.naive.standard_error, rel=0.2)
    assert r.naive.standard_error == pytest.approx(y.std(ddof=1) / np.sqrt(600), rel=1e-12)


def test_one_cluster_is_undefined_with_a_reason():
    r = clustered_interval([0.1, 0.2, 0.3], ["u", "u", "u"], unit="user")
    assert np.isnan(r.low) and "only 1 user" in r.reason


def test_bad_input_names_the_argument():
    with pytest.raises(ValueError, match="one label per row"):
        clustered_interval([1.0, 2.0], [1])
    with pytest.raises(ValueError, match="confidence_level=1.5"):
        clustered_interval([1.0, 2.0], [1, 2], confidence_level=1.5)
    with pytest.raises(ValueError, match="missing or infinite"):
        clustered_interval([1.0, float("nan")], [1, 2])


def test_cluster_bootstrap_matches_the_sandwich_and_is_reproducible():
    rng = np.random.default_rng(15)
    y, clusters = _unequal(rng, g=300)
    a = cluster_bootstrap_interval(y, clusters, rng=np.random.default_rng(1), resamples=4000)
    b = cluster_bootstrap_interval(y, clusters, rng=np.random.default_rng(1), resamples=4000)
    assert a == b
    cr1 = clustered_interval(y, clusters, sandwich="CR1", scale="t")
    cr0_se = cr1.standard_error * np.sqrt((300 - 1) / 300)   # the bootstrap has no G/(G−1)
    # Monte Carlo error of a bootstrap SD from 4000 resamples is about 1/sqrt(8000) ≈ 1.1%
    assert a.standard_error == pytest.approx(cr0_se, rel=0.05)
    assert a.low < cr1.statistic < a.high
    assert (a.high - a.low) == pytest.approx(cr1.high - cr1.low, rel=0.1)
