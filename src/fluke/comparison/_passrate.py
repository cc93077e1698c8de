"""Did the pass rate move? Two versions compared on pass rates, stratum by stratum.

The input is counts per stratum (a scenario, or a scenario × condition cell): passes and
trials in arm A and in arm B. The answer has four parts, each with what it rests on:

* the **difference** in average pass rate (B − A, in percentage points): the mean over strata
  of the per-stratum difference, with a confidence interval clustered by scenario
  (:func:`fluke.inference.clustered_interval`: t on G − 1 degrees of freedom);
* the **test** (:func:`~fluke.comparison.stratified_test`): Cochran–Mantel–Haenszel, exact
  conditional when counts are small, exact McNemar when every stratum holds one run per arm;
* the **Bayesian** P(B's average pass rate < A's), from independent Beta posteriors per stratum
  and arm (prior named in the result), by Monte Carlo with a declared generator;
* the **detection limit**: the smallest difference in points the test could have detected
  at α and power. Under a shift of δ in every stratum, the test's numerator moves by δ·W with
  W = Σ n_A n_B / (n_A + n_B), and its null standard deviation is √V, V the information
  actually present; so δ = (z₁₋α/₂ + z_power)·√V / W. A stratum where every run passed, or
  every run failed, in both arms adds nothing to V; with V = 0 the limit is undefined and the
  verdict is *too small to tell*.

The verdict comes from the test and the limit (:func:`~fluke.comparison.verdict_of`).

>>> r = compare_pass_rates([5, 9, 2], [10, 10, 10], [8, 10, 6], [10, 10, 10])
>>> round(r.difference, 1), r.test.method, r.verdict
(26.7, 'Cochran–Mantel–Haenszel', 'different')
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from ..errors import InputError
from ..inference import clustered_interval
from ._stratified import StratifiedTest, stratified_test
from ..format import fmt_is
from ._verdict import CLOSING_STATEMENT, DIFFERENT, TOO_SMALL, detection_z, verdict_of

__all__ = ["UNKNOWN_POLICIES", "PassRateComparison", "compare_pass_rates", "pass_rate_limit"]

#: What may have been done with runs whose outcome is unknown before the counts were taken.
UNKNOWN_POLICIES = ("failure", "exclude", "success")


@dataclass(frozen=True)
class PassRateComparison:
    """Arm B against arm A on pass rates: difference, test, P(B < A), limit and verdict.

    Rates and the difference are in percentage points; ``interval`` is the confidence interval
    of the difference, clustered by scenario (``scenarios`` clusters). ``detection_limit`` is in
    points (inf when no stratum carries information); ``uninformative`` counts the strata that
    carry none. ``unknown`` is (arm A, arm B) runs with an unknown outcome, already handled by
    ``unknown_policy`` before these counts were taken.
    """

    strata: int
    scenarios: int
    runs_a: int
    runs_b: int
    passes_a: int
    passes_b: int
    rate_a: float
    rate_b: float
    difference: float
    interval: tuple[float, float]
    confidence_level: float
    interval_method: str
    test: StratifiedTest
    p_b_below_a: float
    prior: str
    draws: int
    mc_error: float
    detection_limit: float
    uninformative: int
    verdict: str
    runs_needed_per_arm: int | None
    alpha: float
    power: float
    ceiling: float
    unknown: tuple[int, int]
    unknown_policy: str
    paired: bool
    interval_reason: str | None = None
    statement: str = CLOSING_STATEMENT

    @property
    def pvalue(self) -> float:
        return self.test.pvalue

    @property
    def direction(self) -> str | None:
        """"lower" or "higher" (B's pass rate against A's), said only when the verdict is *different*."""
        if self.verdict != DIFFERENT:
            return None
        return "higher" if self.test.observed > self.test.expected else "lower"

    def conditional_on(self) -> str:
        """What the claim rests on: strata, runs, unit, α, power, ceiling, prior, unknowns."""
        return (f"{self.strata} strata in {self.scenarios} scenarios (the unit), {self.runs_a} runs of A and "
                f"{self.runs_b} of B; {self.test.method}; α = {self.alpha:g}, power = {self.power:g}, "
                f"ceiling {self.ceiling:g} points; prior {self.prior}; {self.unknown[0] + self.unknown[1]} "
                f"unknown outcomes counted as '{self.unknown_policy}'")

    def summary(self) -> str:
        """One line: the verdict, the difference with its interval, p, P(B < A) and the limit."""
        lo, hi = self.interval
        ci = f"[{lo:+.1f}, {hi:+.1f}]" if math.isfinite(lo) else f"(no interval: {self.interval_reason})"
        limit = (f"{self.detection_limit:.1f} points" if math.isfinite(self.detection_limit)
                 else "— (no stratum carries information)")
        line = (f"{self.verdict}: B − A = {self.difference:+.1f} points {ci} ({self.test.method} "
                f"{fmt_is('p', self.pvalue, kind='p')}); P(B < A) = {self.p_b_below_a:.3f}; could not have "
                f"detected a difference below {limit} (ceiling {self.ceiling:g}); {self.uninformative} of "
                f"{self.strata} strata carry no information")
        if self.verdict == TOO_SMALL and self.runs_needed_per_arm is not None:
            line += f"; about {self.runs_needed_per_arm:,} runs per arm would be needed"
        return line

    def to_dict(self) -> dict:
        """Plain data for JSON: every field, the test's fields nested, and the derived ones."""
        out = asdict(self)
        out.update(pvalue=self.pvalue, direction=self.direction, summary=self.summary(),
                   conditional_on=self.conditional_on(), interval=list(self.interval),
                   unknown=list(self.unknown))
        return out


def _arrays(passes_a, trials_a, passes_b, trials_b):
    out = []
    for name, value in (("passes_a", passes_a), ("trials_a", trials_a), ("passes_b", passes_b),
                        ("trials_b", trials_b)):
        arr = np.asarray(value, dtype=float).reshape(-1)
        if arr.size and (not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr))):
            raise InputError(None, None, name, f"{name} must be whole numbers")
        out.append(arr.astype(np.int64))
    if len({a.size for a in out}) != 1:
        raise InputError(None, None, "trials_b", "passes_a, trials_a, passes_b and trials_b need one "
                         f"entry per stratum; got {[a.size for a in out]}")
    if out[0].size == 0:
        raise InputError(None, None, "trials_a", "no strata: the two arms share no scenario to compare",
                         hint="check the selectors and the scenario filter")
    for k, n, kn, nn in ((out[0], out[1], "passes_a", "trials_a"), (out[2], out[3], "passes_b", "trials_b")):
        if n.min() < 1:
            raise InputError(None, None, nn, f"{nn}={int(n.min())} must be at least 1 in every stratum",
                             hint="compare only the strata both arms ran")
        if k.min() < 0 or np.any(k > n):
            raise InputError(None, None, kn, f"{kn} must lie between 0 and {nn} in every stratum")
    return out


def pass_rate_limit(variance, trials_a, trials_b, *, alpha: float = 0.05, power: float = 0.8):
    """Minimum detectable difference in points: 100·(z₁₋α/₂ + z_power)·√V / Σ n_A n_B/(n_A + n_B).

    ``variance`` is the test's information V (a number, or one per row of 2-D trials, strata
    along the last axis); inf where V = 0.

    >>> round(pass_rate_limit(stratified_test([1], [2], [1], [2]).variance, [2], [2]), 1)
    161.7
    >>> pass_rate_limit([0.0, 4.0], [[2, 2], [2, 2]], [[2, 2], [2, 2]]).round(1).tolist()
    [inf, 280.2]
    """
    na = np.asarray(trials_a, dtype=float)
    nb = np.asarray(trials_b, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        slope = np.sum(np.where(na + nb > 0, na * nb / np.where(na + nb > 0, na + nb, 1), 0.0), axis=-1)
        v = np.asarray(variance, dtype=float)
        limit = np.where((v > 0) & (slope > 0), 100 * detection_z(alpha, power) * np.sqrt(np.maximum(v, 0))
                         / np.where(slope > 0, slope, 1), np.inf)
    return float(limit) if limit.ndim == 0 else limit


def _p_below(passes_a, trials_a, passes_b, trials_b, prior, draws, rng):
    """P(mean_s θ_B,s < mean_s θ_A,s) under independent Beta posteriors, by Monte Carlo."""
    a0, b0 = prior
    g = passes_a.size
    below = 0
    chunk = max(1, 4_000_000 // (2 * g))
    for start in range(0, draws, chunk):
        m = min(chunk, draws - start)
        ta = rng.beta(a0 + passes_a, b0 + trials_a - passes_a, size=(m, g)).mean(axis=1)
        tb = rng.beta(a0 + passes_b, b0 + trials_b - passes_b, size=(m, g)).mean(axis=1)
        below += int((tb < ta).sum())
    share = below / draws
    return share, math.sqrt(max(share * (1 - share), 1.0 / draws) / draws)


def compare_pass_rates(passes_a, trials_a, passes_b, trials_b, *, scenarios=None, alpha: float = 0.05,
                       power: float = 0.8, ceiling: float = 5.0, method: str = "auto",
                       prior: tuple[float, float] = (1.0, 1.0), draws: int = 20_000,
                       rng: np.random.Generator | None = None, unknown: tuple[int, int] = (0, 0),
                       unknown_policy: str = "failure",
                       confidence_level: float = 0.95) -> PassRateComparison:
    """Compare B's pass rate with A's from per-stratum counts (see the module docstring).

    ``scenarios`` names each stratum's scenario (the cluster of the interval); by default every
    stratum is its own scenario. ``ceiling`` is the largest detection limit, in points, that
    counts as *no significant difference*. ``rng`` drives the Monte Carlo of P(B < A) (a fixed
    generator by default, so the result is reproducible); ``prior`` is Beta(a, b) per stratum
    and arm. ``unknown`` and ``unknown_policy`` record what was done, before counting, with
    runs whose outcome is unknown.

    >>> r = compare_pass_rates([1, 1, 0, 1], [1, 1, 1, 1], [1, 0, 1, 1], [1, 1, 1, 1])
    >>> r.test.method, r.verdict, r.uninformative, round(r.detection_limit, 1)
    ('exact McNemar', 'too small to tell', 2, 99.1)
    """
    pa, na, pb, nb = _arrays(passes_a, trials_a, passes_b, trials_b)
    if not ceiling > 0:
        raise InputError(None, None, "ceiling", f"ceiling={ceiling!r} must be a positive number of points")
    if len(prior) != 2 or not (prior[0] > 0 and prior[1] > 0):
        raise InputError(None, None, "prior", f"prior={prior!r} must be two positive numbers (a, b)")
    if draws < 100:
        raise InputError(None, None, "draws", f"draws={draws} must be at least 100")
    if unknown_policy not in UNKNOWN_POLICIES:
        raise InputError(None, None, "unknown_policy", f"unknown_policy={unknown_policy!r} must be one of "
                         + ", ".join(UNKNOWN_POLICIES))
    unknown = (int(unknown[0]), int(unknown[1]))
    if min(unknown) < 0:
        raise InputError(None, None, "unknown", f"unknown={unknown!r} must be counts of at least 0")
    labels = np.arange(pa.size) if scenarios is None else np.asarray(scenarios).reshape(-1)
    if labels.size != pa.size:
        raise InputError(None, None, "scenarios", f"scenarios has {labels.size} entries for {pa.size} strata")
    test = stratified_test(na - pa, na, nb - pb, nb, method=method)
    limit = pass_rate_limit(test.variance, na, nb, alpha=alpha, power=power)
    verdict = verdict_of(test.pvalue, limit, alpha=alpha, ceiling=ceiling)
    needed = None
    if verdict == TOO_SMALL and math.isfinite(limit):
        # V and W both grow in proportion to the runs per stratum, so the limit falls as 1/√k
        needed = math.ceil((limit / ceiling) ** 2 * max(int(na.sum()), int(nb.sum())))
    diff = 100 * (pb / nb - pa / na)
    g = int(np.unique(labels).size)
    if g >= 2:
        ci = clustered_interval(diff, labels, confidence_level=confidence_level, unit="scenario")
        interval, how, reason = (ci.low, ci.high), f"clustered by scenario ({ci.method}, t on {ci.df} df)", None
    else:
        interval, how, reason = (math.nan, math.nan), "none", "one scenario: an interval needs two"
    rng = np.random.default_rng(20261201) if rng is None else rng
    if not isinstance(rng, np.random.Generator):
        raise InputError(None, None, "rng", "rng must be a numpy Generator, e.g. np.random.default_rng(1)")
    share, mc = _p_below(pa, na, pb, nb, prior, int(draws), rng)
    return PassRateComparison(
        strata=int(pa.size), scenarios=g, runs_a=int(na.sum()), runs_b=int(nb.sum()),
        passes_a=int(pa.sum()), passes_b=int(pb.sum()), rate_a=float(100 * np.mean(pa / na)),
        rate_b=float(100 * np.mean(pb / nb)), difference=float(diff.mean()),
        interval=(float(interval[0]), float(interval[1])), confidence_level=confidence_level,
        interval_method=how, test=test, p_b_below_a=float(share),
        prior=f"Beta({prior[0]:g}, {prior[1]:g}) per stratum and arm", draws=int(draws), mc_error=float(mc),
        detection_limit=float(limit), uninformative=test.uninformative, verdict=verdict,
        runs_needed_per_arm=needed, alpha=alpha, power=power, ceiling=float(ceiling), unknown=unknown,
        unknown_policy=unknown_policy, paired=test.fixed is not None, interval_reason=reason)
