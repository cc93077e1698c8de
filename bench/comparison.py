"""Benchmark: null calibration and the stratified log-rank against statsmodels' survdiff.

Prints two ratios:
  1. the whole 200-pair calibration (simulation included; 2,000 runs per arm over 50 strata)
     by fluke against the same calibration with ``statsmodels`` ``survdiff`` called per pair
     (both: simulate, log-rank, false alarms, histogram and uniformity tests; fluke's per-step
     tests are left out since the peer has none; the two draw different random episodes);
  2. the stratified log-rank alone, batched over the 200 pairs, against 200 ``survdiff`` calls
     on the same data.
Goals: (1) at least 10×, (2) at least 50×. Also checks that both give the same p-values.

    python bench/comparison.py [--pairs 200] [--repeat 3]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from statsmodels.duration.survfunc import survdiff

from fluke.comparison import logrank_batch, null_calibration
from fluke.simulate import BASELINE_RATES, STAGES, calibrate_null, null_pairs


def _best(func, repeat):
    best, out = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        out = func()
        best = min(best, time.perf_counter() - start)
    return best, out


def peer_calibration(pairs, seed):
    """The same calibration, the way one would write it with statsmodels: a loop over pairs."""
    rng = np.random.default_rng(seed)
    rates = np.array([BASELINE_RATES[s] for s in STAGES])
    strata = np.tile(np.repeat(np.arange(50), 40), 2)
    group = np.arange(4000) >= 2000
    pvalues = []
    for _ in range(pairs):
        fails = rng.random((4000, len(STAGES))) < rates
        died = fails.any(axis=1)
        time_ = np.where(died, fails.argmax(axis=1) + 1, len(STAGES) + 1)
        pvalues.append(survdiff(time_, died.astype(int), group.astype(int), strata=strata)[1])
    return null_calibration(np.array(pvalues))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    ours_t, ours = _best(
        lambda: calibrate_null(args.pairs, step_tests=False, rng=np.random.default_rng(1)), args.repeat
    )
    peer_t, peer = _best(lambda: peer_calibration(args.pairs, 1), 1)
    print(f"calibration, {args.pairs} pairs × 2 arms × 2,000 runs, 50 strata, simulation included")
    print(f"  fluke  {ours_t:8.3f} s   false alarms {ours.calibration.false_alarms}/{args.pairs}")
    print(f"  peer   {peer_t:8.3f} s   false alarms {peer.false_alarms}/{args.pairs}   (statsmodels survdiff per pair)")
    print(f"  ratio  {peer_t / ours_t:8.1f}×   (goal ≥ 10×)")

    data = null_pairs(args.pairs, rng=np.random.default_rng(2))
    lr_t, (_, p_ours, _) = _best(lambda: logrank_batch(data.time, data.died, data.group, data.strata), args.repeat)

    def peer_logrank():
        return np.array([survdiff(data.time[i], data.died[i].astype(int), data.group[i].astype(int),
                                  strata=data.strata[i])[1] for i in range(args.pairs)])

    sd_t, p_peer = _best(peer_logrank, 1)
    print(f"stratified log-rank alone, {args.pairs} pairs on the same data")
    print(f"  fluke  {lr_t:8.3f} s   (one batched call)")
    print(f"  peer   {sd_t:8.3f} s   ({args.pairs} survdiff calls)")
    print(f"  ratio  {sd_t / lr_t:8.1f}×   (goal ≥ 50×); largest p-value difference "
          f"{np.max(np.abs(p_ours - p_peer)):.1e}")


if __name__ == "__main__":
    main()
