"""What a success costs: a ratio of two means over scenarios, and per-run means and quantiles.

Cost per success is total spend over passes, with every run charged: a failed or errored run
spent money too, and dividing only the passing runs' spend by the passes would hide it. Runs
whose cost was not recorded are counted and set apart, never read as zero: the spend per run
is the mean over the runs that carry a cost, and the ratio is that mean over the pass rate,
``(C / M) / (K / N)`` with C the known spend, M the runs carrying it, K the passes and N the runs.
When every run carries a cost this is exactly C / K.

The scenario is the sampling unit: its runs share a task, so their spend and their outcomes move
together. Two intervals, both checked for coverage by simulation (tests/decisions):

* ``"delta"`` (default): the delta method on the log of the ratio, from per-scenario sums (the
  influence of scenario g is c_g/C̄ + n_g/N̄ − m_g/M̄ − k_g/K̄), Student t on G − 1 df. The log scale
  keeps the interval positive and follows the right skew of spend. O(G).
* ``"bootstrap"``: the bootstrap-t over scenarios (multinomial weights on the per-scenario sums;
  each resample's log ratio studentized by its own delta-method error), which follows the skew
  of spend where the symmetric interval misses high. O(resamples × G).

The delta error carries the CR1 factor G / (G − 1) (without it the interval covers about 0.92 with
ten scenarios and skewed spend); the resamples' errors do not, so the bootstrap-t interval is the
bootstrap's widened by sqrt(G / (G − 1)).

>>> import numpy as np
>>> r = cost_per_success([0.2, 0.4, 0.1, 0.3, float("nan")], [1, 0, 1, 1, 0], ["a", "a", "b", "c", "c"])
>>> round(r.estimate, 4), r.passes, r.runs, r.unknown_cost
(0.4167, 3, 5, 1)
>>> lo, hi = r.interval
>>> bool(lo < r.estimate < hi)
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from ..errors import UsageError

METHODS = ("delta", "bootstrap")


@dataclass(frozen=True)
class CostPerSuccess:
    """Spend per passing run with its confidence interval, clustered by scenario.

    ``estimate`` is NaN with a ``reason`` when it is undefined (no pass, no known cost);
    ``interval`` is ``(nan, nan)`` with a reason when there is no spread to build it on.
    """

    estimate: float
    interval: tuple[float, float]
    runs: int
    passes: int
    known_cost: int
    unknown_cost: int
    spend: float
    scenarios: int
    method: str
    confidence_level: float
    reason: str | None = None

    def to_dict(self) -> dict:
        return {"estimate": _num(self.estimate), "interval": [_num(x) for x in self.interval], "runs": self.runs,
                "passes": self.passes, "known_cost": self.known_cost, "unknown_cost": self.unknown_cost,
                "spend": self.spend, "scenarios": self.scenarios, "method": self.method,
                "confidence_level": self.confidence_level, "reason": self.reason}


@dataclass(frozen=True)
class PerRun:
    """A per-run quantity (latency, spend, tokens): its mean with a scenario-clustered interval and
    its 95th percentile with a distribution-free interval (order statistics, runs as independent)."""

    name: str
    runs: int
    unknown: int
    mean: float
    mean_interval: tuple[float, float]
    p95: float
    p95_interval: tuple[float, float]
    confidence_level: float

    def to_dict(self) -> dict:
        return {"name": self.name, "runs": self.runs, "unknown": self.unknown, "mean": _num(self.mean),
                "mean_interval": [_num(x) for x in self.mean_interval], "p95": _num(self.p95),
                "p95_interval": [_num(x) for x in self.p95_interval], "confidence_level": self.confidence_level}


def _num(x: float) -> float | None:
    return float(x) if x is not None and math.isfinite(x) else None


def _check_level(confidence_level: float) -> float:
    if not 0 < confidence_level < 1:
        raise UsageError(f"confidence_level={confidence_level!r} must lie strictly between 0 and 1")
    return float(confidence_level)


def _groups(clusters, size: int) -> tuple[np.ndarray, int]:
    labels = np.asarray(clusters).reshape(-1)
    if labels.size != size:
        raise UsageError(f"clusters has {labels.size} entries for {size} runs; give one per run")
    _, index = np.unique(labels, return_inverse=True)
    return index, int(index.max()) + 1 if size else 0


def scenario_sums(cost, passed, clusters) -> np.ndarray:
    """Per scenario ``(known spend, runs carrying a cost, passes, runs)``, shape (G, 4), in label order.

    ``passed`` is 1/0 per run (an unknown outcome already counted under the declared policy);
    ``cost`` is NaN where it was not recorded.

    >>> scenario_sums([1.0, float("nan"), 2.0], [1, 0, 1], ["x", "x", "y"]).tolist()
    [[1.0, 1.0, 1.0, 2.0], [2.0, 1.0, 1.0, 1.0]]
    """
    c = np.asarray(cost, dtype=float).reshape(-1)
    k = np.asarray(passed, dtype=float).reshape(-1)
    if k.size != c.size:
        raise UsageError(f"passed has {k.size} entries for {c.size} costs; give one per run")
    index, g = _groups(clusters, c.size)
    known = np.isfinite(c)
    out = np.zeros((g, 4))
    np.add.at(out, (index, 0), np.where(known, c, 0.0))
    np.add.at(out, (index, 1), known.astype(float))
    np.add.at(out, (index, 2), k)
    np.add.at(out, (index, 3), 1.0)
    return out


def cost_per_success_sums(sums, *, method: str = "delta", confidence_level: float = 0.95,
                          resamples: int = 2000, rng: np.random.Generator | None = None) -> CostPerSuccess:
    """:func:`cost_per_success` from per-scenario sums (:func:`scenario_sums`), e.g. read by SQL.

    >>> r = cost_per_success_sums([[3.0, 3, 1, 3], [2.0, 2, 2, 2], [4.0, 2, 1, 2]])
    >>> round(r.estimate, 3), r.unknown_cost, r.scenarios
    (2.25, 0, 3)
    """
    level = _check_level(confidence_level)
    if method not in METHODS:
        raise UsageError(f"method={method!r} must be one of {', '.join(METHODS)}")
    s = np.asarray(sums, dtype=float).reshape(-1, 4)
    c, m, k, n = s.sum(axis=0)
    g = s.shape[0]
    nan = (math.nan, math.nan)
    base = dict(runs=int(n), passes=int(k), known_cost=int(m), unknown_cost=int(n - m), spend=float(c),
                scenarios=g, method=method, confidence_level=level)
    if m == 0:
        return CostPerSuccess(math.nan, nan, reason="no run carries a cost", **base)
    if k == 0:
        return CostPerSuccess(math.nan, nan, reason=f"no run of {int(n)} passed: no success to charge the spend to",
                              **base)
    estimate = float(c * n / (m * k))
    if c == 0:
        return CostPerSuccess(estimate, nan, reason="every known cost is zero", **base)
    if g < 2:
        return CostPerSuccess(estimate, nan, reason="one scenario: an interval over scenarios needs two", **base)
    centre = math.log(estimate)
    u = _influence(s, s.mean(axis=0))
    se = float(math.sqrt(np.sum((u - u.mean()) ** 2) / (g - 1) / g * g / (g - 1)))   # CR1: × G/(G − 1)
    if se == 0:
        return CostPerSuccess(estimate, nan, reason="no spread across scenarios", **base)
    tail = (1 - level) / 2
    if method == "delta":
        t = float(stats.t.ppf(1 - tail, g - 1))
        low, high = math.exp(centre - t * se), math.exp(centre + t * se)
    else:
        if resamples < 100:
            raise UsageError(f"resamples={resamples} must be at least 100")
        rng = np.random.default_rng(20261201) if rng is None else rng
        weights = rng.multinomial(g, np.full(g, 1.0 / g), size=int(resamples)).astype(float)
        means = (weights @ s) / g                                    # (B, 4) resampled means
        with np.errstate(divide="ignore", invalid="ignore"):
            logs = np.log(means[:, 0]) + np.log(means[:, 3]) - np.log(means[:, 1]) - np.log(means[:, 2])
            ub = _influence(s[None, :, :], means[:, None, :])       # (B, G) influence under each resample
            centred = ub - (weights * ub).sum(axis=1, keepdims=True) / g
            se_b = np.sqrt((weights * centred ** 2).sum(axis=1) / (g - 1) / g)   # plug-in, no CR1
            tb = (logs - centre) / se_b
        tb = np.sort(np.where(np.isfinite(tb), tb, np.inf))   # no pass or no known cost: unbounded
        lo_t, hi_t = np.quantile(tb, [tail, 1 - tail], method="inverted_cdf")
        low = math.exp(centre - hi_t * se) if math.isfinite(hi_t) else 0.0
        high = math.exp(centre - lo_t * se) if math.isfinite(lo_t) else math.inf
    return CostPerSuccess(estimate, (float(low), float(high)), **base)


def _influence(s, means):
    """Each scenario's influence on the log ratio, c/C̄ + n/N̄ − m/M̄ − k/K̄ (broadcasts over resamples)."""
    return s[..., 0] / means[..., 0] - s[..., 1] / means[..., 1] - s[..., 2] / means[..., 2] + s[..., 3] / means[..., 3]


def cost_per_success(cost, passed, clusters, *, method: str = "delta", confidence_level: float = 0.95,
                     resamples: int = 2000, rng: np.random.Generator | None = None) -> CostPerSuccess:
    """Spend per pass, every run charged, with an interval clustered by ``clusters`` (see the module docstring).

    ``cost`` per run (NaN where not recorded), ``passed`` per run as 1/0 (an unknown outcome
    already counted under the declared policy), ``clusters`` the scenario of each run.

    >>> r = cost_per_success([1.0, 1.0, 1.0, 1.0], [1, 0, 1, 0], ["a", "a", "b", "b"])
    >>> r.estimate, r.reason
    (2.0, 'no spread across scenarios')
    """
    return cost_per_success_sums(scenario_sums(cost, passed, clusters), method=method,
                                 confidence_level=confidence_level, resamples=resamples, rng=rng)


def quantile_interval(values, q: float, *, confidence_level: float = 0.95) -> tuple[float, float, float]:
    """``(quantile, low, high)``: the sample quantile and a distribution-free interval from order
    statistics (the ranks a binomial(n, q) brackets), runs taken as independent; an end the runs
    cannot reach is NaN.

    >>> est, lo, hi = quantile_interval(list(range(1, 101)), 0.95)
    >>> est, lo, hi
    (95.0, 90.0, 100.0)
    """
    x = np.sort(np.asarray(values, dtype=float).reshape(-1))
    x = x[np.isfinite(x)]
    n = x.size
    if n == 0:
        return math.nan, math.nan, math.nan
    level = _check_level(confidence_level)
    estimate = float(np.quantile(x, q, method="inverted_cdf"))
    tail = (1 - level) / 2
    lo_rank = int(stats.binom.ppf(tail, n, q))          # P(B < lo_rank) <= tail: x[lo_rank - 1] 1-based
    hi_rank = int(stats.binom.ppf(1 - tail, n, q)) + 1
    low = float(x[lo_rank - 1]) if lo_rank >= 1 else math.nan
    high = float(x[hi_rank - 1]) if hi_rank <= n else math.nan
    return estimate, low, high


def per_run(name: str, values, clusters, *, confidence_level: float = 0.95) -> PerRun:
    """Mean (interval clustered by ``clusters``, CR1 with t on G − 1) and 95th percentile of a per-run
    quantity; NaN values are the runs that did not record it, counted in ``unknown``.

    >>> p = per_run("latency", [1.0, 2.0, 3.0, float("nan")], ["a", "b", "c", "c"])
    >>> p.runs, p.unknown, p.mean, p.p95
    (3, 1, 2.0, 3.0)
    """
    from ..inference import clustered_interval

    level = _check_level(confidence_level)
    y = np.asarray(values, dtype=float).reshape(-1)
    labels = np.asarray(clusters, dtype=object).reshape(-1)
    if labels.size != y.size:
        raise UsageError(f"clusters has {labels.size} entries for {y.size} values; give one per run")
    known = np.isfinite(y)
    nan = (math.nan, math.nan)
    if not known.any():
        return PerRun(name, 0, int(y.size), math.nan, nan, math.nan, nan, level)
    fit = clustered_interval(y[known], labels[known].astype(str), confidence_level=level, unit="scenario")
    interval = (fit.low, fit.high) if fit.clusters >= 2 and fit.standard_error > 0 else nan
    p95, lo, hi = quantile_interval(y[known], 0.95, confidence_level=level)
    return PerRun(name, int(known.sum()), int((~known).sum()), float(fit.statistic), interval, p95, (lo, hi), level)
