"""Suite questions: several different answers from the same per-scenario posteriors.

The average rate, how many scenarios sit below a bar, whether every one clears it, how many
failures the next full execution will hold, and how many clean runs would certify a scenario
or the whole suite. Scenarios are treated as independent (independent priors): pooling, when
wanted, enters through a family prior, never here.

>>> answers = suite_questions(posterior([5] * 50, [5] * 50), bar=0.9)
>>> round(float(answers.p_below[0]), 3), round(answers.expected_below, 1), f"{answers.p_all_clear:.1e}"
(0.531, 26.6, '3.5e-17')
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special

from ..errors import UsageError
from ._beta import BetaMixture, BetaPosterior, posterior  # noqa: F401  (posterior: used by the doctests)
from ._check import check_level

__all__ = ["SuiteAnswers", "suite_questions", "poisson_binomial_pmf", "runs_to_certify",
           "suite_runs_to_certify"]


def poisson_binomial_pmf(p) -> np.ndarray:
    """Distribution of the number of successes among independent events with probabilities p.

    >>> poisson_binomial_pmf([0.5, 0.5]).tolist()
    [0.25, 0.5, 0.25]
    """
    probs = np.atleast_1d(np.asarray(p, dtype=float)).ravel()
    if np.any((probs < 0) | (probs > 1)):
        raise UsageError("probabilities must lie in [0, 1]")
    pmf = np.zeros(probs.size + 1)
    pmf[0] = 1.0
    # One pass per event over the count axis (vectorised along the counts).
    for i, q in enumerate(probs, start=1):
        pmf[1:i + 1] = pmf[1:i + 1] * (1 - q) + pmf[:i] * q
        pmf[0] *= 1 - q
    return pmf


@dataclass(frozen=True, eq=False)
class SuiteAnswers:
    """Answers to the suite questions at one bar, under independent per-scenario beliefs."""

    scenarios: int
    bar: float
    average_mean: float           # posterior mean of the equally weighted average rate
    average_sd: float             # its posterior standard deviation
    p_below: np.ndarray           # per scenario, P(θ < bar)
    expected_below: float
    below_pmf: np.ndarray         # distribution of how many scenarios sit below the bar
    p_all_clear: float            # P(every scenario's θ > bar); may underflow to 0, see log10
    log10_p_all_clear: float      # its base-10 logarithm (−inf when a scenario is surely below)
    failures_pmf: np.ndarray      # failures in the next full execution (one run per scenario)
    expected_failures: float

    def p_all_clear_text(self) -> str:
        """P(all clear) for printing in the style of every other probability (:func:`fluke.format.fmt_prob`).

        A value that underflows a float still prints as ``<0.001``, never as ``0``; only a
        scenario that is surely below the bar (log10 of −inf) makes it ``0.000``. The exact
        magnitude stays in ``log10_p_all_clear``.

        >>> suite_questions(posterior([5] * 50, [5] * 50)).p_all_clear_text()
        '<0.001'
        """
        from ..format import fmt_prob

        if self.p_all_clear == 0.0 and not np.isinf(self.log10_p_all_clear):
            return fmt_prob(np.nextafter(0.0, 1.0))  # underflowed, not zero
        return fmt_prob(float(self.p_all_clear))

    def below_interval(self, level: float = 0.9) -> tuple[int, int]:
        """An equal-tailed interval for the count of scenarios below the bar."""
        return _count_interval(self.below_pmf, level)

    def failures_interval(self, level: float = 0.9) -> tuple[int, int]:
        """An equal-tailed predictive interval for failures in the next full execution."""
        return _count_interval(self.failures_pmf, level)


def _count_interval(pmf: np.ndarray, level: float) -> tuple[int, int]:
    cdf = np.cumsum(pmf)
    tail = (1 - level) / 2
    return int(np.searchsorted(cdf, tail - 1e-12)), int(np.searchsorted(cdf, 1 - tail - 1e-12))


def suite_questions(belief, *, bar: float = 0.9) -> SuiteAnswers:
    """Answer the suite questions from per-scenario beliefs (a BetaPosterior or BetaMixture).

    >>> a = suite_questions(posterior([10] * 50, [10] * 50), bar=0.9)
    >>> round(a.average_mean, 3), round(a.average_sd, 4)
    (0.917, 0.0108)
    """
    check_level(bar, "bar")
    mean = np.atleast_1d(np.asarray(belief.mean, dtype=float))
    if mean.size == 0:
        raise UsageError("the suite has no scenarios")
    var = np.atleast_1d(np.asarray(belief.var, dtype=float))
    p_below = np.atleast_1d(np.asarray(belief.cdf(bar), dtype=float))
    # From P(θ > bar) directly, not 1 − P(θ ≤ bar): tiny upper tails keep their digits.
    p_above = np.atleast_1d(np.asarray(belief.sf(bar), dtype=float))
    with np.errstate(divide="ignore"):  # a scenario certainly below the bar makes P(all clear) 0
        log_clear = float(np.sum(np.log(p_above)))
    size = mean.size
    return SuiteAnswers(
        scenarios=size, bar=bar,
        average_mean=float(mean.mean()), average_sd=float(np.sqrt(var.sum()) / size),
        p_below=p_below, expected_below=float(p_below.sum()),
        below_pmf=poisson_binomial_pmf(p_below),
        p_all_clear=float(np.exp(log_clear)), log10_p_all_clear=float(log_clear / np.log(10)),
        failures_pmf=poisson_binomial_pmf(1 - mean), expected_failures=float(np.sum(1 - mean)),
    )


def _sf_after_clean(belief, extra: np.ndarray, bar: float) -> np.ndarray:
    """P(θ > bar) after ``extra`` more clean runs; ``extra`` broadcasts against the scenarios.

    For a Beta this is I_{1−bar}(β, α + extra) (scipy's fast side). For a mixture the clean
    runs also reweigh the components, by B(α + m, β)/B(α, β).
    """
    if isinstance(belief, BetaMixture):
        m = np.asarray(extra, float)[..., None]
        with np.errstate(divide="ignore"):
            log_w = np.log(belief.weight) + special.betaln(belief.alpha + m, belief.beta) \
                - special.betaln(belief.alpha, belief.beta)
        log_w = log_w - np.max(log_w, axis=-1, keepdims=True)
        w = np.exp(log_w)
        w = w / w.sum(axis=-1, keepdims=True)
        return np.sum(w * special.betainc(belief.beta, belief.alpha + m, 1 - bar), axis=-1)
    return special.betainc(belief.beta, belief.alpha + extra, 1 - bar)


def _as_suite(belief):
    """The belief as arrays with a leading scenario axis (a suite of one for a scalar)."""
    if isinstance(belief, BetaMixture):
        return BetaMixture(np.atleast_2d(belief.weight), np.atleast_2d(belief.alpha), np.atleast_2d(belief.beta))
    alpha = np.atleast_1d(np.asarray(belief.alpha, float))
    return BetaPosterior(alpha, np.broadcast_to(belief.beta, alpha.shape).astype(float), belief.prior)


def runs_to_certify(belief, *, bar: float = 0.9, level: float = 0.95,
                    max_runs: int = 10**7) -> np.ndarray:
    """Clean runs still needed, per scenario, for P(θ > bar) ≥ level (0 if already there).

    ``belief`` is a BetaPosterior or a BetaMixture (the change-check posterior). Found by
    doubling then bisection on the count, vectorised over scenarios; ``inf`` where more than
    ``max_runs`` would be needed.

    >>> runs_to_certify(posterior(0, 0), bar=0.9, level=0.95).tolist()
    [28.0]
    >>> mix = BetaMixture(np.array([[0.5, 0.5]]), np.array([[51.0, 1.0]]), np.array([[1.0, 1.0]]))
    >>> runs_to_certify(mix).tolist()
    [8.0]
    """
    _check(bar, level)
    b = _as_suite(belief)
    shape = np.shape(b.mean)
    ok = lambda extra: _sf_after_clean(b, extra, bar) >= level  # noqa: E731
    return _smallest(ok, shape, max_runs)


def suite_runs_to_certify(belief, *, bar: float = 0.9, level: float = 0.95,
                          max_runs: int = 10**7) -> float:
    """Clean runs still needed on *every* scenario for P(all θ > bar) ≥ level.

    >>> suite_runs_to_certify(posterior([0] * 50, [0] * 50), bar=0.9, level=0.95)
    65.0
    """
    _check(bar, level)
    b = _as_suite(belief)

    def ok(extra: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore"):
            log_all = np.sum(np.log(_sf_after_clean(b, extra[:, None], bar)), axis=1)
        return log_all >= np.log(level)

    return float(_smallest(ok, (1,), max_runs)[0])


def _smallest(ok, shape: tuple[int, ...], max_runs: int) -> np.ndarray:
    """Smallest whole m ≥ 0 with ok(m), per element; ok must be monotone in m."""
    lo = np.zeros(shape)                       # largest m known to fail, or 0 before testing
    done = ok(lo)
    hi = np.ones(shape)
    while True:
        pending = ~done & ~ok(hi) & (hi <= max_runs)
        if not pending.any():
            break
        lo = np.where(pending, hi, lo)
        hi = np.where(pending, hi * 2, hi)
    unreachable = ~done & ~ok(hi)
    while True:
        active = ~done & ~unreachable & (hi - lo > 1)
        if not active.any():
            break
        mid = np.floor((lo + hi) / 2)
        good = ok(mid)
        hi = np.where(active & good, mid, hi)
        lo = np.where(active & ~good, mid, lo)
    return np.where(done, 0.0, np.where(unreachable, np.inf, hi))


def _check(bar: float, level: float) -> None:
    check_level(bar, "bar")
    check_level(level, "level")

