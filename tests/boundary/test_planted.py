"""Must show: on an agent with a planted boundary over two axes (case: categorical; records:
ordered), the chart's regions match the planted truth on at least 95% of the run points at the
stated probability, and following ``plan --explore`` gets there in at least 30% fewer runs than
spreading the same runs evenly, or at random.

The runs-to-chart figures are means over replications with a fixed rng; the 30% is asserted on
the ratio's upper Monte Carlo bound (mean + 2 standard errors, delta method), not on its mean.
"""

from __future__ import annotations

import numpy as np
import pytest

from fluke.analysis import boundary, explore
from fluke.boundary import plan_exploration as plan_runs
from fluke.ledger import open_ledger
from fluke.simulate import planted_agent, search

BAR, FLOOR, PROB = 0.8, 0.5, 0.9
REPS = 12


def _truth(agent):
    return {agent.space.key(p): agent.truth_region(p) for p in agent.space.points()}


def test_the_planted_boundary_is_two_dimensional():
    """The truth is not one axis in disguise: the records limit differs by case."""
    agent = planted_agent()
    limits = {case: max(int(r) for (c, r) in agent.space.points() if c == case and agent.truth_region((c, r)) ==
                        "works") for case in agent.space.axes[0].levels}
    assert len(set(limits.values())) == 4
    assert agent.space.axes[1].ordered and not agent.space.axes[0].ordered


def test_the_chart_matches_the_planted_regions_on_95_percent_of_run_points(tmp_path):
    agent = planted_agent()
    skipped = (("unique", "50"),)
    with open_ledger(str(tmp_path / "p.db")) as ledger:
        ledger.ingest(agent.suite(40, seed=11, skip=skipped))
        chart = boundary(ledger, space=agent.space, bar=BAR, floor=FLOOR, prob=PROB).chart
    truth = _truth(agent)
    run = [p for p in chart.points if p.counts.runs]
    assert len(run) == agent.space.size - 1
    assert [p.key for p in chart.points if p.verdict.region == "not run"] == ["case=unique,records=50"]
    agree = np.mean([p.verdict.region == truth[p.key] for p in run])
    assert agree >= 0.95
    # the colours are the behaviours planted: completing at unique, asking elsewhere, failing past the limit
    for p in run:
        want = "fails" if truth[p.key] == "fails" else ("completes" if p.point[0] == "unique" else "asks")
        assert p.verdict.colour == want, p.key


def test_a_decided_region_is_wrong_no_more_often_than_the_stated_probability_allows():
    """Over many thin suites (3 runs a point), the regions the chart calls are right at least ``PROB`` of
    the time (the posterior's promise under these rates; a Monte Carlo margin of 3 s.e.)."""
    from fluke.boundary import regions_of

    agent = planted_agent()
    rng = np.random.default_rng(5)
    truth = np.array([agent.truth_region(p) for p in agent.space.points()], dtype=object)
    calls = wrong = 0
    for _ in range(400):
        runs = np.full(agent.space.size, 3)
        passes = rng.binomial(runs, agent.rates())
        regions = regions_of(passes, runs, BAR, FLOOR, PROB)
        decided = regions != "uncertain"
        calls += decided.sum()
        wrong += (regions[decided] != truth[decided]).sum()
    share = wrong / calls
    assert calls > 1000
    assert share <= (1 - PROB) + 3 * np.sqrt(PROB * (1 - PROB) / calls)


def _ratio(a, b):
    """mean(a) / mean(b) and its standard error (delta method, independent samples)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    r = a.mean() / b.mean()
    se = r * np.sqrt(a.var(ddof=1) / len(a) / a.mean() ** 2 + b.var(ddof=1) / len(b) / b.mean() ** 2)
    return r, se


@pytest.fixture(scope="module")
def runs_to_chart():
    agent = planted_agent()
    return {policy: [search(agent, policy, np.random.default_rng(1000 + i), bar=BAR, floor=FLOOR, prob=PROB)
                     for i in range(REPS)] for policy in ("explore", "even", "random")}


@pytest.mark.parametrize("other", ["even", "random"])
def test_explore_charts_the_boundary_in_30_percent_fewer_runs(runs_to_chart, other):
    ratio, se = _ratio(runs_to_chart["explore"], runs_to_chart[other])
    print(f"runs to chart: explore {np.mean(runs_to_chart['explore']):.0f}, {other} "
          f"{np.mean(runs_to_chart[other]):.0f}; ratio {ratio:.2f} ± {se:.2f}")
    assert ratio + 2 * se <= 0.70


def test_plan_explore_through_the_ledger_charts_the_boundary(tmp_path):
    """The verb's loop: plan --explore on the ledger, run what it proposes, ingest, again, until the
    chart matches the truth. Each proposal is fluke.boundary.plan_exploration's on the ledger's counts."""
    agent = planted_agent()
    truth = _truth(agent)
    rng = np.random.default_rng(21)
    trials = {p: 0 for p in agent.space.points()}
    with open_ledger(str(tmp_path / "loop.db")) as ledger:
        ledger.ingest(agent.runs_at(("unique", "1"), 1, rng))   # a ledger needs a run before a plan
        trials[("unique", "1")] = 1
        spent = 1
        for _ in range(60):
            plan = explore(ledger, space=agent.space, budget=24, bar=BAR, floor=FLOOR, prob=PROB)
            points = plan.chart.points
            again = plan_runs([p.counts.passes for p in points], [p.counts.runs for p in points], budget=24,
                              bar=BAR, floor=FLOOR, prob=PROB)
            assert plan.exploration.runs == again.runs
            batch = []
            for p, n in zip(points, plan.exploration.runs, strict=True):
                batch += agent.runs_at(p.point, n, rng, first_trial=trials[p.point])
                trials[p.point] += n
            ledger.ingest(batch)
            spent += len(batch)
            chart = boundary(ledger, space=agent.space, bar=BAR, floor=FLOOR, prob=PROB).chart
            if np.mean([p.verdict.region == truth[p.key] for p in chart.points]) >= 0.95:
                break
    assert np.mean([p.verdict.region == truth[p.key] for p in chart.points]) >= 0.95
    assert spent < np.mean([search(agent, "even", np.random.default_rng(1000 + i), bar=BAR, floor=FLOOR,
                                   prob=PROB) for i in range(4)])
