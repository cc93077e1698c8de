"""Decisions under cost and risk, checked by simulation at more repetitions than the tests run.

Prints, each with its Monte Carlo error (2 standard errors):

* the coverage of the 95% cost-per-success interval (delta method and bootstrap-t) over 10 to
  400 scenarios with right-skewed spend (the design of ``tests/decisions/test_cost.py``);
* the share of suites where B, truly ``margin`` points worse, is called *not worse* (bound: α);
* the share of suites where a planted harm (one condition 15 points worse, the others 15 better)
  is flagged, and the share of unchanged pairs where any group is flagged (bound: α).

Run ``python bench/decisions.py`` (a few minutes on one core) or ``--quick``.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.decisions.test_cost import TRUE_RATIO, _suite  # noqa: E402  (the tests' design, one place)
from tests.decisions.test_margin import _interval  # noqa: E402


def _share(hits: int, reps: int) -> str:
    p = hits / reps
    return f"{p:.3f} ± {2 * math.sqrt(max(p * (1 - p), 1e-12) / reps):.3f}"


def coverage(reps: int) -> None:
    from fluke.decisions._cost import cost_per_success_sums

    for method in ("delta", "bootstrap"):
        for g in (10, 20, 50, 200, 400):
            rng = np.random.default_rng(g)
            hits = sum(lo <= TRUE_RATIO <= hi for lo, hi in (
                cost_per_success_sums(_suite(rng, g), method=method, resamples=500, rng=rng).interval
                for _ in range(reps)))
            print(f"cost per success, {method:9s}, {g:3d} scenarios: coverage {_share(hits, reps)} ({reps} suites)")


def margin(reps: int) -> None:
    from fluke.decisions import not_worse

    for m, g, n in ((2.0, 60, 10), (5.0, 40, 6), (5.0, 15, 4)):
        rng = np.random.default_rng(int(m * 10) + g)
        trials = np.full(g, n)
        called = 0
        for _ in range(reps):
            p = rng.beta(6, 3, g)
            a, b = rng.binomial(trials, p), rng.binomial(trials, np.clip(p - m / 100, 0, 1))
            called += bool(not_worse(_interval(a, trials, b, trials), m).holds)
        print(f"not worse at a true difference of -{m:g} points ({g} scenarios × {n}): {_share(called, reps)}")


def subgroups(reps: int) -> None:
    from fluke.decisions import subgroup_contrasts
    from fluke.simulate import subgroup_counts

    for scenarios, lift, harm in ((60, 15, 15), (30, 15, 15), (30, 0, 0)):
        flagged = 0
        for seed in range(reps):
            c = subgroup_counts(scenarios=scenarios, trials=4, lift=lift, harm=harm, seed=seed)
            n = np.full(c.groups.size, c.trials)
            flagged += bool(subgroup_contrasts(c.groups, c.passes_a, n, c.passes_b, n).harmed)
        print(f"subgroups, {scenarios} scenarios × 4, lift {lift}, harm {harm}: a group flagged in "
              f"{_share(flagged, reps)}")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    args = parser.parse_args(argv)
    reps = 300 if args.quick else 2000
    coverage(reps)
    margin(reps)
    subgroups(reps)


if __name__ == "__main__":
    main()
