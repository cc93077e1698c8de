"""``intervene``: at a step of recorded runs, apply a declared change and re-execute downstream
over n continuations per run, against a baseline arm that re-executes without it.

Both arms start from the recorded initial state and input; a recorded response is reused only
where the request and the state digests match the recording at that step (so the prefix
before the step is the recorded one), and the declared simulator answers every other call. At
the step the intervention applies (a replaced response or exception, an edited memory item;
a policy parameter is set from the start, and acts where the policy reads it).

``coupling="coupled"`` gives both arms the same seed, so continuation c of each reads the same
tape draws (the agent's rng and the simulator's): the contrast is conditional on those draws
and its variance is reduced by the measured factor. ``coupling="fresh"`` gives the arms
independent draws: the total effect over fresh continuations, without that reduction.

Continuations are stored as runs of two versions (the origin identity, its harness naming the
verb, the digest of the origin runs, the step, the arm, the seed and, for the intervened arm,
the interventions' digest), so ``compare``, ``believe`` and ``report`` read them like any run.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from ..comparison import wilson_interval
from ..errors import InputError, UsageError
from ..runner import Case, evaluate
from ._continue import Continuation
from ._effect import ContinuationEffect, continuation_effect
from ._interventions import Intervention, interventions_digest, replacement
from ._replay import _logs
from ._sources import LoggedRun, origin_identity

__all__ = ["COUPLINGS", "INTERVENTION", "ContinuationArm", "InterventionEffect", "intervene"]

COUPLINGS = ("coupled", "fresh")
#: The ledger's document kind naming an intervention digest's interventions.
INTERVENTION = "intervention"


@dataclass(frozen=True)
class ContinuationArm:
    """One arm's continuations: passes of judged, the interval, the version stored under, how
    many were refused (a request no recording or simulator could answer), and who served the calls."""

    version: str
    passes: int
    judged: int
    low: float
    high: float
    refused: int
    served: dict[str, int]
    needed_simulator: int
    continuations: int
    added: int
    resumed: int


@dataclass(frozen=True)
class InterventionEffect:
    """The effect of ``interventions`` at ``step`` on the pass rate of the origin runs, over
    ``n`` continuations per run and arm, with the two arms and what the contrast targets."""

    interventions: tuple[Intervention, ...]
    digest: str
    step: int
    n: int
    runs: tuple[str, ...]
    coupling: str
    stale: bool
    effect: ContinuationEffect
    baseline: ContinuationArm
    intervened: ContinuationArm

    @property
    def target(self) -> str:
        """What the contrast estimates: the total or the conditional effect."""
        if self.coupling == "fresh":
            return "total effect over fresh continuations (independent draws in each arm)"
        return "conditional effect on shared tape draws (continuation c of each arm reads the same draws)"

    @property
    def needed_simulator(self) -> tuple[int, int]:
        """(continuations that needed the simulator at least once, continuations), both arms."""
        return (self.baseline.needed_simulator + self.intervened.needed_simulator,
                self.baseline.continuations + self.intervened.continuations)


def _check(sources: Sequence[LoggedRun], interventions: Sequence[Intervention], step: int, n: int,
           coupling: str) -> None:
    if coupling not in COUPLINGS:
        raise UsageError(f"coupling={coupling!r} is not one of {', '.join(COUPLINGS)}", argument="coupling")
    if not isinstance(n, int) or n < 2:
        raise UsageError(f"n={n!r} must be an integer of at least 2", argument="n")
    if not isinstance(step, int) or step < 0:
        raise UsageError(f"step={step!r} must be a tool-call index of at least 0", argument="step")
    if not interventions:
        raise UsageError("interventions: none given", argument="interventions",
                         hint="respond=, raise=, set:, forget=, remember:")
    if replacement(interventions) is not None:
        short = [s for s in sources if len(s.log["calls"]) <= step]
        if short:
            raise InputError(None, f"run {short[0].run.hash[:12]}", "step",
                             f"the run made {len(short[0].log['calls'])} tool calls; it has no step {step} to replace")


def intervene(sources: Sequence[LoggedRun], agent: Callable[..., Any], tools: Any,
              interventions: Sequence[Intervention], *, step: int, n: int = 200, coupling: str = "coupled",
              seed: int = 0, stale: bool = False, ledger: Any = None, executor: str = "local",
              workers: int | None = None,
              progress: Callable | None = None) -> InterventionEffect:
    """Run ``n`` continuations per source run in each arm; return the effect and both arms."""
    _check(sources, interventions, step, n, coupling)
    digest = interventions_digest(interventions)
    if ledger is not None:   # what the digest names, for whoever reads the stored arms later
        ledger.put_document(INTERVENTION, {"digest": digest, "interventions": [i.to_dict() for i in interventions]})
    seeds = {"baseline": seed, "intervened": seed if coupling == "coupled" else seed + 1}
    continuation = Continuation(agent, tools, mode="continue")
    arms: dict[str, tuple[ContinuationArm, dict[tuple[str, int], int]]] = {}
    for arm, changes in (("baseline", ()), ("intervened", tuple(interventions))):
        forced = stale and arm == "intervened"   # the baseline is the honest one either way
        origin = {"verb": "intervene", "step": step, "arm": arm, "seed": seeds[arm],
                  "intervention": digest if changes else None, **({"stale": True} if forced else {})}
        if changes:   # what pairs this arm with its baseline (see fluke.replay.stored_interventions)
            origin.update(coupling=coupling, baseline_seed=seeds["baseline"])
        ident = origin_identity([s.run for s in sources], origin)
        sets = {i.name: i.value for i in changes if i.action == "set"}
        cases = [Case(s.run.scenario, unit=s.run.sampling_unit, tags=tuple(s.run.tags),
                      condition={**s.run.condition, **{k: v for k, v in sets.items() if k in s.run.condition},
                                 "origin": s.run.hash[:16]},
                      input={"log": s.log, "origin": s.run.hash, "step": step, "stale": forced,
                             "interventions": [i.to_dict() for i in changes]}) for s in sources]
        result = evaluate(cases, continuation, k=n, ledger=ledger, identity=ident, seed=seeds[arm],
                          executor=executor, workers=workers, progress=progress)
        arms[arm] = _arm(result, _logs(ledger, result))
    (base, y0), (treated, y1) = arms["baseline"], arms["intervened"]
    both = sorted(set(y0) & set(y1))
    if coupling == "coupled":
        effect = continuation_effect([y0[key] for key in both], [y1[key] for key in both], coupled=True)
    else:
        effect = continuation_effect(list(y0.values()), list(y1.values()), coupled=False)
    return InterventionEffect(tuple(interventions), digest, step, n, tuple(s.run.hash for s in sources), coupling,
                              stale, effect, base, treated)


def _arm(result: Any, logs: dict[str, dict[str, Any]]) -> tuple[ContinuationArm, dict[tuple[str, int], int]]:
    outcomes: dict[tuple[str, int], int] = {}
    served: Counter = Counter()
    refused = needed = 0
    for r in result.results:
        log = logs.get(r.run.hash) or {}
        kinds = Counter(c["served"] for c in log.get("calls", ()))
        served.update(kinds)
        needed += kinds["simulator"] > 0
        if log.get("diverged") or r.run.outcome.passed is None:
            refused += bool(log.get("diverged"))
            continue
        outcomes[(r.run.condition["origin"], r.run.trial)] = int(r.run.outcome.passed)
    passes, judged = sum(outcomes.values()), len(outcomes)
    low, high = wilson_interval(passes, judged)
    arm = ContinuationArm(result.version, passes, judged, low, high, refused, dict(sorted(served.items())), needed,
              len(result.results), result.added, result.resumed)
    return arm, outcomes
