"""Confidence intervals whose sampling unit is declared, not assumed to be the row.

Runs that share a user, an environment or an organisation are not independent draws: 480
rows from 40 users carry about as much information about new users as the 40 user means.
The interval here is built on the units (clusters):

* equal cluster sizes: the mean of the cluster means with Student t on G − 1 degrees of
  freedom (exact under a normal model);
* unequal cluster sizes: the row mean with the CR2 cluster-robust sandwich and Bell–McCaffrey
  degrees of freedom (the default), or with ``sandwich="CR1"`` the CR1 sandwich (the usual
  G/(G−1) · (N−1)/(N−K) small-sample factor) with t on G − 1, which covered 84–89% with few,
  unequal clusters; with equal sizes all coincide;
* pass/fail values (every value 0 or 1): the Wilson score interval on the effective sample
  size n* = p̂(1 − p̂)/SE² (at most the rows; G when every unit passed, or every unit failed,
  everything), with the t quantile on the same degrees of freedom (after Korn and Graubard).
  A share near 0 or 1 is skewed, and the symmetric t interval covered 82–90% there; this one
  never has zero width and stays inside [0, 1], and within a few effective passes (or
  failures) of 0 takes the Clopper–Pearson bound (:func:`wilson_effective`);
* a cluster bootstrap (resample whole clusters) through :func:`cluster_bootstrap_interval`.

Values that are not pass/fail and show no spread between units get no interval (a
zero-width interval from finite data would claim a certainty the runs do not have).

Each needs only rows, Σy and Σy² per unit (:class:`fluke.inference.Cells`): the ``*_cells``
functions take those, and the row-level ones build the cells and call them.

Beside it the naive row-level interval (rows treated as independent, normal multiplier) is
always reported, with a warning when the two standard errors differ materially.

>>> import numpy as np
>>> y = np.array([1.0, 1.2, 0.0, 0.2, 0.5, 0.7])
>>> r = clustered_interval(y, ["a", "a", "b", "b", "c", "c"])
>>> round(r.statistic, 3), r.clusters, r.df, r.method
(0.6, 3, 2, 'cluster means')
>>> r = clustered_interval([1, 1, 1, 1, 1, 1], ["a", "a", "b", "b", "c", "c"])   # all passed
>>> round(r.low, 3), r.high, r.method
(0.139, 1.0, 'cluster means; Wilson score on the effective sample size')
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from scipy import special

from ._cells import Cells, check_values, cluster_codes
from ._check import check_level  # noqa: F401  (re-exported; one level check)
from ..errors import FlukeWarning, UsageError, UsageTypeError
from ..format import fmt_df

__all__ = [
    "BootstrapInterval", "ClusterRobustFit", "ClusteredInterval", "cluster_bootstrap_cells",
    "cluster_bootstrap_interval", "NaiveInterval", "check_level", "check_values", "cluster_codes",
    "cluster_robust_ols", "clustered_interval", "clustered_interval_cells", "FEW_CLUSTERS",
    "FewClustersWarning",
]

#: The method name of the CR2 sandwich (unequal clusters, ``sandwich="CR2"``).
CR2 = "CR2 sandwich, Bell–McCaffrey df"

#: What the method name gains when pass/fail values get the Wilson score interval.
WILSON = "Wilson score on the effective sample size"

#: The naive and clustered standard errors "differ materially" beyond this ratio either way.
MATERIAL_RATIO = 1.25


@dataclass(frozen=True)
class NaiveInterval:
    """The row-level interval: every row treated as an independent draw (normal multiplier)."""

    statistic: float
    standard_error: float
    low: float
    high: float


@dataclass(frozen=True)
class ClusteredInterval:
    """A confidence interval for a mean with the declared sampling unit as the cluster.

    ``design_effect`` is (clustered SE / naive SE)²: how many rows one unit is "worth" less
    than it looks. ``warning`` is set when the naive interval would mislead.
    """

    statistic: float
    standard_error: float
    low: float
    high: float
    df: float
    clusters: int
    rows: int
    method: str
    confidence_level: float
    unit: str
    naive: NaiveInterval
    warning: str | None = None
    reason: str | None = None
    unknowns: int = 0
    unknown_policy: str | None = None

    @property
    def design_effect(self) -> float:
        """(clustered SE / naive SE)²."""
        if self.naive.standard_error == 0:
            return float("nan")
        return (self.standard_error / self.naive.standard_error) ** 2

    @property
    def conditional_on(self) -> str:
        return (f"{self.unit} as the independent sampling unit ({self.clusters} of them); "
                f"{self.method}, t on {fmt_df(self.df)} df")


def _naive(cells: Cells, level: float) -> NaiveInterval:
    n = float(cells.rows)
    total = float(cells.sum.sum())
    mean = cells.shift + total / n
    if n > 1:
        ss = max(0.0, float(cells.sumsq.sum()) - total * total / n)     # Σ(y − ȳ)², shift-free
        se = float(np.sqrt(ss / (n - 1)) / np.sqrt(n))
    else:
        se = float("nan")
    z = float(special.ndtri(0.5 + level / 2))
    return NaiveInterval(mean, se, mean - z * se, mean + z * se)


def clustered_interval(values, clusters, *, confidence_level: float = 0.95,
                       weighting: str = "rows", unit: str = "unit", unknown: str | None = None,
                       sandwich: str = "CR2", scale: str = "auto") -> ClusteredInterval:
    """A confidence interval for the mean of ``values`` with ``clusters`` as the sampling unit.

    ``weighting="rows"`` (default) targets the mean over rows: cluster means with t on G − 1
    df when clusters are equal, the CR2 sandwich (or ``sandwich="CR1"``) otherwise;
    ``scale="auto"`` takes pass/fail values through the Wilson score interval on the
    effective sample size, ``scale="t"`` keeps the plain t interval (see the module docstring).
    ``weighting="units"`` targets the equally weighted mean of unit means (t on the G unit
    means). ``unit`` names the sampling unit in what the result says it is conditional on. The
    rows are summed per cluster
    (:meth:`Cells.from_rows`) and :func:`clustered_interval_cells` answers.

    ``unknown`` applies the unknown-outcome policy to pass/fail values given as 1/0 with NaN
    (or None) for an unknown outcome: ``"fail"`` counts it as 0, ``"exclude"`` drops its row.
    Without it, a missing value is refused.

    >>> r = clustered_interval([0.1, 0.3, 0.2, 0.9, 0.7], [1, 1, 2, 2, 2], sandwich="CR1")
    >>> r.method, round(r.standard_error, 4)
    ('CR1 sandwich', 0.192)
    >>> r = clustered_interval([1, None, 0, 1, 1, 0], [1, 1, 2, 2, 3, 3], unknown="exclude")
    >>> r.rows, r.unknowns, r.unknown_policy
    (5, 1, 'exclude')
    """
    if unknown is None:
        cells = Cells.from_rows(values, clusters)
    else:
        from dataclasses import replace

        from ._unknown import apply_unknown_policy

        applied = apply_unknown_policy(values, unknown)
        kept = np.asarray(clusters, dtype=object).reshape(-1)
        if kept.size != applied.keep.size:
            raise UsageError(f"clusters has {kept.size} entries; values has {applied.keep.size}")
        cells = replace(Cells.from_rows(applied.passed, kept[applied.keep]), unknowns=applied.unknowns,
                        unknown_policy=unknown)
    return clustered_interval_cells(cells, confidence_level=confidence_level, weighting=weighting, unit=unit,
                                    sandwich=sandwich, scale=scale)


def _cr2(scores, sizes, n):
    """CR2 standard error of a row mean and its Bell–McCaffrey degrees of freedom.

    For the intercept alone, H_gg = J/N, so (I − H_gg)^(−1/2) scales a cluster's residual sum
    by 1/√(1 − n_g/N): u_g = score_g / (N √(1 − n_g/N)) and Var = Σ u_g². Under a working model
    of independent rows, u_g = l_g'ε with l_g'l_h = (n_g δ_gh − n_g n_h/N) / (N² s_g s_h), and
    the Bell–McCaffrey df is (tr M)² / tr M² for that G × G matrix M. With equal clusters both
    reduce to the cluster means' t on G − 1.
    """
    g = sizes.size
    if g < 2:
        return float("nan"), 0
    scale = np.sqrt(np.maximum(1.0 - sizes / n, 1e-300))
    se = float(np.sqrt(np.sum((scores / (n * scale)) ** 2)))
    # M = diag(a) − v vᵀ, so tr M and tr M² come from the vectors, never the G × G matrix
    a = sizes / (n * n * scale * scale)
    v = sizes / (n ** 1.5 * scale)
    vv = float(np.sum(v * v))
    tr = float(np.sum(a)) - vv
    tr2 = float(np.sum(a * a)) - 2.0 * float(np.sum(a * v * v)) + vv * vv
    return se, max(tr * tr / tr2, 1.0) if tr2 > 0 else float(g - 1)


def wilson_effective(p: float, se: float, t: float, rows: float, units: int) -> tuple[float, float]:
    """The Wilson score interval for a share p̂ on the effective sample size n* = p̂(1 − p̂)/SE².

    ``se`` is the share's clustered standard error and ``t`` the multiplier (Student t on the
    interval's degrees of freedom, after Korn and Graubard). n* is at most ``rows`` (the trials
    behind the share); when p̂ is 0 or 1 there is no spread to read a design effect from and n*
    is ``units``, one draw per independent unit. Never of zero width, always inside [0, 1].

    Within a few effective passes (or failures) of 0 the Wilson bound on that side is too tight
    (9 of 10 single runs at a true 0.99: the upper bound 0.986 left it out one time in ten, and
    ``fluke interval`` covered 0.91): there, with 0 < n*·p̂ ≤ x* (x* = 2 up to n* = 50, 3 beyond),
    the bound is the Clopper–Pearson one at the normal tail beyond the multiplier
    (:func:`clopper_pearson_ends`), where that is wider.

    >>> [round(x, 4) for x in wilson_effective(1.0, 0.0, 1.96, 40, 4)]   # 4 units, every run passed
    [0.5101, 1.0]
    >>> [round(x, 4) for x in wilson_effective(0.3, 0.05, 2.0, 400, 20)]
    [0.211, 0.4072]
    >>> [round(x, 4) for x in wilson_effective(0.9, 0.1, 2.262, 10, 10)]   # 9 of 10: one failure
    [0.5234, 0.9992]
    """
    if 0 < p < 1:
        n = min(p * (1 - p) / se**2, float(rows)) if se > 0 else float(rows)
    else:
        n = float(units)        # no spread to read a design effect from: one draw per unit
    t2 = t * t
    centre = (p + t2 / (2 * n)) / (1 + t2 / n)
    half = t / (1 + t2 / n) * np.sqrt(max(p * (1 - p), 0.0) / n + t2 / (4 * n * n))
    low, high = max(centre - half, 0.0), min(centre + half, 1.0)
    low, high = clopper_pearson_ends(low, high, n * p, n, float(special.ndtr(-t)))
    return float(low), float(high)


def clopper_pearson_ends(low: float, high: float, passes: float, n: float, tail: float) -> tuple[float, float]:
    """Widen a share's bounds, where it sits within a few (effective) passes or failures of 0 or 1.

    With 0 < passes ≤ x* (x* = 2 up to n = 50, 3 beyond) the lower bound is at most the one-sided
    Clopper–Pearson bound at ``tail``, Beta(x, n − x + 1)'s quantile; likewise the upper bound
    with the failures. Counts need not be whole (an effective sample size). After Brown, Cai and
    DasGupta's modified Wilson interval (2001), with the exact bound in place of its Poisson one.

    >>> [round(x, 4) for x in clopper_pearson_ends(0.6, 0.986, 9.0, 10.0, 0.025)]   # one failure of 10
    [0.6, 0.9975]
    """
    star = 2.0 if n <= 50 else 3.0
    failures = n - passes
    if 0 < passes <= star:
        low = min(low, float(special.betaincinv(passes, failures + 1, tail)))
    if 0 < failures <= star:
        high = max(high, float(special.betaincinv(passes + 1, failures, 1 - tail)))
    return low, high


def clustered_interval_cells(cells: Cells, *, confidence_level: float = 0.95, weighting: str = "rows",
                             unit: str = "unit", sandwich: str = "CR2", scale: str = "auto") -> ClusteredInterval:
    """:func:`clustered_interval` from per-cell sums: the cells' units are the clusters.

    Its ``unknowns`` and ``unknown_policy`` are the cells' (see :meth:`Cells.from_passes`).
    ``sandwich="CR2"`` takes unequal clusters through the CR2 sandwich with Bell–McCaffrey
    degrees of freedom (its coverage holds with few, unequal clusters where CR1 with t on
    G − 1 falls short); equal clusters give the cluster means' t on G − 1 either way.

    >>> cells = Cells.from_passes(["u1", "u2", "u3"], None, [4, 4, 6], [3, 1, 2], [0, 1, 2], policy="exclude")
    >>> r = clustered_interval_cells(cells, unit="user", sandwich="CR1", scale="t")
    >>> r.rows, r.clusters, round(r.statistic, 4), r.method, r.unknowns
    (11, 3, 0.5455, 'CR1 sandwich', 3)
    >>> r = clustered_interval_cells(cells, unit="user")
    >>> r.method, round(r.df, 2)
    ('CR2 sandwich, Bell–McCaffrey df; Wilson score on the effective sample size', 1.96)
    """
    level = check_level(confidence_level)
    if weighting not in ("rows", "units"):
        raise UsageError(f"weighting={weighting!r} must be 'rows' or 'units'")
    if sandwich not in ("CR1", "CR2"):
        raise UsageError(f"sandwich={sandwich!r} must be 'CR1' or 'CR2'")
    if scale not in ("auto", "t"):
        raise UsageError(f"scale={scale!r} must be 'auto' or 't'")
    if not isinstance(cells, Cells):
        raise UsageTypeError(f"cells must be fluke.inference.Cells, not {type(cells).__name__}")
    sizes, sums = cells.unit_totals()        # sums of (y − shift): the centre of the row values
    g, n = sizes.size, cells.rows
    naive = _naive(cells, level)
    balanced = bool(sizes.min() == sizes.max())
    if weighting == "units" or balanced:
        means = sums / sizes
        stat = cells.shift + float(means.mean())
        se = float(means.std(ddof=1) / np.sqrt(g)) if g > 1 else float("nan")
        method = "cluster means"
    else:
        offset = float(sums.sum() / n)
        stat = cells.shift + offset
        scores = sums - sizes * offset               # per-cluster sum of residuals
        if sandwich == "CR2":
            se, df = _cr2(scores, sizes.astype(float), float(n))
            method = CR2
        else:
            # CR1: G/(G−1) · (N−1)/(N−K) with K = 1 regressor (the intercept)
            var = g / (g - 1) * np.dot(scores, scores) / n**2 if g > 1 else float("nan")
            se = float(np.sqrt(var))
            method = "CR1 sandwich"
    if method != CR2:
        df = g - 1
    reason = None
    if g < 2:
        reason = f"only {g} {unit}: an interval needs at least two independent units"
        low = high = float("nan")
    else:
        t = float(special.stdtrit(df, 0.5 + level / 2))
        if scale == "auto" and cells.binary:
            low, high = wilson_effective(stat, se, t, n, g)
            method = f"{method}; {WILSON}"
        elif not se > 0:
            reason = (f"every one of the {g} {unit}s gave the same mean: no spread between them to build "
                      "an interval on")
            low = high = float("nan")
        else:
            low, high = stat - t * se, stat + t * se
    warning = None
    if reason is None and naive.standard_error > 0 and se > 0:
        ratio = se / naive.standard_error
        if ratio > MATERIAL_RATIO or ratio < 1 / MATERIAL_RATIO:
            width = "narrower" if ratio > 1 else "wider"
            warning = (f"the naive row-level interval is {ratio:.2f}x {width} than the one "
                       f"clustered by {unit} ({n} rows but {g} independent {unit}s); "
                       f"report the clustered interval")
    return ClusteredInterval(stat, se, float(low), float(high), df, g, n, method, level, unit,
                             naive, warning, reason, cells.unknowns, cells.unknown_policy)


@dataclass(frozen=True)
class ClusterRobustFit:
    """Least squares with a CR1 cluster-robust covariance (t inference on G − 1 df)."""

    coefficients: np.ndarray
    covariance: np.ndarray
    df: int
    clusters: int
    rows: int

    @property
    def standard_errors(self) -> np.ndarray:
        return np.sqrt(np.diag(self.covariance))

    def confidence_interval(self, confidence_level: float = 0.95) -> np.ndarray:
        """(low, high) per coefficient, t on G − 1 degrees of freedom."""
        t = float(special.stdtrit(self.df, 0.5 + check_level(confidence_level) / 2))
        se = self.standard_errors
        return np.column_stack([self.coefficients - t * se, self.coefficients + t * se])


def cluster_robust_ols(design, values, clusters) -> ClusterRobustFit:
    """Ordinary least squares of ``values`` on the columns of ``design``, CR1 by ``clusters``.

    The covariance is G/(G−1) · (N−1)/(N−K) · (X'X)⁻¹ (Σ_g u_g u_g') (X'X)⁻¹ with u_g the
    cluster's sum of x_i e_i — the same as statsmodels' ``cov_type="cluster"``.

    >>> import numpy as np
    >>> X = np.column_stack([np.ones(4), [0, 1, 0, 1]])
    >>> fit = cluster_robust_ols(X, [1.0, 2.0, 1.5, 2.5], [0, 0, 1, 1])
    >>> fit.coefficients.round(3).tolist()
    [1.25, 1.0]
    """
    y = check_values(values)
    x = np.asarray(design, dtype=float)
    if x.ndim == 1:
        x = x[:, None]
    if x.shape[0] != y.size:
        raise UsageError(f"design has {x.shape[0]} rows; values has {y.size}")
    n, k = x.shape
    codes, sizes = cluster_codes(clusters, n)
    g = sizes.size
    if g < 2:
        raise UsageError(f"clusters has {g} distinct label: CR1 needs at least two clusters")
    xtx_inv = np.linalg.inv(x.T @ x)
    beta = xtx_inv @ (x.T @ y)
    resid = y - x @ beta
    scores = np.column_stack([np.bincount(codes, weights=x[:, j] * resid, minlength=g)
                              for j in range(k)])
    meat = scores.T @ scores
    factor = g / (g - 1) * (n - 1) / (n - k)
    cov = factor * xtx_inv @ meat @ xtx_inv
    return ClusterRobustFit(beta, cov, g - 1, g, n)


@dataclass(frozen=True)
class BootstrapInterval:
    """A percentile interval from resampling whole clusters with replacement."""

    statistic: float
    standard_error: float
    low: float
    high: float
    resamples: int
    clusters: int
    confidence_level: float
    reason: str | None = None       # why there is no interval (one cluster)
    warning: str | None = None      # why the interval may be too narrow (few clusters)


class FewClustersWarning(FlukeWarning):
    """A cluster bootstrap over fewer than :data:`FEW_CLUSTERS` clusters: its coverage falls short."""


#: Below this many clusters the percentile cluster bootstrap under-covers (88% for a nominal
#: 95% at 8 clusters in simulation); the clustered t interval is the better choice there.
FEW_CLUSTERS = 10


def cluster_bootstrap_interval(values, clusters, *, rng: np.random.Generator,
                               resamples: int = 2000,
                               confidence_level: float = 0.95) -> BootstrapInterval:
    """Percentile cluster bootstrap for the row mean: resample clusters, keep their rows together.

    The rows are summed per cluster (:meth:`Cells.from_rows`) and
    :func:`cluster_bootstrap_cells` resamples the sums.

    >>> import numpy as np
    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     r = cluster_bootstrap_interval([1.0, 1.2, 0.0, 0.2, 0.5, 0.7], [0, 0, 1, 1, 2, 2],
    ...                                    rng=np.random.default_rng(1), resamples=500)
    >>> r.low < r.statistic < r.high, r.warning[:33]
    (True, 'only 3 clusters: the percentile c')
    >>> cluster_bootstrap_interval([1.0, 2.0], [0, 0], rng=np.random.default_rng(1)).reason[:11]
    'one cluster'
    """
    return _bootstrap(Cells.from_rows(values, clusters), rng, resamples, confidence_level)


def cluster_bootstrap_cells(cells: Cells, *, rng: np.random.Generator, resamples: int = 2000,
                            confidence_level: float = 0.95) -> BootstrapInterval:
    """:func:`cluster_bootstrap_interval` from per-cell sums: resample units, keep their sums together.

    Units are drawn by code (sorted labels), so the same seed gives the same resamples as the
    row-level function on the rows these cells sum.

    >>> import numpy as np
    >>> cells = Cells.from_sums([f"u{i}" for i in range(12)], None, [3] * 12, np.arange(12) / 4, np.arange(12) / 4)
    >>> r = cluster_bootstrap_cells(cells, rng=np.random.default_rng(7), resamples=1000)
    >>> r.clusters, round(r.statistic, 4), r.low < r.statistic < r.high
    (12, 0.4583, True)
    """
    return _bootstrap(cells, rng, resamples, confidence_level)


def _bootstrap(cells: Cells, rng, resamples: int, confidence_level: float) -> BootstrapInterval:
    level = check_level(confidence_level)
    if not isinstance(rng, np.random.Generator):
        raise UsageTypeError("rng must be a numpy Generator, e.g. np.random.default_rng(2026)")
    if resamples < 10:
        raise UsageError(f"resamples={resamples} must be at least 10")
    if not isinstance(cells, Cells):
        raise UsageTypeError(f"cells must be fluke.inference.Cells, not {type(cells).__name__}")
    sizes, sums = cells.unit_totals()        # sums of (y − shift)
    g, shift = sizes.size, cells.shift
    statistic = shift + float(sums.sum() / cells.rows)
    if g < 2:
        # Every resample is the one cluster: a zero-width interval that claims certainty.
        nan = float("nan")
        return BootstrapInterval(statistic, nan, nan, nan, 0, int(g), level,
                                 reason="one cluster: resampling it gives the same mean every time, so there is "
                                        "no interval; the sampling unit needs at least 2 clusters")
    warning = None
    if g < FEW_CLUSTERS:
        warning = (f"only {g} clusters: the percentile cluster bootstrap under-covers below {FEW_CLUSTERS} "
                   "(88% for a nominal 95% at 8 in simulation); prefer clustered_interval (Student t on G − 1)")
        warnings.warn(warning, FewClustersWarning, stacklevel=3)   # the caller of the public function
    draws = np.empty(resamples)
    chunk = max(1, 2_000_000 // g)              # bound memory: chunk × G indices at a time
    for start in range(0, resamples, chunk):
        stop = min(resamples, start + chunk)
        pick = rng.integers(0, g, size=(stop - start, g))
        draws[start:stop] = shift + sums[pick].sum(axis=1) / sizes[pick].sum(axis=1)
    alpha = 1 - level
    low, high = np.quantile(draws, [alpha / 2, 1 - alpha / 2])
    return BootstrapInterval(statistic, float(draws.std(ddof=1)), float(low),
                             float(high), int(resamples), int(g), level, warning=warning)
