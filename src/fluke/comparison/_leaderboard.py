"""Many versions on the same scenarios: pass rates, every pair tested, groups and ranks.

The input is two matrices of counts, versions × strata (a stratum is a scenario, or a scenario
× condition cell, that **every** version ran): passes and trials. From them:

* each version's pass rate (the mean over strata of its per-stratum rate, in points) with a
  confidence interval clustered by scenario (:func:`fluke.inference.clustered_interval`);
* every pair, or each version against a baseline, by the paired stratified test of the
  two-version comparison (:func:`~fluke.comparison.stratified_test`: CMH, exact conditional,
  exact McNemar), its p-values adjusted across the pairs by Holm (the family-wise error) or
  Benjamini–Hochberg (the false discovery rate), and each pair's verdict by the one rule
  (:func:`~fluke.comparison.verdict_of`) from the adjusted p and the detection limit; the limit
  (power under a regression, :func:`~fluke.comparison.design_limits`) is taken at α/m (m
  pairs), the strictest level either correction applies to a pair; each pair's interval
  inverts its adjusted test, so it never covers 0 beside *different* nor excludes it beside
  anything else;
* groups of versions no pair of which was found different (contiguous in the order of the
  estimates, as the lines under a ranked list: a version may sit in two groups);
* ranks with intervals from a bootstrap over scenarios (``replicates`` resamples of the
  scenarios with replacement, from ``seed``), and P(first), the posterior probability that a
  version's mean pass rate over these strata is the highest (:func:`p_first_posterior`, the
  model in :mod:`fluke.comparison._pfirst`: the versions' effects exchangeable, N(0, τ²) with τ
  integrated under a half-Cauchy prior, so nearly equal versions are shrunk toward each other;
  paired by stratum, ``replicates`` joint draws, ties split, the column sums to 1). The
  bootstrap share was centred on the observed ranking and read 0.72 for versions first half
  the time; independent per-version posteriors over-claimed the leader among nearly equal ones;
* the strata that separate the versions most (best minus worst rate) and those no version passed.

>>> board = leaderboard_counts([[8, 9, 7], [3, 2, 4], [8, 8, 8]], [[10] * 3] * 3, labels=["a", "b", "c"],
...                            replicates=200)
>>> [s.label for s in board.ordered()], [s.group for s in board.ordered()]
(['a', 'c', 'b'], ['a', 'a', 'b'])
>>> [(p.a, p.b, p.verdict) for p in board.pairs if p.verdict == "different"]
[('a', 'b', 'different'), ('c', 'b', 'different')]
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import UsageError
from ..inference import bh_qvalues, clustered_interval
from ._limit import verdict_interval
from ._passrate import design_limits
from ._pfirst import FirstPosterior, first_posterior
from ._stratified import stratified_test
from ._verdict import DIFFERENT, verdict_of

__all__ = ["CORRECTIONS", "Leaderboard", "PairTest", "SeparatingStratum", "Standing", "adjust_pvalues",
           "holm_adjust", "indistinct_groups", "leaderboard_counts", "p_first_posterior", "rank_bootstrap"]

#: The corrections across pairs, by name.
CORRECTIONS = {"holm": "Holm (family-wise error)", "bh": "Benjamini–Hochberg (false discovery rate)"}


def holm_adjust(pvalues) -> np.ndarray:
    """Holm's step-down adjusted p-values (NaN stays NaN and does not count in m).

    >>> holm_adjust([0.01, 0.04, 0.03, 0.20]).round(3).tolist()
    [0.04, 0.09, 0.09, 0.2]
    """
    p = np.asarray(pvalues, dtype=float).reshape(-1)
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(np.isfinite(p))
    m = ok.size
    if m == 0:
        return out
    order = ok[np.argsort(p[ok], kind="stable")]
    stepped = np.minimum(1.0, (m - np.arange(m)) * p[order])
    out[order] = np.maximum.accumulate(stepped)
    return out


def adjust_pvalues(pvalues, correction: str = "holm") -> np.ndarray:
    """p-values adjusted across a family by ``"holm"`` or ``"bh"`` (NaN: untested, not counted).

    >>> adjust_pvalues([0.01, float("nan"), 0.04], "bh").round(3).tolist()
    [0.02, nan, 0.04]
    """
    if correction not in CORRECTIONS:
        raise UsageError(f"correction={correction!r} must be one of "
                         + ", ".join(repr(c) for c in CORRECTIONS), argument="correction")
    p = np.asarray(pvalues, dtype=float).reshape(-1)
    return holm_adjust(p) if correction == "holm" else bh_qvalues(p)


@dataclass(frozen=True)
class Standing:
    """One version: pass rate in points with its clustered interval, rank and rank interval, group."""

    label: str
    passes: int
    trials: int
    rate: float
    low: float
    high: float
    rank: int
    rank_low: int
    rank_high: int
    p_first: float
    group: str


@dataclass(frozen=True)
class PairTest:
    """Version ``b`` against ``a``: difference b − a in points, test, adjusted p, verdict.

    ``low``/``high`` invert the pair's adjusted test (:func:`~fluke.comparison.verdict_interval`
    with the adjusted p): the interval excludes 0 exactly when the verdict is *different*.
    ``detection_limit`` is the regression limit under the alternative at α/m.
    """

    a: str
    b: str
    difference: float
    low: float
    high: float
    method: str
    pvalue: float
    adjusted: float
    detection_limit: float
    verdict: str


@dataclass(frozen=True)
class SeparatingStratum:
    """One stratum: best and worst version's pass rate there, in points."""

    stratum: str
    scenario: str
    spread: float
    best: str
    best_rate: float
    worst: str
    worst_rate: float
    ties: tuple[int, int] = (1, 1)   # versions at the best rate, and at the worst


@dataclass(frozen=True)
class Leaderboard:
    """Versions × common strata: standings, pair tests, groups, ranks and the strata that separate them."""

    standings: tuple[Standing, ...]
    pairs: tuple[PairTest, ...]
    groups: tuple[tuple[str, ...], ...] | None
    separating: tuple[SeparatingStratum, ...]
    unsolved: tuple[str, ...]
    strata: int
    scenarios: int
    baseline: str | None
    correction: str
    alpha: float
    power: float
    ceiling: float
    confidence_level: float
    replicates: int
    seed: int
    first: FirstPosterior | None = None   # the posterior P(first) rests on (τ, its prior, the draws)

    def ordered(self) -> list[Standing]:
        """Standings best first (by rank, then label)."""
        return sorted(self.standings, key=lambda s: (s.rank, -s.rate, s.label))

    def forest(self) -> list[dict]:
        """The forest plot's rows, best first: label, estimate, low, high, rank interval, group."""
        return [{"label": s.label, "estimate": s.rate, "low": s.low, "high": s.high,
                 "rank": s.rank, "rank_interval": [s.rank_low, s.rank_high], "group": s.group}
                for s in self.ordered()]


#: Scenario draws the rank bootstrap holds at once (a block of replicates).
_BLOCK_DRAWS = 500_000


def rank_bootstrap(passes, trials, scenarios, *, replicates: int = 2000, seed: int = 0,
                   confidence_level: float = 0.95):
    """Ranks (1 = best; ties share the better rank) with percentile intervals over a scenario bootstrap.

    Returns ``(rank, low, high, p_first)``, one entry per version (row). Each replicate draws
    the scenarios with replacement (as many draws as scenarios, each scenario equally likely: its
    weights are a multinomial draw, counted from uniform integers) and ranks the versions by their
    mean per-stratum rate. The replicates are drawn a block at a time, so the memory stays about
    16 MB however many scenarios there are (a block holds about 500,000 draws).

    >>> r = rank_bootstrap([[9, 9, 8], [1, 2, 1]], [[10] * 3] * 2, ["x", "y", "z"], replicates=100)
    >>> r[0].tolist(), r[3].tolist()
    ([1, 2], [1.0, 0.0])
    """
    k = np.asarray(passes, dtype=float)
    n = np.asarray(trials, dtype=float)
    rates = k / n
    codes, labels = _codes(scenarios, rates.shape[1])
    g = labels.size
    sums = np.stack([np.bincount(codes, weights=row, minlength=g) for row in rates])   # versions × scenarios
    sizes = np.bincount(codes, minlength=g)   # strata per scenario, as integers
    rng = np.random.default_rng(seed)
    replicates = int(replicates)
    boot = np.empty((replicates, rates.shape[0]))                                           # replicates × versions
    block = max(1, _BLOCK_DRAWS // g)
    offsets = (g * np.arange(block))[:, None]
    for start in range(0, replicates, block):
        m = min(block, replicates - start)
        picks = rng.integers(0, g, size=(m, g))
        picks += offsets[:m]
        counts = np.bincount(picks.reshape(-1), minlength=m * g).reshape(m, g)
        # einsum's own loop, not a BLAS product: these products are small, and BLAS's worker
        # threads spent ten times their CPU spinning for them on a loaded machine (same sums to rounding);
        # the strata drawn are counted in integers, exactly the float sum they replace
        boot[start:start + m] = np.einsum("rg,vg->rv", counts.astype(float), sums) / (counts @ sizes)[:, None]
    ranks = 1 + (boot[:, None, :] > boot[:, :, None] + 1e-12).sum(axis=2)
    point = rates.mean(axis=1)
    rank = 1 + (point[None, :] > point[:, None] + 1e-12).sum(axis=1)
    tail = (1 - confidence_level) / 2
    low = np.quantile(ranks, tail, axis=0, method="inverted_cdf").astype(int)
    high = np.quantile(ranks, 1 - tail, axis=0, method="inverted_cdf").astype(int)
    return rank.astype(int), low, high, (ranks == 1).mean(axis=0)


def p_first_posterior(passes, trials, *, draws: int = 2000, seed: int = 0) -> np.ndarray:
    """P(first) per version: the posterior probability that its mean pass rate over these strata is the highest.

    The versions are exchangeable: each one's mean over the strata is its observed mean, with the
    runs' binomial noise (paired by stratum: the strata's difficulty is common to all), pulled
    toward the others' by a normal prior on the version effects, N(0, τ²), with τ integrated
    over under a half-Cauchy prior of twice the typical standard error of a version's mean
    (:func:`fluke.comparison._pfirst.first_posterior`, which also returns τ's posterior). A draw
    in which k versions tie for the top gives each 1/k, so the column sums to 1. ``draws`` joint
    draws from ``seed``; nothing is drawn per stratum (the strata enter through one pass for the noise).

    >>> p = p_first_posterior([[9, 9, 8], [1, 2, 1], [9, 9, 8]], [[10] * 3] * 3, draws=400)
    >>> round(float(p.sum()), 6), float(p[1]), bool(abs(p[0] - p[2]) < 0.15)
    (1.0, 0.0, True)
    """
    return first_posterior(passes, trials, draws=draws, seed=seed).p_first


def indistinct_groups(order, different) -> list[tuple[int, ...]]:
    """Maximal runs of consecutive versions (in ``order``, best first) with no pair found different.

    ``different`` is a symmetric boolean matrix over the versions.

    >>> d = np.zeros((4, 4), bool); d[0, 3] = d[3, 0] = d[0, 2] = d[2, 0] = True
    >>> indistinct_groups([0, 1, 2, 3], d)
    [(0, 1), (1, 2, 3)]
    """
    d = np.asarray(different, dtype=bool)
    order = list(order)
    runs: list[tuple[int, ...]] = []
    for start in range(len(order)):
        end = start
        while end + 1 < len(order) and not any(d[order[end + 1], order[i]] for i in range(start, end + 1)):
            end += 1
        run = tuple(order[start:end + 1])
        if not runs or not set(run) <= set(runs[-1]):
            runs.append(run)
    return runs


def _codes(scenarios, size: int):
    labels = np.asarray(scenarios if scenarios is not None else np.arange(size)).reshape(-1)
    if labels.size != size:
        raise UsageError(f"scenarios has {labels.size} entries for {size} strata", argument="scenarios")
    uniq, codes = np.unique(labels, return_inverse=True)
    return codes, uniq


def _letters(i: int) -> str:
    out = ""
    i += 1
    while i:
        i, r = divmod(i - 1, 26)
        out = chr(97 + r) + out
    return out


def leaderboard_counts(passes, trials, *, labels, scenarios=None, strata=None, baseline: str | None = None,
                       correction: str = "holm", alpha: float = 0.05, power: float = 0.8, ceiling: float = 5.0,
                       replicates: int = 2000, seed: int = 0, confidence_level: float = 0.95) -> Leaderboard:
    """The leaderboard of versions (rows) over common strata (columns); see the module docstring.

    ``scenarios`` names each stratum's scenario (the cluster; default: each stratum its own),
    ``strata`` each stratum's name (default: the scenario). With ``baseline`` (one of the
    labels) only the pairs (baseline, other) are tested and no groups are formed.

    >>> b = leaderboard_counts([[5, 5], [1, 0]], [[5, 5], [5, 5]], labels=["x", "y"], baseline="x",
    ...                        replicates=100)
    >>> b.pairs[0].method, b.groups
    ('exact conditional', None)
    """
    k = np.asarray(passes)
    n = np.asarray(trials)
    if k.ndim != 2 or k.shape != n.shape:
        raise UsageError("passes and trials must be 2-D of one shape (versions × strata)", argument="passes")
    v, s = k.shape
    labels = [str(x) for x in labels]
    if len(labels) != v or len(set(labels)) != v:
        raise UsageError(f"labels needs {v} distinct names, one per version", argument="labels")
    if v < 2:
        raise UsageError("a leaderboard needs at least two versions", argument="passes")
    if s == 0:
        raise UsageError("no stratum was run by every version",
                         argument="trials", hint="select versions that ran the same scenarios")
    if n.min() < 1 or k.min() < 0 or np.any(k > n):
        raise UsageError("every version needs 1 or more trials in every stratum, "
                         "and passes between 0 and trials", argument="trials")
    if correction not in CORRECTIONS:
        raise UsageError(f"correction={correction!r} must be 'holm' or 'bh'", argument="correction")
    if baseline is not None and baseline not in labels:
        raise UsageError(f"baseline={baseline!r} is not one of the versions", argument="baseline")
    if int(replicates) < 100:
        raise UsageError(f"replicates={replicates} must be at least 100", argument="replicates")
    codes, names = _codes(scenarios, s)
    stratum_names = [str(x) for x in (strata if strata is not None else names[codes])]
    rates = k / n
    point = rates.mean(axis=1)
    if baseline is None:   # A is the better of the two by the estimate, so B − A reads as the gap
        ahead = sorted(range(v), key=lambda i: (-point[i], labels[i]))
        pairs = [(ahead[i], ahead[j]) for i in range(v) for j in range(i + 1, v)]
    else:
        b0 = labels.index(baseline)
        pairs = [(b0, j) for j in range(v) if j != b0]
    tests = [stratified_test(n[i] - k[i], n[i], n[j] - k[j], n[j]) for i, j in pairs]
    raw = np.array([t.pvalue for t in tests])
    adjusted = adjust_pvalues(raw, correction)
    m = max(1, int(np.isfinite(raw).sum()))
    found = []
    for (i, j), t, p_adj in zip(pairs, tests, adjusted, strict=True):
        diff = 100 * (rates[j] - rates[i])
        # the interval inverts the pair's adjusted test: it excludes 0 exactly when the verdict is different
        _, lo, hi = verdict_interval(k[i], n[i], k[j], n[j], pvalue=float(p_adj), alpha=alpha)
        limit, = design_limits(k[i], n[i], k[j], n[j], alpha=alpha / m, power=power, directions=("regression",))
        found.append(PairTest(labels[i], labels[j], float(diff.mean()), float(lo), float(hi), t.method,
                              float(t.pvalue), float(p_adj), float(limit),
                              verdict_of(p_adj, limit, alpha=alpha, ceiling=ceiling)))
    rank, rlo, rhi, _ = rank_bootstrap(k, n, codes, replicates=replicates, seed=seed,
                                       confidence_level=confidence_level)
    posterior = first_posterior(k, n, draws=replicates, seed=seed)
    first = posterior.p_first
    order = sorted(range(v), key=lambda i: (rank[i], -point[i], labels[i]))
    groups = None
    letters = [""] * v
    if baseline is None:
        different = np.zeros((v, v), bool)
        for (i, j), p in zip(pairs, found, strict=True):
            different[i, j] = different[j, i] = p.verdict == DIFFERENT
        groups_i = indistinct_groups(order, different)
        for gi, members in enumerate(groups_i):
            for member in members:
                letters[member] += _letters(gi)
        groups = tuple(tuple(labels[x] for x in members) for members in groups_i)
    standings = []
    for i in range(v):
        if names.size >= 2:
            ci = clustered_interval(100 * rates[i], codes, confidence_level=confidence_level, unit="scenario")
            lo, hi = ci.low, ci.high
        else:
            lo = hi = math.nan
        standings.append(Standing(labels[i], int(k[i].sum()), int(n[i].sum()), float(100 * point[i]), float(lo),
                                  float(hi), int(rank[i]), int(rlo[i]), int(rhi[i]), float(first[i]), letters[i]))
    best, worst = rates.argmax(axis=0), rates.argmin(axis=0)
    spread = rates.max(axis=0) - rates.min(axis=0)
    split = rates.var(axis=0)   # among equal spreads, a stratum that splits the versions evenly separates more
    top, bottom = rates.max(axis=0), rates.min(axis=0)
    # column by column as Python lists (a leaderboard of 10,000 strata builds up to 10,000 of these)
    at_top, at_bottom = (rates == top).sum(axis=0).tolist(), (rates == bottom).sum(axis=0).tolist()
    cluster = names[codes].astype(str).tolist()
    spread_points, top_points, bottom_points = (100 * spread).tolist(), (100 * top).tolist(), (100 * bottom).tolist()
    best, worst = best.tolist(), worst.tolist()
    sep = [SeparatingStratum(stratum_names[c], cluster[c], spread_points[c], labels[best[c]], top_points[c],
                             labels[worst[c]], bottom_points[c], (at_top[c], at_bottom[c]))
           for c in np.lexsort((-split, -spread)).tolist() if spread_points[c] > 0]
    unsolved = tuple(stratum_names[c] for c in np.flatnonzero(k.sum(axis=0) == 0).tolist())
    return Leaderboard(tuple(standings), tuple(found), groups, tuple(sep), unsolved, int(s), int(names.size),
                       baseline, correction, float(alpha), float(power), float(ceiling), float(confidence_level),
                       int(replicates), int(seed), posterior)
