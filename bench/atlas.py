"""The atlas: every printed limit and interval of `compare`, checked by simulation over a grid of designs.

For each design (scenarios G, runs per arm n_A/n_B, a base pass rate, paired or not) the atlas
draws unchanged pairs, takes the mean printed regression limit L (`design_limits`), then plants a
regression of L in every scenario and reports:

* **power at the printed limit**: the share of stratified tests (auto: CMH / exact / McNemar) at
  p < 0.05 (the label is 0.80);
* **coverage of the verdict's interval** (`verdict_interval`, 95%) of the runs' mean true
  difference, under that regression (the label is 0.95);
* **refusals**: the share of unchanged pairs whose limit is infinite (the verdict says *too small
  to tell* instead of printing a limit);
* the same **power in the improvement direction** (B higher by the mean printed improvement
  limit, clipped at 1);
* **coverage of the new-tasks interval** (``new_tasks_interval``: scenarios as a sample, CR2
  with Bell–McCaffrey df) of the population difference, over the same regression draws;
* **one version's pass rate**: coverage of ``fluke interval``'s 95% interval
  (:func:`fluke.inference.clustered_interval_cells` on A's runs, clustered by scenario: the
  cluster means' t with equal runs per scenario, CR2 with Bell–McCaffrey df with unequal runs,
  each through the Wilson score on the effective sample size) of the population mean rate,
  with A's runs per scenario as designed and with unequal runs (:func:`unequal_runs`); and of
  the pass@k and pass^k intervals (k = min(3, runs of A)) of the population pass@k and pass^k,
  scenarios drawn afresh from the design's rate law each time;
* **P(first)** of the leaderboard (:func:`p_first_calibration`): per decile of the claim, how
  often the version truly had the top mean rate, over :data:`BOARDS` (each board's spread of
  versions drawn from the prior the posterior integrates over: the population its label is a
  probability over) and, as a sensitivity table, over :data:`FIXED_BOARDS` (one spread each);
  ``--p-first`` runs this part alone.

Each figure comes with its Monte Carlo error (2 standard errors). Run
``python bench/atlas.py`` for the full grid (about 25 CPU minutes) or
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
from scipy.special import expit

from fluke.comparison import compare_pass_rates, design_limits, p_first_posterior, stratified_pvalues
from fluke.comparison._pfirst import PRIOR_SCALE
from fluke.inference import Cells, clustered_interval_cells, pass_at_k, pass_hat_k


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
    better_limit: float = math.nan
    better_power: float = math.nan
    better_refused: float = math.nan
    new_tasks: float = math.nan
    passk: float = math.nan
    cov_reps: int = 0
    better_mc: float = math.nan
    passhat: float = math.nan
    interval_equal: float = math.nan
    interval_unequal: float = math.nan


def _mc(share: float, reps: int) -> float:
    return 2 * math.sqrt(max(share * (1 - share), 1e-4) / max(reps, 1))


def _rates(design: Design, rng, size) -> np.ndarray:
    if design.rate >= 0.99:
        return np.full(size, design.rate)
    return np.clip(rng.normal(design.rate, 0.05, size), 0.01, 0.995)


def unequal_runs(runs: int, rng, size) -> np.ndarray:
    """Runs per scenario for the unequal-cluster check: half, the same or three times ``runs``, at random.

    >>> unequal_runs(10, np.random.default_rng(0), 6).tolist()
    [30, 10, 10, 5, 5, 5]
    """
    return rng.choice([max(1, runs // 2), runs, 3 * runs], size)


def _interval_covers(passes, trials, truth) -> bool:
    """Does ``fluke interval``'s 95% interval (scenario as the unit) cover ``truth``?"""
    g = len(trials)
    ci = clustered_interval_cells(Cells.from_passes(np.arange(g), None, trials, passes), unit="scenario")
    return bool(ci.low <= truth <= ci.high)


def _power(base, delta, design, reps, rng):
    g, na, nb = design.scenarios, design.runs_a, design.runs_b
    pb = np.clip(base + delta, 0, 1)
    NA, NB = np.full((reps, g), na), np.full((reps, g), nb)
    fa, fb = rng.binomial(NA, 1 - base), rng.binomial(NB, 1 - pb)
    return float(np.mean(stratified_pvalues(fa, NA, fb, NB) < 0.05)), fa, fb, pb


def one_version(design: Design, draws: int, rng, seed: int = 0) -> dict:
    """Coverage of one version's intervals over ``draws`` fresh draws of scenarios and of A's runs.

    ``fluke interval`` (scenario as the unit) with A's runs per scenario and with
    :func:`unequal_runs`, of the law's mean rate; pass@k and pass^k (k = min(3, runs of A)) of
    the law's. The law's values come from its own large sample (seed + 1).

    >>> c = one_version(Design(30, 3, 3, 0.5), 40, np.random.default_rng(0))
    >>> sorted(c) == ["interval_equal", "interval_unequal", "passhat", "passk"] and min(c.values()) > 0.8
    True
    """
    g, na = design.scenarios, design.runs_a
    k = min(3, na)
    population = _rates(design, np.random.default_rng(seed + 1), 200_000)
    target = float(np.mean(1 - (1 - population) ** k))
    target_hat, mean_rate = float(np.mean(population ** k)), float(np.mean(population))
    hit_k = hit_hat = hit_eq = hit_uneq = 0
    NA = np.full(g, na)
    for _ in range(draws):
        q = _rates(design, rng, g)
        passes = rng.binomial(NA, q)
        r = pass_at_k(passes, NA, k)
        hit_k += r.low <= target <= r.high if math.isfinite(r.low) else 0
        r = pass_hat_k(passes, NA, k)
        hit_hat += r.low <= target_hat <= r.high if math.isfinite(r.low) else 0
        hit_eq += _interval_covers(passes, NA, mean_rate)
        sizes = unequal_runs(na, rng, g)
        hit_uneq += _interval_covers(rng.binomial(sizes, q), sizes, mean_rate)
    return dict(passk=hit_k / draws, passhat=hit_hat / draws, interval_equal=hit_eq / draws,
                interval_unequal=hit_uneq / draws)


def atlas_cell(design: Design, *, reps: int = 1000, limits: int = 100, coverage_reps: int = 200,
               seed: int = 0) -> Cell:
    """Power at the printed limits (both directions), coverage of compare's two intervals and of
    one version's (:func:`one_version`), and refusals, for one design."""
    rng = np.random.default_rng(seed)
    g, na, nb = design.scenarios, design.runs_a, design.runs_b
    base = _rates(design, rng, g)
    fa = rng.binomial(na, 1 - base, (limits, g))
    fb = rng.binomial(nb, 1 - base, (limits, g))
    both = np.array([design_limits(na - fa[i], np.full(g, na), nb - fb[i], np.full(g, nb)) for i in range(limits)])
    lim, up = both[:, 0], both[:, 1]
    better_refused = float(np.mean(~np.isfinite(up)))
    better_limit = better_power = math.nan
    if np.isfinite(up).any():
        better_limit = float(np.mean(up[np.isfinite(up)]))
        better_power = _power(base, better_limit / 100, design, reps, rng)[0]
    # one version's intervals over fresh draws of the design's scenarios (the law's values by its own large sample)
    coverage_reps = min(coverage_reps, reps)
    one = one_version(design, coverage_reps, rng, seed)
    passk = one.pop("passk")
    finite = np.isfinite(lim)
    refused = float(np.mean(~finite))
    if not finite.any():
        return Cell(design, math.inf, math.nan, math.nan, math.nan, math.nan, refused, better_limit,
                    better_power, better_refused, math.nan, passk, coverage_reps, _mc(better_power, reps), **one)
    delta = float(np.mean(lim[finite])) / 100
    power, fa, fb, pb = _power(base, -delta, design, reps, rng)
    truth = 100 * float(np.mean(pb - base))
    NA, NB = np.full(g, na), np.full(g, nb)
    hit = new = 0
    for i in range(coverage_reps):
        r = compare_pass_rates(na - fa[i], NA, nb - fb[i], NB, draws=100)
        lo, hi = r.interval
        hit += lo <= truth <= hi
        lo, hi = r.new_tasks_interval
        new += lo <= truth <= hi if math.isfinite(lo) else 0
    cov = hit / coverage_reps
    return Cell(design, 100 * delta, power, _mc(power, reps), cov, _mc(cov, coverage_reps), refused, better_limit,
                better_power, better_refused, new / coverage_reps, passk, coverage_reps, _mc(better_power, reps),
                **one)


@dataclass(frozen=True)
class Board:
    """A leaderboard design: versions × scenarios × runs, logit(rate) = a_s + b_v, b_v ~ N(0, spread²).

    ``spread=None`` draws each board's spread from P(first)'s own prior (:func:`version_effects`):
    the population of boards the posterior is a probability over.
    """

    versions: int
    scenarios: int
    runs: int
    spread: float | None = None

    @property
    def name(self) -> str:
        shape = f"{self.versions} versions × {self.scenarios} × {self.runs} runs"
        return f"{shape}, spread from the prior" if self.spread is None else f"{shape}, spread {self.spread:g}"


def version_effects(board: Board, a: np.ndarray, rng) -> np.ndarray:
    """The versions' logit effects on one board whose scenarios have logits ``a``.

    A fixed spread draws them N(0, spread²). With ``spread=None`` the spread τ of the versions'
    mean rates is first drawn from the prior P(first) integrates over, a half-Cauchy of
    :data:`~fluke.comparison._pfirst.PRIOR_SCALE` times σ̄, the standard error of one version's
    mean rate (σ̄ read here off the scenarios' true rates, where the model reads it off the
    pooled runs), and turned into a logit spread by the mean slope p(1 − p) of the rate in the
    logit.

    >>> b = version_effects(Board(4, 30, 10), np.zeros(30), np.random.default_rng(0))
    >>> b.shape, bool(np.isfinite(b).all())
    ((4,), True)
    """
    if board.spread is not None:
        return rng.normal(0, board.spread, board.versions)
    rate = expit(a)
    slope = rate * (1 - rate)
    sigma = float(np.sqrt((slope / board.runs).sum())) / board.scenarios
    tau = PRIOR_SCALE * sigma * abs(math.tan(0.5 * math.pi * rng.random()))
    return rng.normal(0, tau / slope.mean(), board.versions)


def p_first_calibration(board: Board, *, boards: int = 1000, draws: int = 400, seed: int = 0):
    """P(first) (the leaderboard's column) against how often the version truly had the top mean rate.

    Returns rows (decile low, high, claims in it, mean claim, share truly first, its 2-SE
    Monte Carlo error) for the deciles holding at least 30 claims. The truth is the version
    whose mean true rate over the board's drawn scenarios is highest; k versions tied at the top
    (a spread of 0) are each first 1/k of the time.

    >>> rows = p_first_calibration(Board(4, 30, 10, 0.4), boards=40, draws=200)
    >>> sum(r[2] for r in rows) <= 160 and all(0 <= r[3] <= 1 for r in rows)
    True
    """
    rng = np.random.default_rng(seed)
    claims, truth = [], []
    v, g, n = board.versions, board.scenarios, board.runs
    for r in range(boards):
        a = rng.normal(1, 1.2, g)
        p = expit(a[None, :] + version_effects(board, a, rng)[:, None])
        first = p_first_posterior(rng.binomial(n, p), np.full((v, g), n), draws=draws, seed=r)
        means = p.mean(axis=1)
        top = means == means.max()
        claims += first.tolist()
        truth += (top / top.sum()).tolist()
    claims, truth = np.array(claims), np.array(truth, dtype=float)
    rows = []
    for lo in np.round(np.arange(0.0, 1.0, 0.1), 1):
        hi = lo + 0.1
        m = (claims >= lo) & ((claims < hi) | ((hi > 0.95) & (claims <= 1.0)))
        if m.sum() >= 30:
            share = float(truth[m].mean())
            rows.append((float(lo), float(hi), int(m.sum()), float(claims[m].mean()), share, _mc(share, int(m.sum()))))
    return rows


#: The leaderboard designs P(first)'s label is checked on, each board's spread drawn from the prior.
BOARDS = [Board(4, 30, 10), Board(5, 30, 2), Board(4, 50, 1), Board(3, 10, 5), Board(8, 100, 3), Board(2, 20, 3),
          Board(4, 30, 5), Board(6, 40, 2)]
#: The same shapes at fixed spreads (how far a posterior can be from the truth at one spread):
#: the seven boards of the earlier atlas and three corners (versions all equal, nearly equal, mid).
FIXED_BOARDS = [Board(4, 30, 10, 0.4), Board(5, 30, 2, 0.15), Board(4, 50, 1, 0.2), Board(3, 10, 5, 0.3),
                Board(8, 100, 3, 0.1), Board(2, 20, 3, 0.3), Board(4, 30, 5, 1.0), Board(4, 30, 5, 0.0),
                Board(6, 40, 2, 0.1), Board(4, 30, 5, 0.2)]


def p_first_markdown(results) -> str:
    """The P(first) table: one row per board and decile; ⚠ where |claim − truth| exceeds 0.05 plus its error."""
    lines = ["| leaderboard design | P(first) decile | claims | mean P(first) | truly first |",
             "|---|---|---|---|---|"]
    for board, rows in results:
        for lo, hi, count, claim, share, mc in rows:
            flag = "" if abs(claim - share) <= 0.05 + mc else " ⚠"
            lines.append(f"| {board.name} | {lo:.1f}–{hi:.1f} | {count} | {claim:.3f} | {share:.3f} ± {mc:.3f}{flag} |")
    return "\n".join(lines)


SMALL = [Design(30, 10, 10, 0.98), Design(50, 1, 1, 0.6), Design(30, 5, 40, 0.7)]
FULL = [Design(g, n, n, p) for g in (3, 10, 30, 100, 200) for n in (1, 3, 10, 20)
        for p in (0.05, 0.5, 0.9, 0.99)] + [Design(g, 2, 20, p) for g in (10, 30) for p in (0.5, 0.9)]


def _flag_power(p, mc):
    return "" if abs(p - 0.8) <= 0.04 + mc else " ⚠"


def _flag_cov(c, mc):
    return "" if c >= 0.93 - mc else " ⚠"


def markdown(cells) -> str:
    """The main table: compare's limits (both directions), refusals and its two intervals, one row per design."""
    head = ("| design | regression limit (points) | power at it (0.80) | verdict interval covers (0.95) | "
            "new-tasks interval covers (0.95) | improvement limit | power at it (0.80) | "
            "refused (regression / improvement) |\n|---|---|---|---|---|---|---|---|")
    rows = []
    for c in cells:
        if math.isfinite(c.better_limit):
            better = (f"{c.better_limit:.1f} | {c.better_power:.3f} ± {c.better_mc:.3f}"
                      f"{_flag_power(c.better_power, c.better_mc)}")
        else:
            better = "refused | —"
        refused = f"{c.refused:.2f} / {c.better_refused:.2f}"
        if not math.isfinite(c.limit):
            rows.append(f"| {c.design.name} | refused (too small to tell) | — | — | — | {better} | {refused} |")
            continue
        nmc = _mc(c.new_tasks, c.cov_reps)
        rows.append(f"| {c.design.name} | {c.limit:.1f} | {c.power:.3f} ± {c.power_mc:.3f}"
                    f"{_flag_power(c.power, c.power_mc)} | {c.coverage:.3f} ± {c.coverage_mc:.3f}"
                    f"{_flag_cov(c.coverage, c.coverage_mc)} | {c.new_tasks:.3f} ± {nmc:.3f}"
                    f"{_flag_cov(c.new_tasks, nmc)} | {better} | {refused} |")
    return "\n".join([head, *rows])


def one_version_markdown(cells) -> str:
    """The second table: coverage of ``fluke interval`` (equal and unequal runs per scenario), pass@k and pass^k."""
    head = ("| design (A's runs) | `interval` covers (0.95) | `interval`, unequal runs (0.95) | "
            "pass@k covers (0.95) | pass^k covers (0.95) |\n|---|---|---|---|---|")
    rows = []
    for c in cells:
        parts = []
        for share in (c.interval_equal, c.interval_unequal, c.passk, c.passhat):
            mc = _mc(share, c.cov_reps)
            parts.append(f"{share:.3f} ± {mc:.3f}{_flag_cov(share, mc)}")
        rows.append(f"| {c.design.name} | " + " | ".join(parts) + " |")
    return "\n".join([head, *rows])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--small", action="store_true")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--designs", default=None, metavar="START:STOP",
                        help="only these designs of the grid, by index (each keeps its seed: a grid split over "
                             "processes gives the same rows)")
    parser.add_argument("--no-boards", action="store_true", help="leave out the P(first) boards")
    parser.add_argument("--one-version", type=int, default=0, metavar="DRAWS",
                        help="only the one-version coverage (interval, pass@k, pass^k) over DRAWS draws, seed 7")
    parser.add_argument("--p-first", action="store_true", help="run only the P(first) calibration")
    parser.add_argument("--boards", type=int, default=5000, help="simulated boards per leaderboard design")
    args = parser.parse_args(argv)
    grid = SMALL if args.small else FULL
    start, stop = (0, len(grid)) if args.designs is None else (int(x) for x in args.designs.split(":"))
    if args.one_version:
        rows = []
        for design in grid[start:stop]:
            found = one_version(design, args.one_version, np.random.default_rng(7), 7)
            rows.append(Cell(design, math.nan, math.nan, math.nan, math.nan, math.nan, math.nan,
                             cov_reps=args.one_version, **found))
            print(one_version_markdown(rows[-1:]).splitlines()[-1], flush=True, file=sys.stderr)
        print(one_version_markdown(rows))
        return 0
    cells = []
    for i, design in [] if args.p_first else list(enumerate(grid))[start:stop]:
        cell = atlas_cell(design, reps=args.reps, seed=i)
        cells.append(cell)
        print(f"{design.name:36s} limit {cell.limit:6.1f}  power {cell.power:.3f} ± {cell.power_mc:.3f}  "
                  f"coverage {cell.coverage:.3f} ± {cell.coverage_mc:.3f}  new tasks {cell.new_tasks:.3f}  "
                  f"improvement {cell.better_limit:6.1f} power {cell.better_power:.3f}  pass@k {cell.passk:.3f}  "
                  f"pass^k {cell.passhat:.3f}  interval {cell.interval_equal:.3f}/{cell.interval_unequal:.3f}  "
                  f"refused {cell.refused:.2f}/{cell.better_refused:.2f}", flush=True,
                  file=sys.stderr if args.markdown else sys.stdout)
    size = 60 if args.small else args.boards
    boards = [] if args.no_boards else [(b, p_first_calibration(b, boards=size, seed=1000 + i))
                                        for i, b in enumerate(BOARDS[:1] if args.small else BOARDS)]
    fixed = [] if args.no_boards or args.small else [(b, p_first_calibration(b, boards=size, seed=i))
                                                     for i, b in enumerate(FIXED_BOARDS)]
    if args.markdown and cells:
        print(markdown(cells))
        print()
        print(one_version_markdown(cells))
    if boards:
        print()
        print(p_first_markdown(boards))
    if fixed:
        print()
        print(p_first_markdown(fixed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
