#!/usr/bin/env python3
"""Clustered interval and variance components on 1,000,000 rows in 10,000 clusters.

Compares fluke's clustered interval (CR1, t on G − 1 df) with statsmodels OLS on a constant
with ``cov_type="cluster"`` on the same rows: prints both times, the ratio, and the largest
difference of the standard errors. Also times the variance components (unit / scenario /
generation) on the same rows, and the same three statistics (with a 2,000-resample cluster
bootstrap) from per-cell sums: ``--cell-units`` × ``--cell-scenarios`` cells holding 10 million
runs of pass/fail counts, as a ledger keeps them (three conditions each), beside the row form.

    PYTHONPATH=src python bench/interval.py [--rows 1000000] [--clusters 10000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def best_of(fn, repeat):
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--clusters", type=int, default=10_000)
    ap.add_argument("--scenarios", type=int, default=10, help="scenarios per cluster")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--cell-units", type=int, default=1000)
    ap.add_argument("--cell-scenarios", type=int, default=10)
    ap.add_argument("--cell-runs", type=int, default=10_000_000)
    args = ap.parse_args()

    from fluke.inference import clustered_interval, variance_components

    rng = np.random.default_rng(args.seed)
    # unequal clusters: sizes drawn around rows/clusters, summing exactly to rows
    sizes = rng.multinomial(args.rows - args.clusters, np.full(args.clusters, 1 / args.clusters)) + 1
    units = np.repeat(np.arange(args.clusters), sizes)
    scenarios = rng.integers(0, args.scenarios, args.rows)
    y = (rng.normal(0, 0.06, args.clusters)[units] + rng.normal(0, 0.04, args.rows)
         + 0.02 + rng.normal(0, 0.04, args.clusters * args.scenarios)[units * args.scenarios + scenarios])

    t_ours, ours = best_of(lambda: clustered_interval(y, units), args.repeat)
    t_vc, vc = best_of(lambda: variance_components(y, units, scenarios), args.repeat)
    print(f"rows {args.rows:,}, clusters {args.clusters:,} (sizes {sizes.min()}–{sizes.max()})")
    print(f"fluke clustered_interval   {t_ours * 1e3:8.2f} ms  SE {ours.standard_error:.12f}  ({ours.method})")
    print(f"fluke variance_components  {t_vc * 1e3:8.2f} ms  σ²: unit {vc.unit:.6f}, scenario "
          f"{vc.scenario:.6f}, generation {vc.generation:.6f}")
    cells_versus_rows(args, y, units, scenarios)
    try:
        import statsmodels.api as sm
    except ImportError:
        print("statsmodels is not installed: no peer to compare with (pip install statsmodels)")
        return
    x = np.ones((args.rows, 1))

    def peer():
        return sm.OLS(y, x).fit(cov_type="cluster", cov_kwds={"groups": units}, use_t=True)

    t_sm, fit = best_of(peer, args.repeat)
    diff = abs(fit.bse[0] - ours.standard_error)
    low, high = fit.conf_int()[0]
    print(f"statsmodels OLS cluster    {t_sm * 1e3:8.2f} ms  SE {fit.bse[0]:.12f}")
    print(f"ratio (statsmodels / fluke interval): {t_sm / t_ours:.1f}x; "
          f"interval + variance components: {t_sm / (t_ours + t_vc):.1f}x")
    print(f"|SE difference| = {diff:.2e}; |interval difference| = "
          f"{max(abs(low - ours.low), abs(high - ours.high)):.2e} (goal: 1e-9)")


def cells_versus_rows(args, y, units, scenarios) -> None:
    """The three statistics from rows (building cells inside) and from per-cell counts."""
    from fluke.inference import (Cells, cluster_bootstrap_cells, cluster_bootstrap_interval, clustered_interval,
                                 clustered_interval_cells, variance_components, variance_components_cells)

    def rows():
        return (clustered_interval(y, units), variance_components(y, units, scenarios),
                cluster_bootstrap_interval(y, units, rng=np.random.default_rng(1), resamples=2000))

    rng = np.random.default_rng(args.seed)
    g, k = args.cell_units, args.cell_scenarios
    entries = g * k * 3                                  # three conditions per unit × scenario
    trials = rng.multinomial(args.cell_runs, np.full(entries, 1 / entries))
    passes = rng.binomial(trials, rng.beta(2, 2, g).repeat(k * 3))
    unknowns = rng.binomial(trials - passes, 0.01)
    u = np.array([f"user-{i:05d}" for i in range(g)]).repeat(k * 3)
    s = np.tile(np.array([f"task-{j:03d}" for j in range(k)]).repeat(3), g)

    def cells():
        c = Cells.from_passes(u, s, trials, passes, unknowns, policy="exclude")
        return (clustered_interval_cells(c), variance_components_cells(c),
                cluster_bootstrap_cells(c, rng=np.random.default_rng(1), resamples=2000))

    t_rows, _ = best_of(rows, args.repeat)
    t_cells, (ci, vc, boot) = best_of(cells, args.repeat)
    print(f"rows:  interval + components + bootstrap on {y.size:,} rows        {t_rows * 1e3:8.2f} ms")
    print(f"cells: the same from {entries:,} count entries ({g * k:,} cells, {args.cell_runs:,} runs)"
          f"  {t_cells * 1e3:8.2f} ms  (mean {ci.statistic:.4f}, SE {ci.standard_error:.5f}, "
          f"bootstrap SE {boot.standard_error:.5f}, σ²_unit {vc.unit:.5f})")


if __name__ == "__main__":
    main()
