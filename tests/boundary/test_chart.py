"""The pieces of the chart against independent computations: the regions' probabilities by
numerical integration of the Beta density, the expected information gain by Monte Carlo and by
scipy's beta-binomial, the labels, splits and case kinds from hand-built runs."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate, stats

from fluke.boundary import (PointCounts, Space, chart, classify, even_split, expected_gain, kind_rates, mixed_warning,
                            plan_exploration, region_entropy)
from fluke.errors import InputError, UsageError


@pytest.mark.parametrize("k,n", [(0, 0), (3, 4), (19, 20), (70, 100), (1, 12)])
def test_region_probabilities_match_integration(k, n):
    v = classify(PointCounts(completed=k, failed=n - k), bar=0.8, floor=0.5, prob=0.9)
    pdf = stats.beta(1 + k, 1 + n - k).pdf
    assert v.p_works == pytest.approx(integrate.quad(pdf, 0.8, 1)[0], abs=1e-7)
    assert v.p_fails == pytest.approx(integrate.quad(pdf, 0, 0.5)[0], abs=1e-7)


def test_regions_and_labels_follow_the_rule():
    rule = dict(bar=0.8, floor=0.5, prob=0.9)
    assert classify(PointCounts(completed=20), **rule).region == "works"
    assert classify(PointCounts(failed=4), **rule).region == "fails"
    thin = classify(PointCounts(completed=2, failed=1), **rule)
    assert (thin.region, thin.label) == ("uncertain", "needs evidence")
    # run a lot at 65%: below the bar for sure, above the floor: more runs will not lift it
    settled = classify(PointCounts(completed=65, failed=35), **rule)
    assert (settled.region, settled.label) == ("uncertain", "needs a change")
    assert 1 - settled.p_works >= 0.9 and settled.p_fails < 0.9
    assert classify(PointCounts(), **rule).region == "not run"


def test_the_colour_is_the_most_common_behaviour_ties_to_the_worse():
    rule = dict(bar=0.8, floor=0.5, prob=0.9)
    assert classify(PointCounts(completed=3, asked=5), **rule).colour == "asks"
    assert classify(PointCounts(completed=5, asked=3), **rule).colour == "completes"
    assert classify(PointCounts(asked=2, failed=2), **rule).colour == "fails"


def test_expected_gain_matches_monte_carlo_and_a_peer_predictive():
    a_k, a_n, m = 3, 5, 6
    exact = expected_gain(a_k, a_n, m, 0.8, 0.5)
    a, b = 1 + a_k, 1 + a_n - a_k
    ks = np.arange(m + 1)
    peer = region_entropy(a, b, 0.8, 0.5) - np.dot(stats.betabinom.pmf(ks, m, a, b),
                                                   region_entropy(a + ks, b + m - ks, 0.8, 0.5))
    assert exact == pytest.approx(float(peer), abs=1e-10)
    rng = np.random.default_rng(0)
    theta = rng.beta(a, b, size=200_000)
    k = rng.binomial(m, theta)
    mc = float(region_entropy(a, b, 0.8, 0.5) - region_entropy(a + k, b + m - k, 0.8, 0.5).mean())
    assert exact == pytest.approx(mc, abs=4 * region_entropy(a + k, b + m - k, 0.8, 0.5).std() / np.sqrt(k.size))


def test_region_entropy_of_the_uniform_prior():
    q = np.array([0.2, 0.3, 0.5])
    assert float(region_entropy(1, 1, 0.8, 0.5)) == pytest.approx(float(-(q * np.log2(q)).sum()))


def test_explore_spends_the_budget_and_beats_or_ties_even_spreading():
    passes, runs = [0, 20, 3, 1], [0, 20, 5, 6]
    plan = plan_exploration(passes, runs, budget=30, bar=0.8, floor=0.5)
    assert sum(plan.runs) == 30
    assert plan.gain >= plan.gain_even - 1e-12
    assert plan.gain_even == pytest.approx(sum(expected_gain(k, n, m, 0.8, 0.5) for k, n, m in zip(
        passes, runs, even_split(4, 30, runs), strict=True)))
    with pytest.raises(UsageError):
        plan_exploration(passes, runs, budget=0, bar=0.8, floor=0.5)


def test_splits_name_the_axis_and_the_threshold():
    space = Space.from_mapping({"axes": {"case": ["unique", "same_name"], "records": {"levels": [1, 5, 20],
                                                                                        "ordered": True}}})
    rows = []
    for r in (1, 5):
        rows += [("s", {"case": "unique", "records": r}, "complete")] * 12
        rows += [("t", {"case": "unique", "records": r}, "complete")] * 12
        rows += [("t", {"case": "same_name", "records": r}, "fail")] * 6
    rows += [("s", {"case": "unique", "records": 20}, "fail")] * 8
    c = chart(space, rows, bar=0.8, floor=0.5, prob=0.9)
    texts = {(s.scenario, s.text) for s in c.splits}
    assert texts == {("s", "fails at records ≥ 20, passes at records ≤ 5"),
                     ("t", "fails on case=same_name, passes on case=unique")}


def test_runs_off_the_space_are_counted_with_the_level_never_named():
    space = Space.from_mapping({"axes": {"case": ["unique"]}})
    c = chart(space, [("s", {"case": "locked"}, "fail"), ("s", {}, "fail"), ("s", {"case": "unique"}, None)],
              bar=0.8, floor=0.5, prob=0.9)
    assert c.off_space == 2 and c.unnamed == {"case=locked": 1, "case not given": 1}
    assert c.points[0].counts == PointCounts(failed=1)   # an unknown outcome counts as a failure here


def test_case_kinds_report_each_kind_and_warn_on_a_mix():
    rows = ([("v1", ["kind:regression"], True)] * 9 + [("v1", ["kind:regression"], False)]
            + [("v1", ["kind:frontier"], False)] * 3 + [("v1", ["kind:frontier"], True)])
    rates = kind_rates(rows)
    got = {r.kind: (r.passes, r.runs) for r in rates}
    assert got == {"regression": (9, 10), "frontier": (1, 4)}
    reg = next(r for r in rates if r.kind == "regression")
    assert (reg.lo, reg.hi) == pytest.approx(tuple(stats.beta.ppf([0.05, 0.95], 10, 2)))
    assert "mixes 2 case kinds" in mixed_warning(rates)
    assert mixed_warning(kind_rates([("v1", ["kind:regression"], True)])) is None


@pytest.mark.parametrize("data,field", [
    ({"axes": {}}, "axes"),
    ({"axes": {"a": []}}, "levels"),
    ({"axes": {"a": ["x", "x"]}}, "levels"),
    ({"axes": {"a": {"levels": [1], "order": True}}}, "order"),
    ({"axes": {"a": {"levels": [1], "ordered": "yes"}}}, "ordered"),
    ({"axes": {"a": [1]}, "colour": 1}, "colour"),
])
def test_a_bad_space_names_its_field(data, field):
    with pytest.raises(InputError) as err:
        Space.from_mapping(data, file="space.yaml")
    assert err.value.field == field and err.value.file == "space.yaml"
