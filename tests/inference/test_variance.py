"""Variance components by the method of moments, and what more units/scenarios/generations buy."""

import numpy as np
import pytest

from fluke.inference import VarianceComponents, grand_mean_sd, variance_components


def test_seed_grand_mean_sd_and_the_terms():
    sd = grand_mean_sd(0.06, 0.04, 0.04, units=40, scenarios=3, generations=4)
    assert round(sd, 5) == 0.01033
    assert sd**2 == pytest.approx(0.0036 / 40 + 0.0016 / 120 + 0.0016 / 480, rel=1e-14)
    with pytest.raises(ValueError, match="units=0 must be positive"):
        grand_mean_sd(0.06, 0.04, 0.04, units=0, scenarios=3, generations=4)


def test_what_more_buys_on_the_seed_components():
    vc = VarianceComponents(0.0036, 0.0016, 0.0016, (0.0036, 0.0016, 0.0016), 40, 3.0, 4.0, 480)
    rows = {p.label: p for p in vc.what_more_buys(2)}
    assert rows["as recorded"].standard_error == pytest.approx(0.010328, abs=1e-6)
    assert rows["2x units"].ratio == pytest.approx(1 / np.sqrt(2), rel=1e-12)
    assert rows["2x generations per scenario"].standard_error == pytest.approx(
        np.sqrt(0.0036 / 40 + 0.0016 / 120 + 0.0016 / 960), rel=1e-12)
    assert rows["2x scenarios per unit"].standard_error == pytest.approx(
        np.sqrt(0.0036 / 40 + 0.0016 / 240 + 0.0016 / 960), rel=1e-12)
    # generations alone cannot push below the unit and scenario terms
    assert rows["unlimited generations"].standard_error == pytest.approx(
        np.sqrt(0.0036 / 40 + 0.0016 / 120), rel=1e-12)
    assert rows["2x units"].runs == rows["2x generations per scenario"].runs == 960


def test_balanced_estimates_equal_the_textbook_mean_squares():
    rng = np.random.default_rng(21)
    n, k, r = 30, 4, 5
    y = (rng.normal(0, 1, (n, 1, 1)) + rng.normal(0, 0.5, (n, k, 1))
         + rng.normal(0, 0.3, (n, k, r)))
    cell = y.mean(axis=2)
    user = y.mean(axis=(1, 2))
    ms_e = ((y - cell[..., None]) ** 2).sum() / (n * k * (r - 1))
    ms_v = r * ((cell - user[:, None]) ** 2).sum() / (n * (k - 1))
    ms_u = k * r * ((user - y.mean()) ** 2).sum() / (n - 1)
    vc = variance_components(y.ravel(), np.arange(n).repeat(k * r),
                             np.tile(np.arange(k).repeat(r), n))
    assert vc.raw[2] == pytest.approx(ms_e, rel=1e-12)
    assert vc.raw[1] == pytest.approx((ms_v - ms_e) / r, rel=1e-12)
    assert vc.raw[0] == pytest.approx((ms_u - ms_v) / (k * r), rel=1e-12)
    assert (vc.units, vc.scenarios, vc.generations, vc.rows) == (30, 4.0, 5.0, 600)


def test_unbalanced_estimates_are_unbiased_by_simulation():
    rng = np.random.default_rng(22)
    # one fixed unbalanced layout: 25 units, 1-4 scenarios each, 1-6 generations per scenario
    scen_per_unit = rng.integers(1, 5, 25)
    unit_of_cell = np.repeat(np.arange(25), scen_per_unit)
    scen_label = np.concatenate([np.arange(s) for s in scen_per_unit])
    gens = rng.integers(1, 7, unit_of_cell.size)
    row_cell = np.repeat(np.arange(unit_of_cell.size), gens)
    units, scens = unit_of_cell[row_cell], scen_label[row_cell]
    truth = np.array([0.5, 0.2, 0.1])
    reps = 1500
    est = np.empty((reps, 3))
    for i in range(reps):
        y = (rng.normal(0, np.sqrt(truth[0]), 25)[units]
             + rng.normal(0, np.sqrt(truth[1]), unit_of_cell.size)[row_cell]
             + rng.normal(0, np.sqrt(truth[2]), row_cell.size))
        est[i] = variance_components(y, units, scens).raw
    mc = est.std(axis=0, ddof=1) / np.sqrt(reps)
    assert np.all(np.abs(est.mean(axis=0) - truth) < 4 * mc), (est.mean(axis=0), mc)


def test_unit_equal_to_scenario_folds_the_scenario_component():
    rng = np.random.default_rng(23)
    y = rng.normal(0, 1, 40).repeat(4) + rng.normal(0, 0.5, 160)
    labels = np.arange(40).repeat(4)
    vc = variance_components(y, labels, labels)
    assert vc.scenario == 0.0 and any("one scenario per unit" in r for r in vc.reasons)
    # with scenarios folded in, the projected SE equals the cluster-mean SE's model value
    assert vc.standard_error() == pytest.approx(np.sqrt(vc.unit / 40 + vc.generation / 160))


def test_no_more_scenarios_row_when_units_are_scenarios():
    rng = np.random.default_rng(24)
    labels = np.arange(30).repeat(4)
    vc = variance_components(rng.normal(size=120), labels, labels)
    assert [p.label for p in vc.what_more_buys(2)] == [
        "as recorded", "2x units", "2x generations per scenario", "unlimited generations"]
