"""The Cox fit from counted runs with many tied deaths: the closed-form Efron sums against a
death-by-death loop on the same cells, and against lifelines on runs listed one by one."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import optimize

from fluke.comparison import stratified_cox


def _loop_efron(beta, cells):
    """Efron's partial log-likelihood and information, one death at a time."""
    e = math.exp(beta)
    loglik, info = 0.0, 0.0
    for ra, rb, da, db in cells:
        dead = da + db
        loglik += beta * db
        for j in range(int(dead)):
            f = j / dead
            s0 = ra + rb * e - f * (da + db * e)
            s1 = rb * e - f * db * e
            loglik -= math.log(s0)
            info += s1 / s0 - (s1 / s0) ** 2
    return loglik, info


def _counted(seed, strata=4, steps=6):
    """Counted runs: per (stratum, arm, step) a death count, the rest censored at the end."""
    rng = np.random.default_rng(seed)
    time, died, group, stratum, weight = [], [], [], [], []
    for s in range(strata):
        for arm in (False, True):
            left = int(rng.integers(2_000, 6_000))
            hazard = rng.uniform(0.05, 0.2) * (1.3 if arm else 1.0)
            for t in range(1, steps + 1):
                dead = int(rng.binomial(left, hazard))
                time.append(t), died.append(True), group.append(arm), stratum.append(s), weight.append(dead)
                left -= dead
            time.append(steps), died.append(False), group.append(arm), stratum.append(s), weight.append(left)
    return (np.array(time, float), np.array(died), np.array(group), np.array(stratum), np.array(weight, float))


def _cells(time, died, group, stratum, weight):
    out = []
    for s in np.unique(stratum):
        for t in np.unique(time[died & (stratum == s)]):
            at = (stratum == s) & (time >= t)
            dying = at & (time == t) & died
            out.append(tuple(float(weight[m].sum()) for m in (at & ~group, at & group, dying & ~group,
                                                              dying & group)))
    return out


@pytest.mark.parametrize("seed", range(3))
def test_counted_cox_equals_the_death_by_death_efron_sums(seed):
    time, died, group, stratum, weight = _counted(seed)
    cells = _cells(time, died, group, stratum, weight)
    best = optimize.minimize_scalar(lambda b: -_loop_efron(b, cells)[0], bounds=(-3, 3), method="bounded",
                                    options={"xatol": 1e-12})
    ours = stratified_cox(time, died, group, strata=stratum, weights=weight)
    assert ours.log_hr == pytest.approx(best.x, abs=1e-6)
    assert ours.se == pytest.approx(1 / math.sqrt(_loop_efron(ours.log_hr, cells)[1]), rel=1e-9)


def test_counted_cox_equals_lifelines_on_the_runs_one_by_one():
    lifelines = pytest.importorskip("lifelines")
    time, died, group, stratum, weight = _counted(11, strata=2, steps=4)
    weight = np.maximum(1, weight // 20)                  # keep the listed runs few enough for lifelines
    reps = weight.astype(int)
    frame = pd.DataFrame({"T": np.repeat(time, reps), "E": np.repeat(died, reps).astype(int),
                          "G": np.repeat(group, reps).astype(int), "S": np.repeat(stratum, reps)})
    fit = lifelines.CoxPHFitter().fit(frame, "T", "E", strata=["S"])
    ours = stratified_cox(time, died, group, strata=stratum, weights=weight)
    assert ours.log_hr == pytest.approx(fit.params_["G"], abs=1e-7)
    assert ours.se == pytest.approx(fit.standard_errors_["G"], rel=1e-6)


def test_fisher_at_ten_thousand_trials_equals_scipy_and_equal_tables_agree():
    from scipy.stats import fisher_exact

    from fluke.comparison import fisher_exact_many

    rng = np.random.default_rng(5)
    n = 10_000
    fa = rng.binomial(n, rng.uniform(0.3, 0.7, 12))
    fb = rng.binomial(n, np.clip(fa / n + rng.normal(0, 0.01, 12), 0, 1))
    fa, fb = np.r_[fa, fa[:3], 0, n], np.r_[fb, fb[:3], 3, n - 1]      # repeated tables, edges
    got = fisher_exact_many(fa, n - fa, fb, n - fb)
    want = [fisher_exact([[x, n - x], [y, n - y]]).pvalue for x, y in zip(fa, fb, strict=True)]
    assert got == pytest.approx(want, rel=1e-6, abs=1e-300)
    assert np.array_equal(got[12:15], got[:3])
