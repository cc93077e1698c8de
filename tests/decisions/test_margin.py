"""Cheaper and not worse: false "not worse" at most α at a true difference equal to the margin."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fluke.comparison import compare_pass_rates, stratified_test
from fluke.comparison._limit import verdict_interval
from fluke.decisions import not_worse, paired_cost_difference


def _interval(pa, na, pb, nb):
    """The interval compare prints for B − A: the stratified test inverted (checked equal below)."""
    test = stratified_test(na - pa, na, nb - pb, nb)
    _, low, high = verdict_interval(pa, na, pb, nb, pvalue=test.pvalue, alpha=0.05)
    return low, high


def test_the_interval_used_is_compares_own():
    rng = np.random.default_rng(2)
    p = rng.beta(6, 3, 30)
    pa, pb = rng.binomial(6, p), rng.binomial(6, np.clip(p - 0.03, 0, 1))
    n = np.full(30, 6)
    assert _interval(pa, n, pb, n) == pytest.approx(compare_pass_rates(pa, n, pb, n).interval)


@pytest.mark.parametrize("margin,scenarios,trials", [(2.0, 60, 10), (5.0, 40, 6)])
def test_false_not_worse_is_at_most_alpha_at_the_margin(margin, scenarios, trials):
    rng = np.random.default_rng(int(margin * 100) + scenarios)
    reps, called = 500, 0
    n = np.full(scenarios, trials)
    for _ in range(reps):
        p = rng.beta(6, 3, scenarios)
        pa = rng.binomial(n, p)
        pb = rng.binomial(n, np.clip(p - margin / 100, 0, 1))  # B truly `margin` points worse (clipped rarely)
        called += bool(not_worse(_interval(pa, n, pb, n), margin).holds)
    share = called / reps
    assert share <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / reps), f"false 'not worse' in {share:.3f} of {reps}"


def test_not_worse_is_reachable_when_b_equals_a():
    rng = np.random.default_rng(7)
    n = np.full(200, 20)
    p = rng.beta(6, 3, 200)
    shown = sum(bool(not_worse(_interval(rng.binomial(n, p), n, rng.binomial(n, p), n), 5.0).holds)
                for _ in range(100))
    assert shown >= 90   # a wide margin with many runs: B equal to A is shown not worse nearly always


def test_cheaper_from_the_spend_paired_by_scenario():
    rng = np.random.default_rng(4)
    scen = np.repeat(np.arange(30), 4)
    base = rng.lognormal(0, 0.7, 30)[scen]
    a = base * rng.lognormal(0, 0.3, scen.size)
    b = 0.8 * base * rng.lognormal(0, 0.3, scen.size)
    d = paired_cost_difference(scen, a, scen, b)
    by_hand = np.mean([b[scen == s].mean() - a[scen == s].mean() for s in range(30)])
    assert d.difference == pytest.approx(by_hand) and d.scenarios == 30
    r = not_worse((-1.0, 3.0), 2.0, cost=d)
    assert r.holds and r.cheaper and d.interval[1] < 0
    d_none = paired_cost_difference(scen, a, scen, np.full(scen.size, np.nan))
    assert not_worse((-1.0, 3.0), 2.0, cost=d_none).cheaper is None


def test_compare_margin_reports_both_in_json(tmp_path):
    from fluke.analysis import compare
    from fluke.ledger import open_ledger
    from fluke.simulate import tradeoff_suite

    ledger = open_ledger(str(tmp_path / "m.db"))
    ledger.ingest(tradeoff_suite(scenarios=15, trials=4, seed=2).runs())
    result = compare(ledger, "model=tradeoff-a", "model=tradeoff-b", margin=10.0, groups="group", record=False)
    doc = result.to_dict()
    ni = doc["non_inferiority"]
    assert ni["interval_points"] == pytest.approx(doc["interval_points"])
    assert ni["not_worse"] == (doc["interval_points"][0] > -10.0)
    assert ni["cheaper"] is True      # B spends 0.7 × A's per run
    assert {g["group"] for g in doc["subgroups"]["groups"]} == {"calm", "rushed", "vague"}
    runs = tradeoff_suite(scenarios=15, trials=4, seed=2).runs()
    for side, model in (("a", "tradeoff-a"), ("b", "tradeoff-b")):
        mine = [r for r in runs if r.identity.model == model]
        assert doc["cost_per_success"][side]["estimate"] == pytest.approx(
            sum(r.cost["usd"] for r in mine) / sum(bool(r.outcome.passed) for r in mine))
