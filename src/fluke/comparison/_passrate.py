"""Did the pass rate move? Two versions compared on pass rates, stratum by stratum.

The input is counts per stratum (a scenario, or a scenario × condition cell): passes and
trials in arm A and in arm B. The answer has four parts, each with what it rests on:

* the **difference** in average pass rate (B − A, in percentage points): the mean over strata
  of the per-stratum difference, with two intervals that answer two questions. ``interval``
  (*these runs*) inverts the verdict's own stratified test
  (:func:`~fluke.comparison.verdict_interval`): it excludes 0 exactly when the verdict is
  *different*. ``new_tasks_interval`` (*would it hold on new tasks*: scenarios as a sample)
  is clustered by scenario, CR2 with Bell–McCaffrey degrees of freedom; none when every
  scenario gave the same difference, since a zero-width interval from finite data claims a
  certainty the runs do not have;
* the **test** (:func:`~fluke.comparison.stratified_test`): Cochran–Mantel–Haenszel, exact
  conditional when counts are small, exact McNemar when every stratum holds one run per arm;
* the **Bayesian** P(B's average pass rate < A's), from independent Beta posteriors per stratum
  and arm (prior named in the result), by Monte Carlo with a declared generator below 100
  strata and by an Edgeworth expansion from there on (``p_method`` says which);
* the **detection limit** (:func:`~fluke.comparison.design_limits`): the smallest regression
  of B, in points and the same in every stratum, that the test would find at α with the
  stated power, the power computed under that regression (exact for McNemar); beside it
  ``improvement_limit``, the same for an improvement. A limit above the ceiling, or none at
  all, makes the verdict *too small to tell*.

The verdict comes from the test and the limit (:func:`~fluke.comparison.verdict_of`).

>>> r = compare_pass_rates([5, 9, 2], [10, 10, 10], [8, 10, 6], [10, 10, 10])
>>> round(r.difference, 1), r.test.method, r.verdict
(26.7, 'Cochran–Mantel–Haenszel', 'different')
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np
from scipy import special

from ..errors import UsageError
from ..policies import UNKNOWN_POLICIES, UnknownPolicy
from ._newtasks import new_tasks_interval
from ._limit import DIRECTIONS, regression_limit, verdict_interval
from ._ratelaw import fitted_concentration, posterior_law
from ._stratified import StratifiedTest, stratified_test
from ..format import fmt_interval, fmt_is
from ._verdict import CLOSING_STATEMENT, DIFFERENT, TOO_SMALL, detection_z, verdict_of

__all__ = ["UNKNOWN_POLICIES", "PassRateComparison", "compare_pass_rates", "design_limits", "pass_rate_limit"]



def limit_phrase(verdict: str, direction: str | None, difference: float, limit: float,
                 improvement_limit: float = math.nan, *, power: float = 0.8, ceiling: float = 5.0) -> str:
    """What a comparison's detection limit says, worded for the verdict it sits beside.

    The one wording every verb, the demo and the report print. After *different* the limit is
    a property of the design, not a doubt about the finding; otherwise it is what the runs
    could not have seen, in the direction of a regression of B (and an improvement's limit,
    when given and different). ``direction`` is "higher" or "lower" (B against A) after
    *different*; limits and ``difference`` are in points, inf when no limit exists.

    >>> limit_phrase("different", "higher", 15.0, 12.0, 16.1)
    'the design had 80% power only for an improvement of 16.1 points or more; this one was seen anyway'
    >>> limit_phrase("no significant difference", None, 0.4, 3.2, 3.0, ceiling=5)
    'could not have detected a difference below 3.2 points (ceiling 5) in the direction of a regression of B, \
at 80% power; an improvement below 3.0 points'
    """
    def pts(x):
        return f"{x:.1f} points" if math.isfinite(x) else "any size up to 100 points"

    shown = f"{power:.0%}"
    if verdict == DIFFERENT:
        up = direction == "higher"
        chosen = improvement_limit if up else limit
        word = "an improvement" if up else "a regression"
        if not math.isfinite(chosen) or abs(difference) < chosen:
            return f"the design had {shown} power only for {word} of {pts(chosen)} or more; this one was seen anyway"
        return f"the design had {shown} power for {word} of {pts(chosen)} or more"
    if not math.isfinite(limit):
        return (f"no regression of B that the runs leave room for would have been found with {shown} power "
                f"(ceiling {ceiling:g})")
    line = (f"could not have detected a difference below {limit:.1f} points "
            f"(ceiling {ceiling:g}) in the direction of a regression of B, at {shown} power")
    if math.isinf(improvement_limit):
        line += "; no improvement that the runs leave room for would have been found"
    elif not math.isnan(improvement_limit) and f"{improvement_limit:.1f}" != f"{limit:.1f}":
        line += f"; an improvement below {pts(improvement_limit)}"
    return line


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
    unknown_policy: UnknownPolicy
    paired: bool
    interval_reason: str | None = None
    statement: str = CLOSING_STATEMENT
    improvement_limit: float = math.inf
    weighted_difference: float = math.nan
    new_tasks_interval: tuple[float, float] = (math.nan, math.nan)
    new_tasks_level: float = 0.95
    new_tasks_method: str = "none"
    p_method: str = "Monte Carlo"

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
                f"ceiling {self.ceiling:g} points; prior {self.prior}; "
                f"{self.unknown_policy.describe(self.unknown[0] + self.unknown[1])} (unknown: {self.unknown_policy})")

    def limit_clause(self) -> str:
        """What the detection limit says, worded for the verdict it sits beside (:func:`limit_phrase`)."""
        return limit_phrase(self.verdict, self.direction, self.difference, self.detection_limit,
                            self.improvement_limit, power=self.power, ceiling=self.ceiling)

    def new_tasks(self) -> str:
        """The second interval: would the difference hold on new tasks (scenarios as a sample)?"""
        lo, hi = self.new_tasks_interval
        if not math.isfinite(lo):
            return f"on new tasks: no interval ({self.interval_reason})"
        return (f"on new tasks (scenarios as a sample): {fmt_interval(lo, hi, digits=1, signed=True)} at "
                f"{self.new_tasks_level:.0%} "
                f"({self.new_tasks_method})")

    def summary(self) -> str:
        """One line: the verdict, the difference with its interval, p, P(B < A) and the limit."""
        lo, hi = self.interval
        line = (f"{self.verdict}: B − A = {self.difference:+.1f} points {fmt_interval(lo, hi, digits=1, signed=True)} "
                f"({self.test.method} "
                f"{fmt_is('p', self.pvalue, kind='p')}); P(B < A) = {self.p_b_below_a:.3f}; {self.limit_clause()}; "
                f"{self.uninformative} of {self.strata} strata carry no information")
        if self.verdict == TOO_SMALL and self.runs_needed_per_arm is not None:
            line += f"; about {self.runs_needed_per_arm:,} runs per arm would be needed"
        return line

    def to_dict(self) -> dict:
        """Plain data for JSON: every field, the test's fields nested, and the derived ones."""
        out = asdict(self)
        out.update(pvalue=self.pvalue, direction=self.direction, summary=self.summary(), limit_text=self.limit_clause(),
                   conditional_on=self.conditional_on(), interval=list(self.interval),
                   new_tasks_interval=list(self.new_tasks_interval), unknown=list(self.unknown))
        return out


def _arrays(passes_a, trials_a, passes_b, trials_b):
    out = []
    for name, value in (("passes_a", passes_a), ("trials_a", trials_a), ("passes_b", passes_b),
                        ("trials_b", trials_b)):
        arr = np.asarray(value, dtype=float).reshape(-1)
        if arr.size and (not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr))):
            raise UsageError(f"{name} must be whole numbers", argument=name)
        out.append(arr.astype(np.int64))
    if len({a.size for a in out}) != 1:
        raise UsageError("passes_a, trials_a, passes_b and trials_b need one "
                         f"entry per stratum; got {[a.size for a in out]}", argument="trials_b")
    if out[0].size == 0:
        raise UsageError("no strata: the two arms share no scenario to compare",
                         argument="trials_a", hint="check the selectors and the scenario filter")
    for k, n, kn, nn in ((out[0], out[1], "passes_a", "trials_a"), (out[2], out[3], "passes_b", "trials_b")):
        if n.min() < 1:
            raise UsageError(f"{nn}={int(n.min())} must be at least 1 in every stratum",
                             argument=nn, hint="compare only the strata both arms ran")
        if k.min() < 0 or np.any(k > n):
            raise UsageError(f"{kn} must lie between 0 and {nn} in every stratum", argument=kn)
    return out


def pass_rate_limit(variance, trials_a, trials_b, *, alpha: float = 0.05, power: float = 0.8):
    """The shift in points detected with V taken under the null: 100·(z₁₋α/₂ + z_power)·√V / Σ n_A n_B/(n_A + n_B).

    ``variance`` is the test's information V (a number, or one per row of 2-D trials, strata
    along the last axis); inf where V = 0. Not the limit ``compare`` prints: its power is
    ``power`` only where the variance under the shift equals the null's (rates away from 0
    and 1, many informative strata); near 1 it over-promises (30 scenarios × 10 runs at 0.98:
    3.2 points, power 0.55). The printed limit, solved from power under the alternative, is
    :func:`design_limits`.

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


#: The largest share of the room a shift has (the mean pass share for a regression) that a
#: printed limit may take; beyond it the limit is refused (see :func:`design_limits`).
ROOM_SHARE = 0.5


#: the one-sided confidence the room of a paired design is read at
ROOM_CONFIDENCE = 0.95


def _room_bound(successes: float, trials: float) -> float:
    """The lower one-sided :data:`ROOM_CONFIDENCE` Clopper–Pearson bound of a share."""
    if successes <= 0:
        return 0.0
    return float(special.betaincinv(successes, trials - successes + 1, 1 - ROOM_CONFIDENCE))


def design_limits(passes_a, trials_a, passes_b, trials_b, *, alpha: float = 0.05, power: float = 0.8,
                  directions=DIRECTIONS):
    """The (regression, improvement) detection limits in points of a design with these counts.

    ``directions`` names the limits wanted, in the order returned (both by default); a
    leaderboard prints only the regression limit and asks for that one alone.

    Each stratum starts from its pooled pass share (both arms: the estimate under no
    difference). Where a shift runs into 0 or 1, each stratum's rate is read through its
    posterior under a Beta law fitted across the strata (:mod:`fluke.comparison._ratelaw`):
    a scenario seen at 0 of 40 may still sit above 0, and falls by E[min(x, δ)], not δ. See
    :func:`fluke.comparison.regression_limit`.

    A limit larger than half the room the shift has (:data:`ROOM_SHARE` of the mean pass
    share for a regression, of the mean failure share for an improvement) is refused (inf:
    *too small to tell*): which strata can still move by that much is more than the runs can
    tell. A paired design (one run per arm everywhere: exact McNemar, the spread of the rates
    read off the discordant pairs) is refused when its limit exceeds the room at the low end
    of what the runs allow, or when fewer discordant pairs, as the runs also allow, would
    leave no shift within that room with the power (:func:`_paired_limits`). The atlas
    (docs/atlas.md) checks the power at every printed limit.

    >>> [round(x, 1) for x in design_limits([12] * 30, [20] * 30, [12] * 30, [20] * 30)]
    [8.1, 7.9]
    >>> design_limits([19] * 30, [20] * 30, [19] * 30, [20] * 30)[1]   # 3.0 points of a 5-point room
    inf
    >>> [round(x, 1) for x in design_limits([12] * 30, [20] * 30, [12] * 30, [20] * 30, directions=["regression"])]
    [8.1]
    """
    directions = tuple(directions)
    if not directions or any(d not in DIRECTIONS for d in directions):
        raise UsageError(f"directions={directions!r} must name one or more of {DIRECTIONS}", argument="directions")
    pa, na, pb, nb = (np.asarray(x, dtype=float).reshape(-1) for x in (passes_a, trials_a, passes_b, trials_b))
    rates = (pa + pb) / (na + nb)
    if np.all(na == 1) and np.all(nb == 1):
        return _paired_limits(pa, pb, alpha=alpha, power=power, directions=directions)
    law = posterior_law(pa + pb, na + nb, fitted_concentration(pa + pb, na + nb))
    rooms = {"regression": ROOM_SHARE * 100 * float(rates.mean()),
             "improvement": ROOM_SHARE * 100 * float(1 - rates.mean())}
    limits = ((regression_limit(rates, na, nb, alpha=alpha, power=power, direction=d, law=law), rooms[d])
              for d in directions)
    return tuple(x if x <= room else math.inf for x, room in limits)


def _paired_limits(pa, pb, *, alpha, power, directions=DIRECTIONS):
    """The exact McNemar limits of a paired design, or inf where the runs cannot vouch for one.

    The printed limit reads the spread of the rates off the discordant pairs. It is refused
    when, at the low end of what the 2G runs allow (one-sided :data:`ROOM_CONFIDENCE`
    Clopper–Pearson), the room to move is smaller than the limit, or fewer discordant pairs
    (rates more spread: more scenarios a shift cannot move by its full size) leave no shift
    within that room with the power.
    """
    g = pa.size
    rates = (pa + pb) / 2
    ones = np.ones(g)
    d = float(np.sum(pa != pb))
    h, low = d / (2 * g), _room_bound(d, g) / 2
    k = float(np.sum(pa + pb))
    rooms = {"regression": 100 * _room_bound(k, 2 * g), "improvement": 100 * _room_bound(2 * g - k, 2 * g)}
    out = []
    for direction in directions:
        room = rooms[direction]
        limit = regression_limit(rates, ones, ones, alpha=alpha, power=power, direction=direction, discordance=h)
        if limit <= room and low < h:
            worst = regression_limit(rates, ones, ones, alpha=alpha, power=power, direction=direction,
                                     discordance=(h, low))
            limit = limit if worst <= room else math.inf
        out.append(limit if limit <= room else math.inf)
    return tuple(out)


def _runs_needed(pa, na, pb, nb, *, ceiling, alpha, power):
    """Runs per arm (same scenarios, same rates, k times the runs in each) whose limit reaches the ceiling."""
    rates = (pa + pb) / (na + nb)
    room = ROOM_SHARE * 100 * float(rates.mean())
    if not room > 0:
        return None
    # the limit must reach the ceiling and stay within the room design_limits allows it
    ceiling = min(ceiling, room * (1 - 1e-9))

    def limit(k):
        return regression_limit(rates, k * na, k * nb, alpha=alpha, power=power)

    now = limit(1.0)
    # the limit falls about as 1/√k with k times the runs: start there, then bracket and bisect
    guess = max((now / ceiling) ** 2, 1.0) if math.isfinite(now) else 2.0
    low, high = max(guess / 1.5, 1.0), guess * 1.5
    while limit(high) > ceiling:
        low, high = high, 2 * high
        if high > 2**24:
            return None
    if low > 1.0 and limit(low) <= ceiling:
        low = 1.0
    for _ in range(14):
        mid = (low + high) / 2
        low, high = (low, mid) if limit(mid) <= ceiling else (mid, high)
    return math.ceil(high * max(float(na.sum()), float(nb.sum())))


# From this many strata on, the mean over strata is, by the central limit theorem, close enough
# to normal that the Edgeworth form below is more accurate than the Monte Carlo it replaces (its
# error falls as G^(-3/2); the Monte Carlo's stays near 1/(2√draws)) and costs G, not draws × G.
_EDGEWORTH_STRATA = 100


def _beta_cumulants(a, b):
    """The first four cumulants of Beta(a, b), elementwise."""
    s = a + b
    mean = a / s
    var = a * b / (s * s * (s + 1))
    k3 = 2 * a * b * (b - a) / (s**3 * (s + 1) * (s + 2))
    k4 = 6 * a * b * ((a - b) ** 2 * (s + 1) - a * b * (s + 2)) / (s**4 * (s + 1) ** 2 * (s + 2) * (s + 3))
    return mean, var, k3, k4


def p_below_edgeworth(passes_a, trials_a, passes_b, trials_b, prior=(1.0, 1.0)) -> float:
    """P(mean_s θ_B,s < mean_s θ_A,s) under independent Beta posteriors, by an Edgeworth expansion.

    The difference of the two means is a sum of 2G independent Beta variables, whose cumulants
    add: the expansion to order 1/G (skewness and excess kurtosis) of its distribution function
    at 0. Cost grows as G, not as draws × G; accurate to about G^(-3/2), so it is what
    :func:`compare_pass_rates` uses from 100 strata on.

    >>> round(p_below_edgeworth([40] * 200, [50] * 200, [40] * 150 + [39] * 50, [50] * 200), 3)
    0.803
    """
    a0, b0 = prior
    pa, na, pb, nb = (np.asarray(x, dtype=float).reshape(-1) for x in (passes_a, trials_a, passes_b, trials_b))
    g = pa.size
    ca = _beta_cumulants(a0 + pa, b0 + na - pa)
    cb = _beta_cumulants(a0 + pb, b0 + nb - pb)
    # Δ = mean θ_B − mean θ_A: κ_r(Δ) = (Σ κ_r(θ_B) + (−1)^r Σ κ_r(θ_A)) / G^r
    k1, k2, k3, k4 = ((float(np.sum(kb)) + (-1) ** r * float(np.sum(ka))) / g**r
                      for r, ka, kb in zip((1, 2, 3, 4), ca, cb, strict=True))
    sd = math.sqrt(k2)
    g1, g2 = k3 / sd**3, k4 / sd**4
    z = -k1 / sd
    he2, he3, he5 = z * z - 1, z**3 - 3 * z, z**5 - 10 * z**3 + 15 * z
    cdf = special.ndtr(z) - math.exp(-z * z / 2) / math.sqrt(2 * math.pi) * (
        g1 / 6 * he2 + g2 / 24 * he3 + g1 * g1 / 72 * he5)
    return float(min(max(cdf, 0.0), 1.0))


def _p_below(passes_a, trials_a, passes_b, trials_b, prior, draws, rng):
    """P(mean_s θ_B,s < mean_s θ_A,s) under independent Beta posteriors: (share, its error, how).

    By Monte Carlo below :data:`_EDGEWORTH_STRATA` strata, by :func:`p_below_edgeworth` from
    there on (its error is then below the Monte Carlo's, and reported as 0).
    """
    a0, b0 = prior
    g = passes_a.size
    if g >= _EDGEWORTH_STRATA:
        return p_below_edgeworth(passes_a, trials_a, passes_b, trials_b, prior), 0.0, "Edgeworth"
    below = 0
    chunk = max(1, 4_000_000 // (2 * g))
    for start in range(0, draws, chunk):
        m = min(chunk, draws - start)
        ta = rng.beta(a0 + passes_a, b0 + trials_a - passes_a, size=(m, g)).mean(axis=1)
        tb = rng.beta(a0 + passes_b, b0 + trials_b - passes_b, size=(m, g)).mean(axis=1)
        below += int((tb < ta).sum())
    share = below / draws
    return share, math.sqrt(max(share * (1 - share), 1.0 / draws) / draws), "Monte Carlo"


def compare_pass_rates(passes_a, trials_a, passes_b, trials_b, *, scenarios=None, alpha: float = 0.05,
                       power: float = 0.8, ceiling: float = 5.0, method: str = "auto",
                       prior: tuple[float, float] = (1.0, 1.0), draws: int = 20_000,
                       rng: np.random.Generator | None = None, unknown: tuple[int, int] = (0, 0),
                       unknown_policy: UnknownPolicy | str = "fail",
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
    ('exact McNemar', 'too small to tell', 2, inf)
    """
    pa, na, pb, nb = _arrays(passes_a, trials_a, passes_b, trials_b)
    if not ceiling > 0:
        raise UsageError(f"ceiling={ceiling!r} must be a positive number of points", argument="ceiling")
    if len(prior) != 2 or not (prior[0] > 0 and prior[1] > 0):
        raise UsageError(f"prior={prior!r} must be two positive numbers (a, b)", argument="prior")
    if draws < 100:
        raise UsageError(f"draws={draws} must be at least 100", argument="draws")
    unknown_policy = UnknownPolicy.of(unknown_policy, argument="unknown_policy")
    unknown = (int(unknown[0]), int(unknown[1]))
    if min(unknown) < 0:
        raise UsageError(f"unknown={unknown!r} must be counts of at least 0", argument="unknown")
    labels = np.arange(pa.size) if scenarios is None else np.asarray(scenarios).reshape(-1)
    if labels.size != pa.size:
        raise UsageError(f"scenarios has {labels.size} entries for {pa.size} strata", argument="scenarios")
    test = stratified_test(na - pa, na, nb - pb, nb, method=method)
    limit, better = design_limits(pa, na, pb, nb, alpha=alpha, power=power)
    verdict = verdict_of(test.pvalue, limit, alpha=alpha, ceiling=ceiling)
    needed = None
    if verdict == TOO_SMALL:
        needed = _runs_needed(pa, na, pb, nb, ceiling=ceiling, alpha=alpha, power=power)
    diff = 100 * (pb / nb - pa / na)
    g = int(np.unique(labels).size)
    weighted, low, high = verdict_interval(pa, na, pb, nb, pvalue=test.pvalue, alpha=alpha)
    how = f"inverts the stratified test at {1 - alpha:.0%}, around the Mantel–Haenszel difference {weighted:+.1f}"
    nt = new_tasks_interval(pa, na, pb, nb, labels, confidence_level=confidence_level)
    new_tasks, new_how, reason = (nt.low, nt.high), nt.method, nt.reason
    rng = np.random.default_rng(20261201) if rng is None else rng
    if not isinstance(rng, np.random.Generator):
        raise UsageError("rng must be a numpy Generator, e.g. np.random.default_rng(1)", argument="rng")
    share, mc, p_method = _p_below(pa, na, pb, nb, prior, int(draws), rng)
    return PassRateComparison(
        strata=int(pa.size), scenarios=g, runs_a=int(na.sum()), runs_b=int(nb.sum()),
        passes_a=int(pa.sum()), passes_b=int(pb.sum()), rate_a=float(100 * np.mean(pa / na)),
        rate_b=float(100 * np.mean(pb / nb)), difference=float(diff.mean()),
        interval=(float(low), float(high)), confidence_level=1 - alpha,
        interval_method=how, test=test, p_b_below_a=float(share),
        prior=f"Beta({prior[0]:g}, {prior[1]:g}) per stratum and arm",
        draws=int(draws) if p_method == "Monte Carlo" else 0,
        mc_error=float(mc),
        detection_limit=float(limit), uninformative=test.uninformative, verdict=verdict,
        runs_needed_per_arm=needed, alpha=alpha, power=power, ceiling=float(ceiling), unknown=unknown,
        unknown_policy=unknown_policy, paired=test.fixed is not None, interval_reason=reason,
        improvement_limit=float(better), weighted_difference=float(weighted),
        new_tasks_interval=(float(new_tasks[0]), float(new_tasks[1])), new_tasks_level=float(confidence_level),
        new_tasks_method=new_how, p_method=p_method)
