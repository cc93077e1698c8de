"""Looking again (a17): false "regressed" flags controlled across scenarios; the reset rate measured."""

import math

import numpy as np
import pytest
from scipy import stats

from fluke.inference import bh_reject, reset_rate, review_week


def _weeks(theta, trials, scenarios, weeks, rng, control):
    any_flag = flags = looked = 0
    for _ in range(weeks):
        # The regression set: scenarios whose old batch was clean; unchanged, so θ stays.
        ko = np.full(scenarios, trials)
        kn = rng.binomial(trials, theta, scenarios)
        n = np.full(scenarios, trials)
        r = review_week(ko, n, kn, n, control=control)
        any_flag += bool(r.regressed.any())
        flags += int(r.regressed.sum())
        looked += r.looked_at
    return any_flag / weeks, flags / max(looked, 1)


def test_false_regressions_across_fifty_unchanged_scenarios_are_controlled():
    rng = np.random.default_rng(2026)
    weeks = 600
    before, per = _weeks(0.9, 10, 50, weeks, rng, "none")
    # Exact, by enumerating the new batch: the uncontrolled rule flags 7.0% of unchanged scenarios
    # (a17 measured 7.1%), so across 50 a false "regressed" has probability 1 − (1 − 0.070)^50 ≈ 0.974.
    exact = sum(stats.binom.pmf(k, 10, 0.9) * bool(review_week([10], [10], [k], [10], control="none").regressed[0])
                for k in range(11))
    assert round(exact, 3) == 0.070
    assert per == pytest.approx(exact, abs=4 * math.sqrt(exact * (1 - exact) / (weeks * 50)))
    anyone = 1 - (1 - exact) ** 50
    assert before == pytest.approx(anyone, abs=4 * math.sqrt(anyone * (1 - anyone) / weeks))
    after, _ = _weeks(0.9, 10, 50, weeks, rng, "fdr")
    # Under no change at all, BH at q controls the chance of any false flag at q.
    assert after <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / weeks)


def test_bh_matches_statsmodels():
    from statsmodels.stats.multitest import multipletests

    p = np.random.default_rng(4).random(40) ** 3
    assert bh_reject(p, 0.1).tolist() == multipletests(p, alpha=0.1, method="fdr_bh")[0].tolist()


def test_the_review_says_what_it_controls():
    r = review_week([10] * 3, [10] * 3, [2, 10, 9], [10] * 3)
    assert r.regressed.tolist() == [True, False, False]
    assert r.expected_false_flags == pytest.approx(1 - r.p_worse[0])
    assert "Benjamini–Hochberg at false-discovery rate 0.05 across 3" in r.describe_control()


def _exact_two_version_reset(theta, n, odds):
    """P(P(changed) ≥ 0.5 at the second version | no change), by enumerating both batches."""
    total = 0.0
    for k1 in range(n + 1):
        for k2 in range(n + 1):
            carried = stats.betabinom.pmf(k2, n, 1 + k1, 1 + n - k1)
            reset = stats.betabinom.pmf(k2, n, 1, 1)
            bf = reset / carried
            if bf / (bf + odds) >= 0.5:
                total += stats.binom.pmf(k1, n, theta) * stats.binom.pmf(k2, n, theta)
    return total


def test_reset_rate_matches_enumeration_and_grows_with_history():
    r = reset_rate(0.7, 5, 2, odds=4, rng=np.random.default_rng(9), histories=20_000)
    exact = _exact_two_version_reset(0.7, 5, 4)
    assert r.per_version == pytest.approx(exact, abs=4 * math.sqrt(exact * (1 - exact) / 20_000) + 1e-4)
    long = reset_rate(0.7, 5, 12, odds=4, rng=np.random.default_rng(10), histories=2000)
    assert long.any_reset > 3 * r.any_reset
    assert "histories reset at least once" in long.describe()
