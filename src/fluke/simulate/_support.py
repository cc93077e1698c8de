"""A simulated support agent with two mechanisms we can intervene on: memory and retries.

Each environment is a support case (a customer, an account, a knowledge-base note) with its
own difficulty. A run looks the account up through a flaky tool — each attempt fails with the
environment's fault rate, and the retry budget bounds the attempts — optionally reads the
case's memory note, then answers. The answer is right with probability

    difficulty + memory_effect · [memory on] + tool_effect · [lookup succeeded]

so the planted effects are additive: memory's effect is ``memory_effect`` at both retry
budgets, and the memory × retry interaction is zero by construction. Retry's effect is
``tool_effect · (f − f³)`` for fault rate f (one attempt against three).

Randomness comes from :class:`fluke.design.Tape` streams keyed by (environment, trial,
mechanism, attempt). With ``tapes="shared"`` every policy reads the same draws for the same
event, so paired contrasts are tighter; with ``tapes="independent"`` each policy has its own.

>>> study = simulate_support(environments=3, seed=1)
>>> len(study.runs), sorted(study.runs[0].condition)
(12, ['memory', 'retry'])
>>> study.runs[0].unit == study.runs[0].scenario
True
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import UsageError
from ..design import FactorialPlan, Tape, factorial_plan
from ..record import AgentMessage, Identity, Outcome, Run, Source, ToolCall, UserMessage

__all__ = ["SupportStudy", "simulate_support"]


@dataclass(frozen=True)
class SupportStudy:
    """The runs of a simulated factorial study, the plan (with its random order), and the truth."""

    runs: list[Run]
    plan: FactorialPlan
    memory_effect: float
    retry_effect: float
    tapes: str


def _env_params(tape: Tape, env: str, fault_rate: float) -> tuple[float, float]:
    difficulty = 0.25 + 0.3 * tape.uniform("environment", [env, "difficulty"])
    return difficulty, fault_rate


def _one_run(env: str, trial: int, memory: bool, retry: int, tape: Tape, difficulty: float,
             fault: float, memory_effect: float, tool_effect: float, order: int) -> Run:
    events: list = [UserMessage(text=f"[{env}] my order arrived damaged; what can you do?")]
    if memory:
        events.append(ToolCall(tool="search_memory", args={"case": env}, call_id=f"m{trial}",
                               ok=True, result=f"note for {env}: prefers store credit"))
    lookup_ok = False
    for attempt in range(retry):
        failed = tape.uniform("tool_fault", [env, trial, "lookup_account", attempt]) < fault
        events.append(ToolCall(tool="lookup_account", args={"case": env}, call_id=f"a{attempt}",
                               ok=not failed, result=None if failed else {"account": env},
                               error="timeout" if failed else None))
        if not failed:
            lookup_ok = True
            break
    p = difficulty + memory_effect * memory + tool_effect * lookup_ok
    passed = tape.uniform("generation", [env, trial, "answer"]) < p
    events.append(AgentMessage(text="resolved with store credit" if passed else "escalating"))
    policy = {"memory": memory, "retry": retry}
    return Run(
        scenario=env, trial=trial, unit=env, condition=dict(policy), tags=["tool:lookup_account"],
        identity=Identity(model="sim-support", harness="fluke.simulate", policy=policy,
                          world={"environment": "support-sim", "fault_rate": fault}),
        events=events,
        outcome=Outcome(passed=bool(passed), reward=float(passed),
                        label="complete" if passed else "fail",
                        died_at=None if passed else len(events) - 1),
        seed=order, tape=tape.id, source=Source(adapter="fluke.simulate.support", position=order))


def simulate_support(environments: int = 40, *, trials: int = 1, memory_effect: float = 0.15,
                     tool_effect: float = 0.10, fault_rate: float = 0.3, tapes: str = "shared",
                     seed: int = 0) -> SupportStudy:
    """Run the 2 × 2 memory × retry study on ``environments`` simulated support cases.

    Every policy runs ``trials`` times in every environment, in the plan's random order
    (recorded in the runs' ``seed`` field and in ``plan.order``).
    """
    if environments < 1 or trials < 1:
        raise UsageError(f"environments={environments} and trials={trials} must be at least 1", argument="environments")
    if tapes not in ("shared", "independent"):
        raise UsageError(f"tapes={tapes!r} must be 'shared' or 'independent'", argument="tapes")
    if not 0.0 <= fault_rate <= 1.0:
        raise UsageError(f"fault_rate={fault_rate} must lie between 0 and 1", argument="fault_rate")
    if memory_effect < 0 or tool_effect < 0 or 0.55 + memory_effect + tool_effect > 1.0:
        raise UsageError(f"memory_effect={memory_effect} and tool_effect={tool_effect} must be "
            "non-negative and sum to at most 0.45 (pass probabilities stay below 1)", argument="memory_effect")
    envs = [f"env-{i:04d}" for i in range(environments)]
    plan = factorial_plan({"memory": [False, True], "retry": [1, 3]}, envs,
                          rng=np.random.default_rng([seed, 0]))
    world = Tape([seed, "world"])
    runs = []
    for env, position, policy in plan.schedule():
        difficulty, fault = _env_params(world, env, fault_rate)
        tape = world if tapes == "shared" else Tape([seed, "policy", policy["memory"], policy["retry"]])
        for trial in range(trials):
            runs.append(_one_run(env, trial, policy["memory"], policy["retry"], tape, difficulty,
                                 fault, memory_effect, tool_effect, position))
    retry_effect = tool_effect * (fault_rate - fault_rate**3)
    return SupportStudy(runs, plan, memory_effect, retry_effect, tapes)
