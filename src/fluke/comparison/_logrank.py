"""The log-rank test stratified by scenario, vectorised over runs (and over batches of pairs).

The general case is the stratified test; the unstratified test is the stratified one with a
single stratum. Within a stratum, at each distinct time ``t`` with a death, the deaths in arm B
are compared with what the risk set would give under no difference (hypergeometric mean and
variance); observed minus expected and the variances add over times and over strata.

>>> import numpy as np
>>> time = np.array([1, 2, 3, 4, 1, 1, 2, 4])
>>> died = np.array([1, 0, 1, 0, 1, 1, 1, 0], dtype=bool)
>>> group = np.array([0, 0, 0, 0, 1, 1, 1, 1], dtype=bool)
>>> result = logrank_test(time, died, group)
>>> round(result.statistic, 4), round(result.pvalue, 4), result.deaths
(0.589, 0.4428, 5)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special

from ..errors import UsageError

__all__ = ["LogRankResult", "logrank_batch", "logrank_test"]


@dataclass(frozen=True)
class LogRankResult:
    """The stratified log-rank test of arm B (``group`` True) against arm A.

    ``observed`` and ``expected`` are arm B's deaths and their expectation under no difference;
    ``variance`` is the hypergeometric variance summed over times and strata. ``hazard_ratio``
    is the one-step (Peto) estimate exp((O − E)/V) of B's hazard relative to A's, undefined
    (NaN) when there is no variance.
    """

    statistic: float
    pvalue: float
    observed: float
    expected: float
    variance: float
    deaths: int
    strata: int

    @property
    def hazard_ratio(self) -> float:
        if self.variance <= 0:
            return float("nan")
        return float(np.exp((self.observed - self.expected) / self.variance))


def _codes(values: np.ndarray) -> np.ndarray:
    """Integer codes for any labels; small non-negative integers are used as they are (no sort)."""
    values = np.asarray(values)
    if values.dtype.kind in "iu" and values.size and values.min() >= 0 and values.max() < 4 * values.size + 64:
        return values.reshape(-1).astype(np.int64, copy=False)
    return np.unique(values, return_inverse=True)[1].reshape(-1)


def _terms(count, count_b, deaths, deaths_b, at_risk, at_risk_b):
    """Per (stratum, time): observed − expected in arm B, its variance, and B's expectation."""
    with np.errstate(invalid="ignore", divide="ignore"):
        share_b = np.where(at_risk > 0, at_risk_b / np.where(at_risk > 0, at_risk, 1), 0.0)
        expected = deaths * share_b
        denom = np.where(at_risk > 1, at_risk - 1, 1.0)
        var = np.where(at_risk > 1, deaths * share_b * (1 - share_b) * (at_risk - deaths) / denom, 0.0)
    return deaths_b - expected, var, expected


def _contributions_dense(time, died, group, stratum, n_strata, t0, width, weights=None):
    """The same sums on a dense stratum × time grid: integer times in a small range, no sort."""
    key = stratum * width + (time.astype(np.int64) - t0)
    # one pass: each run falls in one of four bins per cell (died?, arm B?)
    kind = key * 4 + died.astype(np.int64) * 2 + group.astype(np.int64)
    tally = np.bincount(kind, weights=weights, minlength=n_strata * width * 4).reshape(n_strata, width, 4)
    tally = tally.astype(float)
    count = tally.sum(axis=2)
    count_b = tally[..., 1] + tally[..., 3]
    deaths = tally[..., 2] + tally[..., 3]
    deaths_b = tally[..., 3]
    at_risk = np.cumsum(count[:, ::-1], axis=1)[:, ::-1]
    at_risk_b = np.cumsum(count_b[:, ::-1], axis=1)[:, ::-1]
    ome, var, expected = _terms(count, count_b, deaths, deaths_b, at_risk, at_risk_b)
    return ome.sum(axis=1), var.sum(axis=1), expected.sum(axis=1)


def _check(time, died, group, strata):
    time = np.asarray(time, dtype=float).reshape(-1)
    died = np.asarray(died).reshape(-1)
    group = np.asarray(group).reshape(-1)
    n = time.shape[0]
    for name, arr in (("died", died), ("group", group)):
        if arr.shape[0] != n:
            raise UsageError(f"{name} has {arr.shape[0]} entries but time has {n}; give one per run", argument=name)
    if n and not np.all(np.isfinite(time)):
        raise UsageError("time must be finite: every run needs an event index", argument="time")
    if n and time.min() < 0:
        raise UsageError(f"time={time.min()!r} must be at least 0 (an event index)", argument="time")
    if strata is None:
        codes = np.zeros(n, dtype=np.int64)
    else:
        strata = np.asarray(strata).reshape(-1)
        if strata.shape[0] != n:
            raise UsageError(f"strata has {strata.shape[0]} entries but time has {n}; give one per run",
                             argument="strata")
        codes = _codes(strata)
    if group.dtype != bool:
        labels = np.unique(group)
        if labels.size > 2:
            raise UsageError(f"group has {labels.size} distinct values; the test compares two arms", argument="group")
        group = group == labels[-1] if labels.size == 2 else np.zeros(n, dtype=bool)
    return time, died.astype(bool), group, codes


def _weights(weights, n: int) -> np.ndarray | None:
    """``weights`` (how many runs each entry stands for) checked: None, or n non-negative integers."""
    if weights is None:
        return None
    w = np.asarray(weights, dtype=float).reshape(-1)
    if w.size != n:
        raise UsageError(f"weights has {w.size} entries but time has {n}; give one per entry", argument="weights")
    if n and (not np.all(np.isfinite(w)) or w.min() < 0 or np.any(w != np.floor(w))):
        raise UsageError("weights must be whole numbers of runs, at least 0", argument="weights")
    return w


def _contributions(time, died, group, stratum, n_strata, weights=None):
    """Observed-minus-expected and variance of arm B, per stratum (arrays of length n_strata).

    ``weights`` counts the runs each entry stands for (None: one each); the sums are of whole
    numbers, so counted entries give exactly what the runs one by one give.
    """
    if time.size:
        t0, t1 = time.min(), time.max()
        width = int(t1 - t0) + 1
        runs = time.size if weights is None else float(weights.sum())
        if np.all(time == np.floor(time)) and n_strata * width <= 4 * runs + 4096:
            return _contributions_dense(time, died, group, stratum, n_strata, int(t0), width, weights)
    order = np.lexsort((time, stratum))
    t, d, g, s = time[order], died[order], group[order], stratum[order]
    w = np.ones(t.size) if weights is None else weights[order]
    if t.size == 0:
        zero = np.zeros(n_strata)
        return zero, zero.copy(), zero.copy()
    # one key per distinct (stratum, time)
    new = np.empty(t.size, dtype=bool)
    new[0] = True
    new[1:] = (s[1:] != s[:-1]) | (t[1:] != t[:-1])
    key = np.cumsum(new) - 1
    k = key[-1] + 1
    count = np.bincount(key, weights=w, minlength=k)
    count_b = np.bincount(key, weights=g * w, minlength=k)
    deaths = np.bincount(key, weights=d * w, minlength=k)
    deaths_b = np.bincount(key, weights=(d & g) * w, minlength=k)
    key_stratum = s[new]
    # at risk at t = everyone in the stratum with time >= t: a reverse cumulative sum per stratum
    cum, cum_b = np.cumsum(count), np.cumsum(count_b)
    last = np.searchsorted(key_stratum, key_stratum, side="right") - 1
    at_risk = cum[last] - cum + count
    at_risk_b = cum_b[last] - cum_b + count_b
    o_minus_e, var, expected = _terms(count, count_b, deaths, deaths_b, at_risk, at_risk_b)
    ome = np.bincount(key_stratum, weights=o_minus_e, minlength=n_strata)
    v = np.bincount(key_stratum, weights=var, minlength=n_strata)
    exp_b = np.bincount(key_stratum, weights=expected, minlength=n_strata)
    return ome, v, exp_b


def logrank_test(time, died, group, *, strata=None, weights=None) -> LogRankResult:
    """Stratified log-rank test of arm B (``group`` True, or the larger of two labels) vs arm A.

    ``time`` is each run's event index (where it died, or where it was censored); ``died`` marks
    runs that died there; ``strata`` (e.g. the scenario) gives one stratum per label, and
    ``None`` means one stratum. ``weights`` says how many runs each entry stands for (counted
    runs, as the ledger's ``steps`` table keeps them); the test is then exactly the test of the
    runs one by one. One degree of freedom; no Python loop over runs or strata.

    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> t = rng.integers(1, 5, 200); d = rng.random(200) < 0.5; g = np.arange(200) % 2 == 0
    >>> r = logrank_test(t, d, g, strata=np.arange(200) % 7)
    >>> r.strata, 0 <= r.pvalue <= 1
    (7, True)
    """
    time, died, group, codes = _check(time, died, group, strata)
    w = _weights(weights, time.size)
    n_strata = int(codes.max()) + 1 if codes.size else 0
    ome, v, exp_b = _contributions(time, died, group, codes, n_strata, w)
    o_minus_e, variance = float(ome.sum()), float(v.sum())
    ones = np.ones(time.size) if w is None else w
    observed = float(((died & group) * ones).sum())
    if variance > 0:
        statistic = o_minus_e**2 / variance
        pvalue = float(special.chdtrc(1, np.maximum(statistic, 0.0)))
    else:
        statistic, pvalue = float("nan"), float("nan")
    return LogRankResult(statistic=float(statistic), pvalue=pvalue, observed=observed,
                         expected=float(exp_b.sum()), variance=variance,
                         deaths=int((died * ones).sum()), strata=n_strata)


def logrank_batch(time, died, group, strata, *, with_variance: bool = False):
    """Many independent stratified log-rank tests at once; rows of the 2-D inputs are pairs.

    Returns ``(statistic, pvalue, deaths)`` arrays, one entry per row, and the information V
    as a fourth array when ``with_variance``. Equivalent to calling
    :func:`logrank_test` on each row, but one vectorised pass (used by null calibration).

    >>> import numpy as np
    >>> rng = np.random.default_rng(1)
    >>> t = rng.integers(1, 5, (3, 40)); d = rng.random((3, 40)) < 0.4
    >>> g = np.tile(np.arange(40) % 2 == 1, (3, 1)); s = np.tile(np.arange(40) // 8, (3, 1))
    >>> stat, p, deaths = logrank_batch(t, d, g, s)
    >>> bool(np.isclose(stat[1], logrank_test(t[1], d[1], g[1], strata=s[1]).statistic))
    True
    """
    time = np.asarray(time, dtype=float)
    died = np.asarray(died, dtype=bool)
    group = np.asarray(group, dtype=bool)
    strata = np.asarray(strata)
    if time.ndim != 2 or not (time.shape == died.shape == group.shape == strata.shape):
        raise UsageError(f"time, died, group and strata must be 2-D arrays of one shape; got "
                         f"{time.shape}, {died.shape}, {group.shape}, {strata.shape}", argument="time")
    pairs = time.shape[0]
    codes = _codes(strata).reshape(strata.shape)
    per_row = int(codes.max()) + 1 if codes.size else 0
    combined = (codes + per_row * np.arange(pairs)[:, None]).reshape(-1)
    ome, v, _ = _contributions(time.reshape(-1), died.reshape(-1), group.reshape(-1),
                               combined, pairs * per_row)
    ome = ome.reshape(pairs, per_row).sum(axis=1)
    v = v.reshape(pairs, per_row).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        statistic = np.where(v > 0, ome**2 / np.where(v > 0, v, 1.0), np.nan)
    pvalue = special.chdtrc(1, np.maximum(statistic, 0.0))
    if with_variance:
        return statistic, pvalue, died.sum(axis=1), v
    return statistic, pvalue, died.sum(axis=1)
