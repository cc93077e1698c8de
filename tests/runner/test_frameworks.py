"""A real LangGraph agent run as a fluke suite: its state read by the LangGraph adapter."""

from __future__ import annotations

import warnings

import pytest

from fluke.errors import InputError, UsageError
from fluke.runner import Case, evaluate, read_trajectory

pytest.importorskip("langgraph")


def test_langgraph_agent_in_a_graded_suite():
    from langchain_core.messages import AIMessage, messages_to_dict
    from langchain_core.tools import tool

    from ..langgraph_fake import ScriptedModel as Scripted, create_react_agent

    @tool
    def get_order(order_id: str) -> str:
        """Look up an order."""
        return f"order {order_id}: delivered"

    @tool
    def refund(order_id: str) -> str:
        """Refund an order."""
        return "refunded"

    def agent(text, *, trial):
        # Trial 1 refunds before looking the order up.
        first, second = ("get_order", "refund") if trial != 1 else ("refund", "get_order")
        script = [AIMessage(content="", tool_calls=[{"name": first, "args": {"order_id": "W1"}, "id": "a"}]),
                  AIMessage(content="", tool_calls=[{"name": second, "args": {"order_id": "W1"}, "id": "b"}]),
                  AIMessage(content="W1 refunded")]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            graph = create_react_agent(Scripted(responses=script), [get_order, refund])
        state = graph.invoke({"messages": [("user", text)]})
        return read_trajectory(messages_to_dict(state["messages"]), format="langgraph")

    spec = {"tools": ["get_order", "refund"], "before": [["get_order", "refund"]]}
    result = evaluate([Case("refund-W1", input="refund order W1", check=lambda out: "refunded" in out)],
                      agent, k=3, spec=spec, identity={"model": "scripted"})
    assert [r.scenario for r in result.runs] == ["refund-W1"] * 3
    assert [[c.tool for c in r.tool_calls] for r in result.runs][1] == ["refund", "get_order"]
    assert [r.outcome.passed for r in result.runs] == [True, True, True]
    assert [[v.check for v in r.violations] for r in result.results] == [[], ["before"], []]
    assert result.gate().passed is False


def test_read_trajectory_refuses_unknown_formats_and_several_runs():
    with pytest.raises(InputError, match="unknown format 'no-such-format'"):
        read_trajectory([], format="no-such-format")
    msgs = [{"role": "user", "content": "hi"}]
    with pytest.raises(UsageError, match="holds 2 runs, not one"):
        read_trajectory([msgs, msgs], format="openai")
