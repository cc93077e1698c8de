"""The recorded support runs the replay and intervention tests start from."""

from __future__ import annotations

from fluke.runner import evaluate
from fluke.simulate import SUPPORT_TOOLS, support_tool_agent, support_tool_cases

#: The planted effects and fault rate of the simulated support agent (its defaults).
TOOL_EFFECT, MEMORY_EFFECT, FAULT = 0.10, 0.15, 0.3


def record(ledger, environments: int = 20, *, retry: int = 1, seed: int = 0):
    """Record one run per support case (memory on, retry budget ``retry``) into ``ledger``."""
    cases = support_tool_cases(environments, memory=True, retry=retry, seed=seed)
    return evaluate(cases, support_tool_agent, k=1, tools=SUPPORT_TOOLS, ledger=ledger,
                    identity={"model": "sim-support", "policy": f"memory+retry{retry}", "date": "2026-12-01"})


def timed_out(result, step: int = 1):
    """The runs whose tool call at ``step`` timed out."""
    return [r.run for r in result.results if len(r.tool_log["calls"]) > step and r.tool_log["calls"][step]["error"]]
