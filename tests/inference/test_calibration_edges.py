"""Calibration at its edges (a05): forecasts on bin edges, the per-family baseline, what is counted."""

import numpy as np
import pytest

from fluke.inference import match_predictions, reliability_table, score_predictions


def test_forecasts_on_an_edge_open_that_bin():
    # a05: 0.3, 0.6 and 0.7 landed in the bins starting at 0.2, 0.5 and 0.6.
    p = [0.3, 0.1 * 3, 0.6, 0.7, 1.0, 0.0, 0.29999, 0.15, 0.85]
    y = [1, 0, 1, 1, 1, 0, 0, 1, 0]
    rows = {round(r["lower"], 10): r for r in reliability_table(p, y, bins=10).rows()}
    # Independent: the bin of p is floor(10 p) for p on the 0.1 grid, 9 for 1.0.
    want = {}
    for prob in p:
        b = min(int(np.floor(round(prob * 10, 9))), 9)
        want[b / 10] = want.get(b / 10, 0) + 1
    assert {k: r["count"] for k, r in rows.items()} == want
    assert rows[0.3]["count"] == 2 and rows[0.6]["count"] == 1 and rows[0.7]["count"] == 1
    assert rows[0.3]["lower"] == 0.3 and rows[0.3]["upper"] == 0.4        # printed as 0.3, not 0.30000000000000004


@pytest.mark.parametrize("bins", [4, 5, 20])
def test_every_grid_value_lands_in_the_bin_it_opens(bins):
    grid = np.arange(bins + 1) / bins
    t = reliability_table(grid, np.ones(grid.size), bins=bins)
    assert t.count.tolist() == [1] * (bins - 1) + [2]       # the last bin holds its lower edge and 1.0


def test_the_family_baseline_is_the_familys_own_rate():
    r = score_predictions([0.9] * 10 + [0.1] * 10, [1] * 9 + [0] + [0] * 9 + [1], families=["a"] * 10 + ["b"] * 10)
    y_a = np.array([1] * 9 + [0], float)
    assert r.by_family["a"].baseline_brier == pytest.approx(np.mean((y_a.mean() - y_a) ** 2))   # 0.09, not 0.25
    assert r.overall.baseline_brier == pytest.approx(0.25)


def test_the_table_says_it_counts_runs():
    t = score_predictions([0.8] * 6, [1, 1, 1, 0, 1, 1]).overall.table
    assert t.counted == "runs" and t.rows()[0]["runs"] == 6


def test_predictions_are_matched_by_time_and_unknowns_follow_the_policy():
    preds = [dict(version="v", scenario="s", condition="", probability=0.5, made_at="2026-01-01T10:45:00Z"),
             dict(version="v", scenario="s", condition="", probability=0.9, made_at="2026-01-01T11:00:00+02:00"),
             dict(version="v", scenario="t", condition="", probability=0.2, made_at="2026-01-01T00:00:00Z")]
    runs = [("v", "s", "", True, "2026-01-01T10:30:00+00:00"),     # after 11:00+02:00 (09:00Z), before 10:45Z
            ("v", "s", "", False, "2026-01-01T09:00:00+00:00"),    # before any: not scored
            ("v", "t", "", None, "2026-01-02T00:00:00+00:00"),
            ("v", "u", "", True, "2026-01-02T00:00:00+00:00")]     # no prediction for u
    m = match_predictions(preds, runs)
    assert m.outcome.tolist() == [1.0, 0.0] and m.unknowns == 1 and m.before_any == 1
    # As strings 11:00+02:00 sorts after 10:30+00:00 (no prediction before); as times it is before.
    assert m.probability.tolist() == [0.9, 0.2]
    left = match_predictions(preds, runs, unknown="exclude")
    assert left.outcome.tolist() == [1.0] and left.unknowns == 1
    assert "1 unknown outcome left out" in left.describe()
