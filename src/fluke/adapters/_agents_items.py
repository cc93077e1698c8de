"""OpenAI Agents SDK run items, read without ``agents``: ``RunResult.new_items`` serialised as
``{type, agent, raw_item, output?, source_agent?, target_agent?}`` objects, and the SDK's
own ``RunResult.to_state().to_json()`` (``$schemaVersion`` 1.x, ``generated_items``).

Reading rules:

* One run per file. ``tool_call_item`` / ``handoff_call_item`` are calls (``raw_item``:
  ``name``, ``arguments`` JSON text, ``call_id``); ``tool_call_output_item`` /
  ``handoff_output_item`` answer the call with their ``call_id`` (``raw_item.output``, the
  text the model saw). ``agent`` on each call is the item's agent: after a handoff the new
  agent's calls carry its name.
* Errors have no flag in items: the SDK's fixed failure text counts as ``ok=False`` (as in
  :mod:`fluke.adapters._openai`); a call with no output item is ``ok=None`` (an approval
  or interruption pending).
* ``message_output_item`` text is an agent message; the run state's ``original_input``
  is the user message. Identity: harness = the first item's agent. The outcome is unknown.
* Lost: agent-as-tool inner calls (items show only the outer call; read the trace export
  with ``--format openai-agents`` for them), reasoning and MCP items, times.

>>> items = [{"type": "tool_call_item", "agent": "a", "raw_item": {"type": "function_call", "call_id": "c1",
...           "name": "add", "arguments": '{"x": 1}'}},
...          {"type": "tool_call_output_item", "agent": "a", "raw_item": {"type": "function_call_output",
...           "call_id": "c1", "output": "1"}}]
>>> [run] = read(items, file="items.json", identity={})
>>> [(c.tool, c.args, c.ok, c.result, c.agent) for c in run.tool_calls]
[('add', {'x': 1}, True, '1', 'a')]
"""

from __future__ import annotations

from typing import Any, Iterator

from ..errors import InputError
from ..record import AgentMessage, Run, Source, ToolCall, UserMessage
from ._common import building
from ._openai import looks_failed
from ._runparts import RunBase, parse_arguments, text_of
from ._reader import Reader

_CALLS = {"tool_call_item", "handoff_call_item"}
_OUTPUTS = {"tool_call_output_item", "handoff_output_item"}


def _items(doc: Any) -> list[Any] | None:
    if isinstance(doc, dict) and "$schemaVersion" in doc and isinstance(doc.get("generated_items"), list):
        return doc["generated_items"]
    if isinstance(doc, list) and doc and all(isinstance(i, dict) and "raw_item" in i and
                                             str(i.get("type", "")).endswith("_item") for i in doc):
        return doc
    return None


def sniff(doc: Any) -> bool:
    """``new_items`` objects, or a serialised ``RunState``."""
    return _items(doc) is not None


def _agent(value: Any) -> str | None:
    if isinstance(value, dict):
        value = value.get("name")
    return value if isinstance(value, str) and value else None


def read(doc: Any, *, file: str | None, identity: dict[str, Any]) -> Iterator[Run]:
    """Yield the one run the items describe."""
    items = _items(doc)
    if items is None:
        raise InputError(file, None, None, "holds no Agents SDK run items",
                         hint="expected RunResult.new_items objects or RunState.to_json()")
    if isinstance(doc, dict):
        version = str(doc.get("$schemaVersion"))
        if not version.startswith("1."):
            raise InputError(
                file,
                None,
                "$schemaVersion",
                f"run state schema {version} is not one this reader knows (1.x)",
                hint="upgrade fluke",
            )
    base = RunBase.from_options(identity, file=file)
    events: list[Any] = []
    by_id: dict[str, dict[str, Any]] = {}
    first_agent = None
    original = doc.get("original_input") if isinstance(doc, dict) else None
    if isinstance(original, str) and original:
        events.append(UserMessage(text=original))
    elif isinstance(original, list):
        events.extend(UserMessage(text=text_of(m.get("content"))) for m in original
                      if isinstance(m, dict) and m.get("role") == "user" and text_of(m.get("content")))
    for i, item in enumerate(items):
        if not isinstance(item, dict) or not isinstance(item.get("raw_item"), dict):
            raise InputError(file, f"item {i}", "raw_item", "is missing or not an object")
        kind, raw, agent = item.get("type"), item["raw_item"], _agent(item.get("agent"))
        kind = kind if isinstance(kind, str) else None
        first_agent = first_agent or agent
        if kind in _CALLS:
            call = {"tool": str(raw.get("name") or "<unnamed>"), "args": parse_arguments(raw.get("arguments")),
                    "call_id": raw["call_id"] if isinstance(raw.get("call_id"), str) and raw["call_id"] else None,
                    "ok": None, "agent": agent}
            events.append(call)
            if call["call_id"]:
                by_id[call["call_id"]] = call
        elif kind in _OUTPUTS:
            output = raw.get("output")
            call = by_id.get(raw.get("call_id")) if isinstance(raw.get("call_id"), str) else None
            if call is None:
                call = {"tool": "<unknown>", "args": None, "call_id": raw.get("call_id")
                        if isinstance(raw.get("call_id"), str) else None, "agent": agent}
                events.append(call)
            text = text_of(output) if not isinstance(output, str) else output
            failed = looks_failed(text)
            call.update(result=output, ok=not failed, error=text if failed else None)
        elif kind == "message_output_item":
            text = text_of(raw.get("content"))
            if text:
                events.append(AgentMessage(text=text, agent=agent))
    with building(file, None):   # a value the run model refuses names its field
        run = Run(scenario=base.scenario_or(None, None), trial=base.trial or 0, unit=base.unit,
                  identity=base.identity_with({"harness": first_agent}),
                  events=[ToolCall(**e) if isinstance(e, dict) else e for e in events],
                  source=Source(adapter="openai-agents-items", file=file, position=0))
    yield run


READER = Reader(
    "openai-agents-items", "OpenAI Agents SDK run items and RunState JSON",
    sniff=sniff, read=read,
)
