"""Issue 35's reproducers b03, b03b and b10, replayed through what `compare` and `plan` print now.

The reproducers in ../shared/repro/stats/limits/ b03 and b03b measured ``pass_rate_limit``, the
limit from V under the null that ``compare`` no longer prints; b10 compared ``plan``'s power
with simulation. This prints, for the same designs, what the verbs print today and the truth
by simulation (fixed seeds; errors are 2 Monte Carlo standard errors):

* **b03**: the mean regression limit ``compare`` prints over unchanged pairs
  (``design_limits``), the share of pairs where it refuses one (*too small to tell*), and the
  power of the stratified test (auto: CMH / exact / McNemar) against a regression of that size
  in every scenario; the label is 0.80;
* **b03b**: 30 scenarios × 6 runs at 0.98: how often ``compare`` tells an unchanged pair *no
  significant difference* (promising the 5-point ceiling), beside the power at 5 points;
* **b10**: ``plan``'s predicted limit and power against the mean limit ``compare`` prints on
  unchanged pairs of the planned design and the simulated power against the planned regression.

``python bench/reproducers.py`` (about 2 CPU minutes; ``--reps`` for fewer draws).

>>> row = b03_row("30 at 0.5, 20 per arm", [0.5] * 30, 20, 20, limits=8, reps=200, seed=1)
>>> 6 < row["limit"] < 11 and row["refused"] == 0.0
True
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from fluke.comparison import NO_DIFFERENCE, compare_pass_rates, design_limits, stratified_pvalues
from fluke.design import paired_sample_size

#: b03's designs: (name, rates or a rule for them, runs of A, runs of B); the rates drawn from seed 3
_DRAWN = np.random.default_rng(3)
B03 = [
    ("30 at 0.35–0.85, 20 per arm", _DRAWN.uniform(0.35, 0.85, 30), 20, 20),
    ("30 at 0.5, 20 per arm", np.full(30, 0.5), 20, 20),
    ("30 at 0.95, 20 per arm", np.full(30, 0.95), 20, 20),
    ("30 at 0.98, 10 per arm", np.full(30, 0.98), 10, 10),
    ("50: 25 at 0.99, 25 at 0.6, 10 per arm", np.r_[np.full(25, 0.99), np.full(25, 0.6)], 10, 10),
    ("5 at 0.6, 4 per arm", np.full(5, 0.6), 4, 4),
    ("10 at 0.7, 2 per arm", np.full(10, 0.7), 2, 2),
    ("30 at 0.7, 5 against 40", np.full(30, 0.7), 5, 40),
    ("20 at 0.5–0.9, 2 against 20", _DRAWN.uniform(0.5, 0.9, 20), 2, 20),
    ("paired: 50 at 0.6", np.full(50, 0.6), 1, 1),
    ("paired: 100 at 0.2–0.95", _DRAWN.uniform(0.2, 0.95, 100), 1, 1),
    ("paired: 20 at 0.7", np.full(20, 0.7), 1, 1),
    ("200 at 0.8, 3 per arm", np.full(200, 0.8), 3, 3),
]

#: b10's plans: (difference in points, rate, scenarios or None, runs or None)
B10 = [(5, 0.8, 50, None), (10, 0.7, 40, None), (3, 0.95, 50, None), (2, 0.98, 100, None), (5, 0.97, 30, None),
       (10, 0.9, None, 1), (20, 0.6, None, 1), (8, "0.55–0.92", 40, None)]


def _power(rng, rates, na, nb, shift, reps):
    """Share of stratified tests at p < 0.05 with B's rates ``shift`` (a share) lower, clipped at 0."""
    g = rates.size
    NA, NB = np.full((reps, g), na), np.full((reps, g), nb)
    fa = rng.binomial(NA, 1 - rates)
    fb = rng.binomial(NB, 1 - np.clip(rates - shift, 0, 1))
    return float(np.mean(stratified_pvalues(fa, NA, fb, NB) < 0.05))


def _printed(rng, rates, na, nb, draws):
    g = rates.size
    return np.array([design_limits(rng.binomial(na, rates), np.full(g, na), rng.binomial(nb, rates),
                                   np.full(g, nb))[0] for _ in range(draws)])


def b03_row(name, rates, na, nb, *, limits=60, reps=2000, seed=0) -> dict:
    """One b03 design: mean printed limit, share refused, power there (label 0.80)."""
    rng = np.random.default_rng(seed)
    rates = np.asarray(rates, dtype=float)
    lim = _printed(rng, rates, na, nb, limits)
    finite = np.isfinite(lim)
    row = {"design": name, "refused": float(1 - finite.mean()), "limit": math.inf, "power": math.nan,
           "error": 2 * math.sqrt(0.16 / reps)}
    if finite.any():
        row["limit"] = float(lim[finite].mean())
        row["power"] = _power(rng, rates, na, nb, row["limit"] / 100, reps)
    return row


def b03b(*, pairs=200, reps=4000, seed=13) -> dict:
    """30 × 6 at 0.98: verdicts compare gives unchanged pairs, and the power at the 5-point ceiling."""
    rng = np.random.default_rng(seed)
    g, n = 30, 6
    verdicts = [compare_pass_rates(rng.binomial(n, 0.98, g), [n] * g, rng.binomial(n, 0.98, g), [n] * g,
                                   draws=100) for _ in range(pairs)]
    nsd = float(np.mean([r.verdict == NO_DIFFERENCE for r in verdicts]))
    limits = np.array([r.detection_limit for r in verdicts])
    finite = limits[np.isfinite(limits)]
    return {"no_difference": nsd, "median_limit": float(np.median(finite)) if finite.size else math.inf,
            "refused": float(1 - np.isfinite(limits).mean()),
            "power_at_5": _power(rng, np.full(g, 0.98), n, n, 0.05, reps), "error": 2 * math.sqrt(0.25 / reps)}


def b10_row(diff, rate, scenarios, runs, *, draws=64, reps=4000, seed=8) -> dict:
    """plan's predicted limit and power, against compare's printed limit and the simulated power."""
    rng = np.random.default_rng(seed)
    given = np.linspace(0.55, 0.92, 40) if isinstance(rate, str) else rate
    plan = paired_sample_size(diff, given, scenarios=scenarios, runs=runs)
    rates = np.broadcast_to(np.asarray(given, dtype=float), (plan.scenarios,)).copy()
    n = plan.runs_per_scenario
    lim = _printed(rng, rates, n, n, draws)
    return {"design": f"detect {diff} at {rate}: {n} runs × {plan.scenarios}", "plan_limit": plan.detection_limit,
            "printed": float(np.mean(lim[np.isfinite(lim)])),
            "printed_error": 2 * float(np.std(lim)) / math.sqrt(draws),
            "plan_power": plan.power_at_plan, "power": _power(rng, rates, n, n, diff / 100, reps),
            "error": 2 * math.sqrt(0.16 / reps)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2000, help="simulated comparisons per power")
    args = parser.parse_args()
    start = time.process_time()
    print("b03: power at the limit compare prints (label 0.80)")
    print("| design | printed limit (mean) | refused | power at it |")
    print("|---|---|---|---|")
    for i, (name, rates, na, nb) in enumerate(B03):
        r = b03_row(name, rates, na, nb, reps=args.reps, seed=i)
        limit = "—" if math.isinf(r["limit"]) else f"{r['limit']:.2f}"
        power = "refused" if math.isnan(r["power"]) else f"{r['power']:.3f} ± {r['error']:.3f}"
        print(f"| {name} | {limit} | {r['refused']:.2f} | {power} |", flush=True)
    r = b03b(reps=2 * args.reps)
    print(f"\nb03b: 30 × 6 at 0.98: compare says 'no significant difference' on {r['no_difference']:.3f} of unchanged "
          f"pairs (median limit {r['median_limit']:.2f}, refused on {r['refused']:.2f}); power at 5 points "
          f"{r['power_at_5']:.3f} ± {r['error']:.3f}")
    print("\nb10: plan against what compare prints and what the test achieves")
    print("| plan | plan's limit | compare's limit (mean) | plan's power | simulated power |")
    print("|---|---|---|---|---|")
    for diff, rate, g, runs in B10:
        r = b10_row(diff, rate, g, runs, reps=2 * args.reps)
        print(f"| {r['design']} | {r['plan_limit']:.2f} | {r['printed']:.2f} ± {r['printed_error']:.2f} | "
              f"{r['plan_power']:.3f} | {r['power']:.3f} ± {r['error']:.3f} |", flush=True)
    print(f"\n{time.process_time() - start:.0f} s CPU")


if __name__ == "__main__":
    main()
