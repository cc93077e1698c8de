"""Cost per success: coverage by simulation, the estimate against a direct computation, unknown costs."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from fluke.decisions import cost_per_success, per_run, quantile_interval, scenario_sums
from fluke.decisions._cost import cost_per_success_sums
from tests.conftest import TAU2_RESULTS, need

#: The simulation's truth: pass rate Beta(2, 2) per scenario (mean 1/2); spend per run log-normal(0, 1)
#: times a scenario scale log-normal(0, 0.5), times 1.5 on a failed run. E[spend] = e^0.5 e^0.125 (0.5 + 0.75).
TRUE_RATIO = 2.5 * math.exp(0.5) * math.exp(0.125)


def _suite(rng, scenarios: int) -> np.ndarray:
    """Per-scenario sums (spend, runs with a cost, passes, runs) of one simulated suite, skewed spend."""
    trials = rng.integers(2, 6, scenarios)
    which = np.repeat(np.arange(scenarios), trials)
    ok = rng.random(which.size) < rng.beta(2, 2, scenarios)[which]
    spend = rng.lognormal(0, 1, which.size) * rng.lognormal(0, 0.5, scenarios)[which] * np.where(ok, 1.0, 1.5)
    out = np.zeros((scenarios, 4))
    out[:, 0] = np.bincount(which, weights=spend, minlength=scenarios)
    out[:, 1] = out[:, 3] = trials
    out[:, 2] = np.bincount(which, weights=ok, minlength=scenarios)
    return out


@pytest.mark.parametrize("method,scenarios,reps", [("delta", 10, 1500), ("delta", 50, 600), ("delta", 200, 400),
                                                    ("bootstrap", 10, 600), ("bootstrap", 200, 300)])
def test_the_interval_covers_at_least_093_with_skewed_spend(method, scenarios, reps):
    rng = np.random.default_rng(20261201 + scenarios)
    hits = 0
    for _ in range(reps):
        r = cost_per_success_sums(_suite(rng, scenarios), method=method, resamples=400, rng=rng)
        hits += r.interval[0] <= TRUE_RATIO <= r.interval[1]
    coverage = hits / reps
    mc = math.sqrt(0.93 * 0.07 / reps)
    assert coverage >= 0.93 - 2 * mc, f"{method}, {scenarios} scenarios: coverage {coverage:.3f} over {reps} suites"
    assert coverage <= 0.995   # not a vacuous interval


def test_every_run_is_charged_and_the_estimate_is_spend_over_passes():
    rng = np.random.default_rng(3)
    cost = rng.lognormal(0, 1, 200)
    passed = rng.random(200) < 0.4
    scen = rng.integers(0, 25, 200)
    r = cost_per_success(cost, passed.astype(float), scen)
    assert r.estimate == pytest.approx(cost.sum() / passed.sum(), rel=1e-12)
    assert r.estimate > cost[passed].sum() / passed.sum()     # failed runs' spend is charged too
    assert r.unknown_cost == 0 and r.runs == 200 and r.passes == int(passed.sum())


def test_unknown_cost_is_counted_and_never_read_as_zero():
    cost = np.array([1.0, 2.0, np.nan, 3.0, np.nan, 2.0])
    passed = np.array([1, 0, 1, 1, 0, 1.0])
    r = cost_per_success(cost, passed, ["a", "a", "b", "b", "c", "c"])
    assert r.unknown_cost == 2 and r.known_cost == 4
    known_mean = np.nanmean(cost)                       # 2.0 per run, charged to all 6 runs
    assert r.estimate == pytest.approx(known_mean * 6 / 4)
    assert r.estimate != pytest.approx(np.nansum(cost) / 4)   # what reading NaN as zero would say


def test_undefined_without_a_pass_or_a_cost():
    assert "no run of 3 passed" in cost_per_success([1.0, 1.0, 1.0], [0, 0, 0], ["a", "b", "c"]).reason
    assert cost_per_success([np.nan, np.nan], [1, 1], ["a", "b"]).reason == "no run carries a cost"


def test_scenario_sums_by_hand():
    assert scenario_sums([2.0, np.nan, 4.0], [1, 1, 0], ["y", "x", "y"]).tolist() == [[0, 0, 1, 1], [6, 2, 1, 2]]


def test_quantile_interval_matches_the_binomial_ranks_and_covers():
    from scipy import stats

    rng = np.random.default_rng(9)
    truth = float(stats.expon.ppf(0.95))
    hits, reps = 0, 800
    for _ in range(reps):
        _, lo, hi = quantile_interval(rng.exponential(1.0, 200), 0.95)
        hits += lo <= truth <= hi
    assert hits / reps >= 0.95 - 2 * math.sqrt(0.05 * 0.95 / reps)


def test_per_run_mean_is_the_mean_of_recorded_values():
    p = per_run("latency", [1.0, 5.0, np.nan, 3.0, 7.0], ["a", "a", "b", "c", "c"])
    assert (p.runs, p.unknown, p.mean) == (4, 1, pytest.approx(4.0))
    assert p.mean_interval[0] < 4.0 < p.mean_interval[1]


def test_on_tau2_bench_the_estimate_is_total_agent_cost_over_passes(tmp_path):
    from fluke.analysis import ingest, version_costs, version_label
    from fluke.ledger import open_ledger

    path = need(TAU2_RESULTS / "gpt-4.1_retail_defautl_gpt-4.1_1trials.json")
    sims = json.loads(path.read_text())["simulations"]
    total = sum(s["agent_cost"] for s in sims)
    passes = sum(1 for s in sims if s["reward_info"]["reward"] >= 1.0 - 1e-9)
    ledger = open_ledger(str(tmp_path / "t.db"))
    ingest(ledger, [str(path)])
    version = ledger.versions()[0].version
    c = version_costs(ledger, version, version_label(ledger, version), cost="agent_usd")
    assert c.cost_per_success.estimate == pytest.approx(total / passes, rel=1e-9)
    assert c.cost_per_success.unknown_cost == 0 and c.runs == len(sims)
    assert c.latency.mean == pytest.approx(np.mean([s["duration"] for s in sims]), rel=1e-9)


def test_on_tau2_bench_runs_without_a_cost_are_counted(tmp_path):
    from fluke.analysis import ingest, version_costs, version_label
    from fluke.ledger import open_ledger

    folder = TAU2_RESULTS.parents[3] / "web" / "leaderboard" / "public" / "submissions"
    path = need(folder / "gpt-oss-120b_openai_2025-11-26" / "trajectories"
                / "langchain_agent_airline_2025-11-26_00-37-06.json")
    sims = json.loads(path.read_text())["simulations"]
    without = sum(1 for s in sims if not isinstance(s.get("agent_cost"), (int, float)))
    ledger = open_ledger(str(tmp_path / "t.db"))
    ingest(ledger, [str(path)])
    version = ledger.versions()[0].version
    c = version_costs(ledger, version, version_label(ledger, version), cost="agent_usd")
    assert without > 0 and c.cost_per_success.unknown_cost == without
    assert f"{without:,} without a cost" in c.cost_line()


def test_believe_shows_cost_and_severe_failures(tmp_path):
    from fluke.analysis import believe
    from fluke.grading import grade_run
    from fluke.ledger import open_ledger
    from fluke.simulate import TRADEOFF_SPEC, tradeoff_suite

    runs = [r for r in tradeoff_suite(scenarios=8, trials=3, severe=(0.0, 0.2), seed=2).runs()
            if r.identity.model == "tradeoff-b"]
    ledger = open_ledger(str(tmp_path / "b.db"))
    ledger.ingest(runs)
    result = believe(ledger, costs=True, spec=TRADEOFF_SPEC)
    doc = result.to_dict()["costs"]
    assert doc["cost_per_success"]["estimate"] == pytest.approx(
        sum(r.cost["usd"] for r in runs) / sum(bool(r.outcome.passed) for r in runs))
    hard = next(s for s in doc["severe"] if s["severity"] == "hard")
    assert hard["failures"] == sum(grade_run(r, TRADEOFF_SPEC).hard for r in runs) > 0
    text = result.render()
    assert "cost per success (usd)" in text and hard["summary"] in text
    assert "costs" not in believe(ledger).to_dict()     # only when asked: it streams the runs
