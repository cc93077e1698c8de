"""Severe failures apart: the exact upper bounds against scipy's, and the counts per severity."""

from __future__ import annotations

import math

import pytest
from scipy.stats import binomtest

from fluke.decisions import severe_rate, upper_bound


@pytest.mark.parametrize("k,n", [(0, 300), (0, 1), (1, 10), (3, 50), (7, 1000), (49, 50), (12, 12), (0, 5000)])
@pytest.mark.parametrize("level", [0.9, 0.95, 0.99])
def test_upper_bound_equals_scipys_exact_one_sided_interval(k, n, level):
    scipy = binomtest(k, n, alternative="less").proportion_ci(confidence_level=level, method="exact").high
    assert upper_bound(k, n, level) == pytest.approx(scipy, rel=1e-9, abs=1e-12)


def test_zero_of_300_is_at_most_one_percent():
    r = severe_rate("hard", 0, 300)
    assert r.upper == pytest.approx(1 - 0.05 ** (1 / 300), rel=1e-9)   # the closed form when k = 0
    assert r.text() == "hard: 0 of 300 runs (0.0%), at most 1.0% at 95%"


def test_no_runs_is_undefined_not_zero():
    assert math.isnan(upper_bound(0, 0))
    assert severe_rate("hard", 0, 0).to_dict()["upper_bound"] is None


def test_bad_counts_are_refused():
    from fluke.errors import UsageError

    with pytest.raises(UsageError, match="k=4"):
        upper_bound(4, 3)


def test_decide_counts_each_severity_from_the_spec(tmp_path):
    from fluke.analysis import decide
    from fluke.grading import grade_run
    from fluke.ledger import open_ledger
    from fluke.simulate import TRADEOFF_SPEC, tradeoff_suite

    runs = tradeoff_suite(scenarios=10, trials=3, severe=(0.0, 0.2), seed=5).runs()
    ledger = open_ledger(str(tmp_path / "s.db"))
    ledger.ingest(runs)
    result = decide(ledger, {"failure": 1.0}, spec=TRADEOFF_SPEC)
    for v in result.versions:
        mine = [r for r in runs if r.identity.version == v.version]
        hard = sum(grade_run(r, TRADEOFF_SPEC).hard for r in mine)
        got = {s.severity: s for s in v.severe}
        assert got["hard"].failures == hard and got["hard"].runs == len(mine)
        assert got["hard"].upper == pytest.approx(
            binomtest(hard, len(mine), alternative="less").proportion_ci(0.95, method="exact").high)
    assert {s.severity: s.failures for s in result.versions[1].severe}["hard"] > 0


@pytest.mark.parametrize("severe,at_most,status", [((0.0, 0.0), 0.01, "holds"), ((0.3, 0.3), 0.05, "fails"),
                                                    ((0.0, 0.0), 0.002, "too small to tell")])
def test_a_gate_rule_bounds_a_severe_failure_rate(tmp_path, severe, at_most, status):
    from fluke.analysis import gate
    from fluke.ledger import open_ledger
    from fluke.simulate import TRADEOFF_SPEC, tradeoff_suite

    ledger = open_ledger(str(tmp_path / "g.db"))
    ledger.ingest(tradeoff_suite(scenarios=25, trials=4, severe=severe, seed=3).runs())   # 300 runs per version
    result = gate(ledger, {"version": "model=tradeoff-a", "spec": TRADEOFF_SPEC,
                           "severe": {"severity": "hard", "at_most": at_most}})
    claim = result.claims[0]
    assert claim.check == "severe" and claim.status == status, claim.message()
    if status == "too small to tell":
        assert claim.runs_needed == math.ceil(math.log(0.05) / math.log(1 - at_most))


def test_a_gate_rule_with_a_bad_severity_is_refused():
    from fluke.analysis import parse_gate_rule
    from fluke.errors import SpecError

    with pytest.raises(SpecError, match="severe.severity: 'hrad' is not one of hard, soft, warn"):
        parse_gate_rule({"spec": "s.yaml", "severe": {"severity": "hrad", "at_most": 0.01}})
    with pytest.raises(SpecError, match="name the spec"):
        parse_gate_rule({"severe": {"at_most": 0.01}})
