"""Planning runs before they are made: sample sizes, certification counts, and where the next runs go.

Three questions, each a pure function over counts:

* **Two versions** (:func:`paired_sample_size`): runs per scenario and arm so that the paired
  stratified test fluke will run (:func:`fluke.comparison.stratified_test`) detects a difference
  of δ points at α and power. The size starts from the information V = Σ n q_s(1 − q_s)/2 and
  slope W = G n/2 (limit z·√V/W with z = z₁₋α/₂ + z_power) and grows until
  :func:`paired_power` (the variance under the difference as well as under none; exact McNemar
  with one run per arm) reaches the power asked for. The limit it predicts is the one
  ``compare`` will print (:func:`printed_limit`: :func:`fluke.comparison.design_limits` over
  simulated unchanged pairs of that design), refused where ``compare`` would refuse it.
* **Certification** (:func:`certification_plan`): clean runs for P(θ > bar) ≥ level on one
  scenario and on every one of a suite's (:func:`fluke.inference.runs_to_certify`,
  :func:`fluke.inference.suite_runs_to_certify`).
* **Allocation** of a budget of B runs: for certifying a suite (:func:`allocate_certification`),
  each next run goes where one more clean run raises log P(all θ > bar) most, skipping scenarios
  already shown below the bar; for telling two versions apart (:func:`allocate_difference`),
  where it shrinks the standard error of the difference most (Neyman allocation, greedy).

>>> paired_sample_size(10, 0.7, scenarios=40).runs_per_scenario
9
>>> certification_plan(bar=0.9, level=0.95, scenarios=50).suite_runs
65
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass

import numpy as np
from scipy import special, stats

from ..comparison import ROOM_SHARE, design_limits, detection_z
from ..errors import UsageError

__all__ = ["Allocation", "CertificationPlan", "PairedPlan", "allocate_certification", "allocate_difference",
           "certification_plan", "certification_decided", "paired_power", "paired_sample_size", "printed_limit",
           "spread_evenly"]


def _rates(rate, scenarios: int | None) -> np.ndarray:
    r = np.atleast_1d(np.asarray(rate, dtype=float)).reshape(-1)
    if r.size == 1 and scenarios:
        r = np.full(int(scenarios), float(r[0]))
    if r.size == 0 or np.any((r < 0) | (r > 1)) or not np.all(np.isfinite(r)):
        raise UsageError("rate must be pass rates between 0 and 1 (one, or one per scenario)", argument="rate")
    return r


def _pooled(rates: np.ndarray, delta: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per scenario: the other arm's rate (a drop of δ, or a rise where a drop leaves [0, 1]), v̄, v_A + v_B."""
    other = np.where(rates - delta >= 0, rates - delta, np.minimum(rates + delta, 1.0))
    mid = (rates + other) / 2
    return other, mid * (1 - mid), rates * (1 - rates) + other * (1 - other)


@dataclass(frozen=True)
class PairedPlan:
    """Runs per scenario and arm (and scenarios) to detect ``difference`` points by the stratified test."""

    difference: float
    scenarios: int
    runs_per_scenario: int
    runs_per_arm: int
    detection_limit: float
    power_at_plan: float
    alpha: float
    power: float
    rate: float
    refused: float = 0.0          # share of simulated unchanged pairs whose limit compare refuses
    room: float = math.inf        # the largest regression limit compare prints here (points)

    def summary(self) -> str:
        head = (f"{self.runs_per_scenario} runs per scenario and version on {self.scenarios} scenarios "
                f"({self.runs_per_arm:,} per version, {2 * self.runs_per_arm:,} in all) detect a difference of "
                f"{self.difference:g} points at α = {self.alpha:g} with power {self.power:g}")
        if math.isfinite(self.detection_limit):
            limit = f"expected detection limit {self.detection_limit:.1f} points, as compare will print it"
        else:
            limit = (f"but compare would print no regression limit on {self.refused:.0%} of such runs, and so "
                     f"call a non-significant result too small to tell: it prints none above {ROOM_SHARE:.0%} of "
                     f"the mean pass rate ({self.room:.1f} points)")
        return f"{head} ({limit}; power at this size ≈ {self.power_at_plan:.3f})"

    def limit_rests_on(self) -> str:
        """What the predicted limit rests on: the simulated unchanged pairs it is the mean over."""
        return (f"as compare prints it (design_limits), the mean over {PRINTED_DRAWS} simulated unchanged pairs "
                f"of this design (seed {PRINTED_SEED})")


def paired_power(difference: float, rate, *, runs: int, scenarios: int | None = None,
                 alpha: float = 0.05) -> float:
    """Approximate power of the two-sided stratified test with ``runs`` per scenario and arm.

    Normal approximation of the CMH score Σ(a − E): mean n·Σ(q_B − q_A)/2 under the difference,
    variance n·Σ(v_A + v_B)/4, against the null variance n·Σ v̄/2 that the test divides by.

    With one run per scenario and arm the comparison runs exact McNemar, so the power is exact
    McNemar's against a regression of ``difference`` (:func:`fluke.comparison.shift_power`): the
    normal approximation promised 0.80 where 0.76 was achieved.

    >>> round(paired_power(10, 0.7, runs=9, scenarios=40), 3)
    0.804
    >>> round(paired_power(10, 0.9, runs=1, scenarios=201), 3)
    0.771
    """
    r = _rates(rate, scenarios)
    delta = difference / 100
    if int(runs) == 1:
        from ..comparison import shift_power

        return shift_power(delta, r, np.ones(r.size), np.ones(r.size), alpha=alpha)
    other, v0, v1 = _pooled(r, delta)
    n = float(runs)
    mean = n * np.abs(r - other).sum() / 2
    sd0, sd1 = math.sqrt(n * v0.sum() / 2), math.sqrt(n * v1.sum() / 4)
    if sd1 == 0:
        return 1.0 if mean > 0 else 0.0
    za = float(stats.norm.ppf(1 - alpha / 2))
    return float(stats.norm.sf((za * sd0 - mean) / sd1) + stats.norm.cdf((-za * sd0 - mean) / sd1))


def paired_sample_size(difference: float, rate, *, scenarios: int | None = None, runs: int | None = None,
                       alpha: float = 0.05, power: float = 0.8) -> PairedPlan:
    """How many runs (per scenario and arm), or how many scenarios, to detect ``difference`` points.

    ``rate`` is the expected pass rate of the first version (one number, or one per scenario).
    Give ``scenarios`` to get runs per scenario; give ``runs`` (per scenario and arm) instead to
    get the number of scenarios. The plan is the smallest size whose power against a regression
    of δ (:func:`paired_power`) reaches ``power``; ``detection_limit`` is the limit ``compare``
    is expected to print after the runs (:func:`printed_limit`), inf where it would refuse one.

    >>> p = paired_sample_size(5, 0.8, runs=5)
    >>> p.scenarios, round(p.detection_limit, 2)
    (219, 5.0)
    """
    if not difference > 0 or difference >= 100:
        raise UsageError(f"difference={difference!r} must be between 0 and 100 points", argument="difference")
    z = detection_z(alpha, power)
    delta = difference / 100
    if (scenarios is None) == (runs is None):
        raise UsageError("give scenarios (to plan runs) or runs (to plan scenarios), not both", argument="scenarios")
    if runs is not None:
        if runs < 1:
            raise UsageError(f"runs={runs} must be at least 1", argument="runs")
        r = _rates(rate, None)
        _, v0, _ = _pooled(r, delta)
        g = max(2, math.ceil(2 * z**2 * float(v0.mean()) / (runs * delta**2) - 1e-9))
        n = int(runs)
    else:
        if scenarios < 1:
            raise UsageError(f"scenarios={scenarios} must be at least 1", argument="scenarios")
        r = _rates(rate, scenarios)
        _, v0, _ = _pooled(r, delta)
        g = r.size
        n = max(1, math.ceil(2 * z**2 * float(v0.sum()) / (g**2 * delta**2) - 1e-9))
    rates = _rates(rate, g) if np.size(rate) == 1 else _rates(rate, None)
    # the size from V is where the search starts; the power under the difference (exact McNemar
    # with one run per arm, where the normal size promised 0.80 and 0.76 was achieved) decides
    if runs is not None and np.size(rate) == 1:
        while paired_power(difference, rates, runs=n, alpha=alpha) < power and rates.size < 10**6:
            rates = _rates(rate, rates.size + max(1, rates.size // 100))
    elif runs is None:
        while paired_power(difference, rates, runs=n, alpha=alpha) < power and n < 10**6:
            n += max(1, n // 100)
    limit, refused = printed_limit(rates, n, alpha=alpha, power=power)
    return PairedPlan(float(difference), int(rates.size), n, n * int(rates.size), limit,
                      paired_power(difference, rates, runs=n, alpha=alpha), alpha, power, float(rates.mean()),
                      refused, ROOM_SHARE * 100 * float(rates.mean()))


#: unchanged pairs :func:`printed_limit` simulates, and the seed it draws them from
PRINTED_DRAWS, PRINTED_SEED = 32, 20261202


def printed_limit(rate, runs: int, *, scenarios: int | None = None, alpha: float = 0.05,
                  power: float = 0.8) -> tuple[float, float]:
    """The regression limit ``compare`` is expected to print for this design, and how often it refuses one.

    ``compare`` prints :func:`fluke.comparison.design_limits` of the counts it is given, which
    read the pooled pass shares of the runs (their noise included) and refuse a limit the runs
    cannot vouch for. This draws :data:`PRINTED_DRAWS` unchanged pairs of the design (``runs``
    per scenario and arm, both arms at ``rate``; a fixed seed, so a plan is reproducible) and
    returns (the mean of the limits printed, the share of pairs on which none is printed); the
    limit is inf when most pairs would get none.

    >>> limit, refused = printed_limit(0.8, 22, scenarios=50)
    >>> round(limit, 1), refused
    (5.0, 0.0)
    >>> printed_limit(0.1, 4, scenarios=20)     # 10% pass: no regression limit above 5 points
    (inf, 1.0)
    """
    r = _rates(rate, scenarios)
    n = np.full(r.size, int(runs))
    rng = np.random.default_rng(PRINTED_SEED)
    limits = np.array([design_limits(rng.binomial(n, r), n, rng.binomial(n, r), n, alpha=alpha, power=power,
                                     directions=("regression",))[0] for _ in range(PRINTED_DRAWS)])
    finite = np.isfinite(limits)
    refused = float(1 - finite.mean())
    return (float(limits[finite].mean()) if refused < 0.5 else math.inf), refused


@dataclass(frozen=True)
class CertificationPlan:
    """Clean runs for P(θ > bar) ≥ level: on one new scenario, and on each of a suite's."""

    bar: float
    level: float
    scenarios: int
    single_runs: int
    suite_runs: int
    prior: str
    remaining: tuple[float, ...] | None = None   # per scenario, from counts already held

    def summary(self) -> str:
        return (f"{self.single_runs} clean runs certify one scenario (P(θ > {self.bar:g}) ≥ {self.level:g}); "
                f"{self.suite_runs} clean runs on each of {self.scenarios} certify all of them together "
                f"({self.suite_runs * self.scenarios:,} runs); prior {self.prior}")


def certification_plan(*, bar: float = 0.9, level: float = 0.95, scenarios: int = 1, passes=None, trials=None,
                       prior: tuple[float, float] = (1.0, 1.0)) -> CertificationPlan:
    """Clean runs to certify one scenario and a suite of ``scenarios`` (seed 001: 28 and 65 at 0.9, 0.95, 50).

    With ``passes``/``trials`` (one per scenario) the suite's count is the further clean runs on
    every scenario, and ``remaining`` the further clean runs each needs alone.

    >>> certification_plan(bar=0.9, level=0.95).single_runs
    28
    """
    from ..inference import posterior, runs_to_certify, suite_runs_to_certify

    if not 0 < bar < 1 or not 0 < level < 1:
        raise UsageError(f"bar={bar!r} and level={level!r} must lie strictly between 0 and 1", argument="bar")
    a, b = (float(x) for x in prior)
    base = posterior(np.zeros(1), np.zeros(1), prior=_prior(a, b))
    single = runs_to_certify(base, bar=bar, level=level)[0]
    remaining = None
    if passes is not None:
        k = np.asarray(passes, dtype=float)
        n = np.asarray(trials, dtype=float)
        belief = posterior(k, n, prior=_prior(a, b))
        scenarios = int(k.size)
        suite = suite_runs_to_certify(belief, bar=bar, level=level)
        remaining = tuple(float(x) for x in runs_to_certify(belief, bar=bar, level=level))
    else:
        if scenarios < 1:
            raise UsageError(f"scenarios={scenarios} must be at least 1", argument="scenarios")
        suite = suite_runs_to_certify(posterior(np.zeros(scenarios), np.zeros(scenarios), prior=_prior(a, b)),
                                      bar=bar, level=level)
    return CertificationPlan(bar, level, int(scenarios), _whole(single), _whole(suite),
                             f"Beta({a:g}, {b:g})", remaining)


def _whole(x: float) -> int:
    return int(x) if math.isfinite(x) else -1


def _prior(a: float, b: float):
    from ..inference import Prior

    return Prior(a, b)


@dataclass(frozen=True)
class Allocation:
    """Where the next ``budget`` runs go (``runs``, one per scenario), and what it is expected to buy."""

    decision: str
    budget: int
    runs: tuple[int, ...]
    before: float
    after_plan: float
    after_even: float
    measure: str
    draws: int = 0
    seed: int = 0


def _log_sf(alpha, beta, bar: float) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return np.log(special.betainc(beta, alpha, 1 - bar))


def certification_decided(passes, trials, *, bar: float, level: float, prior=(1.0, 1.0)) -> np.ndarray:
    """Per row of counts (suites along the first axis): 1 certified, −1 refuted (a scenario shown below), 0 open.

    >>> certification_decided([[40, 40], [0, 40]], [[40, 40], [10, 40]], bar=0.9, level=0.95).tolist()
    [1, -1]
    """
    k = np.atleast_2d(np.asarray(passes, dtype=float))
    n = np.atleast_2d(np.asarray(trials, dtype=float))
    a, b = prior[0] + k, prior[1] + n - k
    certified = _log_sf(a, b, bar).sum(axis=1) >= math.log(level)
    refuted = (special.betainc(a, b, bar) >= level).any(axis=1)
    return np.where(certified, 1, np.where(refuted, -1, 0))


def spread_evenly(budget: int, trials, open_=None, *, seed: int = 0) -> np.ndarray:
    """``budget`` runs spread evenly over the open scenarios, whatever order they are listed in.

    Each open scenario (all, when none is open) gets ``budget // G``; the remaining runs go one
    each to the scenarios with the fewest trials so far, ties broken by a permutation drawn
    from ``seed``. Giving the remainder to the first scenarios listed made the baseline, and
    every ratio against it, depend on the order of the suite (reproducer b17).

    >>> spread_evenly(7, [60, 5, 60, 5]).tolist(), spread_evenly(7, [5, 60, 5, 60]).tolist()
    ([1, 2, 2, 2], [2, 2, 2, 1])
    """
    n = np.asarray(trials, dtype=float).reshape(-1)
    open_ = np.ones(n.size, bool) if open_ is None else np.asarray(open_, bool).reshape(-1)
    idx = np.flatnonzero(open_) if open_.any() else np.arange(n.size)
    out = np.zeros(n.size, dtype=int)
    out[idx] = budget // idx.size
    rest = budget % idx.size
    if rest:
        tie = np.random.default_rng(seed).permutation(idx.size)
        order = np.lexsort((tie, n[idx]))          # fewest trials first, then the seeded tie-break
        out[idx[order[:rest]]] += 1
    return out


def allocate_certification(passes, trials, budget: int, *, bar: float = 0.9, level: float = 0.95,
                           prior=(1.0, 1.0), draws: int = 2000, seed: int = 0) -> Allocation:
    """Spread ``budget`` runs over a suite's scenarios to settle "every θ > bar" soonest.

    Greedy on the gain in log P(all θ > bar) that one more clean run brings; a scenario already
    shown below the bar (P(θ < bar) ≥ level) gets none. The expected gain is P(the decision is
    settled after the runs: certified, or a scenario shown below), by Monte Carlo over the
    posterior predictive (``draws``, ``seed``), for the plan and for spreading evenly
    (:func:`spread_evenly`, the same whatever order the scenarios are listed in).

    >>> a = allocate_certification([30, 30, 3], [30, 30, 3], 40, draws=500)
    >>> a.runs
    (5, 4, 31)
    """
    k = np.asarray(passes, dtype=float).reshape(-1)
    n = np.asarray(trials, dtype=float).reshape(-1)
    if k.size == 0 or k.shape != n.shape or np.any(k > n) or k.min() < 0:
        raise UsageError("passes and trials need one entry per scenario, 0 ≤ passes ≤ trials", argument="passes")
    if budget < 1:
        raise UsageError(f"budget={budget} must be at least 1 run", argument="budget")
    a, b = prior[0] + k, prior[1] + n - k
    shown_below = special.betainc(a, b, bar) >= level
    base = _log_sf(a, b, bar)
    m = np.zeros(k.size, dtype=int)
    heap = [(-(float(_log_sf(a[i] + 1, b[i], bar)) - base[i]), i) for i in range(k.size) if not shown_below[i]]
    heapq.heapify(heap)
    for _ in range(int(budget) if heap else 0):
        _, i = heapq.heappop(heap)
        m[i] += 1
        gain = float(_log_sf(a[i] + m[i] + 1, b[i], bar) - _log_sf(a[i] + m[i], b[i], bar))
        heapq.heappush(heap, (-gain, i))
    even = spread_evenly(int(budget), n, ~shown_below, seed=seed)
    rng = np.random.default_rng(seed)
    theta = rng.beta(a, b, size=(draws, k.size))

    def settled(extra):
        won = rng.binomial(extra, theta)
        return float((certification_decided(k + won, n + extra, bar=bar, level=level, prior=prior) != 0).mean())

    now = float(certification_decided(k, n, bar=bar, level=level, prior=prior)[0] != 0)
    return Allocation("certify the suite", int(budget), tuple(int(x) for x in m), now, settled(m), settled(even),
                      "P(decision settled)", int(draws), int(seed))


def allocate_difference(passes_a, trials_a, passes_b, trials_b, budget: int, *,
                        prior=(1.0, 1.0)) -> Allocation:
    """Spread ``budget`` runs (half to each version) to shrink the standard error of B − A most.

    Rates are posterior means; the next run pair goes where σ²_s(1/n_s − 1/(n_s + 1)) is largest,
    σ²_s the two arms' Bernoulli variances: the greedy form of Neyman allocation. The measure is
    the standard error, in points, of the mean over scenarios of the per-scenario difference.

    >>> allocate_difference([10, 5], [10, 10], [10, 5], [10, 10], 20).runs
    (2, 18)
    """
    arrays = [np.asarray(x, dtype=float).reshape(-1) for x in (passes_a, trials_a, passes_b, trials_b)]
    ka, na, kb, nb = arrays
    if len({x.size for x in arrays}) != 1 or ka.size == 0 or min(na.min(), nb.min()) < 1:
        raise UsageError("counts need one entry per scenario, every trial count at least 1", argument="trials_a")
    if budget < 2:
        raise UsageError(f"budget={budget} must be at least 2 runs (one per version)", argument="budget")
    pa = (prior[0] + ka) / (prior[0] + prior[1] + na)
    pb = (prior[0] + kb) / (prior[0] + prior[1] + nb)
    va, vb = pa * (1 - pa), pb * (1 - pb)
    g = ka.size

    def se(extra):
        return float(100 * math.sqrt(np.sum(va / (na + extra) + vb / (nb + extra))) / g)

    m = np.zeros(g, dtype=int)
    heap = [(-(va[i] / na[i] + vb[i] / nb[i] - va[i] / (na[i] + 1) - vb[i] / (nb[i] + 1)), i) for i in range(g)]
    heapq.heapify(heap)
    for _ in range(int(budget) // 2):
        _, i = heapq.heappop(heap)
        m[i] += 1
        x, y = na[i] + m[i], nb[i] + m[i]
        heapq.heappush(heap, (-(va[i] / x + vb[i] / y - va[i] / (x + 1) - vb[i] / (y + 1)), i))
    even = spread_evenly(int(budget) // 2, na + nb)
    return Allocation("tell the two versions apart", int(budget), tuple(int(2 * x) for x in m), se(0), se(m),
                      se(even), "standard error of B − A (points)")
