"""P(first) with exchangeable versions (issue 35, point 4): calibrated by simulation, a probability, the model it names.

Oracles: the simulated truth (which version's mean true rate over the board's strata is highest,
from the rates the runs were drawn from); the independent per-version posteriors it replaces,
computed here, which fail the same check; the generative model itself, sampled forward and
weighted by the likelihood (importance sampling), for the posterior's arithmetic.
"""

from __future__ import annotations

import numpy as np
import pytest

from fluke.comparison import leaderboard_counts, p_first_posterior
from fluke.comparison._pfirst import PRIOR_SCALE, _noise, first_posterior


def _boards(rng, versions, scenarios, runs, spread, boards, method):
    """Claims and truths over simulated boards: logit(rate) = a_s + b_v, b_v ~ N(0, spread²).

    ``spread=None`` draws each board's spread from P(first)'s own prior: τ, the spread of the versions'
    mean rates, half-Cauchy of PRIOR_SCALE × σ̄ (σ̄ the standard error of a version's mean at the
    scenarios' rates), turned into logit effects through the mean slope p(1 − p)."""
    claims, truth = [], []
    n = np.full((versions, scenarios), runs)
    for r in range(boards):
        a = rng.normal(1, 1.2, scenarios)
        if spread is None:
            slope = np.exp(-np.logaddexp(0, -a) - np.logaddexp(0, a))          # p (1 − p) without overflow
            tau = PRIOR_SCALE * np.sqrt((slope / runs).sum()) / scenarios * abs(rng.standard_cauchy())
            b = rng.normal(0, tau / slope.mean(), versions)
        else:
            b = rng.normal(0, spread, versions)
        p = np.exp(-np.logaddexp(0, -(a[None, :] + b[:, None])))
        first = method(rng.binomial(n, p), n, r)
        means = p.mean(axis=1)
        top = means == means.max()
        claims += first.tolist()
        truth += (top / top.sum()).tolist()
    return np.array(claims), np.array(truth)


def _off_deciles(claims, truth):
    """Deciles (≥ 30 claims) whose mean claim is more than 0.05 beyond 2 Monte Carlo errors from the truth."""
    off, checked = [], 0
    for lo in np.arange(0.0, 1.0, 0.1):
        m = (claims >= lo) & ((claims < lo + 0.1) | ((lo > 0.85) & (claims <= 1.0)))
        if m.sum() < 30:
            continue
        checked += 1
        share = truth[m].mean()
        mc = 2 * np.sqrt(max(share * (1 - share), 0.02) / m.sum())
        if abs(claims[m].mean() - share) > 0.05 + mc:
            off.append((round(float(lo), 1), round(float(claims[m].mean()), 3), round(float(share), 3), int(m.sum())))
    return off, checked


def _independent(k, n, seed, draws=400):
    """The model replaced: independent Beta(1, 1) posteriors per cell, each version's mean drawn from its normal."""
    a, b = 1 + k, 1 + n - k
    centre = (a / (a + b)).mean(axis=1)
    sd = np.sqrt((a * b / ((a + b) ** 2 * (a + b + 1))).sum(axis=1)) / k.shape[1]
    means = centre + sd * np.random.default_rng(seed).standard_normal((draws, k.shape[0]))
    return np.bincount(means.argmax(axis=1), minlength=k.shape[0]) / draws


def test_p_first_is_calibrated_where_independent_posteriors_over_claimed():
    """8 versions × 100 scenarios × 3 runs, version effects of sd 0.1 on the logit (the atlas's failing
    board), 1,500 boards from one seed: every decile with 30 claims or more is within 0.05 of the truth
    beyond 2 Monte Carlo errors. The same boards read by independent per-version posteriors fail it:
    they over-claim the apparent leader among nearly equal versions (0.55 for 0.42 truly first)."""
    claims, truth = _boards(np.random.default_rng(35), 8, 100, 3, 0.1, 1500,
                            lambda k, n, r: p_first_posterior(k, n, draws=400, seed=r))
    off, checked = _off_deciles(claims, truth)
    assert checked >= 6 and not off, off
    old, old_truth = _boards(np.random.default_rng(35), 8, 100, 3, 0.1, 1500, _independent)
    worse, _ = _off_deciles(old, old_truth)
    assert worse and all(claim > share for _, claim, share, _ in worse), worse


@pytest.mark.parametrize("versions, scenarios, runs, spread", [(3, 10, 5, 0.3), (2, 20, 3, 0.3)])
def test_p_first_is_calibrated_on_small_boards(versions, scenarios, runs, spread):
    """Three versions on 10 scenarios, and two on 20 (the atlas's small boards), 1,000 boards each."""
    claims, truth = _boards(np.random.default_rng(36), versions, scenarios, runs, spread, 1000,
                            lambda k, n, r: p_first_posterior(k, n, draws=400, seed=r))
    off, checked = _off_deciles(claims, truth)
    assert checked >= 8 and not off, off


@pytest.mark.parametrize("versions, scenarios, runs", [(5, 30, 2), (4, 50, 1)])
def test_p_first_is_calibrated_over_the_boards_its_prior_describes(versions, scenarios, runs):
    """A posterior probability is calibrated averaged over its prior: with each board's spread drawn from the
    prior (the atlas's label population), 3,000 boards, every decile with 30 claims holds. These two shapes
    fail at one fixed spread each (0.15 and 0.2: docs/atlas.md), over-claiming nearly equal versions. The check
    has teeth: the same posterior with each version's noise variance halved fails two deciles of 5 × 30 × 2
    (0.850 claimed, 0.719 first), doubled four (0.746 claimed, 0.936 first)."""
    claims, truth = _boards(np.random.default_rng(37), versions, scenarios, runs, None, 3000,
                            lambda k, n, r: p_first_posterior(k, n, draws=400, seed=r))
    off, checked = _off_deciles(claims, truth)
    assert checked == 10 and not off, off


def test_the_column_sums_to_one_and_equal_versions_share_it():
    rng = np.random.default_rng(4)
    for _ in range(20):
        v, s = rng.integers(2, 9), rng.integers(1, 60)
        n = rng.integers(1, 6, size=(v, s))
        first = p_first_posterior(rng.binomial(n, rng.uniform(0, 1, size=(v, s))), n, draws=500,
                                  seed=int(rng.integers(1000)))
        assert first.sum() == pytest.approx(1.0, abs=1e-12) and first.min() >= 0
        # versions that pass every run or none, beside others: each version's noise stays a positive number
        rates = rng.choice([0.0, 1.0, 0.5, 0.999], size=(v, s))
        with np.errstate(all="raise"):
            first = p_first_posterior(rng.binomial(n, rates), n, draws=200, seed=1)
        assert first.sum() == pytest.approx(1.0, abs=1e-12) and np.isfinite(first).all()
    # four versions with the same counts: each is first a quarter of the time (40,000 draws: MC se 0.0022)
    k = np.tile(rng.binomial(5, 0.7, size=25), (4, 1))
    first = p_first_posterior(k, np.full(k.shape, 5), draws=40_000, seed=2)
    assert first == pytest.approx(np.full(4, 0.25), abs=0.011)
    # every run passed: no version can be told from another
    first = p_first_posterior(np.full((3, 10), 4), np.full((3, 10), 4), draws=40_000, seed=3)
    assert first == pytest.approx(np.full(3, 1 / 3), abs=0.012)


def test_the_posterior_matches_the_model_sampled_forward():
    """Oracle: draw τ from its half-Cauchy prior, μ from a wide normal proposal (the prior on μ is flat),
    the version effects from N(0, τ²), and weight each draw by the likelihood of the observed means;
    P(first) is the weighted share of draws in which each version's θ is highest. A million draws
    (an effective sample of about 35,000: a Monte Carlo error under 0.006); fluke's 100,000 draws."""
    k = np.array([[14, 15, 12, 13, 16, 11], [12, 13, 11, 14, 12, 10], [15, 14, 13, 15, 15, 12]])
    n = np.full(k.shape, 20)
    post = first_posterior(k, n, draws=100_000, seed=5)
    means, variance = _noise(k.astype(float), n.astype(float))
    scale = PRIOR_SCALE * np.sqrt(1 / np.mean(1 / variance))
    assert post.prior_scale == pytest.approx(scale)
    rng = np.random.default_rng(6)
    size, centre, width = 1_000_000, means.mean(), 0.3
    tau = scale * np.abs(rng.standard_cauchy(size))
    mu = centre + width * rng.standard_normal(size)
    theta = mu[:, None] + tau[:, None] * rng.standard_normal((size, 3))
    log_w = (-0.5 * ((means[None, :] - theta) ** 2 / variance[None, :]).sum(axis=1)
             + 0.5 * ((mu - centre) / width) ** 2)          # likelihood over the proposal's density of μ
    w = np.exp(log_w - log_w.max())
    ess = w.sum() ** 2 / (w ** 2).sum()
    oracle = np.bincount(theta.argmax(axis=1), weights=w, minlength=3) / w.sum()
    assert ess > 10_000
    print(f"oracle {oracle.round(4).tolist()} (effective sample {ess:.0f}); fluke {post.p_first.round(4).tolist()}")
    assert 0.05 < oracle.min() and oracle.max() < 0.7                     # a close race
    assert post.p_first == pytest.approx(oracle, abs=0.012)
    # τ's posterior median, from the same weighted draws
    order = np.argsort(tau)
    cum = np.cumsum(w[order]) / w.sum()
    assert post.tau == pytest.approx(tau[order][np.searchsorted(cum, 0.5)], rel=0.1, abs=0.002)


def test_tau_is_read_from_the_versions_spread():
    """40 versions whose true mean rates are 0.6 plus N(0, 0.05²), 200 strata × 10 runs: τ's 95% interval
    holds the spread of the true means, and its median is within 25% of it."""
    rng = np.random.default_rng(9)
    effects = rng.normal(0, 0.05, 40)
    p = np.clip(0.6 + effects[:, None] + rng.normal(0, 0.1, 200)[None, :], 0.01, 0.99)
    n = np.full(p.shape, 10)
    post = first_posterior(rng.binomial(n, p), n, draws=2000, seed=1)
    true = p.mean(axis=1).std(ddof=1)
    assert post.tau_low < true < post.tau_high
    assert post.tau == pytest.approx(true, rel=0.25)


def test_the_leaderboard_names_the_model_and_tau():
    from fluke.analysis._leaderboard import LeaderboardResult

    rng = np.random.default_rng(11)
    n = np.full((3, 40), 4)
    k = rng.binomial(n, np.array([0.7, 0.68, 0.5])[:, None])
    board = leaderboard_counts(k, n, labels=["a", "b", "c"], replicates=2000, seed=7)
    post = first_posterior(k, n, draws=2000, seed=7)
    assert [s.p_first for s in board.standings] == post.p_first.tolist()
    result = LeaderboardResult(board, (("a", "1"), ("b", "2"), ("c", "3")), 0, {})
    doc = result.payload()["p_first_model"]
    assert doc["tau_points"] == pytest.approx(100 * post.tau) and doc["draws"] == 2000
    assert doc["tau_interval_points"] == pytest.approx([100 * post.tau_low, 100 * post.tau_high])
    text = result.render()
    assert "shrunk toward each other" in text and f"τ = {100 * post.tau:.1f} points" in text
    assert "half-Cauchy prior of scale" in text and "Beta(1, 1) per version" not in text
