"""OpenAI chat-completions message lists, read without importing ``openai``.

Accepted shapes: a list of chat messages (``role`` on each); a request body
``{"model": ..., "messages": [...]}`` (the model fills the identity), optionally with the
response's ``choices`` beside it (its first message is appended); a bare response
``{"choices": [{"message": ...}]}`` (one assistant turn, its calls unanswered); a list of
such lists or bodies (one run each). Also the Responses-API / OpenAI Agents SDK input list
(``RunResult.to_input_list()``): ``function_call`` and ``function_call_output`` items
paired by ``call_id``, ``message`` items as text.

Reading rules:

* A call is an entry of ``assistant.tool_calls``; ``function.arguments`` is a JSON
  string, parsed when it parses and kept as the raw string when it does not (truncated
  output); ``""`` means no arguments.
* A result is the ``role: tool`` message whose ``tool_call_id`` equals the call's ``id``:
  never paired by position, so parallel results in any order land on the right call.
  Exact ``(tool_call_id, content)`` repeats (client retries) are dropped; two different
  answers to one id are an error.
* Errors have **no flag** in this format. A result counts as failed (``ok=False``) only
  when its text is one of the fixed error texts the common frameworks write
  (:data:`ERROR_TEXTS`: LangChain's ToolNode handlers and the Agents SDK's default
  failure function); any other answer counts as ``ok=True``. A tool that returns its own
  error prose therefore reads as a success; grade such runs on the text if it matters.
* A call with no answer is kept with ``ok=None``.
* Legacy ``function_call`` / ``role: function`` messages carry no ids: a function
  message answers the oldest open call of the same name.

>>> msgs = [{"role": "user", "content": "2+3?"},
...         {"role": "assistant", "content": None, "tool_calls": [
...             {"id": "c1", "type": "function", "function": {"name": "add", "arguments": '{"a":2,"b":3}'}},
...             {"id": "c2", "type": "function", "function": {"name": "add", "arguments": '{"a":'}}]},
...         {"role": "tool", "tool_call_id": "c2", "content": "Error: bad input\\n Please fix your mistakes."},
...         {"role": "tool", "tool_call_id": "c1", "content": "5"}]
>>> [run] = read(msgs, file="sum.json", identity={})
>>> [(c.call_id, c.args, c.ok, c.result) for c in run.tool_calls]
[('c1', {'a': 2, 'b': 3}, True, '5'), ('c2', '{"a":', False, 'Error: bad input\\n Please fix your mistakes.')]
"""

from __future__ import annotations

import re
from typing import Any, Callable, Iterator

from ..errors import InputError
from ..record import AgentMessage, Run, Source, ToolCall, UserMessage
from ._common import as_str, building, each_run, epoch, expect_dict, expect_list
from ._runparts import RunBase, parse_arguments, result_of, text_of, tool_name
from ._reader import Reader

_ROLES = {"system", "developer", "user", "assistant", "tool", "function"}
_ITEM_TYPES = {"function_call", "function_call_output", "message", "reasoning"}

#: Fixed texts that frameworks send back to the model in place of a tool's result when the
#: tool failed. The chat format has no error field, so these are the only failures fluke
#: can see in it.
ERROR_TEXTS: tuple[re.Pattern[str], ...] = (
    # LangChain ToolNode(handle_tool_errors=True): "Error: <repr(exc)>\n Please fix your mistakes."
    re.compile(r"\AError: .*\n Please fix your mistakes\.\Z", re.S),
    # LangChain ToolNode default handler, arguments that fail validation.
    re.compile(r"\AError invoking tool '[^']*' with kwargs .* Please fix the error and try again\.\Z", re.S),
    # LangChain ToolNode, a tool name it does not have.
    re.compile(r"\AError: \S+ is not a valid tool, try one of \[.*\]\.\Z", re.S),
    # OpenAI Agents SDK default_tool_error_function.
    re.compile(r"\AAn error occurred while running the tool\. Please try again\."),
)


def looks_failed(text: str) -> bool:
    """Whether ``text`` is one of the known framework error texts (:data:`ERROR_TEXTS`).

    >>> looks_failed("An error occurred while running the tool. Please try again."), looks_failed("5")
    (True, False)
    """
    return any(p.search(text) for p in ERROR_TEXTS)


def _is_item(obj: Any) -> bool:
    if not isinstance(obj, dict):
        return False
    if as_str(obj.get("role")) in _ROLES:
        return True
    kind = as_str(obj.get("type"))
    return kind in _ITEM_TYPES and ("call_id" in obj or kind in ("message", "reasoning"))


def _as_items(value: Any) -> list[dict[str, Any]] | None:
    if isinstance(value, list) and value and all(_is_item(m) for m in value):
        return value
    return None


def _one(doc: Any) -> tuple[list[dict[str, Any]], str | None] | None:
    """The message list in one document, and the model it names."""
    items = _as_items(doc)
    if items:
        return items, None
    if isinstance(doc, dict):
        items = _as_items(doc.get("messages")) or _as_items(doc.get("input"))
        if items:
            choices = doc.get("choices")
            if isinstance(choices, list) and choices and isinstance(choices[0], dict) \
                    and isinstance(choices[0].get("message"), dict):
                items = [*items, choices[0]["message"]]
            model = doc.get("model")
            return items, model if isinstance(model, str) else None
        choices = doc.get("choices")
        if isinstance(choices, list) and choices and isinstance(choices[0], dict) \
                and _is_item(choices[0].get("message")):  # a bare API response: one turn
            model = doc.get("model")
            return [choices[0]["message"]], model if isinstance(model, str) else None
    return None


def _runs_in(doc: Any) -> list[tuple[list[dict[str, Any]], str | None]] | None:
    one = _one(doc)
    if one:
        return [one]
    if isinstance(doc, list) and doc:
        runs = [_one(d) for d in doc]
        if all(runs):
            return runs  # type: ignore[return-value]
    return None


def sniff(doc: Any) -> bool:
    """True when ``doc`` holds OpenAI chat messages (or Responses input items)."""
    return _runs_in(doc) is not None


def read(doc: Any, *, file: str | None, identity: dict[str, Any]) -> Iterator[Run]:
    """Yield one run per message list in ``doc``."""
    base = RunBase.from_options(identity, file=file)

    def build(item, record, position):
        messages, model = item
        return Run(scenario=base.scenario_or(None, record), trial=(base.trial or 0) + position, unit=base.unit,
                   identity=base.identity_with({"model": model}),
                   events=chat_events(messages, file=file, record=record),
                   source=Source(adapter="openai", file=file, position=position))

    yield from each_run(_runs_in(doc), file=file, missing="holds no OpenAI chat message list",
                        hint="expected a list of {role, content, tool_calls?} messages", build=build)


def _call(call_id: Any, name: Any, arguments: Any, agent: Any, *, requestor: str = "agent",
          t: float | None = None) -> dict[str, Any]:
    return {"tool": tool_name(name), "args": parse_arguments(arguments),
            "call_id": call_id if isinstance(call_id, str) and call_id else None,
            "ok": None, "agent": agent if isinstance(agent, str) else None, "requestor": requestor, "t_start": t}


#: Decides whether a tool result is an error: ``is_error(tool_message, content) -> bool``.
ErrorRule = Callable[[dict[str, Any], Any], bool]


def chat_events(messages: list[dict[str, Any]], *, file: str | None, record: str | None,
                is_error: ErrorRule | None = None) -> list[Any]:
    """Chat messages to events: the shared core of every chat-shaped format.

    Harnesses that wrap chat messages (τ-bench, τ²-bench) reuse it and pass their own
    ``is_error`` rule; without one, :func:`looks_failed` reads the fixed error texts.
    A message's ``timestamp`` (ISO-8601) becomes the event's time. Tool calls made in a
    ``user`` message (τ²-bench's simulated user) and calls whose ``requestor`` is ``user``
    are kept with ``requestor="user"``.
    """
    with building(file, record):
        return _chat_events(messages, file=file, record=record, is_error=is_error)


def _chat_events(messages: list[dict[str, Any]], *, file: str | None, record: str | None,
                 is_error: ErrorRule | None) -> list[Any]:
    items: list[Any] = []
    by_id: dict[str, dict[str, Any]] = {}
    legacy: list[dict[str, Any]] = []

    for i, m in enumerate(messages):
        where = f"{record}: message {i}" if record else f"message {i}"
        if not isinstance(m, dict):
            raise InputError(file, where, None, f"expected an object, got {type(m).__name__}")
        role, kind = as_str(m.get("role")), as_str(m.get("type"))
        t = epoch(m.get("timestamp"))
        if kind == "function_call":
            call = _call(m.get("call_id"), m.get("name"), m.get("arguments"), None)
            items.append(call)
            if call["call_id"]:
                by_id[call["call_id"]] = call
        elif kind == "function_call_output":
            _answer(by_id, m.get("call_id"), m.get("output"), None, items, file, where, m, is_error)
        elif role in ("user", "assistant"):
            name = as_str(m.get("name")) if role == "assistant" else None
            text = text_of(m.get("content")) or text_of(m.get("refusal"))
            if text:
                items.append(UserMessage(text=text, t=t) if role == "user"
                             else AgentMessage(text=text, agent=name, t=t))
            for j, tc in enumerate(expect_list(m.get("tool_calls"), file=file, record=where, field="tool_calls")):
                if not isinstance(tc, dict):
                    raise InputError(file, where, f"tool_calls.{j}", "a tool call is not an object")
                fn = expect_dict(tc.get("function") or tc.get("custom"), file=file, record=where,
                             field=f"tool_calls.{j}.function")
                arguments = fn.get("arguments", fn.get("input")) if fn else tc.get("arguments")
                requestor = "user" if role == "user" or tc.get("requestor") == "user" else "agent"
                call = _call(tc.get("id"), fn.get("name") or tc.get("name"), arguments, name,
                             requestor=requestor, t=t)
                items.append(call)
                if call["call_id"]:
                    by_id[call["call_id"]] = call
            fc = m.get("function_call")
            if isinstance(fc, dict):
                call = _call(None, fc.get("name"), fc.get("arguments"), name, t=t)
                items.append(call)
                legacy.append(call)
        elif role == "tool":
            _answer(by_id, m.get("tool_call_id", m.get("id")), m.get("content"), m.get("name"), items,
                    file, where, m, is_error)
        elif role == "function":
            _answer_legacy(legacy, m, items, is_error)
        # system / developer messages and reasoning items say nothing about the path.
    return [ToolCall(**e) if isinstance(e, dict) else e for e in items]


def _fill(call: dict[str, Any], content: Any, message: dict[str, Any], is_error: ErrorRule | None) -> None:
    result = result_of(content)
    text = text_of(content) if not isinstance(result, str) else result
    failed = is_error(message, content) if is_error is not None else looks_failed(text)
    call.update(result=result, ok=not failed, error=text if failed else None,
                t_end=epoch(message.get("timestamp")))


def _answer(by_id: dict[str, dict[str, Any]], call_id: Any, content: Any, name: Any,
            items: list[Any], file: str | None, where: str, message: dict[str, Any],
            is_error: ErrorRule | None) -> None:
    call = by_id.get(call_id) if isinstance(call_id, str) else None
    if call is None:
        # A result whose call is not in the list (a trimmed history): keep it,
        # arguments unknown.
        orphan = {"tool": tool_name(name), "args": None,
                  "call_id": call_id if isinstance(call_id, str) else None}
        _fill(orphan, content, message, is_error)
        items.append(orphan)
        return
    if "result" in call:
        if _same(call["result"], result_of(content)):  # a client retry: same id, same content
            return
        raise InputError(file, where, "tool_call_id",
                         f"call {call_id!r} was answered twice with different content",
                         hint="keep one answer per tool call")
    _fill(call, content, message, is_error)


def _same(a: Any, b: Any) -> bool:
    """Equal results; results nested too deep to compare count as different."""
    try:
        return a == b
    except RecursionError:
        return False


def _answer_legacy(legacy: list[dict[str, Any]], m: dict[str, Any], items: list[Any],
                   is_error: ErrorRule | None) -> None:
    for call in legacy:
        if call["tool"] == m.get("name") and "result" not in call:
            _fill(call, m.get("content"), m, is_error)
            return
    orphan = {"tool": tool_name(m.get("name")), "args": None}
    _fill(orphan, m.get("content"), m, is_error)
    items.append(orphan)


READER = Reader(
    "openai", "OpenAI chat-completions message lists",
    sniff=sniff, read=read,
)
