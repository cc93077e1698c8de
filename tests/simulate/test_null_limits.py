"""The null calibration's limit is the one ``compare`` prints (issue 35, reproducer b03b).

``calibrate_null`` used to take its limit from V under the null (``pass_rate_limit``); near a
pass rate of 1 that limit sits under the 5-point ceiling (4–5 points at 30 tasks × 6 runs at
0.98) while the test finds a 5-point regression only 64% of the time, so the simulation called
unchanged pairs "no significant difference" where ``compare`` says "too small to tell".
Oracle: ``compare_pass_rates`` (what the CLI prints) on the very same simulated pairs.
"""

from __future__ import annotations

import numpy as np
import pytest

from fluke.comparison import TOO_SMALL, compare_pass_rates, pass_rate_limit, stratified_information
from fluke.simulate import calibrate_null, null_pairs

#: stage failure rates whose episodes pass 1 − 0.993 · 0.993 · 0.994 ≈ 98% of the time
NEAR_ONE = {"review": 0.007, "sample": 0.007, "measure": 0.006}


def _counts(pairs, tasks, runs, seed):
    data = null_pairs(pairs, tasks=tasks, runs_per_task=runs, rates=NEAR_ONE, rng=np.random.default_rng(seed))
    fails = data.died.reshape(pairs, 2, tasks, runs).sum(axis=3)
    return fails[:, 0], fails[:, 1]


def test_the_simulated_limits_and_verdicts_are_the_printed_ones_near_a_pass_rate_of_one():
    pairs, tasks, runs, seed = 40, 30, 6, 3
    run = calibrate_null(pairs, tasks=tasks, runs_per_task=runs, rates=NEAR_ONE, step_tests=False,
                         rng=np.random.default_rng(seed))
    fa, fb = _counts(pairs, tasks, runs, seed)          # the same draws: null_pairs takes the generator first
    n = np.full(tasks, runs)
    printed = [compare_pass_rates(n - fa[i], n, n - fb[i], n, draws=100) for i in range(pairs)]
    limits = np.array([r.detection_limit for r in printed])
    assert run.limit_min == pytest.approx(limits.min(), rel=1e-9)
    assert run.limit_max == pytest.approx(limits.max(), rel=1e-9)
    verdicts = {v: sum(r.verdict == v for r in printed) for v in run.verdicts}
    assert run.verdicts == verdicts
    assert run.verdicts[TOO_SMALL] == pairs            # 30 × 6 at 0.98 cannot vouch for 5 points
    # the old call, the limit from V under the null, would have promised the ceiling on these pairs
    old = pass_rate_limit(stratified_information(fa, np.broadcast_to(n, fa.shape), fb,
                                                 np.broadcast_to(n, fb.shape)), n, n)
    assert np.median(old[np.isfinite(old)]) < 5.0 < run.limit_min


def test_at_the_staged_default_the_limit_is_the_printed_one_too():
    # 50 tasks × 40 runs at 72.9%: far from 0 and 1, the printed limit is about 4 points
    pairs, tasks, runs, seed = 12, 50, 40, 9
    run = calibrate_null(pairs, tasks=tasks, runs_per_task=runs, step_tests=False, rng=np.random.default_rng(seed))
    data = null_pairs(pairs, tasks=tasks, runs_per_task=runs, rng=np.random.default_rng(seed))
    fails = data.died.reshape(pairs, 2, tasks, runs).sum(axis=3)
    n = np.full(tasks, runs)
    limits = [compare_pass_rates(n - fails[i, 0], n, n - fails[i, 1], n, draws=100).detection_limit
              for i in range(pairs)]
    assert (run.limit_min, run.limit_max) == pytest.approx((min(limits), max(limits)), rel=1e-9)
    assert 3.8 < run.limit_min <= run.limit_max < 4.3
