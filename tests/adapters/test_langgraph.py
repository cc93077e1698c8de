"""The LangGraph adapter on message lists produced by running a real LangGraph agent.

Each test builds ``create_react_agent`` with a scripted fake chat model from langchain-core,
runs it, serialises the messages the way users do (messages_to_dict, model_dump, dumpd,
stream updates, a checkpoint) and reads them back.
"""

from __future__ import annotations

import json
import warnings

import orjson
import pytest

pytest.importorskip("langgraph")

from langchain_core.load import dumpd  # noqa: E402
from langchain_core.messages import AIMessage, messages_to_dict  # noqa: E402
from langchain_core.tools import tool  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402

from fluke.adapters import detect_format, read_file  # noqa: E402
from fluke.adapters import _langgraph  # noqa: E402
from fluke.errors import InputError  # noqa: E402

from ..langgraph_fake import ScriptedModel, ToolNode, create_react_agent  # noqa: E402


@tool
def get_weather(city: str) -> str:
    """Weather for a city."""
    return f"Sunny, 21C in {city}"


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def flaky_lookup(key: str) -> str:
    """A lookup whose backend is down."""
    raise ValueError(f"lookup backend unavailable for key={key!r}")


TOOLS = [get_weather, add, flaky_lookup]


def _call(name, args, call_id):
    return {"name": name, "args": args, "id": call_id, "type": "tool_call"}


def _agent(script, *, tools=None, checkpointer=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return create_react_agent(ScriptedModel(responses=script), tools if tools is not None else TOOLS,
                                  checkpointer=checkpointer)


def _read(tmp_path, doc, name="case.json", **identity):
    path = tmp_path / name
    path.write_bytes(orjson.dumps(doc))
    assert detect_format(path) == "langgraph"
    return list(read_file(path, identity=identity))


@pytest.fixture(scope="module")
def sequential():
    """Two sequential calls; the second tool raises and ToolNode turns it into an error."""
    script = [AIMessage(content="", tool_calls=[_call("get_weather", {"city": "Paris"}, "call_w1")]),
              AIMessage(content="", tool_calls=[_call("flaky_lookup", {"key": "paris-hotels"}, "call_f1")]),
              AIMessage(content="Sunny in Paris; the hotel lookup failed.")]
    agent = _agent(script, tools=ToolNode(TOOLS, handle_tool_errors=True))
    inputs = {"messages": [("user", "Weather in Paris and hotels?")]}
    state = agent.invoke(inputs)
    updates = list(_agent(script, tools=ToolNode(TOOLS, handle_tool_errors=True)).stream(
        inputs, stream_mode="updates"))
    return state["messages"], updates


@pytest.mark.parametrize("form", ["messages_to_dict", "model_dump", "dumpd"])
def test_sequential_with_error_in_every_serialised_form(tmp_path, sequential, form):
    messages, _ = sequential
    doc = {"messages_to_dict": messages_to_dict(messages),
           "model_dump": [m.model_dump() for m in messages],
           "dumpd": [dumpd(m) for m in messages]}[form]
    [run] = _read(tmp_path, doc, name="weather-paris.json", model="fake")
    assert run.scenario == "weather-paris" and run.trial == 0 and run.identity.model == "fake"
    assert [e.kind for e in run.events] == ["user", "tool", "tool", "agent"]
    assert run.events[0].text == "Weather in Paris and hotels?"
    w, f = run.tool_calls
    assert (w.tool, w.call_id, w.args, w.ok, w.result, w.error) == (
        "get_weather", "call_w1", {"city": "Paris"}, True, "Sunny, 21C in Paris", None)
    assert (f.tool, f.call_id, f.args, f.ok) == ("flaky_lookup", "call_f1", {"key": "paris-hotels"}, False)
    # The error text is ToolNode's, carrying the exception the tool raised.
    assert "lookup backend unavailable" in f.error and f.result.startswith("Error: ValueError")
    assert run.events[-1].text == "Sunny in Paris; the hotel lookup failed."
    assert run.source.adapter == "langgraph"


def test_stream_updates_are_concatenated_in_node_order(tmp_path, sequential):
    _, updates = sequential
    assert [next(iter(u)) for u in updates] == ["agent", "tools", "agent", "tools", "agent"]
    doc = [{node: {"messages": messages_to_dict(v["messages"])} for node, v in u.items()} for u in updates]
    # messages_to_dict nests the fields under "data"; updates carry them flat as well.
    [run] = _read(tmp_path, doc)
    assert [(c.tool, c.ok) for c in run.tool_calls] == [("get_weather", True), ("flaky_lookup", False)]


def test_parallel_calls_matched_by_id_not_position(tmp_path):
    script = [AIMessage(content="Let me check both.", tool_calls=[
                  _call("get_weather", {"city": "Berlin"}, "call_p1"),
                  _call("add", {"a": 2, "b": 3}, "call_p2"),
                  _call("get_weather", {"city": "Rome"}, "call_p3")]),
              AIMessage(content="Done.")]
    messages = _agent(script).invoke({"messages": [("user", "Berlin, Rome and 2+3?")]})["messages"]
    doc = messages_to_dict(messages)
    # Shuffle the ToolMessages: results must still land on their calls by tool_call_id.
    tools = [d for d in doc if d["type"] == "tool"]
    assert len(tools) == 3
    others = [d for d in doc if d["type"] != "tool"]
    shuffled = others[:2] + [tools[2], tools[0], tools[1]] + others[2:]
    [run] = _read(tmp_path, shuffled)
    assert [e.kind for e in run.events] == ["user", "agent", "tool", "tool", "tool", "agent"]
    assert [(c.call_id, c.tool, c.result, c.ok) for c in run.tool_calls] == [
        ("call_p1", "get_weather", "Sunny, 21C in Berlin", True),
        ("call_p2", "add", "5", True),   # ToolNode stores the int 5 as "5"
        ("call_p3", "get_weather", "Sunny, 21C in Rome", True)]


def test_invalid_args_unknown_tool_and_invalid_tool_calls(tmp_path):
    script = [AIMessage(content="", tool_calls=[_call("add", {"a": "two"}, "call_bad1")]),
              AIMessage(content="", tool_calls=[_call("no_such_tool", {}, "call_bad2")],
                        invalid_tool_calls=[{"name": "add", "args": '{"a": 2, "b":', "id": "call_inv",
                                             "error": "Malformed args.", "type": "invalid_tool_call"}]),
              AIMessage(content="Sorry, I could not compute that.")]
    messages = _agent(script).invoke({"messages": [("user", "add two")]})["messages"]
    [run] = _read(tmp_path, [m.model_dump() for m in messages])
    bad1, bad2, inv = run.tool_calls
    assert (bad1.tool, bad1.call_id, bad1.args, bad1.ok) == ("add", "call_bad1", {"a": "two"}, False)
    assert bad1.error.startswith("Error invoking tool 'add'")
    assert (bad2.tool, bad2.ok) == ("no_such_tool", False)
    assert "is not a valid tool" in bad2.error
    # The unparsable call never ran: kept as a failed call with its raw argument text.
    assert (inv.tool, inv.call_id, inv.args, inv.ok, inv.error, inv.result) == (
        "add", "call_inv", '{"a": 2, "b":', False, "Malformed args.", None)


def test_uncaught_exception_leaves_an_unanswered_call_in_the_checkpoint(tmp_path):
    saver = InMemorySaver()
    agent = _agent([AIMessage(content="", tool_calls=[_call("flaky_lookup", {"key": "k"}, "call_x1")])],
                   checkpointer=saver)
    config = {"configurable": {"thread_id": "t1"}}
    with pytest.raises(ValueError, match="lookup backend unavailable"):
        agent.invoke({"messages": [("user", "lookup k")]}, config)
    snapshot = agent.get_state(config)
    assert snapshot.next == ("tools",)
    doc = {"values": {"messages": [dumpd(m) for m in snapshot.values["messages"]]},
           "next": list(snapshot.next)}
    [run] = _read(tmp_path, doc)
    [call] = run.tool_calls
    assert (call.tool, call.call_id, call.args, call.ok, call.result) == (
        "flaky_lookup", "call_x1", {"key": "k"}, None, None)
    assert call.error is None          # ok=None alone says no answer came back
    assert run.error == "the graph stopped before node(s) tools ran"


def test_several_message_lists_are_trials(tmp_path, sequential):
    messages, _ = sequential
    doc = [messages_to_dict(messages), messages_to_dict(messages[:2])]
    runs = _read(tmp_path, doc, scenario="paris", trial=3)
    assert [(r.scenario, r.trial, len(r.tool_calls)) for r in runs] == [("paris", 3, 2), ("paris", 4, 1)]
    assert runs[1].tool_calls[0].ok is None


def test_duplicate_answers(tmp_path, sequential):
    messages, _ = sequential
    doc = messages_to_dict(messages)
    repeated = doc[:3] + [doc[2]] + doc[3:]        # the same answer delivered twice
    [run] = _read(tmp_path, repeated)
    assert len(run.tool_calls) == 2
    changed = json.loads(json.dumps(doc[2]))
    changed["data"]["content"] = "Rainy"
    with pytest.raises(InputError, match="answered twice"):
        _read(tmp_path, doc[:3] + [changed] + doc[3:])


def test_samples_generated_offline_read_alike(samples):
    # The four dumps of run 2 in ../shared/formats/samples describe one conversation.
    base = samples / "langgraph"
    for form in ("messages_to_dict", "model_dump", "dumpd"):
        [run] = read_file(base / f"run2_parallel.{form}.json")
        assert [(c.call_id, c.tool, c.ok) for c in run.tool_calls] == [
            ("call_p1", "get_weather", True), ("call_p2", "add", True)]
    [run5] = read_file(base / "run5_chatopenai_parallel.messages_to_dict.json")
    assert [(c.call_id, c.ok) for c in run5.tool_calls] == [("call_calc_ok", True), ("call_calc_bad", False)]
    assert run5.identity.model == "gpt-4o-mini"
    assert run5.cost == {"input_tokens": 40, "output_tokens": 20, "total_tokens": 60}


def test_not_a_message_list():
    assert not _langgraph.sniff([{"role": "user", "content": "hi"}])   # OpenAI chat, not LangChain
    assert not _langgraph.sniff({"messages": []})
    with pytest.raises(InputError, match="no LangChain message list"):
        list(_langgraph.read({"x": 1}, file="f.json", identity={}))
    with pytest.raises(InputError, match="unknown identity key 'modle'"):
        list(_langgraph.read([{"type": "human", "content": "hi"}], file="f.json", identity={"modle": "m"}))


def test_content_blocks_do_not_double_count_calls(tmp_path):
    # Anthropic-style content repeats the call as a tool_use block; only tool_calls count.
    script = [AIMessage(content=[{"type": "text", "text": "Checking."},
                                 {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {"a": 1, "b": 1}}],
                        tool_calls=[_call("add", {"a": 1, "b": 1}, "toolu_1")]),
              AIMessage(content=[{"type": "text", "text": "It is 2."}])]
    messages = _agent(script).invoke({"messages": [("user", "1+1?")]})["messages"]
    [run] = _read(tmp_path, messages_to_dict(messages))
    assert [e.kind for e in run.events] == ["user", "agent", "tool", "agent"]
    assert run.events[1].text == "Checking." and run.events[-1].text == "It is 2."
    assert [(c.call_id, c.result, c.ok) for c in run.tool_calls] == [("toolu_1", "2", True)]


def test_streamed_fragments_are_refused(tmp_path):
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel

    model = GenericFakeChatModel(messages=iter([AIMessage(content="one two three")]))
    chunks = list(model.stream("hi"))
    assert len(chunks) > 1 and len({c.id for c in chunks}) == 1
    with pytest.raises(InputError, match="streamed fragment"):
        _read(tmp_path, messages_to_dict(chunks))
    merged = chunks[0]
    for c in chunks[1:]:
        merged = merged + c
    [run] = _read(tmp_path, messages_to_dict([merged]))
    assert run.events[0].text == "one two three"
