"""The four-part statement: what happened, what we infer, on what it rests, what was carried.

Each part is a claim a colleague can check; together they say how much a number is worth
and for how long.

>>> s = scenario_statement("update-record", 5, 5, posterior(5, 5), version="3f2a9c1d (model=M)")
>>> print(s.text())
What happened: update-record passed 5 of 5 runs.
What we infer: next run passes with probability 0.857; P(θ > 0.9) = 0.469; 90% credible interval 0.607 to 0.991
(Beta(6, 1) posterior, runs independent given θ).
Conditional on: version 3f2a9c1d (model=M); prior uniform Beta(1, 1).
Carried from before: nothing; this version's runs only.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from ._beta import BetaMixture, BetaPosterior, posterior  # noqa: F401  (posterior: used by the doctests)
from ._suite import SuiteAnswers, runs_to_certify, suite_runs_to_certify, suite_questions  # noqa: F401

__all__ = ["Statement", "scenario_statement", "scenario_statements", "suite_statement", "carried_text"]


@dataclass(frozen=True)
class Statement:
    """Four sentences, each a checkable claim."""

    happened: str
    inferred: str
    conditional_on: str
    carried: str

    def text(self) -> str:
        """The statement as four labelled lines."""
        return (f"What happened: {self.happened}\nWhat we infer: {self.inferred}\n"
                f"Conditional on: {self.conditional_on}\nCarried from before: {self.carried}")

    def as_dict(self) -> dict[str, str]:
        return asdict(self)


def _g(x: float) -> str:
    return f"{x:g}" if abs(x - round(x)) > 1e-9 else str(int(round(x)))


def _stated(text: str) -> str:
    """A formatted probability after its name: ``= 0.412``, or ``< 0.001`` (never ``= <0.001``)."""
    return f"{text[0]} {text[1:]}" if text[:1] in "<>" else f"= {text}"


def carried_text(origin: str | None, delta: float | None = None, *, p_changed: float | None = None,
                 odds: float | None = None, reset: bool = False) -> str:
    """The fourth part, in words.

    >>> carried_text("v1 (model=A)", 0.5)
    'evidence of version v1 (model=A), discounted to δ = 0.5 of its weight.'
    >>> carried_text("v1", 1.0, p_changed=0.872, odds=4, reset=True)
    'evidence of version v1 was offered at δ = 1, but the batch made a change likely (P(changed) = 0.872 from prior
    odds 4:1 for unchanged), so the account was reset and nothing was carried.'
    """
    if origin is None:
        return "nothing; this version's runs only."
    if reset:
        return (f"evidence of version {origin} was offered at δ = {_g(delta if delta is not None else 1)}, "
                f"but the batch made a change likely (P(changed) = {p_changed:.3f} from prior odds "
                f"{_g(odds or 0)}:1 for unchanged), so the account was reset and nothing was carried.")
    text = f"evidence of version {origin}, discounted to δ = {_g(delta if delta is not None else 1)} of its weight"
    if p_changed is not None:
        text += (f"; P(changed) = {p_changed:.3f} from prior odds {_g(odds or 0)}:1 for unchanged, "
                 "and the estimates mix both branches")
    return text + "."


def scenario_statement(scenario: str, successes: int, trials: int, belief, *, version: str,
                       prior: str | None = None, bar: float = 0.9, level: float = 0.9,
                       carried: str | None = None) -> Statement:
    """The four-part statement for one scenario, from its counts and its belief.

    >>> scenario_statement("s", 9, 10, posterior(9, 10), version="v1").happened
    's passed 9 of 10 runs.'
    """
    return scenario_statements([scenario], [successes], [trials], _one(belief), version=version,
                               prior=[prior] if prior else None, bar=bar, level=level,
                               carried=[carried] if carried else None)[0]


def _one(belief):
    """A belief about one scenario, reshaped to a suite of one."""
    if isinstance(belief, BetaPosterior):
        return BetaPosterior(np.atleast_1d(belief.alpha), np.atleast_1d(belief.beta), belief.prior)
    return BetaMixture(np.atleast_2d(belief.weight), np.atleast_2d(belief.alpha), np.atleast_2d(belief.beta))


def scenario_statements(scenarios, successes, trials, belief, *, version: str, prior=None, bar: float = 0.9,
                        level: float = 0.9, carried=None) -> list[Statement]:
    """The four-part statement of every scenario, with the numbers computed once, vectorised.

    ``prior`` and ``carried`` are one string per scenario (default: the belief's prior; nothing).

    >>> [s.happened for s in scenario_statements(["a", "b"], [5, 0], [5, 0], posterior([5, 0], [5, 0]), version="v")]
    ['a passed 5 of 5 runs.', 'b has no runs on this version.']
    """
    k, n = np.atleast_1d(successes).astype(int), np.atleast_1d(trials).astype(int)
    lo, hi = (np.atleast_1d(v) for v in belief.interval(level))
    mean, above = np.atleast_1d(belief.mean), np.atleast_1d(belief.sf(bar))
    size = len(scenarios)
    if isinstance(belief, BetaPosterior):
        alpha = np.broadcast_to(belief.alpha, (size,))
        beta = np.broadcast_to(belief.beta, (size,))
        models = [f"Beta({_g(float(a))}, {_g(float(b))}) posterior" for a, b in zip(alpha, beta, strict=True)]
        prior = prior or [belief.prior.describe()] * size
    else:
        models = ["a mixture of Beta posteriors: change branches or a family's hyperprior"] * size
        prior = prior or ["as declared"] * size
    carried = carried or [carried_text(None)] * size
    out = []
    for i, name in enumerate(scenarios):
        happened = (f"{name} has no runs on this version." if n[i] == 0 else
                    f"{name} passed {k[i]} of {n[i]} run{'s' if n[i] != 1 else ''}.")
        inferred = (f"next run passes with probability {mean[i]:.3f}; P(θ > {_g(bar)}) = {above[i]:.3f}; "
                    f"{_g(level * 100)}% credible interval {lo[i]:.3f} to {hi[i]:.3f} "
                    f"({models[i]}, runs independent given θ).")
        out.append(Statement(happened, inferred, f"version {version}; prior {prior[i]}.", carried[i]))
    return out


def suite_statement(answers: SuiteAnswers, successes, trials, *, version: str, prior: str,
                    carried: str | None = None, level: float = 0.95) -> Statement:
    """The four-part statement for a suite, with a plain warning when runs per scenario are few.

    >>> a = suite_questions(posterior([1, 0, 1], [1, 1, 1]), bar=0.9)
    >>> "one run per scenario" in suite_statement(a, [1, 0, 1], [1, 1, 1], version="v", prior="uniform").inferred
    True
    """
    k, n = np.atleast_1d(successes), np.atleast_1d(trials)
    bar = answers.bar
    lo, hi = answers.failures_interval(0.9)
    lo_n, hi_n = _g(float(np.min(n))), _g(float(np.max(n)))
    per = f"{lo_n} run{'s' if lo_n != '1' else ''}" if lo_n == hi_n else f"{lo_n} to {hi_n} runs"
    happened = f"{answers.scenarios} scenarios, {int(k.sum())} passes in {int(n.sum())} runs ({per} per scenario)."

    inferred = (f"average rate {answers.average_mean:.3f} (sd {answers.average_sd:.3f}); "
                f"expected {answers.expected_below:.1f} of {answers.scenarios} scenarios below {_g(bar)}; "
                f"P(every scenario above {_g(bar)}) {_stated(answers.p_all_clear_text())}; next full execution: "
                f"{answers.expected_failures:.1f} failures expected (90%: {lo} to {hi}).")
    if np.max(n) <= 1:
        fresh = posterior(np.zeros(1), np.zeros(1))
        one = int(runs_to_certify(fresh, bar=bar, level=level)[0])
        one_lo, one_hi = (float(v[0]) for v in posterior(np.ones(1), np.ones(1)).interval(0.9))
        every = int(suite_runs_to_certify(posterior(np.zeros(answers.scenarios), np.zeros(answers.scenarios)),
                                          bar=bar, level=level))
        inferred += (
            f" With one run per scenario, each scenario's posterior is mostly prior: a pass "
            f"leaves a 90% interval of {one_lo:.3f} to {one_hi:.3f} under a uniform prior. "
            f"These runs inform the average, "
            f"not any one scenario; from scratch, certifying one scenario above {_g(bar)} at {_g(level * 100)}% "
            f"takes {one} clean runs, and all {answers.scenarios} takes {every} each."
        )
    conditional = (f"version {version}; prior {prior}; scenarios independent; runs independent given "
                   f"each scenario's θ.")
    return Statement(happened, inferred, conditional, carried or carried_text(None))


