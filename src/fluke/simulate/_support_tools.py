"""The simulated support agent again, now calling its tools through fluke, so a run can be
replayed and intervened on: a memory note it may search, an account lookup that times out
with the case's fault rate, and a retry budget.

The environment is a declared simulator (:class:`SupportSandbox`): its state holds the case's
memory notes, its fault rate and how many lookups were made; the fault of the j-th lookup
is the tape draw ("tool_fault", [case, j]). The agent answers right with probability

    difficulty + memory_effect · [a memory note was found] + tool_effect · [a lookup succeeded]

(the generation draw is the agent's own ``rng``), so the planted effects are known: replacing
a timed-out lookup by a success raises the pass rate by ``tool_effect`` when no retry is left,
and raising the retry budget from 1 to 3 after a timeout raises it by
``tool_effect · (1 − f²)``; removing the memory note lowers it by ``memory_effect``.

>>> from fluke.runner import evaluate
>>> cases = support_tool_cases(3, memory=True, retry=1, seed=4)
>>> result = evaluate(cases, support_tool_agent, k=2, tools=SUPPORT_TOOLS, identity={"model": "sim"})
>>> [len(r.tool_log["calls"]) for r in result.results][:2], result.results[0].tool_log["calls"][0]["tool"]
([2, 2], 'search_memory')
"""

from __future__ import annotations

from typing import Any

from ..design import Tape
from ..record import AgentMessage, UserMessage
from ..tools import Failure, Request, ToolFailure, Tools

__all__ = ["SUPPORT_TOOLS", "SupportSandbox", "support_state", "support_tool_agent", "support_tool_cases"]


class SupportSandbox:
    """The support desk's environment: ``apply(request, state) -> (response, state)``."""

    version = "support-sandbox/1"

    def __init__(self, tape: Tape) -> None:
        self.tape = tape

    def apply(self, request: Request, state: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        """Answer ``search_memory(case)`` from the state's notes and ``lookup_account(case)``
        with a timeout at the state's fault rate (each lookup counted in the state)."""
        case = request.args.get("case")
        if request.tool == "search_memory":
            return state["memory"].get(case), state
        if request.tool == "lookup_account":
            j = state["lookups"]
            after = {**state, "lookups": j + 1}
            if self.tape.uniform("tool_fault", [case, j]) < state["fault_rate"]:
                return Failure("TimeoutError: lookup_account timed out"), after
            return {"account": case, "plan": "standard"}, after
        return Failure(f"KeyError: no tool {request.tool!r}"), state


def support_state(input: dict[str, Any]) -> dict[str, Any]:
    """The declared initial state of one support case: its note, its fault rate, no lookups yet."""
    return {"memory": {input["case"]: "prefers store credit"}, "fault_rate": input["fault_rate"], "lookups": 0}


#: The support desk's tools: everything is answered by the sandbox.
SUPPORT_TOOLS = Tools(simulator=SupportSandbox, state=support_state)


def support_tool_agent(input: dict[str, Any], *, rng: Any, tools: Any) -> Any:
    """One support conversation: maybe search memory, look the account up within the retry
    budget, answer (right with the planted probability)."""
    from ..runner import Trajectory

    case = input["case"]
    note = tools.call("search_memory", case=case) if input["memory"] else None
    found = False
    for _ in range(input["retry"]):
        try:
            tools.call("lookup_account", case=case)
        except ToolFailure:
            continue
        found = True
        break
    p = input["difficulty"] + input["memory_effect"] * (note is not None) + input["tool_effect"] * found
    passed = bool(rng.random() < p)
    events = [UserMessage(text=f"[{case}] my order arrived damaged"), *tools.events(),
              AgentMessage(text="resolved with store credit" if passed else "escalating")]
    return Trajectory(events, output=events[-1].text, passed=passed, reward=float(passed))


def support_tool_cases(environments: int, *, memory: bool = True, retry: int = 1, fault_rate: float = 0.3,
                       memory_effect: float = 0.15, tool_effect: float = 0.10, seed: int = 0) -> list[dict[str, Any]]:
    """The cases of one policy (``memory``, ``retry``) on ``environments`` support cases, each
    with its difficulty drawn from ``Tape([seed, "world"])`` as :func:`simulate_support` does."""
    world = Tape([seed, "world"])
    cases = []
    for i in range(environments):
        case = f"env-{i:04d}"
        difficulty = 0.25 + 0.3 * world.uniform("environment", [case, "difficulty"])
        cases.append({"scenario": case, "condition": {"memory": memory, "retry": retry},
                      "input": {"case": case, "memory": memory, "retry": retry, "fault_rate": fault_rate,
                                "difficulty": difficulty, "memory_effect": memory_effect,
                                "tool_effect": tool_effect}})
    return cases
