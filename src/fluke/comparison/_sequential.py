"""Looking again, batch by batch: an anytime-valid comparison of two pass rates.

Teams add runs and look again; a fixed-sample test read after every batch calls an
unchanged pair *different* far more often than α. This test does not. Each batch is a set of
2×2 tables (one per scenario); conditional on its margins, A's failures in a table follow
Fisher's noncentral hypergeometric law with the common odds ratio ψ, and ψ = 1 under no
difference. The e-value after T batches is the likelihood ratio of all batches so far,
averaged over a prior on log ψ (normal, mean 0, sd ``prior_sd``, on a grid), against ψ = 1:

    E_T = ∫ Π_{t ≤ T} Π_s P_ψ(a_ts | margins) / P_1(a_ts | margins) dπ(ψ).

Under no difference E_T is a nonnegative martingale with mean 1 whatever the scenarios' own
rates, so by Ville's inequality P(E_T ≥ 1/α at any look) ≤ α: stop and call the pair
*different* the first time E_T reaches 1/α, or go on. ``min(1, 1/max E)`` is an anytime-valid
p-value. This is a mixture sequential probability ratio test on the odds ratio.

>>> seq = sequential_test([[2, 1], [4, 2]], [[10, 10], [10, 10]], [[8, 6], [9, 7]], [[10, 10], [10, 10]])
>>> seq.looks, seq.stopped_at, seq.verdict
(2, 1, 'different')
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import gammaln, logsumexp

from ..errors import UsageError
from ._verdict import DIFFERENT

__all__ = ["SequentialTest", "matched_batches", "sequential_evalues", "sequential_power", "sequential_test"]

#: what the test says before it has crossed its bar
NOT_YET = "no decision yet"


@dataclass(frozen=True)
class SequentialTest:
    """E-values after each look, where (if anywhere) the bar 1/α was crossed, and the verdict."""

    evalues: tuple[float, ...]
    alpha: float
    prior_sd: float
    stopped_at: int | None
    verdict: str
    pvalue: float

    @property
    def looks(self) -> int:
        return len(self.evalues)

    def summary(self) -> str:
        where = f"crossed 1/α = {1 / self.alpha:g} at look {self.stopped_at}" if self.stopped_at else \
            f"below 1/α = {1 / self.alpha:g} after {self.looks} looks"
        return (f"{self.verdict} (anytime-valid: e-value {self.evalues[-1]:.3g}, {where}; p ≤ {self.pvalue:.3g}; "
                f"mixture over log odds ratio ~ N(0, {self.prior_sd:g}²))")


def matched_batches(strata_a, looks_a, failed_a, strata_b, looks_b, failed_b, *, looks: int, strata: int):
    """Per-look tables of matched runs, shaped (4, looks, strata): failures and runs of A, then of B.

    Each arm's runs are given in ingest order (stratum code, look index, failed). In a stratum,
    the r-th run of A and the r-th run of B enter the first look by which both arms had at
    least r + 1 runs there; runs the other arm has not matched yet wait, and what is left at
    the end enters the last look. Which runs enter a look depends on counts and order only,
    so under no difference the e-value of :func:`sequential_test` stays a martingale; and a
    baseline ingested once beside a candidate ingested in batches gives every look both arms.

    >>> c = matched_batches([0, 0, 0, 0], [0, 0, 0, 0], [0, 1, 0, 1], [0, 0, 0, 0], [1, 2, 2, 3], [1, 1, 0, 1],
    ...                     looks=4, strata=1)
    >>> c[1, :, 0].tolist(), c[3, :, 0].tolist(), c[2, :, 0].tolist()
    ([0.0, 1.0, 2.0, 1.0], [0.0, 1.0, 2.0, 1.0], [0.0, 1.0, 1.0, 1.0])
    """
    counts = np.zeros((4, looks, strata))
    arms = [tuple(np.asarray(x, dtype=int).reshape(-1) for x in arm)
            for arm in ((strata_a, looks_a, failed_a), (strata_b, looks_b, failed_b))]
    for j in range(strata):
        picked = [(lk[s == j], f[s == j]) for s, lk, f in arms]
        seen = [np.bincount(lk, minlength=looks)[:looks].cumsum() for lk, _ in picked]
        matched = np.minimum(seen[0], seen[1])
        for side, (_, failed) in enumerate(picked):
            rank = np.arange(failed.size)
            look = np.where(rank < matched[-1], np.searchsorted(matched, rank, side="right"), looks - 1)
            np.add.at(counts[2 * side], (look, j), failed)
            np.add.at(counts[2 * side + 1], (look, j), 1)
    return counts


def _log_choose(n, k):
    return gammaln(n + 1) - gammaln(k + 1) - gammaln(n - k + 1)


def _grid(prior_sd: float, points: int = 81):
    theta = np.linspace(-4 * prior_sd, 4 * prior_sd, points)
    logw = -0.5 * (theta / prior_sd) ** 2
    return theta, logw - logsumexp(logw)


def sequential_evalues(failures_a, trials_a, failures_b, trials_b, *, prior_sd: float = 1.0) -> np.ndarray:
    """E-values after each look, for arrays shaped ``(..., looks, strata)`` of per-batch counts.

    Entry ``[..., t, s]`` is batch t's count in stratum s (zeros where a stratum was not run).
    Returns shape ``(..., looks)``: the e-value after each look, vectorised over leading axes
    (so many simulated sequences run at once).

    >>> sequential_evalues([[0, 0]], [[5, 5]], [[0, 0]], [[5, 5]]).tolist()
    [1.0]
    """
    if not prior_sd > 0:
        raise UsageError(f"prior_sd={prior_sd!r} must be positive", argument="prior_sd")
    fa, na, fb, nb = (np.asarray(x, dtype=float) for x in (failures_a, trials_a, failures_b, trials_b))
    if not (fa.shape == na.shape == fb.shape == nb.shape) or fa.ndim < 2:
        raise UsageError("the four count arrays need one shape (..., looks, strata)", argument="failures_a")
    if np.any((fa < 0) | (fa > na) | (fb < 0) | (fb > nb)):
        raise UsageError("failures must lie between 0 and trials in every cell", argument="failures_a")
    theta, logw = _grid(prior_sd)
    m = fa + fb
    lo = np.maximum(0, m - nb)
    hi = np.minimum(na, m)
    width = int((hi - lo).max()) + 1 if hi.size else 1
    k = np.arange(width)                                       # x − lo
    x = lo[..., None] + k                                      # (..., looks, strata, width)
    valid = x <= hi[..., None]
    xs = np.where(valid, x, lo[..., None])
    logc = np.where(valid, _log_choose(na[..., None], xs) + _log_choose(nb[..., None], m[..., None] - xs), -np.inf)
    c = np.exp(logc - logc.max(axis=-1, keepdims=True))       # relative weights, the largest 1
    if width * float(np.abs(theta).max()) < 600:
        # Σ_x C(n1,x) C(n2,m−x) ψ^(x−lo): one matrix product with the fixed (width × grid) powers
        log_ratio = np.log(c @ np.exp(np.outer(k, theta))) - np.log(c.sum(axis=-1))[..., None]
    else:
        log_ratio = logsumexp(np.log(c)[..., None] + np.multiply.outer(k, theta), axis=-2) \
            - np.log(c.sum(axis=-1))[..., None]
    log_lr = (fa - lo)[..., None] * theta - log_ratio
    cum = np.cumsum(log_lr.sum(axis=-2), axis=-2)                                 # (..., looks, grid)
    return np.exp(logsumexp(cum + logw, axis=-1))


def sequential_test(failures_a, trials_a, failures_b, trials_b, *, alpha: float = 0.05,
                    prior_sd: float = 1.0) -> SequentialTest:
    """The anytime-valid comparison over looks so far: arrays ``(looks, strata)`` of per-batch counts.

    >>> sequential_test([[1, 1], [1, 0]], [[5, 5], [5, 5]], [[1, 2], [1, 1]], [[5, 5], [5, 5]]).verdict
    'no decision yet'
    """
    if not 0 < alpha < 1:
        raise UsageError(f"alpha={alpha!r} must lie strictly between 0 and 1", argument="alpha")
    arrays = [np.asarray(x, dtype=float) for x in (failures_a, trials_a, failures_b, trials_b)]
    if arrays[0].ndim != 2:
        raise UsageError("give one row per look and one column per stratum", argument="failures_a")
    e = sequential_evalues(*arrays, prior_sd=prior_sd)
    crossed = np.flatnonzero(e >= 1 / alpha)
    stopped = int(crossed[0]) + 1 if crossed.size else None
    return SequentialTest(tuple(float(v) for v in e), alpha, prior_sd, stopped,
                          DIFFERENT if stopped else NOT_YET, float(min(1.0, 1 / e.max())))


def sequential_power(trials_a, trials_b, rates, shift: float, *, alpha: float = 0.05, prior_sd: float = 1.0,
                     reps: int = 400, seed: int = 0) -> tuple[float, float]:
    """(batch-by-batch, fixed-sample) power against a regression of ``shift`` (a share), by simulation.

    ``trials_a``/``trials_b`` are the looks' run counts, shaped (looks, strata); ``rates`` are
    A's pass rates per stratum and B's are ``shift`` lower. Each of ``reps`` simulated
    sequences (from ``seed``) is read by :func:`sequential_test`'s e-value after every look
    and, once at the end, by the fixed-sample stratified test on the totals: the price of
    looking after every batch is the gap between the two.

    >>> seq, fixed = sequential_power([[10, 10]] * 4, [[10, 10]] * 4, [0.8, 0.8], 0.25, reps=200)
    >>> seq < fixed
    True
    """
    from ._stratified import stratified_pvalues

    na, nb = (np.asarray(x, dtype=int) for x in (trials_a, trials_b))
    qa = 1 - np.asarray(rates, dtype=float)
    qb = np.clip(qa + shift, 0, 1)
    rng = np.random.default_rng(seed)
    fa = rng.binomial(np.broadcast_to(na, (reps, *na.shape)), qa)
    fb = rng.binomial(np.broadcast_to(nb, (reps, *nb.shape)), qb)
    e = sequential_evalues(fa, np.broadcast_to(na, fa.shape), fb, np.broadcast_to(nb, fb.shape), prior_sd=prior_sd)
    seq = float(np.mean((e >= 1 / alpha).any(axis=-1)))
    p = stratified_pvalues(fa.sum(axis=1), np.broadcast_to(na.sum(axis=0), (reps, na.shape[1])),
                           fb.sum(axis=1), np.broadcast_to(nb.sum(axis=0), (reps, nb.shape[1])))
    return seq, float(np.mean(p < alpha))
