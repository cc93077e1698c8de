"""Factorial contrasts and plans, checked against hand-built per-environment differences."""

from collections import Counter, defaultdict

import numpy as np
import pytest
from scipy import stats

from fluke.design import factorial_contrasts, factorial_plan, paired_interval


def _study(rng, g=30, reps=2):
    env = np.repeat(np.arange(g), 4 * reps)
    mem = np.tile(np.repeat([False, False, True, True], reps), g)
    retry = np.tile(np.repeat([1, 3, 1, 3], reps), g)
    y = (rng.normal(0, 1, g)[env] + 0.3 * mem + 0.1 * (retry == 3) + 0.2 * mem * (retry == 3)
         + rng.normal(0, 0.5, env.size))
    return y, env, mem, retry


def test_contrasts_equal_hand_computed_paired_differences_and_scipy_t():
    rng = np.random.default_rng(31)
    y, env, mem, retry = _study(rng)
    fc = factorial_contrasts(y, env, {"memory": mem, "retry": retry})
    cell = defaultdict(list)
    for v, e, m, r in zip(y, env, mem, retry, strict=True):
        cell[(e, m, r)].append(v)
    mean = {k: sum(v) / len(v) for k, v in cell.items()}
    inter = np.array([(mean[(e, True, 3)] - mean[(e, False, 3)]) - (mean[(e, True, 1)] - mean[(e, False, 1)])
                      for e in range(30)])
    mem_at_1 = np.array([mean[(e, True, 1)] - mean[(e, False, 1)] for e in range(30)])
    for name, d in (("memory x retry", inter), ("memory at retry=1", mem_at_1)):
        c = fc[name]
        ci = stats.ttest_1samp(d, 0).confidence_interval(0.95)
        assert c.statistic == pytest.approx(d.mean(), abs=1e-12)
        assert (c.low, c.high) == pytest.approx((ci.low, ci.high), abs=1e-12)
        assert c.df == 29 and c.environments == 30
    # the main effect is the average of the two simple effects
    assert fc["memory"].statistic == pytest.approx(
        (fc["memory at retry=1"].statistic + fc["memory at retry=3"].statistic) / 2, abs=1e-12)
    assert fc["memory x retry"].low < 0.2 < fc["memory x retry"].high
    assert set(fc.cell_means) == {"memory=false, retry=1", "memory=false, retry=3",
                                  "memory=true, retry=1", "memory=true, retry=3"}


def test_environments_missing_a_policy_are_dropped_and_counted():
    rng = np.random.default_rng(32)
    y, env, mem, retry = _study(rng, g=10, reps=1)
    keep = ~((env == 3) & mem & (retry == 3))
    fc = factorial_contrasts(y[keep], env[keep], {"memory": mem[keep], "retry": retry[keep]})
    assert fc.environments == 9 and fc.dropped == 1


def test_bad_designs_are_refused_with_the_factor_named():
    with pytest.raises(ValueError, match="factor 'retry' has 3 levels"):
        factorial_contrasts([1.0, 2, 3], [1, 1, 1], {"memory": [0, 1, 0], "retry": [1, 2, 3]})
    with pytest.raises(ValueError, match="exactly two"):
        factorial_contrasts([1.0], [1], {"memory": [0]})


def test_paired_interval_needs_two_environments():
    assert np.isnan(paired_interval("x", [0.3]).low)


def test_plan_orders_are_random_permutations_recorded_and_reproducible():
    factors = {"memory": [False, True], "retry": [1, 3]}
    envs = [f"e{i}" for i in range(4000)]
    plan = factorial_plan(factors, envs, rng=np.random.default_rng(5))
    again = factorial_plan(factors, envs, rng=np.random.default_rng(5))
    assert plan.order == again.order
    assert all(sorted(o) == [0, 1, 2, 3] for o in plan.order.values())
    first = Counter(o[0] for o in plan.order.values())
    # each policy goes first a quarter of the time, within 4 Monte Carlo SEs
    mc = np.sqrt(0.25 * 0.75 / 4000)
    assert all(abs(first[p] / 4000 - 0.25) < 4 * mc for p in range(4))
    assert plan.policies[3] == {"memory": True, "retry": 3}
    sched = plan.schedule()
    assert len(sched) == 16000 and sched[0][0] == "e0" and sched[0][2] == plan.policies[plan.order["e0"][0]]
    assert plan.as_dict()["order"]["e1"] == list(plan.order["e1"])
