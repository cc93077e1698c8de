"""κ, α, Fleiss' κ and the PPI++ estimate against independent implementations, to 1e-9."""

import numpy as np
import pytest

from fluke.judging import cohen_kappa, fleiss_kappa, krippendorff_alpha, ppi_mean, ppi_stratified

sklearn_metrics = pytest.importorskip("sklearn.metrics", reason="scikit-learn (the test extra) is the κ oracle")
krippendorff = pytest.importorskip("krippendorff", reason="the krippendorff package is the α oracle")


@pytest.mark.parametrize("seed", range(8))
def test_cohen_kappa_equals_scikit_learn(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(10, 400))
    human = rng.random(n) < rng.uniform(0.1, 0.9)
    judge = np.where(rng.random(n) < rng.uniform(0.5, 0.95), human, ~human)
    assert cohen_kappa(judge, human) == pytest.approx(sklearn_metrics.cohen_kappa_score(judge, human), abs=1e-9)


@pytest.mark.parametrize("seed", range(8))
def test_krippendorff_alpha_equals_the_krippendorff_package_with_missing_labels(seed):
    rng = np.random.default_rng(100 + seed)
    units, k = int(rng.integers(5, 200)), int(rng.integers(2, 6))
    truth = rng.random(units) < 0.55
    labels = np.where(rng.random((units, k)) < 0.8, truth[:, None], ~truth[:, None]).astype(float)
    labels[rng.random((units, k)) < 0.15] = np.nan          # replicates the judge did not give
    rows = [[None if np.isnan(x) else bool(x) for x in row] for row in labels]
    expected = krippendorff.alpha(reliability_data=labels.T, level_of_measurement="nominal")
    assert krippendorff_alpha(rows) == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("seed", range(5))
def test_fleiss_kappa_equals_statsmodels(seed):
    inter_rater = pytest.importorskip("statsmodels.stats.inter_rater")
    rng = np.random.default_rng(200 + seed)
    units, k = int(rng.integers(5, 300)), int(rng.integers(2, 7))
    truth = rng.random(units) < 0.4
    labels = np.where(rng.random((units, k)) < 0.85, truth[:, None], ~truth[:, None])
    table, _ = inter_rater.aggregate_raters(labels.astype(int))
    assert fleiss_kappa(labels.tolist()) == pytest.approx(inter_rater.fleiss_kappa(table), abs=1e-9)


ppi = pytest.importorskip("ppi_py", reason="ppi-python is the PPI++ oracle")


@pytest.mark.parametrize("seed", range(8))
def test_ppi_mean_and_interval_equal_ppi_python(seed):
    rng = np.random.default_rng(300 + seed)
    n, big_n = int(rng.integers(30, 300)), int(rng.integers(300, 3000))
    p = rng.uniform(0.2, 0.8)
    y = (rng.random(n) < p).astype(float)
    se, sp = rng.uniform(0.6, 0.99, 2)
    def judge(truth):
        return np.where(truth == 1, rng.random(len(truth)) < se, rng.random(len(truth)) >= sp).astype(float)
    f = judge(y)
    fu = judge((rng.random(big_n) < p).astype(float))
    ours = ppi_mean(y, f, fu, guard=False)
    low, high = ppi.ppi_mean_ci(y, f, fu, alpha=0.05)
    assert ours.value == pytest.approx(float(np.squeeze(ppi.ppi_mean_pointestimate(y, f, fu))), abs=1e-9)
    assert ours.low == pytest.approx(float(np.squeeze(low)), abs=1e-9)
    assert ours.high == pytest.approx(float(np.squeeze(high)), abs=1e-9)
    # λ = 0 is the people alone and λ = 1 plain PPI, as in ppi-python
    for lam in (0.0, 1.0):
        fixed = ppi_mean(y, f, fu, lam=lam, guard=False)
        lo, hi = ppi.ppi_mean_ci(y, f, fu, alpha=0.05, lam=lam)
        assert (fixed.low, fixed.high) == pytest.approx((float(np.squeeze(lo)), float(np.squeeze(hi))), abs=1e-9)


def test_stratified_ppi_is_the_weighted_sum_of_ppi_python_per_stratum():
    rng = np.random.default_rng(7)
    strata, values, variances, sizes = {}, [], [], []
    for name, p, n, big_n in (("easy", 0.85, 40, 600), ("hard", 0.3, 60, 900), ("mid", 0.55, 30, 300)):
        y = (rng.random(n) < p).astype(float)
        truth_u = rng.random(big_n) < p
        f = np.where(y == 1, rng.random(n) < 0.9, rng.random(n) < 0.25).astype(float)
        fu = np.where(truth_u, rng.random(big_n) < 0.9, rng.random(big_n) < 0.25).astype(float)
        strata[name] = (y, f, fu)
        lo, hi = ppi.ppi_mean_ci(y, f, fu, alpha=0.05)
        values.append(float(np.squeeze(ppi.ppi_mean_pointestimate(y, f, fu))))
        variances.append(((float(np.squeeze(hi)) - float(np.squeeze(lo))) / (2 * 1.959963984540054)) ** 2)
        sizes.append(n + big_n)
    weights = np.array(sizes) / sum(sizes)
    ours = ppi_stratified(strata, guard=False)
    assert ours.value == pytest.approx(float(weights @ np.array(values)), abs=1e-9)
    half = 1.959963984540054 * np.sqrt(float((weights ** 2) @ np.array(variances)))
    assert ours.high - ours.value == pytest.approx(half, abs=1e-7)
    guarded = ppi_stratified(strata)
    assert guarded.value == pytest.approx(ours.value, abs=1e-12) and guarded.width > ours.width


def test_the_small_sample_guard_widens_by_what_it_says():
    rng = np.random.default_rng(11)
    y = (rng.random(30) < 0.6).astype(float)
    f = np.where(y == 1, rng.random(30) < 0.8, rng.random(30) < 0.1).astype(float)
    fu = (rng.random(900) < 0.55).astype(float)
    plain, guarded = ppi_mean(y, f, fu, guard=False), ppi_mean(y, f, fu)
    lam = plain.lam
    r = np.concatenate([y - lam * f, [-lam, 1.0]])
    from scipy.stats import t

    var = np.var(lam * fu, ddof=1) / 900 + np.var(r, ddof=1) / 30
    assert guarded.value == pytest.approx(plain.value, abs=1e-12)
    assert guarded.high - guarded.value == pytest.approx(t.ppf(0.975, 29) * np.sqrt(var), abs=1e-12)
