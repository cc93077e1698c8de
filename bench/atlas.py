"""The atlas: every printed limit and interval of `compare`, checked by simulation over a grid of designs.

For each design (scenarios G, runs per arm n_A/n_B, a base pass rate, paired or not) the atlas
draws unchanged pairs, takes the mean printed regression limit L (`design_limits`), then plants a
regression of L in every scenario and reports:

* **power at the printed limit**: the share of stratified tests (auto: CMH / exact / McNemar) at
  p < 0.05 (the label is 0.80);
* **coverage of the verdict's interval** (`verdict_interval`, 95%) of the runs' mean true
  difference, under that regression (the label is 0.95);
* **refusals**: the share of unchanged pairs whose limit is infinite (the verdict says *too small
  to tell* instead of printing a limit).

Each figure comes with its Monte Carlo error (2 standard errors). Run
``python bench/atlas.py`` for the full grid (about 20 minutes on one core) or
``python bench/atlas.py --small`` for the grid the test suite runs; ``--markdown`` prints the
table docs/atlas.md keeps.

>>> row = atlas_cell(Design(10, 5, 5, 0.7), reps=60, limits=20, seed=1)
>>> 0 < row.limit < 100 and 0 <= row.power <= 1 and row.refused == 0
True
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass

import numpy as np

from fluke.comparison import design_limits, stratified_pvalues, stratified_test, verdict_interval


@dataclass(frozen=True)
class Design:
    scenarios: int
    runs_a: int
    runs_b: int
    rate: float

    @property
    def name(self) -> str:
        kind = "paired" if self.runs_a == self.runs_b == 1 else (
            "balanced" if self.runs_a == self.runs_b else "unbalanced")
        return f"{self.scenarios} × {self.runs_a}/{self.runs_b} at {self.rate:g} ({kind})"


@dataclass(frozen=True)
class Cell:
    design: Design
    limit: float
    power: float
    power_mc: float
    coverage: float
    coverage_mc: float
    refused: float


def atlas_cell(design: Design, *, reps: int = 1000, limits: int = 100, coverage_reps: int = 200,
               seed: int = 0) -> Cell:
    """Power at the printed limit, coverage of the verdict interval and refusals for one design."""
    rng = np.random.default_rng(seed)
    g, na, nb = design.scenarios, design.runs_a, design.runs_b
    base = np.clip(rng.normal(design.rate, 0.05, g), 0.01, 0.995) if design.rate < 0.99 else np.full(g, design.rate)
    fa = rng.binomial(na, 1 - base, (limits, g))
    fb = rng.binomial(nb, 1 - base, (limits, g))
    lim = np.array([design_limits(na - fa[i], np.full(g, na), nb - fb[i], np.full(g, nb))[0]
                    for i in range(limits)])
    finite = np.isfinite(lim)
    refused = float(np.mean(~finite))
    if not finite.any():
        return Cell(design, math.inf, math.nan, math.nan, math.nan, math.nan, refused)
    delta = float(np.mean(lim[finite])) / 100
    pb = np.clip(base - delta, 0, 1)
    NA, NB = np.full((reps, g), na), np.full((reps, g), nb)
    fa = rng.binomial(NA, 1 - base)
    fb = rng.binomial(NB, 1 - pb)
    power = float(np.mean(stratified_pvalues(fa, NA, fb, NB) < 0.05))
    truth = 100 * float(np.mean(pb - base))
    hit = 0
    coverage_reps = min(coverage_reps, reps)
    for i in range(coverage_reps):
        t = stratified_test(fa[i], NA[i], fb[i], NB[i])
        _, lo, hi = verdict_interval(na - fa[i], NA[i], nb - fb[i], NB[i], pvalue=t.pvalue)
        hit += lo <= truth <= hi
    cov = hit / coverage_reps
    return Cell(design, 100 * delta, power, 2 * math.sqrt(max(power * (1 - power), 1e-4) / reps), cov,
                2 * math.sqrt(max(cov * (1 - cov), 1e-4) / coverage_reps), refused)


SMALL = [Design(30, 10, 10, 0.98), Design(50, 1, 1, 0.6), Design(30, 5, 40, 0.7)]
FULL = [Design(g, n, n, p) for g in (3, 10, 30, 100, 200) for n in (1, 3, 10, 20)
        for p in (0.05, 0.5, 0.9, 0.99)] + [Design(g, 2, 20, p) for g in (10, 30) for p in (0.5, 0.9)]


def markdown(cells) -> str:
    head = ("| design | printed limit (points) | power at it (label 0.80) | coverage of the verdict interval "
            "(label 0.95) | refused |\n|---|---|---|---|---|")
    rows = []
    for c in cells:
        if not math.isfinite(c.limit):
            rows.append(f"| {c.design.name} | refused | — | — | {c.refused:.2f} |")
            continue
        flag = "" if abs(c.power - 0.8) <= 0.04 + c.power_mc else " ⚠"
        rows.append(f"| {c.design.name} | {c.limit:.1f} | {c.power:.3f} ± {c.power_mc:.3f}{flag} | "
                    f"{c.coverage:.3f} ± {c.coverage_mc:.3f} | {c.refused:.2f} |")
    return "\n".join([head, *rows])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--small", action="store_true")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--reps", type=int, default=1000)
    args = parser.parse_args(argv)
    cells = []
    for i, design in enumerate(SMALL if args.small else FULL):
        cell = atlas_cell(design, reps=args.reps, seed=i)
        cells.append(cell)
        if not args.markdown:
            print(f"{design.name:36s} limit {cell.limit:6.1f}  power {cell.power:.3f} ± {cell.power_mc:.3f}  "
                  f"coverage {cell.coverage:.3f} ± {cell.coverage_mc:.3f}  refused {cell.refused:.2f}", flush=True)
    if args.markdown:
        print(markdown(cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
