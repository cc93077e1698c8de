"""The suite-level false-fail rate of the plugin's default, by simulation (issue 27, point 4).

A suite of 100 fluke tests, each on one scenario whose agent truly fails 5% of its runs, and
nothing changed: every claim asked is true (θ = 0.95 is above the bar 0.9; the candidate is the
baseline's equal), so any red test is a false fail. Under the default — a claim too small to
tell warns, and the session's tests share one false-fail budget (``family``) — the suite must
turn red at most 5% of the time.

Each test's outcome depends only on its pass counts, so the claim's status is computed once
per possible count by the real decision functions (on a real ledger for ``reliable``; the
pass-rate comparison ``compare`` reads for ``not_worse_than``), then 100-test suites are drawn
with a fixed rng. The exact rate, 1 − (1 − q)^100 with q the per-test false-fail probability, is
the oracle the simulation must match within its Monte Carlo error.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from fluke.analysis import claim_reliable
from fluke.analysis._claims import FAILS, TOO_SMALL
from fluke.ledger import open_ledger
from fluke.record import Identity, Outcome, Run

K, TESTS, THETA, SUITES = 20, 100, 0.95, 4000


def _reliable_status(tmp_path, family):
    """The status of reliable(bar=0.9, prob=0.95) for each count of passes 0..K."""
    out = {}
    for passes in range(K + 1):
        with open_ledger(str(tmp_path / f"r{family}-{passes}.db")) as led:
            led.ingest([Run(scenario="s", trial=t, identity=Identity(model="m"), outcome=Outcome(passed=t < passes))
                        for t in range(K)])
            out[passes] = claim_reliable(led, bar=0.9, prob=0.95, family=family).status
    return out


def _suite_rate(status_of, draws):
    """The share of suites with at least one red test."""
    return np.vectorize(status_of)(draws).any(axis=1).mean()


def _close(rate, exact, n):
    """Within four Monte Carlo standard errors of the exact rate (one suite's worth for a rate near 0)."""
    return abs(rate - exact) <= 4 * math.sqrt(exact * (1 - exact) / n) + 1 / n


@pytest.fixture(scope="module")
def draws():
    return np.random.default_rng(27).binomial(K, THETA, size=(SUITES, TESTS))


def test_reliable_suite_false_fail_rate_under_the_default_is_at_most_five_percent(tmp_path, draws):
    status = _reliable_status(tmp_path, family=TESTS)
    q = sum(stats.binom.pmf(s, K, THETA) for s, st in status.items() if st == FAILS)
    exact = 1 - (1 - q) ** TESTS
    rate = _suite_rate(lambda s: status[s] == FAILS, draws)        # default: too small to tell warns
    assert _close(rate, exact, SUITES)
    assert exact <= 0.05 and rate <= 0.05
    # without the shared budget each test fails at P ≤ 0.05 on its own, and the suite goes red far more often
    alone = _reliable_status(tmp_path, family=None)
    q_alone = sum(stats.binom.pmf(s, K, THETA) for s, st in alone.items() if st == FAILS)
    assert 1 - (1 - q_alone) ** TESTS > 0.15
    # and with on_inconclusive: fail, 20/20 is still too small to tell at bar 0.9: nearly every suite is red
    red_if_fail = _suite_rate(lambda s: status[s] in (FAILS, TOO_SMALL), draws)
    assert red_if_fail > 0.99


def test_not_worse_suite_false_fail_rate_under_the_default_is_at_most_five_percent(draws):
    from fluke.comparison import compare_pass_counts

    alpha = 0.05 / TESTS            # what the plugin hands not_worse_than in a session of 100 fluke tests
    red = np.zeros((K + 1, K + 1), bool)
    for a in range(K + 1):
        for b in range(K + 1):
            r = compare_pass_counts({("s", ""): (a, K)}, {("s", ""): (b, K)}, alpha=alpha)
            red[a, b] = r.verdict == "different" and r.direction == "lower"   # what fails the claim
    pmf = stats.binom.pmf(np.arange(K + 1), K, THETA)
    q = float(pmf @ red @ pmf)
    exact = 1 - (1 - q) ** TESTS
    base = np.random.default_rng(28).binomial(K, THETA, size=draws.shape)
    suites = red[base, draws].any(axis=1)
    rate = suites.mean()
    assert _close(rate, exact, SUITES)
    assert exact <= 0.05 and rate <= 0.05
    # at each test's own α = 0.05 the same suite goes red more often (the budget is what keeps it green)
    alone = np.array([[(lambda r: r.verdict == "different" and r.direction == "lower")(
        compare_pass_counts({("s", ""): (a, K)}, {("s", ""): (b, K)})) for b in range(K + 1)] for a in range(K + 1)])
    assert 1 - (1 - float(pmf @ alone @ pmf)) ** TESTS > exact


def test_the_rates_printed_for_the_docs(tmp_path, draws, capsys):
    """The figures docs/ci.md quotes (printed with -s)."""
    status = _reliable_status(tmp_path, family=TESTS)
    q = sum(stats.binom.pmf(s, K, THETA) for s, st in status.items() if st == FAILS)
    rate = _suite_rate(lambda s: status[s] == FAILS, draws)
    print(f"reliable, 100 tests, k={K}, θ={THETA}: suite false-fail exact {1 - (1 - q) ** TESTS:.4f}, "
          f"simulated {rate:.4f} over {SUITES} suites")
    assert _close(rate, 1 - (1 - q) ** TESTS, SUITES)
