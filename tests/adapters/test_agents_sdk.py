"""The OpenAI Agents SDK trace reader on real exports: traces_and_spans.json from
../shared/formats/samples/openai_agents (openai-agents 0.24.0) and traces recorded in the
test from a run on the SDK's own offline ScriptedModel (no network; tracing kept local).

Expected values are read from the sample with plain json in the test."""

from __future__ import annotations

import asyncio
import json

import pytest

from fluke.adapters import detect_format, read_file


def test_sample_traces_inner_calls_and_handoff(samples):
    path = samples / "openai_agents" / "traces_and_spans.json"
    doc = json.loads(path.read_text())
    assert detect_format(path) == "openai-agents"
    runs = list(read_file(path))
    assert len(runs) == len(doc["traces"]) == 2
    functions = {t["id"]: sorted((s for s in doc["spans"] if s["trace_id"] == t["id"]
                                  and s["span_data"]["type"] in ("function", "handoff")),
                                 key=lambda s: s["started_at"]) for t in doc["traces"]}
    run1, run2 = runs
    assert [(c.tool, c.ok) for c in run1.tool_calls] == [("get_weather", True), ("add", True), ("flaky_lookup", False)]
    failing = next(s for s in functions[doc["traces"][0]["id"]] if s["error"])
    assert run1.tool_calls[2].error == f"{failing['error']['message']}: {failing['error']['data']['error']}"
    assert run1.tool_calls[1].args == json.loads(functions[doc["traces"][0]["id"]][1]["span_data"]["input"])
    # agent-as-tool: calculator's inner `add` is kept with its own agent; the handoff is a call
    assert [(c.tool, c.agent, c.result) for c in run2.tool_calls] == [
        ("calculator_tool", "triage", "42"), ("add", "calculator", "42"),
        ("transfer_to_specialist", "triage", None), ("get_weather", "specialist", "Sunny, 21C in Rome")]
    assert [c.t_start for c in run2.tool_calls] == sorted(c.t_start for c in run2.tool_calls)
    assert (run1.identity.harness, run2.identity.harness) == ("assistant", "triage")


def test_live_scripted_model_run(tmp_path, monkeypatch):
    pytest.importorskip("agents")
    monkeypatch.setenv("OPENAI_AGENTS_DISABLE_TRACING", "0")
    from agents import Agent, Runner, function_tool, set_trace_processors, trace
    from agents.testing import ScriptedModel, assistant_message, function_call
    from agents.tracing import TracingProcessor

    exported: list[dict] = []

    class Keep(TracingProcessor):
        def on_trace_start(self, t): pass
        def on_trace_end(self, t): exported.append(t.export())
        def on_span_start(self, s): pass
        def on_span_end(self, s): exported.append(s.export())
        def shutdown(self): pass
        def force_flush(self): pass

    set_trace_processors([Keep()])

    @function_tool
    def get_weather(city: str) -> str:
        """Weather for a city."""
        return f"Sunny in {city}"

    @function_tool
    def flaky(key: str) -> str:
        """Always fails."""
        raise RuntimeError("down")

    helper = Agent(name="helper", model=ScriptedModel([
        [function_call("get_weather", {"city": "Oslo"}, call_id="h1")], [assistant_message("Oslo: sunny")]]),
        tools=[get_weather])
    closer = Agent(name="closer", model=ScriptedModel([[assistant_message("bye")]]))
    boss = Agent(name="boss", handoffs=[closer],
                 tools=[helper.as_tool(tool_name="ask_helper", tool_description="Ask the helper"), flaky],
                 model=ScriptedModel([[function_call("ask_helper", {"input": "Oslo?"}, call_id="b1"),
                                       function_call("flaky", {"key": "x"}, call_id="b2")],
                                      [function_call("transfer_to_closer", {}, call_id="b3")]]))

    async def go():
        with trace("live", group_id="conv-1"):
            return await Runner.run(boss, "weather in Oslo?")

    result = asyncio.run(go())
    assert result.final_output == "bye"
    path = tmp_path / "export.jsonl"
    path.write_text("\n".join(json.dumps(o) for o in exported) + "\n")
    assert detect_format(path) == "openai-agents"
    [run] = read_file(path)
    assert run.source.position == "group conv-1"
    calls = sorted(((c.tool, c.agent, c.ok) for c in run.tool_calls))
    assert calls == [("ask_helper", "boss", True), ("flaky", "boss", False), ("get_weather", "helper", True),
                     ("transfer_to_closer", "boss", True)]
    weather = next(c for c in run.tool_calls if c.tool == "get_weather")
    assert (weather.args, weather.result) == ({"city": "Oslo"}, "Sunny in Oslo")
    assert run.identity.harness == "boss"


@pytest.mark.parametrize("name", ["run1_parallel_and_error.new_items.json", "run1_parallel_and_error.run_state.json",
                                  "run2_agent_as_tool_and_handoff.new_items.json"])
def test_run_items_and_state_read_like_the_input_list(samples, name):
    """Items carry the agent of every call; their calls and results match to_input_list()."""
    base = samples / "openai_agents"
    path = base / name
    assert detect_format(path) == "openai-agents-items"
    [run] = read_file(path)
    [flat] = read_file(base / (name.split(".")[0] + ".to_input_list.json"))
    assert [(c.call_id, c.tool, c.args, c.ok, c.result) for c in run.tool_calls] == \
        [(c.call_id, c.tool, c.args, c.ok, c.result) for c in flat.tool_calls]
    doc = json.loads(path.read_text())
    items = doc["generated_items"] if isinstance(doc, dict) else doc
    agents = [i["agent"]["name"] if isinstance(i["agent"], dict) else i["agent"] for i in items
              if i["type"] in ("tool_call_item", "handoff_call_item")]
    assert [c.agent for c in run.tool_calls] == agents
    if name.startswith("run2"):
        assert agents == ["triage", "triage", "specialist"]   # after the handoff, the new agent
