"""A stratified test of two failure proportions: Cochran–Mantel–Haenszel, or exact.

Each stratum (a scenario, or a scenario × condition cell) is a 2×2 table: arm A's failures
and passes, arm B's failures and passes. Conditional on every table's margins, A's failures
in a stratum follow a hypergeometric law under "no difference"; the test adds observed minus
expected over the strata. ``V``, the sum of the hypergeometric variances, is the information
the test has: a stratum where every run passed or every run failed (in both arms) has none.

Three methods, one question (is the common odds ratio 1?):

* ``"cmh"``: (Σ(a − E))² / V on one degree of freedom (no continuity correction by default,
  as statsmodels' ``StratifiedTable.test_null_odds``).
* ``"exact"``: the exact conditional test: the law of Σa is the convolution of the
  strata's hypergeometric laws; two-sided p sums every total no more likely than the one seen
  (the rule ``scipy.stats.fisher_exact`` uses, so one stratum gives Fisher's test).
* ``"mcnemar"``: the exact test when every stratum holds one run per arm (a paired design):
  only discordant strata count, and "fixed" among them is Binomial(fixed + broken, ½).

``"auto"`` picks McNemar for a paired design, else CMH when the Mantel–Fleiss criterion holds
(the expected total lies at least 5 from both ends of its range), else exact.

>>> t = stratified_test([3, 1], [10, 10], [7, 4], [10, 10])
>>> t.method, round(t.statistic, 3), round(t.pvalue, 4), t.informative
('Cochran–Mantel–Haenszel', 5.32, 0.0211, 2)
>>> stratified_test([0, 1, 0], [1, 1, 1], [1, 1, 1], [1, 1, 1]).method
'exact McNemar'
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special
from ..inference import lazy_stats as stats
from scipy.special import gammaln

from ..errors import UsageError

__all__ = ["METHODS", "StratifiedTest", "stratified_information", "stratified_pvalues", "stratified_test"]

CMH, EXACT, MCNEMAR = "Cochran–Mantel–Haenszel", "exact conditional", "exact McNemar"
METHODS = {"cmh": CMH, "exact": EXACT, "mcnemar": MCNEMAR}
#: scipy's relative tolerance for "no more likely than the observed total"
_REL_TOL = 1e-7
#: the Mantel–Fleiss distance below which the normal approximation is not trusted
_MANTEL_FLEISS = 5.0


@dataclass(frozen=True)
class StratifiedTest:
    """The stratified test of B's failure proportion against A's.

    ``observed``/``expected`` are A's failures summed over strata and their expectation under no
    difference; ``variance`` (V) is the information. ``fixed``/``broken`` count the discordant
    strata of a paired design (B passed where A failed / the reverse); None otherwise.
    ``statistic`` is the chi-square for CMH and the observed total for the exact tests.
    """

    method: str
    statistic: float
    pvalue: float
    observed: float
    expected: float
    variance: float
    strata: int
    informative: int
    fixed: int | None = None
    broken: int | None = None

    @property
    def uninformative(self) -> int:
        """Strata with no information: every run passed, or every run failed, in both arms."""
        return self.strata - self.informative


def _counts(failures_a, trials_a, failures_b, trials_b):
    arrays = [np.asarray(x) for x in (failures_a, trials_a, failures_b, trials_b)]
    names = ("failures_a", "trials_a", "failures_b", "trials_b")
    shape = arrays[0].shape
    for name, arr in zip(names, arrays, strict=True):
        if arr.shape != shape:
            raise UsageError(f"{name} has shape {arr.shape} but failures_a has {shape}; "
                             "give one entry per stratum", argument=name)
        if arr.size and (not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr))):
            raise UsageError(f"{name}: counts must be whole numbers", argument=name)
    fa, na, fb, nb = (a.astype(np.int64) for a in arrays)
    for f, n, fn, nn in ((fa, na, "failures_a", "trials_a"), (fb, nb, "failures_b", "trials_b")):
        if n.size and n.min() < 1:
            raise UsageError(f"{nn}={int(n.min())} must be at least 1 in every stratum",
                             argument=nn, hint="compare only the strata both arms ran")
        if f.size and (f.min() < 0 or np.any(f > n)):
            raise UsageError(f"{fn} must lie between 0 and {nn} in every stratum", argument=fn)
    return fa, na, fb, nb


def _moments(fa, na, fb, nb):
    """Expectation, hypergeometric variance and range of A's failures per stratum.

    Every product is taken in float64: in int64, n_A·n_B·m·(N − m) overflows from about
    55,000 runs per arm in one stratum (float64 keeps 15 significant digits at any size).
    """
    fa, na, fb, nb = (np.asarray(x, dtype=float) for x in (fa, na, fb, nb))
    total = na + nb
    failed = fa + fb
    with np.errstate(invalid="ignore", divide="ignore"):
        expected = np.where(total > 0, failed * na / np.maximum(total, 1), 0.0)
        var = np.where(total > 1, na * nb * failed * (total - failed) / (total**2 * np.maximum(total - 1, 1)), 0.0)
    low = np.maximum(0, failed - nb)
    high = np.minimum(na, failed)
    return expected, var, low, high


def _log_choose(n, k):
    return gammaln(n + 1) - gammaln(k + 1) - gammaln(n - k + 1)


def _exact_pvalue(fa, na, fb, nb) -> float:
    """Two-sided exact conditional p-value: convolve the strata's hypergeometric laws."""
    _, var, low, high = _moments(fa, na, fb, nb)
    keep = var > 0
    if not keep.any():
        return float("nan")
    pmf = np.ones(1)
    offset = 0
    cells = (na[keep], nb[keep], (fa + fb)[keep], low[keep], high[keep])
    for n1, n2, m, lo, hi in zip(*cells, strict=True):
        x = np.arange(lo, hi + 1)
        logp = _log_choose(n1, x) + _log_choose(n2, m - x) - _log_choose(n1 + n2, m)
        pmf = np.convolve(pmf, np.exp(logp))
        offset += int(lo)
    pmf /= pmf.sum()
    observed = int(fa[keep].sum()) - offset
    p = pmf[pmf <= pmf[observed] * (1 + _REL_TOL)].sum()
    return float(min(p, 1.0))


def _mcnemar(fa, fb) -> tuple[int, int, float]:
    fixed = int(((fa == 1) & (fb == 0)).sum())
    broken = int(((fa == 0) & (fb == 1)).sum())
    d = fixed + broken
    if d == 0:
        return fixed, broken, float("nan")
    pmf = stats.binom.pmf(np.arange(d + 1), d, 0.5)
    p = pmf[pmf <= pmf[fixed] * (1 + _REL_TOL)].sum()
    return fixed, broken, float(min(p, 1.0))


def _paired(na, nb) -> bool:
    return bool(na.size) and bool(np.all(na == 1) and np.all(nb == 1))


def _pick(method: str, fa, na, fb, nb, expected, low, high) -> str:
    if method not in ("auto", *METHODS):
        raise UsageError(f"method={method!r} must be one of 'auto', "
                         + ", ".join(repr(m) for m in METHODS), argument="method")
    if method != "auto":
        if method == "mcnemar" and not _paired(na, nb):
            raise UsageError("method='mcnemar' needs one run per arm in every stratum", argument="method")
        return METHODS[method]
    if _paired(na, nb):
        return MCNEMAR
    e = float(expected.sum())
    return CMH if min(e - float(low.sum()), float(high.sum()) - e) >= _MANTEL_FLEISS else EXACT


def stratified_test(failures_a, trials_a, failures_b, trials_b, *, method: str = "auto",
                    correction: bool = False) -> StratifiedTest:
    """Test whether B's failure proportion differs from A's, stratum by stratum.

    Arguments are arrays with one entry per stratum. ``method`` is ``"auto"``, ``"cmh"``,
    ``"exact"`` or ``"mcnemar"`` (see the module docstring); ``correction`` applies the
    continuity correction to CMH. Undefined (NaN p) when no stratum carries information.

    >>> t = stratified_test([1, 0], [3, 3], [3, 2], [3, 3])
    >>> t.method, round(t.pvalue, 4)
    ('exact conditional', 0.08)
    >>> import math; math.isnan(stratified_test([0, 4], [4, 4], [0, 4], [4, 4]).pvalue)
    True
    """
    fa, na, fb, nb = (x.reshape(-1) for x in _counts(failures_a, trials_a, failures_b, trials_b))
    expected, var, low, high = _moments(fa, na, fb, nb)
    name = _pick(method, fa, na, fb, nb, expected, low, high)
    observed, e, v = float(fa.sum()), float(expected.sum()), float(var.sum())
    informative = int((var > 0).sum())
    fixed = broken = None
    if name == MCNEMAR:
        fixed, broken, p = _mcnemar(fa, fb)
        statistic = float(fixed)
    elif name == EXACT:
        p, statistic = _exact_pvalue(fa, na, fb, nb), observed
    else:
        statistic, p = _cmh(observed - e, v, correction)
    return StratifiedTest(name, float(statistic), float(p), observed, e, v, int(fa.size), informative,
                          fixed, broken)


def _cmh(o_minus_e, v, correction: bool):
    if not v > 0:
        return float("nan"), float("nan")
    num = abs(o_minus_e) - 0.5 if correction else abs(o_minus_e)
    statistic = max(num, 0.0) ** 2 / v
    return statistic, float(special.chdtrc(1, np.maximum(statistic, 0.0)))


def stratified_pvalues(failures_a, trials_a, failures_b, trials_b, *, method: str = "auto") -> np.ndarray:
    """Many independent stratified tests at once: 2-D inputs, one row per test, strata across.

    CMH is vectorised over rows; rows that need an exact test (by the same ``"auto"`` rule as
    :func:`stratified_test`) are computed one by one. Strata with zero trials in both arms are
    ignored (padding); a stratum run by one arm only carries no information.

    >>> import numpy as np
    >>> p = stratified_pvalues([[3, 1], [1, 0]], [[10, 10], [3, 3]], [[7, 4], [3, 2]], [[10, 10], [3, 3]])
    >>> p.round(4).tolist()
    [0.0211, 0.08]
    """
    arrays = [np.atleast_2d(np.asarray(x)) for x in (failures_a, trials_a, failures_b, trials_b)]
    if len({a.shape for a in arrays}) != 1 or arrays[0].ndim != 2:
        raise UsageError("the four count arrays must be 2-D and of one shape", argument="failures_a")
    fa, na, fb, nb = (a.astype(np.int64) for a in arrays)
    if method not in ("auto", *METHODS):
        raise UsageError(f"method={method!r} must be one of 'auto', "
                         + ", ".join(repr(m) for m in METHODS), argument="method")
    expected, var, low, high = _moments(fa, na, fb, nb)
    present = (na + nb) > 0
    v = var.sum(axis=1)
    ome = (fa - expected).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.where(v > 0, special.chdtrc(1, ome**2 / np.where(v > 0, v, 1.0)), np.nan)
    e = expected.sum(axis=1)
    paired = np.all(((na == 1) & (nb == 1)) | ~present, axis=1) & present.any(axis=1)
    mantel_fleiss = np.minimum(e - low.sum(axis=1), high.sum(axis=1) - e) >= _MANTEL_FLEISS
    need = {"auto": paired | ~mantel_fleiss, "cmh": np.zeros_like(paired),
            "exact": np.ones_like(paired), "mcnemar": np.ones_like(paired)}[method] & (v > 0)
    for row in np.flatnonzero(need):
        keep = present[row] & (na[row] > 0) & (nb[row] > 0)
        sub = fa[row, keep], na[row, keep], fb[row, keep], nb[row, keep]
        if (method == "mcnemar" or (method == "auto" and paired[row])) and _paired(sub[1], sub[3]):
            p[row] = _mcnemar(sub[0], sub[2])[2]
        else:
            p[row] = _exact_pvalue(*sub)
    return p



def stratified_information(failures_a, trials_a, failures_b, trials_b) -> np.ndarray:
    """The information V of the stratified test, summed along the last axis (strata).

    >>> v = stratified_information([[3, 1], [0, 0]], [[10, 10], [3, 3]], [[7, 4], [0, 0]], [[10, 10], [3, 3]])
    >>> v.round(4).tolist()
    [2.3026, 0.0]
    """
    fa, na, fb, nb = (np.asarray(x, dtype=np.int64) for x in (failures_a, trials_a, failures_b, trials_b))
    return _moments(fa, na, fb, nb)[1].sum(axis=-1)
