"""The running account: evidence carried across versions, discounted, and checked for change.

Carry: the posterior of version V is the prior of V+1 after a discount δ,
Beta(α, β) → Beta(1 + δ(α − 1), 1 + δ(β − 1)): old runs count δ of what they did.
Check: two hypotheses per scenario — *unchanged* (the carried prior) and *changed* (the reset
prior) — with declared prior odds; beta-binomial marginal likelihoods weigh them.
Surprise: the carried predictive probability of a batch at least as bad as the one seen.

>>> carried = posterior(50, 50)                       # fifty clean runs: Beta(51, 1)
>>> round(float(surprise(carried, 3, 5)), 4)
0.0065
>>> change = detect_change(carried, 3, 5, odds=4)
>>> round(float(change.p_changed), 3), round(float(change.changed.mean), 3)
(0.872, 0.571)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np
from scipy import special

from ..errors import UsageError
from ._beta import UNIFORM, BetaMixture, BetaPosterior, Prior, check_counts, posterior

__all__ = ["as_beta", "discount", "footprint_discount", "surprise", "betabinom_cdf", "detect_change",
           "ChangeDetection", "running_account", "RunningAccount"]


def as_beta(belief) -> BetaPosterior:
    """A belief as one Beta per scenario: a mixture (a family prior) by its mean and variance.

    >>> b = as_beta(BetaMixture(np.array([[0.5, 0.5]]), np.array([[9.0, 1.0]]), np.array([[1.0, 9.0]])))
    >>> b.mean.round(3).tolist(), b.var.round(4).tolist()
    ([0.5], [0.1682])
    """
    if isinstance(belief, BetaPosterior):
        return belief
    m, v = belief.mean, belief.var
    strength = np.maximum(m * (1 - m) / np.maximum(v, 1e-300) - 1, 1e-6)
    return BetaPosterior(m * strength, (1 - m) * strength, Prior(1.0, 1.0, "family (matched mean and variance)"))


def discount(belief: BetaPosterior, delta) -> BetaPosterior:
    """Keep δ of the evidence in ``belief``: Beta(1 + δ(α − 1), 1 + δ(β − 1)).

    δ = 1 carries everything, δ = 0 starts over from the uniform prior.

    >>> d = discount(posterior(10, 10), 1.0).update(5, 5)
    >>> (float(d.alpha), float(d.beta)), round(float(d.sf(0.9)), 3)
    ((16.0, 1.0), 0.815)
    >>> round(float(discount(posterior(10, 10), 0.0).update(5, 5).sf(0.9)), 3)
    0.469
    """
    d = np.asarray(delta, dtype=float)
    if np.any(~np.isfinite(d) | (d < 0) | (d > 1)):
        bad = d[~np.isfinite(d) | (d < 0) | (d > 1)].flat[0]
        raise UsageError(f"discount delta={bad} must be between 0 (start over) and 1 (carry everything)")
    belief = as_beta(belief)
    return BetaPosterior(1 + d * (belief.alpha - 1), 1 + d * (belief.beta - 1), belief.prior)


def footprint_discount(tags: Sequence[Iterable[str]], touched: Iterable[str], *,
                       inside: float, outside: float = 1.0) -> np.ndarray:
    """Per-scenario δ from a change's footprint: ``inside`` for scenarios carrying a touched tag.

    >>> footprint_discount([{"tool:crm"}, {"tool:search"}, set()], {"tool:crm"}, inside=0.2)
    array([0.2, 1. , 1. ])
    """
    hit = set(touched)
    for name, value in (("inside", inside), ("outside", outside)):
        if not 0 <= value <= 1:
            raise UsageError(f"{name}={value} must be between 0 and 1")
    return np.array([inside if hit.intersection(t) else outside for t in tags], dtype=float)


def betabinom_cdf(successes, trials, alpha, beta) -> np.ndarray:
    """P(K ≤ k) for K ~ BetaBinomial(n, α, β), vectorised over scenarios.

    Summed over a grid of counts from the pmf ratio recurrence, in logs, so a 10,000-scenario
    account needs only cheap logarithms and one special-function call per scenario.

    >>> round(float(betabinom_cdf(3, 5, 51, 1)), 5)
    0.00649
    """
    k, n = np.broadcast_arrays(np.asarray(successes, float), np.asarray(trials, float))
    a, b = np.broadcast_to(alpha, k.shape).astype(float), np.broadcast_to(beta, k.shape).astype(float)
    fk, fn, fa, fb = k.ravel(), n.ravel(), a.ravel(), b.ravel()
    top = int(fk.max()) if fk.size else 0
    # pmf(0) = B(α, β + n) / B(α, β); pmf(j+1)/pmf(j) = (n−j)(α+j) / ((j+1)(β+n−j−1)).
    # A loop over the count (≤ max k), each step vectorised over scenarios: cache-friendly.
    log0 = special.betaln(fa, fb + fn) - special.betaln(fa, fb)
    pmf = np.exp(log0)
    total = pmf.copy()
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for j in range(top):
            pmf = pmf * ((fn - j) * (fa + j) / ((j + 1) * (fb + fn - j - 1)))
            total += np.where(fk > j, pmf, 0.0)
    # Where pmf(0) underflows (α/β huge), redo those rows in logs.
    bad = ~np.isfinite(total) | (log0 < -700)
    if bad.any():
        total[bad] = _cdf_in_logs(fk[bad], fn[bad], fa[bad], fb[bad], log0[bad])
    return np.minimum(total, 1.0).reshape(k.shape)


def _cdf_in_logs(k, n, a, b, log0) -> np.ndarray:
    j = np.arange(int(k.max()), dtype=float)[None, :]
    k, n, a, b, log0 = (v[:, None] for v in (k, n, a, b, log0))
    with np.errstate(divide="ignore", invalid="ignore"):
        step = np.log((n - j) * (a + j)) - np.log((j + 1) * (b + n - j - 1))
    logp = np.concatenate([log0, log0 + np.cumsum(np.where(j < n, step, -np.inf), axis=1)], axis=1)
    mask = np.arange(logp.shape[1])[None, :] <= k
    return np.sum(np.where(mask, np.exp(np.where(mask, logp, -np.inf)), 0.0), axis=1)


def surprise(carried: BetaPosterior, successes, trials) -> np.ndarray:
    """How improbable a batch is under the carried belief: P(K ≤ k), a batch at least as bad.

    NaN (undefined) where the batch has no runs.

    >>> surprise(posterior(50, 50), [3, 5, 0], [5, 5, 0]).round(4).tolist()
    [0.0065, 1.0, nan]
    """
    k, n = check_counts(successes, trials)
    value = betabinom_cdf(k, n, carried.alpha, carried.beta)
    return np.where(n > 0, value, np.nan)


@dataclass(frozen=True, eq=False)
class ChangeDetection:
    """The two-hypothesis check of one batch against a carried belief, per scenario."""

    p_changed: np.ndarray
    unchanged: BetaPosterior      # carried prior updated with the batch
    changed: BetaPosterior        # reset prior updated with the batch
    mixture: BetaMixture          # the posterior: components (unchanged, changed)
    surprise: np.ndarray
    bayes_factor: np.ndarray      # P(batch | changed) / P(batch | unchanged)
    odds: float                   # declared prior odds for "unchanged"
    reset_prior: Prior


def detect_change(carried: BetaPosterior, successes, trials, *, odds: float = 4.0,
                  reset: Prior | BetaPosterior = UNIFORM) -> ChangeDetection:
    """Weigh "unchanged" (prior = carried) against "changed" (prior = ``reset``) given a batch.

    ``odds`` are the declared prior odds for "unchanged" (4 means 4:1, P(changed) = 0.2).

    >>> c = detect_change(posterior([50, 50], [50, 50]), [3, 5], [5, 5], odds=4)
    >>> c.p_changed.round(3).tolist(), c.mixture.mean.round(3).tolist()
    ([0.872, 0.044], [0.62, 0.977])
    """
    if not (np.isfinite(odds) and odds > 0):
        raise UsageError(f"odds={odds} must be a positive number (prior odds that nothing changed)")
    k, n = check_counts(successes, trials)
    reset_belief = as_beta(reset) if isinstance(reset, (BetaPosterior, BetaMixture)) else posterior(0, 0, prior=reset)
    reset_alpha = np.broadcast_to(reset_belief.alpha, np.shape(carried.alpha))
    reset_beta = np.broadcast_to(reset_belief.beta, np.shape(carried.alpha))
    reset_belief = BetaPosterior(reset_alpha, reset_beta, reset_belief.prior)
    # The binomial coefficient is common to both hypotheses and cancels in the Bayes factor.
    log_bf = (special.betaln(reset_alpha + k, reset_beta + n - k) - special.betaln(reset_alpha, reset_beta)
              - special.betaln(carried.alpha + k, carried.beta + n - k) + special.betaln(carried.alpha, carried.beta))
    # P(changed) = BF / (BF + odds), computed in logs for tiny or huge factors.
    p_changed = 1.0 / (1.0 + np.exp(np.log(odds) - log_bf))
    weight = np.stack(np.broadcast_arrays(1 - p_changed, p_changed), axis=-1)
    stacked_a = np.stack(np.broadcast_arrays(carried.alpha + k, reset_alpha + k), axis=-1)
    stacked_b = np.stack(np.broadcast_arrays(carried.beta + n - k, reset_beta + n - k), axis=-1)
    return ChangeDetection(
        p_changed=p_changed,
        unchanged=carried.update(k, n),
        changed=reset_belief.update(k, n),
        mixture=BetaMixture(weight, stacked_a, stacked_b),
        surprise=surprise(carried, k, n),
        bayes_factor=np.exp(log_bf),
        odds=float(odds),
        reset_prior=reset_belief.prior,
    )


@dataclass(frozen=True, eq=False)
class RunningAccount:
    """The account over T versions × S scenarios; arrays are (T, S), ``final`` is per scenario.

    ``since[t, s]`` is the index of the version from which scenario s's evidence at step t
    is carried (it moves to t on a reset); ``delta`` the discount applied entering step t.
    """

    mean: np.ndarray
    p_above: np.ndarray
    p_changed: np.ndarray         # NaN where change detection is off
    surprise: np.ndarray          # NaN where the scenario had no runs
    reset: np.ndarray
    since: np.ndarray
    delta: np.ndarray
    final: BetaPosterior
    bar: float | None
    odds: float | None
    reset_at: float


def running_account(successes, trials, *, prior: Prior | BetaPosterior = UNIFORM, delta=1.0,
                    odds: float | None = None, reset_at: float = 0.5,
                    bar: float | None = 0.9) -> RunningAccount:
    """Carry each scenario's belief through versions, discounting and resetting on change.

    ``successes`` and ``trials`` are (T, S): T versions in order, S scenarios. ``delta`` is a
    scalar, (S,) per scenario (a footprint) or (T, S). With ``odds`` set, every batch is
    checked against its carried belief; when P(changed) ≥ ``reset_at`` the account resets to
    the changed branch (reset prior + this batch), else it carries the unchanged branch.
    ``mean`` and ``p_above`` at each step come from the full mixture; ``bar=None`` skips the
    per-step P(θ > bar) (NaN), the costliest column of a large account.

    >>> acc = running_account([[50], [3]], [[50], [5]], odds=4)
    >>> acc.reset[1].tolist(), round(float(acc.mean[1, 0]), 3), acc.since[1].tolist()
    ([True], 0.62, [1])
    """
    k, n = check_counts(successes, trials)
    if k.ndim != 2:
        raise UsageError(f"successes has shape {k.shape}; give (versions, scenarios), e.g. [[5, 3]] for one version")
    if bar is not None and not 0 < bar < 1:
        raise UsageError(f"bar={bar} must be between 0 and 1, or None")
    if not 0 < reset_at <= 1:
        raise UsageError(f"reset_at={reset_at} must be in (0, 1]")
    steps, width = k.shape
    d = np.broadcast_to(np.asarray(delta, dtype=float), (steps, width))
    start = as_beta(posterior(np.zeros(width), np.zeros(width), prior=prior))
    out = {name: np.full((steps, width), np.nan) for name in ("mean", "p_above", "p_changed", "surprise")}
    reset = np.zeros((steps, width), dtype=bool)
    since = np.zeros((steps, width), dtype=int)
    state, origin = start, np.zeros(width, dtype=int)
    for t in range(steps):
        carried = start if t == 0 else discount(state, d[t])
        ran = n[t] > 0
        if odds is None or t == 0:
            state = carried.update(k[t], n[t])
            out["mean"][t] = state.mean
            if bar is not None:
                out["p_above"][t] = state.sf(bar)
            if t > 0:
                out["surprise"][t] = surprise(carried, k[t], n[t])
        else:
            change = detect_change(carried, k[t], n[t], odds=odds, reset=start)
            out["mean"][t] = change.mixture.mean
            if bar is not None:
                out["p_above"][t] = change.mixture.sf(bar)
            out["p_changed"][t], out["surprise"][t] = change.p_changed, change.surprise
            reset[t] = ran & (change.p_changed >= reset_at)
            state = BetaPosterior(np.where(reset[t], change.changed.alpha, change.unchanged.alpha),
                                  np.where(reset[t], change.changed.beta, change.unchanged.beta), start.prior)
        origin = np.where(reset[t], t, origin)
        since[t] = origin
    return RunningAccount(out["mean"], out["p_above"], out["p_changed"], out["surprise"], reset, since,
                          np.array(d), state, bar, odds, reset_at)
