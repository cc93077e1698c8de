"""pass@k at its edges (a05): the default k, an interval over scenarios, n = 0, unknown outcomes."""

import math

import numpy as np
import pytest
from scipy import stats

from fluke.inference import default_ks, pass_at_k, pass_at_k_curve, pass_hat_k


def test_five_trials_give_pass_at_five_by_default():
    curve = pass_at_k_curve([2, 5, 0], [5, 5, 5])
    assert [r.k for r in curve] == [1, 2, 3, 4, 5] == default_ks([5, 5, 5])
    for r in curve:
        want = np.mean([1 - math.comb(5 - c, r.k) / math.comb(5, r.k) for c in (2, 5, 0)])
        assert r.statistic == pytest.approx(want)
    assert [r.k for r in pass_at_k_curve([1, 2], [3, 7], kind="pass^k")] == [1, 2, 3]


def test_no_runs_is_undefined_with_a_reason_not_an_exception():
    r = pass_at_k([0, 3], [0, 4], k=1)
    assert math.isnan(r.statistic) and "no runs" in r.reason
    assert math.isnan(pass_hat_k([0], [0], k=2).statistic)


def test_interval_over_scenarios_is_a_t_interval_on_the_logit_scale():
    c, n = np.array([0, 3, 5, 9, 10, 2]), np.full(6, 10)
    r = pass_at_k(c, n, k=3)
    per = 1 - np.array([math.comb(10 - x, 3) / math.comb(10, 3) for x in c])
    m = per.mean()
    se = per.std(ddof=1) / np.sqrt(per.size)           # equal weights: the plain standard error
    t = stats.t.ppf(0.975, per.size - 1)
    logit = math.log(m / (1 - m))
    expit = lambda x: 1 / (1 + math.exp(-x))  # noqa: E731
    assert r.standard_error == pytest.approx(se)
    half = t * se / (m * (1 - m))
    # with a pseudo-scenario at 0 and one at 1 (eight values, t still on 5 df), then the hull of the two
    plus = np.concatenate([per, [0.0, 1.0]])
    m2 = plus.mean()
    se2 = plus.std(ddof=1) / np.sqrt(plus.size)
    half2 = t * se2 / (m2 * (1 - m2))
    logit2 = math.log(m2 / (1 - m2))
    low = min(expit(logit - half), expit(logit2 - half2))
    high = max(expit(logit + half), expit(logit2 + half2))
    # 6 × (1 − m) = 1.84 scenarios' worth of failures, within x* = 2: the upper end is Clopper–Pearson's for
    # 6m of 6, at the normal tail beyond t on 5 df
    high = max(high, stats.beta.ppf(1 - stats.norm.cdf(-t), 6 * m + 1, 6 * (1 - m)))
    assert (r.low, r.high) == pytest.approx((low, high))
    assert r.low < expit(logit - half) or r.high > expit(logit + half)    # the pair widened it
    assert pass_at_k([3], [10], k=2).interval_reason.startswith("one scenario")
    clean = pass_at_k([5] * 8, [5] * 8, k=2)
    assert clean.low == pytest.approx(0.025 ** (1 / 8)) and clean.high == 1.0


@pytest.mark.parametrize("kind,k,scenarios", [("pass@k", 3, 10), ("pass@k", 3, 20), ("pass^k", 2, 10)])
def test_the_interval_covers_the_population_value(kind, k, scenarios):
    # Scenarios drawn with rates p ~ Beta(2, 2); the target is E[1 − (1 − p)^k] or E[p^k].
    a, b = 2.0, 2.0
    if kind == "pass@k":
        truth = 1 - math.exp(math.lgamma(a + b) + math.lgamma(b + k) - math.lgamma(b) - math.lgamma(a + b + k))
    else:
        truth = math.exp(math.lgamma(a + b) + math.lgamma(a + k) - math.lgamma(a) - math.lgamma(a + b + k))
    rng = np.random.default_rng(31)
    reps, trials = 2000, 5
    fn = pass_at_k if kind == "pass@k" else pass_hat_k
    hits = 0
    for _ in range(reps):
        p = rng.beta(a, b, scenarios)
        r = fn(rng.binomial(trials, p), np.full(scenarios, trials), k=k)
        hits += r.low <= truth <= r.high
    se = math.sqrt(0.93 * 0.07 / reps)
    assert hits / reps >= 0.93 - 2 * se, hits / reps      # raw-scale t: 0.86 at 10 scenarios


def test_unknown_outcomes_follow_the_policy():
    fail = pass_at_k([3, 5], [4, 5], k=1, unknowns=[1, 0])
    keep = pass_at_k([3, 5], [4, 5], k=1, unknowns=[1, 0], unknown="exclude")
    assert fail.statistic == pytest.approx((3 / 5 + 1) / 2) and fail.unknowns == 1
    assert keep.statistic == pytest.approx((3 / 4 + 1) / 2) and keep.unknown_policy == "exclude"


def _exact_pass_hat_coverage(g, m):
    """pass^3 from 3 runs per scenario is 0 or 1, so over fresh scenarios its sum is Binomial(g, m): exact coverage."""
    total = 0.0
    for s in range(g + 1):
        weight = stats.binom.pmf(s, g, m)
        if weight > 1e-12:
            r = pass_hat_k([3] * s + [0] * (g - s), [3] * g, 3)
            total += weight * (r.low <= m <= r.high)
    return total


@pytest.mark.parametrize("g", [10, 30, 100, 200])
def test_pass_hat_k_covers_near_0_and_1_exactly(g):
    # one scenario of 200 at 3 of 3 (a true pass^3 of 0.0005) put the logit bound above the truth: 0.905
    for m in (0.0005, 0.002, 0.01, 0.03, 0.5, 0.97, 0.99, 0.999):
        assert _exact_pass_hat_coverage(g, m) >= 0.93, (g, m)
