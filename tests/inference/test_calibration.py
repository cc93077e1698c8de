"""Calibration: Brier score, Murphy decomposition, reliability, baseline, and the z-test."""

from collections import defaultdict

import numpy as np
import pytest

from fluke.inference import (brier_decomposition, brier_score, calibration_test, reliability_table,
                             score_predictions)


def _murphy_by_hand(p, y, edges):
    """An independent, loop-by-loop decomposition over the same bins."""
    groups = defaultdict(list)
    for pi, yi in zip(p, y, strict=True):
        b = min(int(np.searchsorted(edges, pi, side="right")) - 1, len(edges) - 2)
        groups[b].append((pi, yi))
    n = len(p)
    base = sum(y) / n
    rel = sum(len(g) * (sum(a for a, _ in g) / len(g) - sum(b for _, b in g) / len(g)) ** 2
              for g in groups.values()) / n
    res = sum(len(g) * (sum(b for _, b in g) / len(g) - base) ** 2 for g in groups.values()) / n
    return rel, res, base * (1 - base)


def test_decomposition_identity_for_binned_forecasts():
    rng = np.random.default_rng(5)
    p = rng.choice([0.05, 0.15, 0.35, 0.55, 0.75, 0.95], size=500)   # one forecast value per bin
    y = (rng.random(500) < p).astype(int)
    d = brier_decomposition(p, y, bins=10)
    rel, res, unc = _murphy_by_hand(p, y, np.linspace(0, 1, 11))
    assert (d.reliability, d.resolution, d.uncertainty) == pytest.approx((rel, res, unc), abs=1e-14)
    assert d.reliability - d.resolution + d.uncertainty == pytest.approx(brier_score(p, y), abs=1e-14)
    assert d.within_bin == 0.0
    assert brier_score(p, y) == pytest.approx(sum((a - b) ** 2 for a, b in zip(p, y, strict=True)) / 500)


def test_decomposition_reports_what_binning_cannot_attribute():
    rng = np.random.default_rng(6)
    p = rng.random(300)
    y = (rng.random(300) < p).astype(int)
    d = brier_decomposition(p, y, bins=5)
    rel, res, unc = _murphy_by_hand(p, y, np.linspace(0, 1, 6))
    assert d.reliability == pytest.approx(rel) and d.resolution == pytest.approx(res)
    assert d.within_bin != 0 and d.brier == pytest.approx(rel - res + unc + d.within_bin)


def test_baseline_is_always_predicting_the_average():
    p = [0.9, 0.8, 0.3, 0.6, 0.2]
    y = [1, 1, 0, 0, 1]
    report = score_predictions(p, y)
    assert report.overall.baseline_brier == pytest.approx(0.6 * 0.4)
    assert report.overall.baseline_brier == pytest.approx(report.overall.decomposition.uncertainty)
    assert report.overall.skill == pytest.approx(1 - brier_score(p, y) / 0.24)


def test_reliability_table_counts():
    p = np.array([0.05, 0.12, 0.5, 0.51, 0.99, 1.0])
    y = np.array([0, 0, 1, 0, 1, 1])
    t = reliability_table(p, y, bins=4)
    assert t.count.tolist() == np.histogram(p, bins=np.linspace(0, 1, 5))[0].tolist()
    rows = t.rows()
    assert [(r["count"], r["passes"]) for r in rows] == [(2, 0), (2, 1), (2, 2)]


def test_right_predictions_score_their_expected_brier():
    rng = np.random.default_rng(42)
    reps, size = 2000, 200
    p = rng.uniform(0.05, 0.95, size=(reps, size))
    y = (rng.random(p.shape) < p).astype(float)
    brier = np.mean((p - y) ** 2, axis=1)
    expected = np.mean(p * (1 - p), axis=1)
    # Per batch, the z-test's expected Brier is mean p(1 − p) with the stated sd.
    test = calibration_test(p[0], y[0])
    assert test.expected_brier == pytest.approx(expected[0])
    # Across batches: mean Brier within Monte Carlo error of its expectation.
    diff = brier - expected
    assert abs(diff.mean()) < 4 * diff.std(ddof=1) / np.sqrt(reps)
    # And the test flags calibrated predictors at about its nominal 5%.
    flagged = np.mean([calibration_test(p[i], y[i]).pvalue < 0.05 for i in range(reps)])
    assert abs(flagged - 0.05) < 4 * np.sqrt(0.05 * 0.95 / reps)


def test_overconfident_predictor_is_flagged():
    rng = np.random.default_rng(9)
    theta = rng.uniform(0.3, 0.7, 400)
    y = (rng.random(400) < theta).astype(int)
    loud = np.where(theta > 0.5, 0.97, 0.03)                 # overconfident by construction
    report = score_predictions(loud, y)
    assert report.overall.verdict == "overconfident"
    assert report.overall.test.statistic > 0 and report.overall.test.pvalue < 1e-6
    rng2 = np.random.default_rng(10)
    wide = rng2.uniform(0.02, 0.98, 2000)
    y2 = (rng2.random(2000) < wide).astype(int)
    timid = 0.5 + 0.3 * (wide - 0.5)                          # underconfident by construction
    assert score_predictions(timid, y2).overall.verdict == "underconfident"
    assert score_predictions(wide, y2).overall.verdict == "calibrated within noise"


def test_family_errors_hidden_in_the_aggregate_are_found():
    rng = np.random.default_rng(12)
    size = 1500
    # Family A is really 0.95, family B really 0.65; both predicted 0.8.
    truth = np.r_[np.full(size, 0.95), np.full(size, 0.65)]
    y = (rng.random(2 * size) < truth).astype(int)
    fam = ["tool:crm"] * size + ["tool:search"] * size
    report = score_predictions(np.full(2 * size, 0.8), y, families=fam)
    assert report.by_family["tool:crm"].verdict == "underconfident"
    assert report.by_family["tool:search"].verdict == "overconfident"
    assert report.overall.verdict == "calibrated within noise"


def test_undefined_when_every_forecast_is_half():
    t = calibration_test([0.5, 0.5], [1, 0])
    assert np.isnan(t.statistic) and np.isnan(t.pvalue)
    assert score_predictions([0.5, 0.5], [1, 0]).overall.verdict == "undefined"


def test_bad_input_named():
    with pytest.raises(ValueError, match="probability=1.2"):
        brier_score([1.2], [1])
    with pytest.raises(ValueError, match="outcome=2"):
        brier_score([0.2], [2])
