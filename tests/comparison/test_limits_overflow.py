"""Issue 35 (3): the stratified test at 10^5–10^6 runs per stratum against statsmodels.

Reproducers b11/b18 in ../shared/repro/stats/limits/: in int64 the hypergeometric variance
n_A·n_B·m·(N − m) overflowed from about 55,000 runs per arm in one stratum.
"""

from __future__ import annotations

import numpy as np
import pytest

from fluke.comparison import compare_pass_rates, leaderboard_counts, stratified_information, stratified_test

sm = pytest.importorskip("statsmodels.stats.contingency_tables")

BIG = [(50_000, 30_000, 29_800), (60_000, 36_000, 35_760), (100_000, 60_000, 59_750),
       (100_000, 60_146, 59_374), (1_000_000, 600_000, 598_500)]


def _oracle(fa, na, fb, nb):
    tables = [np.array([[a, n1 - a], [b, n2 - b]], float) for a, n1, b, n2 in zip(fa, na, fb, nb, strict=True)]
    return sm.StratifiedTable(tables).test_null_odds()


def _hypergeometric_variance(fa, na, fb, nb):
    """V by Python integers (exact, no overflow), then one division."""
    total = 0.0
    for a, n1, b, n2 in zip(fa, na, fb, nb, strict=True):
        n, m = n1 + n2, a + b
        total += (n1 * n2 * m * (n - m)) / (n * n * (n - 1))
    return total


@pytest.mark.parametrize("n,pa,pb", BIG)
def test_cmh_at_a_million_runs_equals_statsmodels(n, pa, pb):
    fa, fb = [n - pa], [n - pb]
    t = stratified_test(fa, [n], fb, [n])
    assert t.variance == pytest.approx(_hypergeometric_variance(fa, [n], fb, [n]), rel=1e-12)
    ref = _oracle(fa, [n], fb, [n])
    assert t.statistic == pytest.approx(ref.statistic, rel=1e-9)
    assert t.pvalue == pytest.approx(ref.pvalue, rel=1e-7)


def test_many_big_strata_and_the_vectorised_information():
    rng = np.random.default_rng(35)
    na = rng.integers(100_000, 1_000_001, 6)
    nb = rng.integers(100_000, 1_000_001, 6)
    fa = rng.binomial(na, 0.4)
    fb = rng.binomial(nb, 0.41)
    t = stratified_test(fa, na, fb, nb)
    ref = _oracle(fa, na, fb, nb)
    assert t.pvalue == pytest.approx(ref.pvalue, rel=1e-7)
    v = stratified_information(fa[None], na[None], fb[None], nb[None])[0]
    assert v == pytest.approx(_hypergeometric_variance(fa.tolist(), na.tolist(), fb.tolist(), nb.tolist()),
                              rel=1e-12)


def test_compare_at_100k_reads_no_difference_as_statsmodels_does():
    # 60.0% against 59.75% on 100,000 runs per arm: statsmodels p = 0.254
    r = compare_pass_rates([60_000], [100_000], [59_750], [100_000], draws=200)
    assert r.pvalue == pytest.approx(_oracle([40_000], [100_000], [40_250], [100_000]).pvalue, rel=1e-7)
    assert r.verdict != "different"
    assert r.detection_limit > 0.5   # the truth is about 0.61 points, not the 0.1 the overflow printed


def test_leaderboard_shares_the_exact_arithmetic():
    lb = leaderboard_counts([[60_000], [59_750], [59_700]], [[100_000]] * 3, labels=["a", "b", "c"],
                            replicates=100)
    for pair in lb.pairs:
        ka = {"a": 60_000, "b": 59_750, "c": 59_700}
        fa, fb = 100_000 - ka[pair.a], 100_000 - ka[pair.b]
        assert pair.pvalue == pytest.approx(_oracle([fa], [100_000], [fb], [100_000]).pvalue, rel=1e-7)
