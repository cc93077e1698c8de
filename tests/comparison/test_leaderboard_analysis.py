"""``leaderboard`` and ``plan`` on a ledger (SQLite and PostgreSQL), on τ²-bench, and through the CLI.

Oracles: per-version counts and means computed here from the runs ingested (or from the τ²-bench
JSON read with the json module), scipy's binomtest for the McNemar pairs, statsmodels' Holm.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from scipy import stats
from statsmodels.stats.multitest import multipletests

from fluke.analysis import leaderboard, plan, unseal
from fluke.cli import group
from fluke.ledger import open_ledger
from fluke.record import Identity, Outcome, Run

TAU2 = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "tau2-bench"
AIRLINE_FOUR = {
    "openai/gpt-oss-120b": "web/leaderboard/public/submissions/gpt-oss-120b_openai_2025-11-26/trajectories/"
                           "langchain_agent_airline_2025-11-26_00-37-06.json",
    "claude-sonnet-4-5": "web/leaderboard/public/submissions/claude-sonnet-4-5_aide-platform_2025-10-31/"
                         "trajectories/claude-sonnet-4-5_airline_default_gpt4.1_1trials.json",
    "gpt-5.4": "web/leaderboard/public/submissions/ironshell-ironforge_ironshell-ui_2026-03-09/trajectories/"
               "ironshell_airline_gpt54_run1.json",
    "azure/gpt-4o-2024-11-20": "judge_viewer/data/simulations/azure-airline-full.json",
}


def _runs(rng):
    rates = {"alpha": 0.85, "beta": 0.55, "gamma": 0.5}
    out = []
    for m, r in rates.items():
        for s in range(15):
            for t in range(4):
                out.append(Run(scenario=f"s{s}", trial=t, identity=Identity(model=m), latency=2.0 + t,
                               cost={"usd": 0.01} if m != "gamma" else {},
                               outcome=Outcome(passed=bool(rng.random() < r))))
    out.append(Run(scenario="only-alpha", identity=Identity(model="alpha"), outcome=Outcome(passed=True)))
    return out


def test_leaderboard_on_each_backend_reads_counts_and_spend(ledger):
    runs = _runs(np.random.default_rng(4))
    ledger.ingest(runs)
    result = leaderboard(ledger, replicates=300, seed=2)
    doc = result.to_dict()
    assert doc["kind"] == "leaderboard" and doc["left_out"] == 1 and doc["strata"] == 15
    for row in doc["versions"]:
        mine = [r for r in runs if r.identity.model == row["label"] and r.scenario != "only-alpha"]
        assert row["trials"] == len(mine) and row["passes"] == sum(r.outcome.passed for r in mine)
        assert row["spend"]["latency"] == pytest.approx(np.mean([r.latency for r in mine]))
        assert ("cost.usd" in row["spend"]) == (row["label"] != "gamma")
    assert [p["adjusted_pvalue"] for p in doc["pairs"]] == pytest.approx(
        list(multipletests([p["pvalue"] for p in doc["pairs"]], method="holm")[1]))
    assert doc["replicates"] == 300 and doc["seed"] == 2 and len(doc["forest"]) == 3
    text = result.render()
    assert "300 bootstrap resamples of the scenarios, seed 2" in text
    md = result.render("markdown")
    assert re.search(r"^\| rank \| version \|", md, re.M) and "| --- |" in md
    bh = leaderboard(ledger, ["model=alpha", "model=beta"], correction="bh", replicates=300).to_dict()
    assert bh["correction"] == "bh" and len(bh["pairs"]) == 1 and bh["left_out"] == 1


@pytest.fixture(scope="module")
def tau2_four(tmp_path_factory):
    from fluke.adapters import read_file

    paths = {m: TAU2 / p for m, p in AIRLINE_FOUR.items()}
    for p in paths.values():
        if not p.exists():
            pytest.skip(f"τ²-bench data not found at {p}")
    url = str(tmp_path_factory.mktemp("tau2four") / "fluke.db")
    with open_ledger(url) as ledger:
        for p in paths.values():
            ledger.ingest(read_file(p))
    truth = {}
    for m, p in paths.items():
        sims = json.loads(p.read_text())["simulations"]
        truth[m] = {f"airline/{s['task_id']}": s["reward_info"]["reward"] == 1.0 for s in sims}
    return url, truth


def test_leaderboard_on_the_four_tau2_airline_agents(tau2_four):
    url, truth = tau2_four
    with open_ledger(url) as ledger:
        result = leaderboard(ledger, seed=0)
    board = result.board
    assert board.strata == 50
    by = {s.label: s for s in board.standings}
    for model, passed in truth.items():
        assert by[model].passes == sum(passed.values()) and by[model].trials == 50
    assert [s.label for s in board.ordered()] == sorted(truth, key=lambda m: -sum(truth[m].values()))
    for pair in board.pairs:   # one run each: exact McNemar on the discordant tasks
        a, b = truth[pair.a], truth[pair.b]
        fixed = sum(a[t] and not b[t] for t in a)
        broken = sum(b[t] and not a[t] for t in a)
        assert pair.method == "exact McNemar"
        assert pair.pvalue == pytest.approx(stats.binomtest(fixed, fixed + broken, 0.5).pvalue)
    unsolved = sorted(t for t in truth["gpt-5.4"] if not any(truth[m][t] for m in truth))
    assert sorted(board.unsolved) == unsolved
    assert board.groups == (("claude-sonnet-4-5", "gpt-5.4"),
                            ("gpt-5.4", "azure/gpt-4o-2024-11-20", "openai/gpt-oss-120b"))
    print(result.render(width=140))


def test_cli_leaderboard_and_plan(tau2_four, tmp_path):
    url, _ = tau2_four
    cli = CliRunner()
    out = cli.invoke(group, ["--ledger", url, "--json", "leaderboard", "--correction", "bh", "--replicates", "500"])
    assert out.exit_code == 0, out.output
    doc = json.loads(out.output)
    assert doc["correction"] == "bh" and doc["replicates"] == 500 and len(doc["pairs"]) == 6
    out = cli.invoke(group, ["--ledger", url, "leaderboard", "--baseline", "model=azure/gpt-4o-2024-11-20"])
    assert out.exit_code == 0, out.output
    assert "differ from the baseline azure/gpt-4o-2024-11-20" in out.output
    out = cli.invoke(group, ["plan", "--bar", "0.9", "--scenarios", "50"])
    assert out.exit_code == 0 and "28 clean runs" in out.output and "65 clean runs on each of 50" in out.output
    out = cli.invoke(group, ["plan", "--detect", "5"])
    assert out.exit_code == 2 and "--rate" in out.output
    out = cli.invoke(group, ["--ledger", url, "--json", "plan", "--budget", "100", "--version", "model=gpt-5.4",
                             "--against", "model=claude-sonnet-4-5"])
    assert out.exit_code == 0, out.output
    alloc = json.loads(out.output)["allocation"]
    assert sum(alloc["runs"]) == 100 and alloc["after_plan"] <= alloc["after_even"]


def test_plan_on_each_backend_allocates_and_seals(ledger):
    rng = np.random.default_rng(9)
    runs = [
        Run(scenario=f"s{s}", trial=t, identity=Identity(model="m"), outcome=Outcome(passed=bool(rng.random() < 0.97)))
        for s in range(12)
        for t in range(8 if s < 6 else 2)
    ]
    ledger.ingest(runs)
    result = plan(ledger, budget=60, version="model=m", bar=0.8, level=0.9, seed=1, draws=500, seal=True)
    a = result.allocation
    assert sum(a.runs) == 60
    few = [i for i, s in enumerate(result.strata) if int(s[1:]) >= 6]
    assert sum(a.runs[i] for i in few) > 30    # most runs go where there are fewest
    assert a.after_plan >= a.after_even
    assert result.sealed and len(result.sealed) == 64
    doc = result.to_dict()
    assert doc["allocation"]["scenarios"] == list(result.strata) and doc["sealed"] == result.sealed
    checked = unseal(ledger, result.sealed[:12])
    assert checked.report.intact and checked.report.early   # the runs predate the plan's seal
    assert not checked.holds


def test_plan_detect_from_a_version_uses_posterior_mean_rates(ledger):
    rng = np.random.default_rng(12)
    runs = [
        Run(scenario=f"s{s}", trial=t, identity=Identity(model="m"), outcome=Outcome(passed=bool(rng.random() < 0.6)))
        for s in range(20)
        for t in range(3)
    ]
    ledger.ingest(runs)
    got = plan(ledger, detect=10, version="model=m").paired
    means = [(sum(r.outcome.passed for r in runs if r.scenario == f"s{s}") + 1) / 5 for s in range(20)]
    assert got.rate == pytest.approx(np.mean(means)) and got.scenarios == 20
    # the planned size is the smallest whose expected limit is at most 10 points
    from fluke.design import paired_sample_size

    assert got.runs_per_scenario == paired_sample_size(10, means, scenarios=20).runs_per_scenario
    assert got.detection_limit <= 10 < paired_sample_size(10, means, scenarios=20).detection_limit * (
        (got.runs_per_scenario / (got.runs_per_scenario - 1)) ** 0.5)
