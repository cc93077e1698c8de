"""The OpenAI chat adapter on real message lists: the Agents SDK's own conversion and
LangChain's convert_to_openai_messages, from ../shared/formats/samples and from a live
LangGraph run."""

from __future__ import annotations

import warnings

import orjson
import pytest

from fluke.adapters import _openai, detect_format, read_file
from fluke.errors import InputError


def _calls(run):
    return [(c.call_id, c.tool, c.args, c.ok) for c in run.tool_calls]


def test_agents_sdk_parallel_and_error(samples):
    path = samples / "openai_agents" / "run1_parallel_and_error.chat_completions.json"
    assert detect_format(path) == "openai"
    [run] = read_file(path)
    assert run.scenario == "run1_parallel_and_error.chat_completions"
    assert [e.kind for e in run.events] == ["user", "tool", "tool", "tool", "agent"]
    assert _calls(run) == [("call_w1", "get_weather", {"city": "Paris"}, True),
                           ("call_a1", "add", {"a": 2, "b": 3}, True),
                           # the SDK's fixed failure text is the only sign of the error
                           ("call_f1", "flaky_lookup", {"key": "paris-hotels"}, False)]
    assert run.tool_calls[1].result == "5"
    assert run.tool_calls[2].error == "An error occurred while running the tool. Please try again."
    assert run.events[-1].text == "Paris: sunny 21C; 2+3=5; hotel lookup failed."


def test_agents_sdk_handoff_is_a_call_and_input_list_reads_alike(samples):
    base = samples / "openai_agents"
    [chat] = read_file(base / "run2_agent_as_tool_and_handoff.chat_completions.json")
    [items] = read_file(base / "run2_agent_as_tool_and_handoff.to_input_list.json")
    expected = [("call_calc", "calculator_tool", {"input": "40+2"}, True),
                ("call_handoff", "transfer_to_specialist", {}, True),
                ("call_w2", "get_weather", {"city": "Rome"}, True)]
    assert _calls(chat) == _calls(items) == expected
    assert chat.events == items.events


@pytest.mark.parametrize("name,expected", [
    ("run1_sequential_with_error", [("call_w1", True), ("call_f1", False)]),
    ("run2_parallel", [("call_p1", True), ("call_p2", True)]),
    ("run3_invalid_args_default_handler", [("call_bad1", False), ("call_bad2", False)]),
    ("run4_uncaught_tool_exception_checkpoint", [("call_x1", None)]),
    ("run5_chatopenai_parallel", [("call_calc_ok", True), ("call_calc_bad", False)]),
])
def test_langchain_openai_dumps_agree_with_the_status_field(samples, name, expected):
    # convert_to_openai_messages drops ToolMessage.status; the fixed error texts recover it,
    # and agree with the messages_to_dict dump of the same run, which has the field.
    [run] = read_file(samples / "langgraph" / f"{name}.openai.json")
    assert [(c.call_id, c.ok) for c in run.tool_calls] == expected
    [truth] = read_file(samples / "langgraph" / f"{name}.messages_to_dict.json")
    assert [(c.call_id, c.tool, c.args, c.ok) for c in truth.tool_calls] == _calls(run)


def test_live_langgraph_run_converted_to_openai(tmp_path):
    from ..langgraph_fake import ScriptedModel, ToolNode, create_react_agent
    from langchain_core.messages import AIMessage, convert_to_openai_messages
    from langchain_core.tools import tool

    @tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @tool
    def flaky_lookup(key: str) -> str:
        """A lookup whose backend is down."""
        raise ValueError("backend down")

    def call(name, args, call_id):
        return {"name": name, "args": args, "id": call_id, "type": "tool_call"}

    script = [AIMessage(content="", tool_calls=[call("add", {"a": 2, "b": 3}, "c_add"),
                                                call("flaky_lookup", {"key": "k"}, "c_flaky")]),
              AIMessage(content="5, lookup failed")]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        agent = create_react_agent(ScriptedModel(responses=script),
                                   ToolNode([add, flaky_lookup], handle_tool_errors=True))
    messages = agent.invoke({"messages": [("user", "2+3 and look up k")]})["messages"]
    doc = convert_to_openai_messages(messages)
    # Results come back in reverse order: pairing is by tool_call_id, not position.
    doc = doc[:2] + [doc[3], doc[2]] + doc[4:]
    path = tmp_path / "live.json"
    path.write_bytes(orjson.dumps({"model": "fake-1", "messages": doc}))
    [run] = read_file(path)
    assert run.identity.model == "fake-1"
    assert _calls(run) == [("c_add", "add", {"a": 2, "b": 3}, True),
                           ("c_flaky", "flaky_lookup", {"key": "k"}, False)]
    assert run.tool_calls[0].result == "5"


def test_unparseable_arguments_and_legacy_function_calls(samples):
    # Built from a real dump by truncating one arguments string, as a cut-off model
    # output would; and the same call in the legacy function_call form.
    doc = orjson.loads((samples / "openai_agents" / "run1_parallel_and_error.chat_completions.json").read_bytes())
    doc[1]["tool_calls"][1]["function"]["arguments"] = '{"a":2,'
    [run] = _openai.read(doc, file="t.json", identity={})
    assert run.tool_calls[1].args == '{"a":2,'      # kept raw
    legacy = [doc[0], {"role": "assistant", "content": None,
                       "function_call": {"name": "get_weather", "arguments": '{"city":"Paris"}'}},
              {"role": "function", "name": "get_weather", "content": "Sunny, 21C in Paris"}]
    [run] = _openai.read(legacy, file="t.json", identity={})
    assert _calls(run) == [(None, "get_weather", {"city": "Paris"}, True)]


def test_duplicates_and_conflicts(samples):
    doc = orjson.loads((samples / "openai_agents" / "run1_parallel_and_error.chat_completions.json").read_bytes())
    retried = doc[:3] + [doc[2]] + doc[3:]
    [run] = _openai.read(retried, file="t.json", identity={})
    assert len(run.tool_calls) == 3
    conflict = doc[:3] + [{**doc[2], "content": "Rainy"}] + doc[3:]
    with pytest.raises(InputError, match="message 3: field tool_call_id: call 'call_w1' was answered twice"):
        list(_openai.read(conflict, file="t.json", identity={}))


def test_sniff_boundaries():
    assert _openai.sniff([{"role": "user", "content": "hi"}])
    assert not _openai.sniff([{"type": "human", "content": "hi"}])
    assert not _openai.sniff([])
    assert _openai.looks_failed("Error: KeyError('x')\n Please fix your mistakes.")
    assert not _openai.looks_failed("Error: the flight is full")   # a tool's own prose counts as ok


def test_request_with_response_and_bare_response(samples):
    doc = orjson.loads((samples / "openai_agents" / "run1_parallel_and_error.chat_completions.json").read_bytes())
    body = {
        "model": "gpt-4o-mini",
        "messages": doc[:1],
        "choices": [{"message": doc[1], "finish_reason": "tool_calls"}],
    }
    [run] = _openai.read(body, file="t.json", identity={})
    assert run.identity.model == "gpt-4o-mini"
    assert [(c.call_id, c.ok) for c in run.tool_calls] == [("call_w1", None), ("call_a1", None)]
    [bare] = _openai.read({"model": "m", "choices": body["choices"]}, file="t.json", identity={})
    assert [e.kind for e in bare.events] == ["tool", "tool"]
