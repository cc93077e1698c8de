"""Issue 35 (2, 5): the CR2 sandwich with Bell–McCaffrey df, against the matrix definition."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import linalg, stats

from fluke.inference import clustered_interval


def _cr2_by_matrices(y, labels):
    """CR2 and Bell–McCaffrey df of the row mean from (I − H_gg)^(−1/2) and the full matrices."""
    n = y.size
    x = np.ones((n, 1))
    h = x @ x.T / n
    e = y - y.mean()
    groups = [np.flatnonzero(labels == g) for g in np.unique(labels)]
    meat = 0.0
    ls = []
    for idx in groups:
        a = linalg.inv(linalg.sqrtm(np.eye(idx.size) - h[np.ix_(idx, idx)])).real
        meat += float((x[idx].T @ a @ e[idx]).item() ** 2)
        # u_g = x_g' A_g (I − H)_g· ε: its coefficient row over all n rows
        ls.append((x[idx].T @ a @ (np.eye(n) - h)[idx]).ravel() / n)
    var = meat / n**2
    lmat = np.array(ls)
    m = lmat @ lmat.T                 # the G × G matrix whose eigenvalues weigh the chi-squares
    df = np.trace(m) ** 2 / np.sum(m * m)
    return np.sqrt(var), df


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_cr2_and_bell_mccaffrey_df_equal_the_matrix_definition(seed):
    rng = np.random.default_rng(seed)
    sizes = rng.choice([1, 2, 5, 20], 6)
    labels = np.repeat(np.arange(6), sizes)
    y = (rng.random(labels.size) < rng.beta(2, 2, 6)[labels]).astype(float)
    ours = clustered_interval(y, labels, sandwich="CR2", scale="t")
    se, df = _cr2_by_matrices(y, labels)
    assert ours.standard_error == pytest.approx(se, rel=1e-9)
    assert ours.df == pytest.approx(df, rel=1e-9)
    t = stats.t.ppf(0.975, df)
    assert (ours.low, ours.high) == pytest.approx((y.mean() - t * se, y.mean() + t * se), rel=1e-9)


def test_equal_clusters_are_the_cluster_means_t_either_way():
    rng = np.random.default_rng(4)
    labels = np.repeat(np.arange(7), 4)
    y = rng.normal(size=28)
    a, b = clustered_interval(y, labels, sandwich="CR1", scale="t"), clustered_interval(y, labels, scale="t")
    assert (a.low, a.high, a.df) == pytest.approx((b.low, b.high, b.df))


def test_cr2_covers_with_few_unequal_clusters_where_cr1_falls_short():
    # b16: G = 8 clusters of sizes 1, 5 or 30, q ~ Beta(2, 2): CR1 with t on G − 1 covered ~0.87
    rng = np.random.default_rng(51)
    reps, hit1, hit2, m = 1500, 0, 0, 0
    for _ in range(reps):
        q = rng.beta(2, 2, 8)
        n = rng.choice([1, 5, 30], 8)
        y = np.concatenate([rng.random(k) < qq for k, qq in zip(n, q, strict=True)]).astype(float)
        lab = np.repeat(np.arange(8), n)
        if np.unique(n).size < 2:
            continue
        cr1, cr2 = clustered_interval(y, lab, sandwich="CR1", scale="t"), clustered_interval(y, lab, scale="t")
        m += 1
        hit1 += cr1.low <= 0.5 <= cr1.high
        hit2 += cr2.low <= 0.5 <= cr2.high
    mc = 2 * np.sqrt(0.95 * 0.05 / m)
    assert hit2 / m >= 0.93 - mc
    assert hit2 > hit1
