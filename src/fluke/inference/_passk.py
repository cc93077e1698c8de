"""Unbiased pass@k and pass^k, per scenario, averaged with declared weights.

For one scenario with ``n`` recorded trials of which ``c`` passed:

* pass@k = 1 − C(n−c, k) / C(n, k): the chance that at least one of k trials drawn without
  replacement from the recorded pool passes. Under independent, identically distributed
  trials it is an unbiased estimate of 1 − (1 − p)^k.
* pass^k = C(c, k) / C(n, k): the chance that all k drawn trials pass; unbiased for p^k.

Both need k ≤ n: with fewer trials than k (or none at all) the pool holds no k-subset, so
the statistic is undefined and is reported as such, with the reason. By default k runs
1 … the fewest trials n of any scenario, and beyond n = 10 over 1, 2, 5, 10, 20, 50, …, n
(:func:`default_ks`, :func:`pass_at_k_curve`). The
interval is over scenarios: the weighted mean's standard error from the spread of the
per-scenario estimates (CR1, Student t on G − 1, on the logit scale, widened to hold the same
interval with a pseudo-scenario at 0 and one at 1), so it speaks for
scenarios like these. The plug-in 1 − (1 − c/n)^k is biased
downwards for k > 1 and is only computed with a :class:`PlugInWarning`. Transforming an
*average* pass@1 into pass@k changes the target whenever scenarios differ in difficulty, so
that too is only done with a warning.

>>> r = pass_at_k([2], [10], k=3)
>>> round(r.statistic, 4)
0.5333
>>> round(pass_hat_k([2], [10], k=2).statistic, 4)
0.0222
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
from scipy import special
from ._lazy import lazy_stats as stats
from ._check import check_level
from ..errors import FlukeWarning, UsageError

__all__ = [
    "PassAtK", "PlugInWarning", "default_ks", "expected_pass_at_k", "pass_at_k", "pass_at_k_curve",
    "pass_at_k_from_average", "pass_at_k_plugin", "pass_hat_k",
]


class PlugInWarning(FlukeWarning):
    """A biased or target-changing pass@k formula was asked for."""


@dataclass(frozen=True)
class PassAtK:
    """pass@k or pass^k over scenarios.

    ``statistic`` is the weighted average of ``per_scenario`` (NaN when undefined, with
    ``reason`` saying why). ``weights`` are the declared weights, normalised to sum to one.
    ``warning`` is set when the number is not the unbiased estimator.
    """

    kind: str
    k: int
    statistic: float
    per_scenario: np.ndarray
    successes: np.ndarray
    trials: np.ndarray
    weights: np.ndarray
    reason: str | None = None
    warning: str | None = None
    estimator: str = "unbiased"
    conditional_on: str = field(default=(
        "the recorded trials of each scenario being exchangeable; the declared scenario weights"))
    low: float = float("nan")
    high: float = float("nan")
    standard_error: float = float("nan")
    confidence_level: float = 0.95
    interval_reason: str | None = None
    unknowns: int = 0
    unknown_policy: str = "fail"

    @property
    def defined(self) -> bool:
        """True when every scenario has at least k trials."""
        return self.reason is None


def _check(successes, trials, k, weights):
    c = np.asarray(successes)
    n = np.asarray(trials)
    if c.ndim != 1 or n.shape != c.shape:
        raise UsageError(f"successes (shape {c.shape}) and trials (shape {n.shape}) must be "
                         "one-dimensional arrays of the same length, one entry per scenario")
    if c.size == 0:
        raise UsageError("successes is empty: at least one scenario is needed")
    if not (np.issubdtype(c.dtype, np.integer) or np.all(np.mod(c, 1) == 0)):
        raise UsageError(f"successes={c.tolist()} must be whole counts")
    if not (np.issubdtype(n.dtype, np.integer) or np.all(np.mod(n, 1) == 0)):
        raise UsageError(f"trials={n.tolist()} must be whole counts")
    c = c.astype(np.int64)
    n = n.astype(np.int64)
    if np.any(n < 0):
        raise UsageError(f"trials={int(n[n < 0][0])} must be at least 0 in every scenario")
    if np.any(c < 0) or np.any(c > n):
        bad = int(np.flatnonzero((c < 0) | (c > n))[0])
        raise UsageError(f"successes={int(c[bad])} must lie between 0 and trials={int(n[bad])} "
                         f"(scenario {bad})")
    if isinstance(k, bool) or int(k) != k or k < 1:
        raise UsageError(f"k={k} must be a whole number of at least 1")
    k = int(k)
    if weights is None:
        w = np.full(c.size, 1.0 / c.size)
    else:
        w = np.asarray(weights, dtype=float)
        if w.shape != c.shape:
            raise UsageError(f"weights has {w.size} entries; it needs one per scenario ({c.size})")
        if np.any(~np.isfinite(w)) or np.any(w < 0) or w.sum() <= 0:
            raise UsageError(f"weights={w.tolist()} must be finite, non-negative and not all zero")
        w = w / w.sum()
    return c, n, k, w


#: Up to this k the subset ratio is the exact product of k factors; beyond, log-space (lgamma).
_PRODUCT_UP_TO = 32


def _subset_ratio(top: np.ndarray, n: np.ndarray, k: int) -> np.ndarray:
    """C(top, k) / C(n, k): exact zero when top < k.

    For k ≤ 32 the product of (top − j)/(n − j), j < k; beyond, exp of the difference of
    log-gamma terms, one vectorised pass whatever k is (relative error about 1e-12 at
    n = 10,000, against k × n work for the product).
    """
    top = np.asarray(top, dtype=np.int64)
    n = np.asarray(n, dtype=np.int64)
    if k <= _PRODUCT_UP_TO:
        j = np.arange(k)
        with np.errstate(divide="ignore", invalid="ignore"):
            factors = (top[:, None] - j) / (n[:, None] - j)
        ratio = np.prod(np.clip(factors, 0.0, None), axis=1)
        return np.where(top >= k, ratio, 0.0)
    from scipy.special import gammaln

    ok = (top >= k) & (n >= k)
    t = np.where(ok, top, k).astype(float)
    m = np.where(ok, n, k).astype(float)
    logs = gammaln(t + 1) - gammaln(t - k + 1) - gammaln(m + 1) + gammaln(m - k + 1)
    return np.where(ok, np.exp(logs), 0.0)


def _finish(kind, k, per, c, n, w, estimator="unbiased", warning=None, *, confidence_level=0.95,
            unknowns=0, unknown_policy="fail") -> PassAtK:
    short = n < k
    reason = None
    if short.any():
        idx = np.flatnonzero(short)
        empty = int(np.sum(n == 0))
        if empty:
            reason = (f"{empty} of {n.size} scenarios have no runs: {kind} is undefined there "
                      f"(a pool of 0 trials has no k-subset); drop them or record runs")
        else:
            reason = (f"k={k} exceeds the trials recorded in {idx.size} of {n.size} scenarios "
                      f"(fewest: n={int(n.min())}); {kind} needs at least k trials per scenario. "
                      f"Lower k to at most {int(n.min())} or record more trials")
        per = np.where(short, np.nan, per)
        stat = float("nan")
        bounds = (float("nan"), float("nan"), float("nan"), reason)
    else:
        stat = float(np.dot(w, per))
        bounds = _over_scenarios(per, w, stat, confidence_level)
    low, high, se, why = bounds
    return PassAtK(kind=kind, k=k, statistic=stat, per_scenario=per, successes=c, trials=n,
                   weights=w, reason=reason, warning=warning, estimator=estimator, low=low, high=high,
                   standard_error=se, confidence_level=confidence_level, interval_reason=why,
                   unknowns=int(unknowns), unknown_policy=unknown_policy)


def _logit_t(per, w, stat, df, level):
    """(low, high, SE) of the weighted mean by the t interval on the logit scale (CR1 SE)."""
    g = per.size
    se = float(np.sqrt(g / (g - 1) * np.sum((w * (per - stat)) ** 2)))
    if not (0 < stat < 1 and se > 0):
        return float("nan"), float("nan"), se
    t = special.stdtrit(df, 0.5 + level / 2)
    centre = np.log(stat / (1 - stat))
    half = t * se / (stat * (1 - stat))
    low, high = (1 / (1 + np.exp(-(centre + sign * half))) for sign in (-1, 1))
    return float(low), float(high), se


def _over_scenarios(per, w, stat, level):
    """The weighted mean's interval over scenarios, on the logit scale, widened for skew.

    Two t intervals on the logit scale (CR1 standard error from the spread of the
    per-scenario values, Student t on G − 1), and the interval is the smallest one holding
    both: one over the G scenarios; one with two pseudo-scenarios added, one at 0 and one at
    1, each weighing as much as a scenario (after the plus-two of Agresti and Coull). The
    per-scenario values are bounded and skewed (pass@k piles up at 1): the first alone covered
    82% at 10 scenarios × 5 trials (k = 3) and 48% when pass@10 sat near 1 and no scenario
    below it had been drawn; the pair holds at least 0.93 over the grid of
    tests/inference/test_passk_coverage.py. Within a few scenarios' worth of 0 or 1 a bound is
    widened to the Clopper–Pearson one (:func:`_count_ends`). When every scenario gives 1 (or
    0) the bound is the Clopper–Pearson one for "all G scenarios are at 1"; never a zero-width
    interval.
    """
    check_level(level, "confidence_level")
    used = w > 0
    g = int(used.sum())
    if g < 2:
        return float("nan"), float("nan"), float("nan"), "one scenario: no interval over scenarios"
    p, ww = per[used], w[used] / w[used].sum()
    edge = ((1 - level) / 2) ** (1 / g)
    se = float(np.sqrt(g / (g - 1) * np.sum((ww * (p - stat)) ** 2)))
    if stat >= 1 - 1e-12:
        return edge, 1.0, se, f"every scenario is at 1: the lower bound is that of {g} of {g} (Clopper–Pearson)"
    if stat <= 1e-12:
        return 0.0, 1 - edge, se, f"every scenario is at 0: the upper bound is that of 0 of {g} (Clopper–Pearson)"
    low, high, se = _logit_t(p, ww, stat, g - 1, level)
    plus = np.concatenate([p, [0.0, 1.0]])
    wplus = np.concatenate([ww * g, [1.0, 1.0]]) / (g + 2)
    low2, high2, _ = _logit_t(plus, wplus, float(np.dot(wplus, plus)), g - 1, level)
    low, high = _count_ends(float(np.fmin(low, low2)), float(np.fmax(high, high2)), stat, ww, g, level)
    return low, high, se, None


def _count_ends(low, high, stat, weights, g, level):
    """Widen a bound that sits within a few scenarios' worth of 0 (or of 1): the Clopper–Pearson end.

    With G* = 1/Σw² (the scenarios' effective number) and G*·stat (or G*·(1 − stat)) at most x*,
    :func:`fluke.inference.clopper_pearson_ends` on G*·stat of G*, at the normal tail beyond t on
    G − 1 (as :func:`fluke.inference.wilson_effective`). Per-scenario values in [0, 1] spread no
    more than pass/fail ones of the same mean: one scenario of 200 with 3 of 3 passes put the
    logit bound above a true pass^3 of 0.0005 (coverage 0.905, exactly, over the binomial law of
    such scenarios).
    """
    from ._clustered import clopper_pearson_ends

    size = 1.0 / float(np.sum(weights * weights))
    tail = float(special.ndtr(-special.stdtrit(g - 1, 0.5 + level / 2)))
    return clopper_pearson_ends(low, high, size * stat, size, tail)


def _counts(successes, trials, unknowns, unknown):
    from ._unknown import counts_with_unknowns

    k, n, missing = counts_with_unknowns(successes, trials, unknowns, unknown)
    return k, n, missing


#: Up to this many trials the default budgets are every k = 1 … n.
EVERY_K_UP_TO = 10


def default_ks(trials) -> list[int]:
    """The budgets k every scenario defines, ending at the fewest trials n of any scenario.

    Every k = 1 … n when n ≤ 10 (five trials give pass@1 … pass@5); beyond, the 1–2–5
    series below n and then n itself (1, 2, 5, 10, 20, 50, …, n): a short curve that
    still ends at the largest budget the runs support.

    >>> default_ks([5, 5, 7])
    [1, 2, 3, 4, 5]
    >>> default_ks([3, 0])
    []
    >>> default_ks([10_000, 12_000])
    [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000]
    >>> default_ks([30])
    [1, 2, 5, 10, 20, 30]
    """
    n = np.asarray(trials)
    top = int(n.min()) if n.size else 0
    if top <= EVERY_K_UP_TO:
        return list(range(1, top + 1))
    ks, scale = [], 1
    while scale < top:
        ks += [m * scale for m in (1, 2, 5) if m * scale < top]
        scale *= 10
    return ks + [top]


def pass_at_k_curve(successes, trials, ks=None, *, kind: str = "pass@k", weights=None,
                    confidence_level: float = 0.95, unknowns=None, unknown: str = "fail") -> list[PassAtK]:
    """pass@k (or ``kind="pass^k"``) for every k in ``ks`` (default: :func:`default_ks`).

    >>> [round(r.statistic, 3) for r in pass_at_k_curve([2, 5], [5, 5])]
    [0.7, 0.85, 0.95, 1.0, 1.0]
    >>> pass_at_k_curve([0], [0])[0].reason[:32]
    '1 of 1 scenarios have no runs: p'
    """
    if kind not in ("pass@k", "pass^k"):
        raise UsageError(f"kind={kind!r} must be 'pass@k' or 'pass^k'")
    _, n, _ = _counts(successes, trials, unknowns, unknown)
    ks = default_ks(n) if ks is None else list(ks)
    if not ks:
        ks = [1]                 # a scenario without runs: say why once, at k = 1
    fn = pass_at_k if kind == "pass@k" else pass_hat_k
    return [fn(successes, trials, k, weights=weights, confidence_level=confidence_level, unknowns=unknowns,
               unknown=unknown) for k in ks]


def pass_at_k(successes, trials, k: int, *, weights=None, confidence_level: float = 0.95,
              unknowns=None, unknown: str = "fail") -> PassAtK:
    """Unbiased pass@k per scenario, averaged with the declared ``weights`` (equal by default).

    ``successes[i]`` of ``trials[i]`` passed in scenario i. Undefined when any scenario has
    fewer than k trials. ``unknowns[i]`` runs of unknown outcome count as failed trials
    (``unknown="fail"``) or are left out (``"exclude"``). ``low``/``high`` are the interval
    over scenarios.

    >>> r = pass_at_k([0, 4], [4, 4], k=2)      # one impossible, one certain scenario
    >>> r.statistic, r.per_scenario.tolist()
    (0.5, [0.0, 1.0])
    >>> pass_at_k([1], [2], k=3).reason.startswith("k=3 exceeds")
    True
    """
    successes, trials, missing = _counts(successes, trials, unknowns, unknown)
    c, n, k, w = _check(successes, trials, k, weights)
    per = 1.0 - _subset_ratio(n - c, n, k)
    return _finish("pass@k", k, per, c, n, w, confidence_level=confidence_level, unknowns=missing,
                   unknown_policy=unknown)


def pass_hat_k(successes, trials, k: int, *, weights=None, confidence_level: float = 0.95,
               unknowns=None, unknown: str = "fail") -> PassAtK:
    """Unbiased pass^k (all of k trials pass) per scenario, averaged with declared ``weights``.

    >>> round(pass_hat_k([3, 4], [4, 4], k=2).statistic, 4)
    0.75
    """
    successes, trials, missing = _counts(successes, trials, unknowns, unknown)
    c, n, k, w = _check(successes, trials, k, weights)
    per = _subset_ratio(c, n, k)
    return _finish("pass^k", k, per, c, n, w, confidence_level=confidence_level, unknowns=missing,
                   unknown_policy=unknown)


def pass_at_k_plugin(successes, trials, k: int, *, weights=None) -> PassAtK:
    """The plug-in 1 − (1 − c/n)^k: biased downwards for k > 1. Always warns.

    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     round(pass_at_k_plugin([2], [10], k=3).statistic, 4)
    0.488
    """
    c, n, k, w = _check(successes, trials, k, weights)
    per = 1.0 - (1.0 - c / n) ** k
    message = (f"the plug-in 1 − (1 − c/n)^{k} is biased downwards for k > 1; "
               "use pass_at_k (the unbiased subset estimator)")
    warnings.warn(message, PlugInWarning, stacklevel=2)
    return _finish("pass@k", k, per, c, n, w, estimator="plug-in", warning=message)


def pass_at_k_from_average(average_pass1: float, k: int) -> float:
    """1 − (1 − average)^k from an *average* pass@1: warns, because the target changes.

    Scenarios differ in difficulty; averaging first and transforming after answers a
    question about a benchmark of identical scenarios. Compute pass@k per scenario instead.

    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     pass_at_k_from_average(0.5, 2)
    0.75
    """
    if not 0.0 <= average_pass1 <= 1.0:
        raise UsageError(f"average_pass1={average_pass1} must lie between 0 and 1")
    if isinstance(k, bool) or int(k) != k or k < 1:
        raise UsageError(f"k={k} must be a whole number of at least 1")
    warnings.warn(
        "transforming an average pass@1 into pass@k assumes every scenario has the same pass "
        "rate; with heterogeneous scenarios it is a different quantity. Compute pass@k per "
        "scenario and average with declared weights (pass_at_k)", PlugInWarning, stacklevel=2)
    return float(1.0 - (1.0 - average_pass1) ** int(k))


def expected_pass_at_k(rate: float, trials: int, k: int, *, estimator: str = "unbiased") -> float:
    """The exact expectation of a pass@k estimator over Binomial(trials, rate) pools.

    A finite sum over the number of passes; shows the plug-in's bias against the truth
    1 − (1 − rate)^k.

    >>> round(expected_pass_at_k(0.2, 10, 3), 4), round(expected_pass_at_k(0.2, 10, 3, estimator="plug-in"), 5)
    (0.488, 0.45056)
    """
    if not 0.0 <= rate <= 1.0:
        raise UsageError(f"rate={rate} must lie between 0 and 1")
    if estimator not in ("unbiased", "plug-in"):
        raise UsageError(f"estimator={estimator!r} must be 'unbiased' or 'plug-in'")
    c = np.arange(int(trials) + 1)
    n = np.full(c.size, int(trials))
    _, _, k, _ = _check(c, n, k, None)
    if k > trials:
        raise UsageError(f"k={k} exceeds trials={trials}: pass@k needs at least k trials")
    if estimator == "unbiased":
        values = 1.0 - _subset_ratio(n - c, n, k)
    else:
        values = 1.0 - (1.0 - c / n) ** k
    return float(np.dot(stats.binom.pmf(c, trials, rate), values))
