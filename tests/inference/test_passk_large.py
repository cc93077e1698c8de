"""pass@k / pass^k at large n and k: the default budgets end at n, the values are exact."""

import math
from fractions import Fraction

import numpy as np
import pytest

from fluke.inference import default_ks, pass_at_k, pass_at_k_curve, pass_hat_k


def _counts(seed=7, scenarios=12, n=10_000):
    rng = np.random.default_rng(seed)
    rates = rng.uniform(0.0005, 0.9995, scenarios)
    return rng.binomial(n, rates), np.full(scenarios, n)


def test_default_budgets_at_ten_thousand_trials_are_short_and_end_at_n():
    c, n = _counts()
    ks = default_ks(n)
    assert ks == [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000]
    curve = pass_at_k_curve(c, n)
    assert [r.k for r in curve] == ks and curve[-1].defined
    assert default_ks([10] * 3) == list(range(1, 11))        # n ≤ 10: every k
    assert default_ks([11, 40])[-2:] == [10, 11]
    assert default_ks([20]) == [1, 2, 5, 10, 20]              # n already in the series: once


@pytest.mark.parametrize("k", [33, 100, 777, 5000, 9_999, 10_000])
def test_large_k_matches_exact_fractions(k):
    c, n = _counts(seed=k)
    c[0], c[1] = 0, 10_000                                     # never and always
    at, hat = pass_at_k(c, n, k), pass_hat_k(c, n, k)
    for i, (ci, ni) in enumerate(zip(c.tolist(), n.tolist(), strict=True)):
        whole = math.comb(ni, k)
        want_at = float(1 - Fraction(math.comb(ni - ci, k), whole))
        want_hat = float(Fraction(math.comb(ci, k), whole))
        assert at.per_scenario[i] == pytest.approx(want_at, rel=1e-9, abs=1e-300)
        assert hat.per_scenario[i] == pytest.approx(want_hat, rel=1e-9, abs=1e-300)


def test_the_product_and_the_log_space_paths_agree_where_they_meet():
    c, n = _counts(seed=3, n=200)
    for kind in (pass_at_k, pass_hat_k):
        low, high = kind(c, n, 32).per_scenario, kind(c, n, 33).per_scenario
        exact = [float(Fraction(math.comb(x if kind is pass_hat_k else 200 - x, 33), math.comb(200, 33)))
                 for x in c.tolist()]
        want = [1 - e for e in exact] if kind is pass_at_k else exact
        assert high == pytest.approx(want, rel=1e-9, abs=1e-300)
        assert np.all(high <= low + 1e-12) if kind is pass_hat_k else np.all(high >= low - 1e-12)
