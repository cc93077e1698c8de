"""LangGraph / LangChain message lists, read without importing LangChain.

Accepted shapes (each a list of messages, or a document holding one):

* ``messages_to_dict(msgs)``: ``[{"type": "ai", "data": {...}}, ...]``;
* ``[m.model_dump() for m in msgs]`` (also LangGraph server thread states): flat dicts
  with ``type`` and ``content``;
* ``dumpd(m)`` (checkpoint / LangSmith style): ``{"lc": 1, "type": "constructor",
  "id": [..., "AIMessage"], "kwargs": {...}}``, defaults omitted;
* a graph state ``{"messages": [...]}``, a snapshot ``{"values": {"messages": [...]},
  "next": [...]}`` or a raw checkpoint ``{"channel_values": {"messages": [...]}}``;
* ``stream_mode="updates"`` output: ``[{"agent": {"messages": [...]}}, ...]``, concatenated;
* a list of any of the message lists above: one run per list.

What becomes of each message: ``human`` -> :class:`UserMessage`; ``ai`` -> an
:class:`AgentMessage` for its text (when there is any) followed by one :class:`ToolCall`
per entry of ``tool_calls`` and then of ``invalid_tool_calls``, appended where the call
was *issued*; ``tool`` -> the result of the call with the same ``tool_call_id`` (never
matched by position or name); ``system`` is skipped. Content blocks that repeat
``tool_calls`` (Anthropic ``tool_use``) are not read, so no call is counted twice.

>>> msgs = [{"type": "human", "content": "2+3?"},
...         {"type": "ai", "content": "", "tool_calls": [
...             {"name": "add", "args": {"a": 2, "b": 3}, "id": "c1"}]},
...         {"type": "tool", "content": "5", "tool_call_id": "c1", "status": "success"}]
>>> sniff(msgs)
True
>>> [run] = read(msgs, file="case.json", identity={})
>>> call = run.events[1]
>>> run.scenario, call.tool, call.args, call.ok, call.result
('case', 'add', {'a': 2, 'b': 3}, True, '5')
"""

from __future__ import annotations

from typing import Any, Iterator

from ..errors import InputError
from ..record import AgentMessage, Run, Source, ToolCall, UserMessage
from ._common import as_str, each_run, expect_dict, expect_list
from ._runparts import RunBase, parse_arguments, result_of, text_of, tool_name
from ._reader import Reader

_TYPES = {"human", "ai", "tool", "system", "function", "chat", "remove", "developer"}
_CLASSES = {"HumanMessage": "human", "AIMessage": "ai", "ToolMessage": "tool",
            "SystemMessage": "system", "FunctionMessage": "function", "ChatMessage": "chat",
            "RemoveMessage": "remove"}
_CHAT_ROLES = {"user": "human", "human": "human", "assistant": "ai", "ai": "ai",
               "system": "system", "tool": "tool", "function": "function"}


def _kind(value: Any) -> str | None:
    """The base message type of a ``type`` value or a class name (chunks included)."""
    if not isinstance(value, str):
        return None
    if value.endswith("Chunk"):  # AIMessageChunk -> AIMessage
        value = value[: -len("Chunk")]
    if value in _TYPES:
        return value
    return _CLASSES.get(value)


def _message(obj: Any) -> tuple[str, dict[str, Any]] | None:
    """``(type, fields)`` of one serialised message in any of the three forms, else None."""
    if not isinstance(obj, dict):
        return None
    if obj.get("lc") == 1 and obj.get("type") == "constructor":
        ident = obj.get("id")
        kind = _kind(ident[-1]) if isinstance(ident, list) and ident else None
        fields = obj.get("kwargs")
        return (kind, fields) if kind and isinstance(fields, dict) else None
    data = obj.get("data")
    if isinstance(data, dict) and _kind(obj.get("type")) and "role" not in obj:
        return _kind(obj["type"]), data
    kind = _kind(obj.get("type"))
    if kind and "content" in obj and "role" not in obj:
        return kind, obj
    return None


def _as_messages(value: Any) -> list[tuple[str, dict[str, Any]]] | None:
    if not isinstance(value, list) or not value:
        return None
    parsed = [_message(m) for m in value]
    return None if any(p is None for p in parsed) else parsed  # type: ignore[return-value]


def _state_messages(doc: dict[str, Any]) -> Any:
    for path in (("messages",), ("values", "messages"), ("channel_values", "messages")):
        node: Any = doc
        for key in path:
            node = node.get(key) if isinstance(node, dict) else None
        if node is not None:
            return node
    return None


def _runs_in(doc: Any) -> list[tuple[list[tuple[str, dict[str, Any]]], dict[str, Any]]] | None:
    """The message lists in ``doc``, each with its enclosing document (or ``{}``)."""
    if isinstance(doc, dict):
        messages = _as_messages(_state_messages(doc))
        return [(messages, doc)] if messages else None
    if not isinstance(doc, list) or not doc:
        return None
    single = _as_messages(doc)
    if single:
        return [(single, {})]
    if all(isinstance(d, dict) and d and all(isinstance(v, dict) or v is None for v in d.values())
           and any(isinstance(v, dict) and "messages" in v for v in d.values()) for d in doc):
        # stream_mode="updates": one chunk per node step, in order.
        flat = [m for chunk in doc for v in chunk.values() if isinstance(v, dict)
                for m in (v.get("messages") if isinstance(v.get("messages"), list) else [])]
        messages = _as_messages(flat)
        return [(messages, {})] if messages else None
    runs = []
    for item in doc:
        inner = _runs_in(item) if isinstance(item, (list, dict)) else None
        if not inner or len(inner) != 1:
            return None
        runs.append(inner[0])
    return runs


def sniff(doc: Any) -> bool:
    """True when ``doc`` holds LangChain messages in a form this reader knows."""
    return _runs_in(doc) is not None


def read(doc: Any, *, file: str | None, identity: dict[str, Any]) -> Iterator[Run]:
    """Yield one run per message list in ``doc``."""
    base = RunBase.from_options(identity, file=file)
    yield from each_run(_runs_in(doc), file=file, missing="holds no LangChain message list",
                        hint="dump it with messages_to_dict(state['messages'])",
                        build=lambda item, record, position: _read_one(item[0], item[1], base, file=file,
                                                                       record=record, position=position))


def _read_one(messages: list[tuple[str, dict[str, Any]]], state: dict[str, Any], base: RunBase,
              *, file: str | None, record: str | None, position: int) -> Run:
    items: list[Any] = []          # events, or dicts for tool calls still being filled
    by_id: dict[str, dict[str, Any]] = {}
    legacy: list[dict[str, Any]] = []  # function_call entries (no ids) awaiting a FunctionMessage
    models: set[str] = set()
    cost: dict[str, float] = {}

    def where(i: int) -> str:
        return f"{record}: message {i}" if record else f"message {i}"

    previous_chunk = None
    for i, (kind, f) in enumerate(messages):
        chunk_id = as_str(f.get("id")) if str(as_str(f.get("type")) or "").endswith("Chunk") else None
        if chunk_id is not None and chunk_id == previous_chunk:
            # Pieces of one streamed message: their tool_call_chunks are partial JSON.
            raise InputError(file, where(i), "type",
                             f"is a streamed fragment of message {chunk_id!r}, not a whole message",
                             hint="dump the final state (graph.get_state(...).values['messages'])")
        previous_chunk = chunk_id
        if kind == "chat":
            kind = _CHAT_ROLES.get(as_str(f.get("role")) or "", "chat")
        if kind == "human":
            items.append(UserMessage(text=text_of(f.get("content"))))
        elif kind == "ai":
            _read_ai(f, items, by_id, legacy, file, where(i))
            meta = expect_dict(f.get("response_metadata"), file=file, record=where(i), field="response_metadata")
            model = meta.get("model_name") or meta.get("model")
            if isinstance(model, str):
                models.add(model)
            usage = expect_dict(f.get("usage_metadata"), file=file, record=where(i), field="usage_metadata")
            for key, value in usage.items():
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    cost[key] = cost.get(key, 0) + value
        elif kind == "tool":
            _read_tool(f, items, by_id, file, where(i))
        elif kind == "function":
            _read_function(f, items, legacy)
        # system, developer, remove and unknown chat roles say nothing about the path.

    events = [ToolCall(**e) if isinstance(e, dict) else e for e in items]
    nxt = state.get("next") if isinstance(state, dict) else None
    error = None
    if isinstance(nxt, (list, tuple)) and nxt:
        error = "the graph stopped before node(s) " + ", ".join(map(str, nxt)) + " ran"
    payload_identity = {"model": next(iter(models)) if len(models) == 1 else
                        ({"models": sorted(models)} if models else None)}
    trial = (base.trial or 0) + position
    return Run(scenario=base.scenario_or(None, record), trial=trial, unit=base.unit,
               identity=base.identity_with(payload_identity), events=events, cost=cost,
               error=error, source=Source(adapter="langgraph", file=file, position=position))


def _read_ai(f: dict[str, Any], items: list[Any], by_id: dict[str, dict[str, Any]],
             legacy: list[dict[str, Any]], file: str | None, where: str) -> None:
    name = as_str(f.get("name"))
    text = text_of(f.get("content"))
    if text:
        items.append(AgentMessage(text=text, agent=name))
    tool_calls = expect_list(f.get("tool_calls"), file=file, record=where, field="tool_calls")
    for tc in tool_calls:
        if not isinstance(tc, dict):
            continue
        call = {"tool": tool_name(tc.get("name")), "args": parse_arguments(tc.get("args")),
                "call_id": _call_id(tc.get("id")), "ok": None, "agent": name}
        _register(call, items, by_id)
    for tc in expect_list(f.get("invalid_tool_calls"), file=file, record=where, field="invalid_tool_calls"):
        # The model's output did not parse as a call; the graph never ran it.
        if not isinstance(tc, dict):
            continue
        call = {"tool": tool_name(tc.get("name")), "args": parse_arguments(tc.get("args")),
                "call_id": _call_id(tc.get("id")), "ok": False,
                "error": text_of(tc.get("error")) or "invalid tool call (arguments did not parse)",
                "agent": name}
        _register(call, items, by_id)
    extra = expect_dict(f.get("additional_kwargs"), file=file, record=where, field="additional_kwargs")
    function_call = extra.get("function_call")
    if not tool_calls and isinstance(function_call, dict):
        call = {"tool": tool_name(function_call.get("name")),
                "args": parse_arguments(function_call.get("arguments")), "call_id": None,
                "ok": None, "agent": name}
        items.append(call)
        legacy.append(call)


def _call_id(value: Any) -> str | None:
    """A call id as the string it should be (some files write numbers); None if absent."""
    if isinstance(value, str):
        return value or None
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return None


def _register(call: dict[str, Any], items: list[Any], by_id: dict[str, dict[str, Any]]) -> None:
    items.append(call)
    if call["call_id"]:  # some providers omit ids; never key on None
        by_id[call["call_id"]] = call


def _read_tool(f: dict[str, Any], items: list[Any], by_id: dict[str, dict[str, Any]],
               file: str | None, where: str) -> None:
    call_id = _call_id(f.get("tool_call_id"))
    result = result_of(f.get("content"))
    failed = f.get("status") == "error"
    call = by_id.get(call_id) if call_id else None
    if call is None:
        # A result whose call is not in the list (a trimmed history): keep it, with the
        # arguments unknown.
        items.append({"tool": tool_name(f.get("name")), "args": None, "call_id": call_id,
                      "ok": not failed, "result": result,
                      "error": text_of(f.get("content")) if failed else None})
        return
    if "result" in call:
        if call["result"] == result:  # a repeated delivery of the same result (RecursionError if
            return                    # nested too deep: the reader's caller names the record)
        raise InputError(file, where, "tool_call_id",
                         f"call {call_id!r} was answered twice with different content",
                         hint="keep one answer per tool call")
    call["result"] = result
    if call["ok"] is False:  # an invalid call stays failed whatever came back
        return
    call["ok"] = not failed
    call["error"] = text_of(f.get("content")) if failed else None


def _read_function(f: dict[str, Any], items: list[Any], legacy: list[dict[str, Any]]) -> None:
    """Legacy FunctionMessage: no ids, so it answers the oldest open call of that name."""
    name = tool_name(f.get("name"))
    for call in legacy:
        if call["tool"] == name and "result" not in call:
            call.update(result=result_of(f.get("content")), ok=True, error=None)
            return
    items.append({"tool": name, "args": None, "ok": True,
                  "result": result_of(f.get("content"))})


READER = Reader(
    "langgraph", "LangGraph/LangChain message lists",
    sniff=sniff, read=read,
)
