"""One belief per version (a02, a19, a21): the carried prior, the change mixture, certification.

Oracles: closed-form Beta arithmetic, scipy's beta-binomial, and brute-force enumeration of
every change configuration through a chain of versions.
"""

import itertools

import numpy as np
import pytest
from scipy import special, stats

from fluke.errors import UsageError
from fluke.inference import UNIFORM, BetaMixture, EarlierVersion, Prior, belief_from_counts


def test_new_scenarios_keep_the_declared_prior_and_say_so():
    # a21: v1 ran "old" 10/10; v2 runs "old" and "new" 5/5 each; prior Beta(8, 2), δ = 0.5.
    v1 = EarlierVersion("v1", [10, 0], [10, 0], present=[True, False])
    b = belief_from_counts([5, 5], [5, 5], prior=Prior(8, 2), earlier=[v1], delta=0.5)
    # new: nothing carried, so the declared prior Beta(8, 2) plus 5/5 -> Beta(13, 2).
    assert float(b.mean[1]) == pytest.approx(13 / 15)
    # old: Beta(8 + 0.5·10, 2) + 5/5 -> Beta(18, 2).
    assert float(b.mean[0]) == pytest.approx(18 / 20)
    assert b.prior_text[1] == "declared Beta(8, 2) (nothing carried: no earlier version ran this scenario)"
    assert b.prior_text[0].startswith("Beta(13, 2): declared Beta(8, 2) plus v1 10 of 10 runs kept at δ = 0.5")
    assert b.carried_text[1].startswith("nothing: no earlier version ran")
    assert b.carried_text[0].startswith("evidence of v1 (10 of 10 runs) at δ = 0.5")
    assert b.carried.tolist() == [True, False]


def test_start_over_returns_to_the_declared_prior_not_uniform():
    b = belief_from_counts([5], [5], prior=Prior(8, 2), earlier=[EarlierVersion("v1", [10], [10])], delta=0.0)
    assert float(b.mean[0]) == pytest.approx(13 / 15)       # a21: today's code gives 6/7
    assert "nothing kept" in b.prior_text[0]


def test_uniform_prior_matches_the_design_discount():
    # Beta(1 + δ(α − 1), 1 + δ(β − 1)) with α, β the old posterior: the seed's 10/10 then 5/5.
    for delta, want in ((1.0, 0.815), (0.0, 0.469)):
        b = belief_from_counts([5], [5], earlier=[EarlierVersion("v1", [10], [10])], delta=delta)
        assert float(b.p_above(0.9)[0]) == pytest.approx(1 - 0.9 ** (1 + 10 * delta + 5))
        assert round(float(b.p_above(0.9)[0]), 3) == want


def _mixture_oracle(history, odds, delta, base=(1.0, 1.0)):
    """Enumerate every change configuration; return (weights, alphas, betas) of the final belief."""
    comps = {}
    T = len(history)
    for config in itertools.product([0, 1], repeat=T - 1):
        prob, a, b = 1.0, 0.0, 0.0               # evidence counts on top of the base
        for t, (k, n) in enumerate(history):
            if t > 0:
                a, b = delta * a, delta * b
                changed = config[t - 1]
                prob *= (1 / (1 + odds)) if changed else (odds / (1 + odds))
                if changed:
                    a = b = 0.0
            prob *= stats.betabinom.pmf(k, n, base[0] + a, base[1] + b)
            a, b = a + k, b + n - k
        key = (round(a, 9), round(b, 9))
        comps[key] = comps.get(key, 0.0) + prob
    w = np.array(list(comps.values()))
    ab = np.array(list(comps.keys()))
    return w / w.sum(), base[0] + ab[:, 0], base[1] + ab[:, 1]


def _oracle_sf(w, a, b, bar):
    return float(np.sum(w * stats.beta.sf(bar, a, b)))


def _oracle_certify(w, a, b, bar=0.9, level=0.95):
    for m in range(0, 10_000):
        wm = w * np.exp(special.betaln(a + m, b) - special.betaln(a, b))
        if _oracle_sf(wm / wm.sum(), a + m, b, bar) >= level:
            return m
    raise AssertionError("not reached")


def test_one_posterior_feeds_every_line():
    # a02 / a19: v1 50/50, v2 4/5, odds 4, δ = 1. Today: P(θ>0.9) = 0.690 beside "certify 0",
    # and the account's next-run 0.965 against 0.881 on the same data.
    b = belief_from_counts([4], [5], earlier=[EarlierVersion("v1", [50], [50])], odds=4)
    w, a, bb = _mixture_oracle([(50, 50), (4, 5)], odds=4, delta=1.0)
    assert float(b.mean[0]) == pytest.approx(float(np.sum(w * a / (a + bb))))
    assert round(float(b.mean[0]), 3) == 0.881
    assert float(b.p_above(0.9)[0]) == pytest.approx(_oracle_sf(w, a, bb, 0.9))
    assert float(b.p_above(0.9)[0]) < 0.95
    assert int(b.runs_to_certify()[0]) == _oracle_certify(w, a, bb) > 0
    lo, hi = b.interval(0.9)
    assert _oracle_sf(w, a, bb, float(lo[0])) == pytest.approx(0.95, abs=1e-6)
    assert _oracle_sf(w, a, bb, float(hi[0])) == pytest.approx(0.05, abs=1e-6)
    assert float(b.p_changed[-1, 0]) == pytest.approx(float(w[a + bb < 10].sum()))
    # The suite questions use the same posterior.
    assert b.suite(bar=0.9).average_mean == pytest.approx(float(b.mean[0]))


@pytest.mark.parametrize("delta", [1.0, 0.6])
def test_a_chain_of_versions_is_the_exact_change_mixture(delta):
    history = [(30, 30), (9, 10), (2, 6), (5, 5)]
    earlier = [EarlierVersion(f"v{t}", [k], [n]) for t, (k, n) in enumerate(history[:-1])]
    b = belief_from_counts([history[-1][0]], [history[-1][1]], earlier=earlier, odds=3, delta=delta)
    w, a, bb = _mixture_oracle(history, odds=3, delta=delta)
    assert isinstance(b.posterior, BetaMixture)
    assert float(b.mean[0]) == pytest.approx(float(np.sum(w * a / (a + bb))), rel=1e-10)
    assert float(b.p_above(0.8)[0]) == pytest.approx(_oracle_sf(w, a, bb, 0.8), rel=1e-9)
    assert int(b.runs_to_certify()[0]) == _oracle_certify(w, a, bb)
    assert b.start.sum(axis=1) == pytest.approx([1.0])


def test_p_changed_matches_a_simulation_of_the_two_hypotheses():
    rng = np.random.default_rng(11)
    draws = 1_000_000
    changed = rng.random(draws) < 0.2
    theta = np.where(changed, rng.beta(1, 1, draws), rng.beta(51, 1, draws))
    hit = rng.binomial(5, theta) == 3
    share = changed[hit].mean()
    se = np.sqrt(share * (1 - share) / hit.sum())
    b = belief_from_counts([3], [5], earlier=[EarlierVersion("v1", [50], [50])], odds=4)
    assert float(b.p_changed[-1, 0]) == pytest.approx(share, abs=4 * se)
    assert round(float(b.p_changed[-1, 0]), 2) == 0.87         # seed 001


def test_no_check_where_nothing_was_carried():
    v1 = EarlierVersion("v1", [10, 0], [10, 0])
    b = belief_from_counts([3, 3], [5, 5], earlier=[v1], odds=4)
    assert np.isnan(b.p_changed[-1, 1]) and not np.isnan(b.p_changed[-1, 0])
    assert float(b.mean[1]) == pytest.approx(4 / 7)               # plain uniform posterior
    assert b.prior_text[1].startswith(UNIFORM.describe())


def test_footprint_delta_and_bad_input():
    v1 = EarlierVersion("v1", [10, 10], [10, 10])
    b = belief_from_counts([5, 5], [5, 5], earlier=[v1], delta=[0.2, 1.0])
    assert b.posterior.alpha.tolist() == pytest.approx([1 + 2 + 5, 1 + 10 + 5])
    with pytest.raises(UsageError, match="delta"):
        belief_from_counts([5], [5], earlier=[EarlierVersion("v1", [1], [1])], delta=1.5)
    with pytest.raises(UsageError, match="one per scenario"):
        belief_from_counts([5, 5], [5, 5], earlier=[EarlierVersion("v1", [1], [1])])


def test_a_family_prior_feeds_the_same_object():
    from fluke.inference import family_priors, posterior

    k, n = [5, 5, 4], [5, 5, 5]
    fp = family_priors(k, n, ["f"] * 3)
    texts = [fp.describe(i) for i in range(3)]
    b = belief_from_counts(k, n, prior=fp.prior, prior_text=texts)
    assert b.mean.tolist() == pytest.approx(posterior(k, n, prior=fp.prior).mean.tolist())
    assert b.prior_text[0].startswith("family f pooled")
    carried = belief_from_counts(k, n, prior=fp.prior, prior_text=texts,
                                 earlier=[EarlierVersion("v1", [0, 0, 0], [0, 0, 0])])
    # Nothing was carried: the moment-matched Beta keeps the family prior's mean and variance.
    assert carried.prior.mean.tolist() == pytest.approx(fp.prior.mean.tolist())
    assert carried.prior.var.tolist() == pytest.approx(fp.prior.var.tolist())
    assert "carried as Beta(" in carried.prior_text[0]


def test_unknown_outcomes_follow_the_declared_policy():
    v1 = EarlierVersion("v1", [8], [9], unknowns=[1])
    fail = belief_from_counts([3], [4], earlier=[v1], unknowns=[1])
    left = belief_from_counts([3], [4], earlier=[v1], unknowns=[1], unknown="exclude")
    assert fail.posterior.alpha.tolist() == [1 + 8 + 3] and fail.posterior.beta.tolist() == [1 + 2 + 2]
    assert left.posterior.alpha.tolist() == [1 + 8 + 3] and left.posterior.beta.tolist() == [1 + 1 + 1]
    assert (fail.unknowns, left.unknown_policy) == (1, "exclude")
    with pytest.raises(UsageError, match="unknown=.skip."):
        belief_from_counts([3], [4], unknown="skip")
