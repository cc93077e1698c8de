"""Agent runs inside a test, and assertions on what they let you believe.

:func:`run_agent` runs an agent k times per case through :func:`fluke.runner.evaluate` (sync
or async agent), records every run in the ledger under the identity the test declares, grades
it against a spec when one is given, and returns :class:`AgentRuns`. :func:`expect` then asks
the analysis layer — :func:`fluke.analysis.claim_reliable` (believe), ``claim_luck`` (grade),
``claim_not_worse`` (compare), ``claim_gate`` (grade) — and raises
:class:`fluke.errors.ClaimFailed` (an ``AssertionError``) with the claim, every reason, and what
it rests on when the claim does not hold. Nothing is computed here.

>>> import os, tempfile
>>> from fluke.simulate import desk_agent
>>> runs = run_agent(desk_agent(slips=False), [{"scenario": "refund-1", "input": 1}], k=30,
...                  identity={"model": "desk", "harness": "doctest"},
...                  ledger=os.path.join(tempfile.mkdtemp(), "t.db"))
>>> len(runs), runs.added
(30, 30)
>>> expect(runs).reliable(bar=0.5, prob=0.95).claims[-1].status
'holds'
>>> expect(runs).reliable(bar=0.99, prob=0.95)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
fluke.errors.ClaimFailed: fluke claim FAILS: P(θ > 0.99) ≥ 0.95 on every scenario
fails: refund-1: P(θ > 0.99) = 0.004 from 28/30 runs passed; the runs put it below the bar
rests on: 28 of 30 runs passed over 1 scenario cells of version ... (desk); prior uniform Beta(1, 1); bar 0.99; no
unknown outcomes (unknown: fail)
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import threading
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping

from ..errors import ClaimFailed, InconclusiveClaim, UsageError
from ..policies import INCONCLUSIVE_POLICIES, InconclusivePolicy


def _sync(agent: Callable[..., Any]) -> Callable[..., Any]:
    """An async agent as a sync one (its own event loop; a thread when one already runs here)."""
    if not (inspect.iscoroutinefunction(agent) or inspect.iscoroutinefunction(getattr(agent, "__call__", None))):
        return agent

    @functools.wraps(agent)  # the runner reads which of trial/rng it takes from the signature
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(agent(*args, **kwargs))
        box: dict[str, Any] = {}

        def work() -> None:
            try:
                box["value"] = asyncio.run(agent(*args, **kwargs))
            except BaseException as exc:  # handed back to the runner, which records it
                box["error"] = exc

        thread = threading.Thread(target=work)
        thread.start()
        thread.join()
        if "error" in box:
            raise box["error"]
        return box["value"]

    return call


@dataclass
class AgentRuns:
    """The runs a test made: where they are (ledger, version), which cases, and the evaluation."""

    ledger: str
    version: str
    scenarios: tuple[str, ...]
    spec: Any
    evaluation: Any
    claims: list = field(default_factory=list)   # every claim asked of these runs, in order
    on_claim: Callable[[Any], None] | None = field(default=None, repr=False)
    #: what a claim too small to tell does: "warn" (a warning with the runs that would settle
    #: it; the default), "fail" (an assertion error) or "pass" (recorded, nothing said)
    on_inconclusive: str = "warn"
    #: how many claims share one false-fail budget (the session's fluke tests); None: this one alone
    family: int | None = None

    def __len__(self) -> int:
        return len(self.evaluation.results)

    @property
    def runs(self) -> list:
        return self.evaluation.runs

    @property
    def added(self) -> int:
        """Runs this call wrote to the ledger (the others were already there for this version)."""
        return self.evaluation.added

    @property
    def resumed(self) -> int:
        return self.evaluation.resumed

    @property
    def duplicates(self) -> int:
        """Runs made here whose trial another writer recorded first (the first is kept and used)."""
        return self.evaluation.duplicates

    @property
    def errored(self) -> list:
        """The runs that raised (the agent, its output check or grading), in (case, trial) order."""
        return [r for r in self.evaluation.runs if r.error is not None]

    def error_line(self) -> str | None:
        """``"500 of 500 runs errored: agent returned a str; ..."`` (the first error's first line), or None."""
        errored = self.errored
        if not errored:
            return None
        first = str(errored[0].error).strip().splitlines()[0] if str(errored[0].error).strip() else "an error"
        return f"{len(errored)} of {len(self)} runs errored: {first}"


INCONCLUSIVE = INCONCLUSIVE_POLICIES


def check_inconclusive(value: Any, where: str = "on_inconclusive") -> InconclusivePolicy:
    """The declared policy for a claim too small to tell: ``warn``, ``fail`` or ``pass``.

    >>> check_inconclusive("warn")
    'warn'
    >>> check_inconclusive("ignore")
    Traceback (most recent call last):
    ...
    fluke.errors.UsageError: on_inconclusive='ignore' is not one of warn, fail, pass
    """
    return InconclusivePolicy.of(value, argument=where)


def run_agent(agent: Callable[..., Any], cases: Iterable[Any], *, k: int, identity: Mapping[str, Any] | None,
              ledger: str, spec: Any = None, seed: int = 0, on_inconclusive: str = "warn",
              family: int | None = None) -> AgentRuns:
    """Run ``agent`` ``k`` times on each case, recorded in ``ledger`` under ``identity``.

    Runs the ledger already holds for this identity's version (same scenario, condition,
    trial) are not run again, and a trial another writer records while this one runs it is
    kept once (the first): a re-run session, or two xdist workers, write each trial once.
    ``on_inconclusive`` and ``family`` say how the claims asked of the runs decide (see
    :class:`AgentRuns`).
    """
    from ..runner import evaluate

    if not identity:
        raise UsageError("identity: declare what is being tested (e.g. {'model': 'gpt-4.1', "
                         "'harness': 'v3'}); it names the version the runs are recorded under")
    check_inconclusive(on_inconclusive)
    if not isinstance(identity, Mapping):
        raise UsageError(f"identity: {type(identity).__name__} given; a mapping of identity fields is needed "
                         "(e.g. {'model': 'gpt-4.1', 'harness': 'v3'})")
    cases = list(cases)
    result = evaluate(cases, _sync(agent), k=k, spec=spec, ledger=ledger, identity=dict(identity), seed=seed)
    scenarios = tuple(dict.fromkeys(r.run.scenario for r in result.results))
    return AgentRuns(str(ledger), result.version, scenarios, spec, result, on_inconclusive=on_inconclusive,
                     family=family)


class Expectation:
    """Claims about one set of runs; each method raises :class:`ClaimFailed` unless it holds."""

    def __init__(self, runs: AgentRuns) -> None:
        if not isinstance(runs, AgentRuns):
            raise UsageError(f"expect() takes the runs a fluke_runs call returned, not a {type(runs).__name__}")
        self.runs = runs

    @property
    def claims(self) -> list:
        return self.runs.claims

    def _decide(self, ask: Callable[[Any], Any]) -> "Expectation":
        __tracebackhide__ = True  # pytest shows the test's line, not fluke's frames
        from ..analysis._claims import TOO_SMALL
        from ..ledger import open_ledger

        with open_ledger(self.runs.ledger) as ledger:
            claim = ask(ledger)
        self.runs.claims.append(claim)
        if self.runs.on_claim is not None:
            self.runs.on_claim(claim)
        if claim.holds:
            return self
        policy = InconclusivePolicy.of(self.runs.on_inconclusive)
        if claim.status == TOO_SMALL and policy.lets_pass:
            if policy.warns:
                warnings.warn(InconclusiveClaim(claim.message() + "\non_inconclusive: warn (declared: fail to make "
                                                "this an error)"), stacklevel=3)
            return self
        raise ClaimFailed(claim)

    def reliable(self, bar: float = 0.9, prob: float = 0.95, *, per: str = "scenario",
                 prior: str = "uniform") -> "Expectation":
        """P(θ > ``bar``) ≥ ``prob`` on each of the test's scenarios (or, ``per="suite"``, all at once)."""
        from ..analysis import claim_reliable

        __tracebackhide__ = True
        scenarios = None if per == "suite" else self.runs.scenarios
        return self._decide(lambda led: claim_reliable(led, version=self.runs.version, scenarios=scenarios,
                                                       bar=bar, prob=prob, per=per, prior=prior,
                                                       family=self.runs.family))

    def luck_at_most(self, ceiling: float, *, level: float = 0.95) -> "Expectation":
        """The luck rate's credible interval lies at or under ``ceiling`` (needs the spec)."""
        __tracebackhide__ = True
        from ..analysis import claim_luck

        spec = self._spec("luck_at_most")
        return self._decide(lambda led: claim_luck(led, spec, version=self.runs.version, at_most=ceiling,
                                                   level=level))

    def not_worse_than(self, baseline: str, *, margin: float | None = None) -> "Expectation":
        """Not worse than the ``baseline`` version (a selector such as ``"model=gpt-4.1"``).

        ``margin`` is a share of the pass rate (0.05 = 5 points): the change the runs must be able
        to see before "not worse" may be said (the comparison's ceiling; default its own, 5 points).
        The comparison is made at α = 0.05 split over the runs' ``family`` (a session's fluke tests).
        Naming the version under test itself is a usage error.
        """
        __tracebackhide__ = True
        from ..analysis import claim_not_worse
        from ..analysis._select import pick_version

        def ask(led: Any) -> Any:
            if pick_version(led, baseline) == self.runs.version:
                raise UsageError(f"not_worse_than({baseline!r}): that is the version these runs were recorded "
                                 f"under ({self.runs.version[:12]}); name the version to compare with, e.g. the "
                                 "released one")
            return claim_not_worse(led, baseline, version=self.runs.version, margin=margin, alpha=alpha)

        # one false-fail budget (α) for the family of claims: each at α / family (Bonferroni)
        alpha = 0.05 / (self.runs.family or 1)
        return self._decide(ask)

    def passes_gate(self) -> "Expectation":
        """The grading gate passes: no hard violation, no soft check failed by a majority (needs the spec)."""
        __tracebackhide__ = True
        from ..analysis import claim_gate

        spec = self._spec("passes_gate")
        return self._decide(lambda led: claim_gate(led, spec, version=self.runs.version))

    def _spec(self, what: str) -> Any:
        if self.runs.spec is None:
            raise UsageError(f"{what}: grades the runs' paths; give a spec (the fluke marker's spec=, or "
                             "fluke_runs(..., spec=...))")
        return self.runs.spec


def expect(runs: AgentRuns) -> Expectation:
    """Claims about ``runs``: ``expect(runs).reliable(bar=0.9, prob=0.95)``, ``.luck_at_most(0.05)``,
    ``.not_worse_than("model=gpt-4.1")``, ``.passes_gate()`` (chainable)."""
    return Expectation(runs)
