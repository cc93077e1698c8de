"""This week against last week: regression, progress, graduation, and the canary chart.

A difference question needs no history beyond the two batches: each scenario's old and new
counts give P(θ_new < θ_old) exactly (a finite sum for whole-number Beta parameters) and a
one-sided Fisher exact p-value beside it. It says whether a scenario moved, never its level.

Looking at many scenarios at once, a per-scenario rule flags some unchanged ones by chance
(7.1% of unchanged scenarios at θ = 0.9 with 10 runs, so a false "regressed" somewhere in 50
is near certain). The flag is therefore controlled across the regression set: by default
Benjamini–Hochberg at ``fdr`` on the one-sided Fisher p-values, beside which the review
carries the expected number of false flags (Σ P(not worse) over the flagged scenarios).

>>> review = review_week([10, 5], [10, 10], [6, 10], [10, 10], frontier=[False, True])
>>> review.p_worse.round(3).tolist(), review.regressed.tolist(), review.graduated.tolist()
([0.982, 0.006], [True, False], [False, True])
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special

from ._lazy import lazy_stats as stats

from ..errors import UsageError
from ._account import betabinom_cdf
from ._multiplicity import bh_reject
from ._beta import UNIFORM, BetaPosterior, Prior, check_counts, posterior
from ._check import check_level

__all__ = ["p_greater", "WeeklyReview", "review_week", "CanaryChart", "canary_chart"]


def p_greater(x: BetaPosterior, y: BetaPosterior) -> np.ndarray:
    """P(θ_x > θ_y) for independent Beta beliefs, per scenario.

    Exact finite sum when x's α (or else y's α) is a whole number; numerical integration
    otherwise.

    >>> round(float(p_greater(posterior(10, 10), posterior(6, 10))), 4)
    0.9825
    """
    ax, bx, ay, by = (np.array(v, dtype=float) for v in np.broadcast_arrays(
        *(np.atleast_1d(v) for v in (x.alpha, x.beta, y.alpha, y.beta))))
    out = np.full(ax.shape, np.nan)
    whole_x = ax == np.round(ax)
    whole_y = (ay == np.round(ay)) & ~whole_x
    if whole_x.any():
        out[whole_x] = _sum_form(ax[whole_x], bx[whole_x], ay[whole_x], by[whole_x])
    if whole_y.any():
        out[whole_y] = 1 - _sum_form(ay[whole_y], by[whole_y], ax[whole_y], bx[whole_y])
    for i in np.flatnonzero(~whole_x.ravel() & ~whole_y.ravel()):
        idx = np.unravel_index(i, ax.shape)
        a1, b1, a2, b2 = ax[idx], bx[idx], ay[idx], by[idx]
        from scipy import integrate

        value, _ = integrate.quad(lambda t: stats.beta.pdf(t, a1, b1) * stats.beta.cdf(t, a2, b2), 0, 1,
                                  limit=200, epsabs=1e-12)
        out[idx] = value
    return out.reshape(np.broadcast_shapes(*(np.shape(v) for v in (x.alpha, x.beta, y.alpha, y.beta))))


def _sum_form(a_b, b_b, a_a, b_a) -> np.ndarray:
    """P(B > A) = Σ_{i<α_B} B(α_A+i, β_A+β_B) / ((β_B+i) B(1+i, β_B) B(α_A, β_A))."""
    top = int(a_b.max())
    i = np.arange(top, dtype=float)[None, :]
    a_b, b_b, a_a, b_a = (v[:, None] for v in (a_b, b_b, a_a, b_a))
    log_term = (special.betaln(a_a + i, b_a + b_b) - np.log(b_b + i)
                - special.betaln(1 + i, b_b) - special.betaln(a_a, b_a))
    mask = i < a_b
    return np.clip(np.where(mask, np.exp(np.where(mask, log_term, -np.inf)), 0).sum(axis=1), 0, 1)


@dataclass(frozen=True, eq=False)
class WeeklyReview:
    """Two versions on the same scenarios: what regressed, progressed, and graduated."""

    p_worse: np.ndarray           # P(θ_new < θ_old)
    p_better: np.ndarray          # P(θ_new > θ_old)
    fisher_worse: np.ndarray      # one-sided Fisher exact p-value, new lower than old
    fisher_better: np.ndarray     # one-sided Fisher exact p-value, new higher than old
    regressed: np.ndarray         # regression-set scenarios with p_worse ≥ level
    progressed: np.ndarray        # frontier scenarios with p_better ≥ level
    graduated: np.ndarray         # frontier scenarios whose new batch is a declared clean batch
    frontier: np.ndarray
    level: float
    clean_batch: int
    prior: Prior
    control: str = "fdr"          # "fdr" (Benjamini–Hochberg across the regression set) or "none"
    fdr: float = 0.05
    expected_false_flags: float = 0.0   # Σ P(θ_new ≥ θ_old) over the scenarios flagged regressed
    looked_at: int = 0                  # regression-set scenarios with runs in both batches

    def describe_control(self) -> str:
        """What the "regressed" flag controls, and how many of its flags are expected to be false."""
        flagged = int(self.regressed.sum())
        if self.control == "none":
            rule = f"per scenario, P(worse) ≥ {self.level:g}, no control across {self.looked_at} scenarios"
        else:
            rule = (f"Benjamini–Hochberg at false-discovery rate {self.fdr:g} across {self.looked_at} "
                    f"regression-set scenarios (one-sided Fisher), and P(worse) ≥ {self.level:g}")
        return f"{flagged} flagged regressed ({rule}); expected false flags among them {self.expected_false_flags:.2f}"



def review_week(old_successes, old_trials, new_successes, new_trials, *, frontier=None,
                prior: Prior = UNIFORM, level: float = 0.95, clean_batch: int = 10,
                control: str = "fdr", fdr: float = 0.05) -> WeeklyReview:
    """Compare two versions scenario by scenario (independent Beta posteriors per side).

    ``frontier[i]`` is True for scenarios still being reached for, False for the regression
    set (default: all in the regression set). A frontier scenario graduates when its new batch
    has at least ``clean_batch`` runs and no failure. A regression-set scenario is flagged
    *regressed* when P(worse) ≥ ``level`` and, with ``control="fdr"``, its one-sided Fisher
    p-value survives Benjamini–Hochberg at ``fdr`` across the regression set
    (``control="none"``: the per-scenario rule alone, as before).

    >>> r = review_week([9], [10], [3], [10])
    >>> round(float(r.p_worse[0]), 4), bool(r.regressed[0]), round(float(r.fisher_worse[0]), 4)
    (0.9962, True, 0.0099)
    """
    ko, no = check_counts(old_successes, old_trials, names=("old_successes", "old_trials"))
    kn, nn = check_counts(new_successes, new_trials, names=("new_successes", "new_trials"))
    ko, no, kn, nn = (np.atleast_1d(v) for v in (ko, no, kn, nn))
    if ko.shape != kn.shape:
        raise UsageError(f"old counts cover {ko.size} scenarios and new counts {kn.size}; pair them one to one")
    check_level(level, "level")
    if clean_batch < 1:
        raise UsageError(f"clean_batch={clean_batch} must be at least 1")
    front = np.zeros(ko.shape, bool) if frontier is None else np.asarray(frontier, bool)
    if front.shape != ko.shape:
        raise UsageError(f"frontier has {front.size} entries for {ko.size} scenarios")
    if control not in ("fdr", "none"):
        raise UsageError(f"control={control!r} must be 'fdr' (Benjamini–Hochberg across scenarios) or 'none'")
    check_level(fdr, "fdr")
    old, new = posterior(ko, no, prior=prior), posterior(kn, nn, prior=prior)
    p_worse = p_greater(old, new)
    total = ko + kn
    # Conditional on the total passes, new-version passes are hypergeometric.
    fisher_worse = stats.hypergeom.cdf(kn, no + nn, total, nn)
    fisher_better = stats.hypergeom.sf(kn - 1, no + nn, total, nn)
    looked = ~front & (no > 0) & (nn > 0)
    regressed = looked & (p_worse >= level)
    if control == "fdr":
        regressed &= bh_reject(np.where(looked, fisher_worse, np.nan), fdr)
    return WeeklyReview(
        p_worse=p_worse, p_better=1 - p_worse,
        fisher_worse=fisher_worse, fisher_better=fisher_better,
        regressed=regressed,
        progressed=front & (1 - p_worse >= level),
        graduated=front & (nn >= clean_batch) & (kn == nn),
        frontier=front, level=level, clean_batch=int(clean_batch), prior=prior,
        control=control, fdr=float(fdr), expected_false_flags=float(np.sum(1 - p_worse[regressed])),
        looked_at=int(looked.sum()),
    )


@dataclass(frozen=True, eq=False)
class CanaryChart:
    """Canary scenarios over scheduled batches; arrays are (batches, canaries)."""

    tail: np.ndarray              # P(this few passes or fewer | carried belief)
    alarm: np.ndarray             # tail ≤ alarm_at
    false_alarm_rate: np.ndarray  # exact alarm probability of that batch if nothing changed
    final: BetaPosterior          # carried belief after absorbing every batch that did not alarm
    alarm_at: float


def canary_chart(carried: BetaPosterior, successes, trials, *, alarm_at: float = 0.01) -> CanaryChart:
    """Track canaries against their carried beliefs; alarm when failures are improbable.

    ``successes``/``trials`` are (batches, canaries). A batch that does not alarm is absorbed
    into the carried belief; one that alarms is held out (it is the thing to investigate).

    >>> chart = canary_chart(posterior(100, 100), [[10], [8]], [[10], [10]], alarm_at=0.01)
    >>> chart.alarm[:, 0].tolist(), round(float(chart.tail[1, 0]), 4)
    ([False, True], 0.0062)
    """
    check_level(alarm_at, "alarm_at")
    k, n = check_counts(successes, trials)
    if k.ndim != 2:
        raise UsageError(f"successes has shape {k.shape}; give (batches, canaries)")
    alpha = np.broadcast_to(carried.alpha, k.shape[1:]).astype(float)
    beta = np.broadcast_to(carried.beta, k.shape[1:]).astype(float)
    tail = np.full(k.shape, np.nan)
    rate = np.full(k.shape, np.nan)
    alarm = np.zeros(k.shape, bool)
    for t in range(k.shape[0]):
        ran = n[t] > 0
        tail[t] = np.where(ran, betabinom_cdf(k[t], n[t], alpha, beta), np.nan)
        rate[t] = np.where(ran, _alarm_probability(n[t], alpha, beta, alarm_at), 0.0)
        alarm[t] = ran & (tail[t] <= alarm_at)
        keep = ~alarm[t]
        alpha = alpha + np.where(keep, k[t], 0)
        beta = beta + np.where(keep, n[t] - k[t], 0)
    return CanaryChart(tail, alarm, rate, BetaPosterior(alpha, beta, carried.prior), alarm_at)


def _alarm_probability(trials: np.ndarray, alpha: np.ndarray, beta: np.ndarray, alarm_at: float) -> np.ndarray:
    """P(alarm) for a batch of n runs if θ is drawn from the carried belief: the largest
    beta-binomial lower tail not above ``alarm_at`` (discreteness keeps it at or below)."""
    top = int(trials.max()) if trials.size else 0
    j = np.arange(top + 1, dtype=float)[None, :]
    cdf = betabinom_cdf(np.broadcast_to(j, (trials.size, top + 1)),
                        np.broadcast_to(trials[:, None], (trials.size, top + 1)),
                        np.broadcast_to(alpha[:, None], (trials.size, top + 1)),
                        np.broadcast_to(beta[:, None], (trials.size, top + 1)))
    valid = (j <= trials[:, None]) & (cdf <= alarm_at)
    return np.where(valid, cdf, 0.0).max(axis=1)
