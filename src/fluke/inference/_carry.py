"""One belief per scenario from this version's runs and whatever earlier versions carry.

:func:`belief_from_counts` is the one place where a version's belief is formed: the declared prior,
the evidence carried from earlier versions (each discounted by δ), the change check, and
the batch. Every number printed about a version (the mean, P(θ > bar), the interval,
P(next m pass), the runs to certify, the suite questions) comes from the one posterior it
returns, so no line can disagree with another.

Two rules:

* *Discount only what was carried.* δ scales the carried evidence (passes and failures),
  never the declared prior: Beta(α₀ + δk, β₀ + δ(n − k)). With the uniform prior this is the
  design's Beta(1 + δ(α − 1), 1 + δ(β − 1)); a scenario an earlier version never ran gets the
  declared prior untouched, and says so.
* *No collapse.* With a change check (``odds``), the belief is the exact mixture over when
  the scenario's evidence starts (a change just before any version resets it), weighed by
  the batches' beta-binomial likelihoods. Carrying through two versions gives the same
  numbers as ``--carry-from`` the earlier one.

>>> b = belief_from_counts([4], [5], prior=Prior(8, 2), earlier=[EarlierVersion("v1", [10], [10])], delta=0.5)
>>> b.prior_text[0]
'Beta(13, 2): declared Beta(8, 2) plus v1 10 of 10 runs kept at δ = 0.5 (5 passes, 0 failures)'
>>> round(float(b.mean[0]), 4), b.posterior.alpha.tolist(), b.posterior.beta.tolist()
(0.85, [17.0], [3.0])
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Sequence

import numpy as np

from ..errors import UsageError
from ._account import betabinom_cdf
from ._beta import UNIFORM, BetaMixture, BetaPosterior, Prior, check_counts, log_marginal
from ._statement import _g
from ._suite import runs_to_certify, suite_questions, suite_runs_to_certify
from ._unknown import check_unknown_policy, counts_with_unknowns

__all__ = ["EarlierVersion", "Belief", "belief_from_counts"]


@dataclass(frozen=True)
class EarlierVersion:
    """The counts of one earlier version on this version's scenarios (same order).

    ``present[i]`` says whether that version had scenario i at all (default: it had runs).
    """

    label: str
    successes: Sequence[float]
    trials: Sequence[float]
    present: Sequence[bool] | None = None
    unknowns: Sequence[float] | None = None     # runs of unknown outcome, beside ``trials``


@dataclass(frozen=True, eq=False)
class Belief:
    """A version's belief per scenario; every answer is a method on the one ``posterior``.

    ``prior`` is the belief the batch updated (carried evidence, and with a change check the
    mixture with the reset branch); ``prior_text`` says it per scenario; ``carried_text``
    says what came from earlier versions. Step arrays are (versions, scenarios), oldest
    first, the last row this version: ``p_changed`` and ``surprise`` NaN where no check ran
    (no carried evidence, or no runs); ``delta`` the δ applied entering each step.
    ``start`` is (scenarios, versions): the posterior probability that the scenario's
    evidence starts at each version (all on the first without a change check).
    """

    successes: np.ndarray
    trials: np.ndarray
    posterior: BetaPosterior | BetaMixture
    prior: BetaPosterior | BetaMixture
    prior_text: tuple[str, ...]
    carried_text: tuple[str, ...]
    carried: np.ndarray                 # bool: some evidence was carried into the scenario
    p_changed: np.ndarray
    surprise: np.ndarray
    delta: np.ndarray
    start: np.ndarray
    labels: tuple[str, ...]
    odds: float | None
    base: Prior
    unknowns: int = 0                   # this version's runs of unknown outcome
    unknown_policy: str = "fail"

    @property
    def mean(self) -> np.ndarray:
        """P(the next run passes), per scenario."""
        return self.posterior.mean

    def p_above(self, bar: float = 0.9) -> np.ndarray:
        """P(θ > bar), per scenario."""
        return self.posterior.sf(bar)

    def interval(self, level: float = 0.9) -> tuple[np.ndarray, np.ndarray]:
        """The equal-tailed credible interval, per scenario."""
        return self.posterior.interval(level)

    def p_next_all_pass(self, m: int) -> np.ndarray:
        """P(the next m runs all pass), per scenario."""
        return self.posterior.p_all_pass(m)

    def runs_to_certify(self, *, bar: float = 0.9, level: float = 0.95) -> np.ndarray:
        """Clean runs still needed per scenario for P(θ > bar) ≥ level, from this posterior."""
        return runs_to_certify(self.posterior, bar=bar, level=level)

    def suite_runs_to_certify(self, *, bar: float = 0.9, level: float = 0.95) -> float:
        return suite_runs_to_certify(self.posterior, bar=bar, level=level)

    def suite(self, *, bar: float = 0.9):
        """The suite questions (:func:`suite_questions`) from this posterior."""
        return suite_questions(self.posterior, bar=bar)

    @property
    def since(self) -> np.ndarray:
        """Per scenario, the index of the version its evidence most probably starts at."""
        return np.argmax(self.start, axis=1)

    def resets(self, reset_at: float = 0.5) -> np.ndarray:
        """(versions, scenarios): where the change check made a change at least ``reset_at`` likely."""
        with np.errstate(invalid="ignore"):
            return np.nan_to_num(self.p_changed, nan=0.0) >= reset_at


def belief_from_counts(successes, trials, *, prior: Prior | BetaPosterior = UNIFORM,
            earlier: Sequence[EarlierVersion] = (), delta=1.0, odds: float | None = None,
            label: str = "this version", prior_text: Sequence[str] | None = None, unknowns=None,
            unknown: str = "fail") -> Belief:
    """This version's belief per scenario, carrying ``earlier`` versions (oldest first).

    ``prior`` is the declared prior: one :class:`Prior`, or a :class:`BetaPosterior` of
    per-scenario priors (with ``prior_text`` naming each). ``delta`` is the share of
    carried evidence kept at each carry: a scalar, one per scenario (a footprint), or
    (len(earlier), scenarios). ``odds`` are the prior odds for "unchanged" at each carry;
    None carries without a check. ``trials`` count the runs with a known outcome and
    ``unknowns`` the rest (per scenario; also on each :class:`EarlierVersion`): under
    ``unknown="fail"`` they join the trials as failures (the ledger's counts already do so),
    under ``"exclude"`` they are left out.

    >>> v1 = EarlierVersion("v1", [50], [50])
    >>> b = belief_from_counts([4], [5], earlier=[v1], odds=4)
    >>> round(float(b.p_changed[-1, 0]), 3), round(float(b.mean[0]), 3), b.runs_to_certify().tolist()
    (0.335, 0.881, [10.0])
    >>> b.carried_text[0][:60]
    'evidence of v1 (50 of 50 runs) at δ = 1; P(changed) = 0.335 '
    """
    check_unknown_policy(unknown)
    successes, trials, missing = counts_with_unknowns(successes, trials, unknowns, unknown)
    k, n = check_counts(successes, trials)
    k, n = np.atleast_1d(k), np.atleast_1d(n)
    if k.ndim != 1:
        raise UsageError(f"successes has shape {k.shape}; give one count per scenario")
    size = k.size
    if isinstance(prior, BetaMixture):
        prior, prior_text = _family_base(prior, size, prior_text, bool(earlier))
        if not earlier:
            return replace(_family_only(k, n, prior, prior_text, label), unknowns=missing, unknown_policy=unknown)
    base_a, base_b, base = _base(prior, size)
    if odds is not None and not (np.isfinite(odds) and odds > 0):
        raise UsageError(f"odds={odds} must be a positive number (prior odds that nothing changed)")
    steps = [_step(v, size, unknown) for v in earlier] + [(label, k, n, n > 0)]
    T = len(steps)
    d = _deltas(delta, T, size)
    # Components r = 0..T−1: "the evidence starts at version r". ev_* are their carried counts.
    ev_a = np.zeros((size, T))
    ev_b = np.zeros((size, T))
    log_w = np.full((size, T), -np.inf)
    log_w[:, 0] = 0.0
    p_changed = np.full((T, size), np.nan)
    surprise = np.full((T, size), np.nan)
    raw = np.zeros((T, size, 2))                        # each version's own counts, for the words
    for t, (_, kt, nt, _) in enumerate(steps):
        raw[t, :, 0], raw[t, :, 1] = kt, nt
        if t > 0:
            ev_a[:, :t] *= d[t][:, None]
            ev_b[:, :t] *= d[t][:, None]
            has = np.any(np.isfinite(log_w[:, :t]) & (ev_a[:, :t] + ev_b[:, :t] > 0), axis=1)
            check = has & (nt > 0)
            w_prior = _normalise(log_w)
            grid = (size, T)
            tail = betabinom_cdf(np.broadcast_to(kt[:, None], grid), np.broadcast_to(nt[:, None], grid),
                                 base_a[:, None] + ev_a, base_b[:, None] + ev_b)
            surprise[t] = np.where(check, np.sum(np.exp(w_prior) * tail, axis=1), np.nan)
            if odds is not None:
                stay = np.log(odds / (1 + odds))
                log_w = np.where(check[:, None], w_prior + stay, w_prior)
                log_w[:, t] = np.where(check, -np.log1p(odds), -np.inf)
            if t == T - 1:
                prior_w = _normalise(log_w)
                prior_belief = _belief(prior_w, base_a, base_b, ev_a, ev_b, base, odds)
        elif T == 1:
            prior_w = log_w.copy()
            prior_belief = _belief(prior_w, base_a, base_b, ev_a, ev_b, base, odds)
        lm = log_marginal(kt[:, None], nt[:, None], base_a[:, None] + ev_a, base_b[:, None] + ev_b)
        log_w = _normalise(log_w + lm)
        if t > 0 and odds is not None:
            p_changed[t] = np.where(check, np.exp(log_w[:, t]), np.nan)
        live = np.arange(T)[None, :] <= t
        ev_a = np.where(live, ev_a + kt[:, None], ev_a)
        ev_b = np.where(live, ev_b + (nt - kt)[:, None], ev_b)
    post = _belief(log_w, base_a, base_b, ev_a, ev_b, base, odds)
    had = np.zeros(size, bool)
    for _, _, nt, present in steps[:-1]:
        had |= present & (nt > 0)
    base_text = list(prior_text) if prior_text is not None else [_describe_base(base_a[i], base_b[i], base)
                                                                 for i in range(size)]
    if len(base_text) != size:
        raise UsageError(f"prior_text has {len(base_text)} entries for {size} scenarios")
    words = _Words(steps, raw, d, base_text, odds)
    texts = [words.prior(i, prior_w[i], base_a[i], base_b[i]) for i in range(size)]
    carried = [words.carried(i, p_changed[-1, i]) for i in range(size)]
    return Belief(k, n, post, prior_belief, tuple(texts), tuple(carried), had, p_changed, surprise, d,
                  np.exp(log_w), tuple(s[0] for s in steps), None if odds is None else float(odds), base,
                  missing, unknown)


def _family_base(prior: BetaMixture, size: int, prior_text, carrying: bool):
    """A family (mixture) prior: kept as is without carrying; moment-matched to a Beta to carry."""
    if np.shape(prior.mean) != (size,):
        raise UsageError(f"the mixture prior covers {np.size(prior.mean)} scenarios, not {size}")
    texts = list(prior_text) if prior_text is not None else ["family prior"] * size
    if not carrying:
        return prior, texts
    m, v = prior.mean, prior.var
    strength = np.maximum(m * (1 - m) / np.maximum(v, 1e-300) - 1, 1e-6)
    a, b = m * strength, (1 - m) * strength
    texts = [f"{t}; carried as Beta({a[i]:.3g}, {b[i]:.3g}), its mean and variance" for i, t in enumerate(texts)]
    return BetaPosterior(a, b, Prior(1.0, 1.0, "family")), texts


def _family_only(k, n, prior: BetaMixture, texts, label) -> Belief:
    size = k.size
    nothing = np.full((1, size), np.nan)
    return Belief(k, n, prior.update(k, n), prior, tuple(texts), ("nothing; this version's runs only.",) * size,
                  np.zeros(size, bool), nothing, nothing.copy(), np.ones((1, size)), np.ones((size, 1)),
                  (label,), None, Prior(1.0, 1.0, "family"))


def _base(prior, size):
    if isinstance(prior, Prior):
        return np.full(size, prior.alpha), np.full(size, prior.beta), prior
    if isinstance(prior, BetaPosterior):
        a = np.broadcast_to(np.asarray(prior.alpha, float), (size,)).copy()
        b = np.broadcast_to(np.asarray(prior.beta, float), (size,)).copy()
        return a, b, prior.prior
    raise UsageError(f"prior={prior!r} must be a Prior or a BetaPosterior of per-scenario priors "
                        "(a family BetaMixture is used without carrying: posterior(k, n, prior=mixture))")


def _step(v: EarlierVersion, size: int, unknown: str):
    if not isinstance(v, EarlierVersion):
        raise UsageError(f"earlier holds {v!r}; give EarlierVersion(label, successes, trials)")
    ks, ns, _ = counts_with_unknowns(v.successes, v.trials, v.unknowns, unknown)
    k, n = check_counts(ks, ns)
    k, n = np.atleast_1d(k), np.atleast_1d(n)
    if k.shape != (size,):
        raise UsageError(f"version {v.label} has counts for {k.size} scenarios; give one per scenario "
                            f"of this version ({size}), 0 of 0 where it did not run")
    present = n > 0 if v.present is None else np.asarray(v.present, bool)
    if present.shape != (size,):
        raise UsageError(f"version {v.label}: present has {present.size} entries for {size} scenarios")
    return v.label, np.where(present, k, 0.0), np.where(present, n, 0.0), present


def _deltas(delta, steps: int, size: int) -> np.ndarray:
    d = np.asarray(delta, dtype=float)
    if d.ndim == 2 and d.shape == (steps - 1, size):
        d = np.concatenate([np.ones((1, size)), d])
    try:
        d = np.broadcast_to(d, (steps, size)).copy()
    except ValueError:
        raise UsageError(f"delta has shape {np.shape(delta)}; give a scalar, one per scenario ({size}) "
                            f"or one per carry and scenario ({steps - 1}, {size})") from None
    if np.any(~np.isfinite(d) | (d < 0) | (d > 1)):
        raise UsageError(f"delta={d[~np.isfinite(d) | (d < 0) | (d > 1)].flat[0]} must be between 0 "
                            "(start over) and 1 (carry everything)")
    return d


def _normalise(log_w: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        return log_w - np.logaddexp.reduce(log_w, axis=1, keepdims=True)


def _belief(log_w, base_a, base_b, ev_a, ev_b, base, odds):
    a, b = base_a[:, None] + ev_a, base_b[:, None] + ev_b
    if odds is None:                                   # one component: a plain Beta
        return BetaPosterior(a[:, 0], b[:, 0], base)
    return BetaMixture(np.exp(log_w), a, b)


def _describe_base(a: float, b: float, base: Prior) -> str:
    if base.name and np.isclose(a, base.alpha) and np.isclose(b, base.beta):
        return base.describe()
    return f"declared Beta({_g(a)}, {_g(b)})"


class _Words:
    """The per-scenario sentences: the prior actually used and what was carried."""

    def __init__(self, steps, raw, d, base_text, odds):
        self.steps, self.raw, self.d, self.base_text, self.odds = steps, raw, d, base_text, odds

    def _kept(self, i: int, since: int = 0) -> tuple[float, float, list[str]]:
        """Carried passes and failures into the last version, evidence from ``since`` on."""
        T = len(self.steps)
        a = b = 0.0
        parts = []
        for t in range(since, T - 1):
            kt, nt = self.raw[t, i]
            keep = float(np.prod(self.d[t + 1:, i]))
            a, b = a + keep * kt, b + keep * (nt - kt)
            if self.steps[t][3][i] and nt > 0:
                parts.append(f"{self.steps[t][0]} {_g(kt)} of {_g(nt)} runs kept at δ = {_g(keep)}")
        return a, b, parts

    def prior(self, i, log_w, a0, b0) -> str:
        base = self.base_text[i]
        if len(self.steps) == 1:
            return base
        a, b, parts = self._kept(i)
        if not parts:
            return f"{base} (nothing carried: no earlier version ran this scenario)"
        if a + b == 0:
            return f"{base} (" + "; ".join(parts) + ": nothing kept)"
        head = f"Beta({_g(a0 + a)}, {_g(b0 + b)}): {_strip(base)} plus " + "; ".join(parts)
        text = f"{head} ({_g(round(a, 3))} passes, {_g(round(b, 3))} failures)"
        if self.odds is not None:
            w = np.exp(log_w)
            text += (f"; mixed with the reset branch ({base}) at prior weight {w[-1]:.3f} "
                     f"(odds {_g(self.odds)}:1 for unchanged)")
        return text

    def carried(self, i, p_changed) -> str:
        if len(self.steps) == 1:
            return "nothing; this version's runs only."
        _, _, parts = self._kept(i)
        if not parts:
            return "nothing: no earlier version ran this scenario; the declared prior only."
        bits = []
        for t in range(len(self.steps) - 1):
            kt, nt = self.raw[t, i]
            if self.steps[t][3][i] and nt > 0:
                bits.append(f"{self.steps[t][0]} ({_g(kt)} of {_g(nt)} runs) at δ = "
                            f"{_g(float(np.prod(self.d[t + 1:, i])))}")
        text = "evidence of " + ", ".join(bits)
        if self.odds is not None and np.isfinite(p_changed):
            text += (f"; P(changed) = {p_changed:.3f} from prior odds {_g(self.odds)}:1 for unchanged, "
                     "and every estimate mixes both branches (nothing collapsed)")
        return text + "."


def _strip(base: str) -> str:
    return base if base.startswith("declared") else f"declared {base}"
