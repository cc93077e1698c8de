"""The cost–quality frontier and the leaderboard's --rank cost."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from fluke.decisions import frontier


def test_frontier_against_a_brute_force_dominance_check():
    rng = np.random.default_rng(12)
    for _ in range(200):
        points = {f"v{i}": (float(rng.integers(50, 60)), float(rng.integers(1, 6))) for i in range(6)}
        dominated = {a for a, b in itertools.permutations(points, 2)
                     if points[b][0] >= points[a][0] and points[b][1] <= points[a][1] and points[b] != points[a]}
        assert set(frontier(points)) == set(points) - dominated


def test_undefined_cost_is_left_off():
    assert frontier({"a": (80.0, math.nan), "b": (60.0, 1.0)}) == ["b"]


def test_leaderboard_rank_cost(tmp_path):
    from fluke.analysis import leaderboard
    from fluke.ledger import open_ledger
    from fluke.record import Identity
    from fluke.simulate import tradeoff_suite

    runs = tradeoff_suite(scenarios=10, trials=3, seed=4).runs()
    pricier = tradeoff_suite(scenarios=10, trials=3, seed=5, cost_ratio=2.0).runs()
    pricier = [r.model_copy(update={"identity": Identity(model="tradeoff-c", date="2026-12-01")}) for r in pricier
               if r.identity.model == "tradeoff-b"]
    ledger = open_ledger(str(tmp_path / "l.db"))
    ledger.ingest(runs + pricier)
    result = leaderboard(ledger, rank="cost")
    doc = result.to_dict()
    by_label = {v["label"]: v for v in doc["versions"]}
    for label, c in doc["cost_per_success"].items():
        mine = [r for r in runs + pricier if r.identity.version == by_label[label]["version"]]
        assert len(mine) == 90
        spend = sum(r.cost["usd"] for r in mine)
        passes = sum(bool(r.outcome.passed) for r in mine)
        assert c["estimate"] == pytest.approx(spend / passes)
        assert c["passes"] == passes
    points = {k: (by_label[k]["rate_points"], c["estimate"]) for k, c in doc["cost_per_success"].items()}
    assert doc["frontier"] == frontier(points) and doc["rank_by"] == "cost"
    assert "cost per success" in result.render()
