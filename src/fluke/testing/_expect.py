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
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping

from ..errors import ClaimFailed, UsageError


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


def run_agent(agent: Callable[..., Any], cases: Iterable[Any], *, k: int, identity: Mapping[str, Any] | None,
              ledger: str, spec: Any = None, seed: int = 0) -> AgentRuns:
    """Run ``agent`` ``k`` times on each case, recorded in ``ledger`` under ``identity``.

    Runs the ledger already holds for this identity's version (same scenario, condition,
    trial) are not run again: a re-run session, or an xdist worker retrying, writes each run once.
    """
    from ..runner import evaluate

    if not identity:
        raise UsageError("identity: declare what is being tested (e.g. {'model': 'gpt-4.1', "
                         "'harness': 'v3'}); it names the version the runs are recorded under")
    cases = list(cases)
    result = evaluate(cases, _sync(agent), k=k, spec=spec, ledger=ledger, identity=dict(identity), seed=seed)
    scenarios = tuple(dict.fromkeys(r.run.scenario for r in result.results))
    return AgentRuns(str(ledger), result.version, scenarios, spec, result)


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
        from ..ledger import open_ledger

        with open_ledger(self.runs.ledger) as ledger:
            claim = ask(ledger)
        self.runs.claims.append(claim)
        if self.runs.on_claim is not None:
            self.runs.on_claim(claim)
        if not claim.holds:
            raise ClaimFailed(claim)
        return self

    def reliable(self, bar: float = 0.9, prob: float = 0.95, *, per: str = "scenario",
                 prior: str = "uniform") -> "Expectation":
        """P(θ > ``bar``) ≥ ``prob`` on each of the test's scenarios (or, ``per="suite"``, all at once)."""
        from ..analysis import claim_reliable

        scenarios = None if per == "suite" else self.runs.scenarios
        return self._decide(lambda led: claim_reliable(led, version=self.runs.version, scenarios=scenarios,
                                                       bar=bar, prob=prob, per=per, prior=prior))

    def luck_at_most(self, ceiling: float, *, level: float = 0.95) -> "Expectation":
        """The luck rate's credible interval lies at or under ``ceiling`` (needs the spec)."""
        from ..analysis import claim_luck

        spec = self._spec("luck_at_most")
        return self._decide(lambda led: claim_luck(led, spec, version=self.runs.version, at_most=ceiling,
                                                   level=level))

    def not_worse_than(self, baseline: str, *, margin: float | None = None) -> "Expectation":
        """Not worse than the ``baseline`` version (a selector such as ``"model=gpt-4.1"``).

        ``margin`` is a share of the pass rate (0.05 = 5 points): the change the runs must be able
        to see before "not worse" may be said (the comparison's ceiling; default its own, 5 points).
        """
        from ..analysis import claim_not_worse

        return self._decide(lambda led: claim_not_worse(led, baseline, version=self.runs.version, margin=margin))

    def passes_gate(self) -> "Expectation":
        """The grading gate passes: no hard violation, no soft check failed by a majority (needs the spec)."""
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
