"""OpenAI Agents SDK trace exports (``Trace.export()`` / ``Span.export()``), read without ``agents``.

Accepted shapes: ``{"traces": [...], "spans": [...]}``; a list of exported traces and
spans; JSON Lines with one exported object per line (what a file-writing trace processor
gives). Objects are told apart by ``object``: ``trace`` or ``trace.span``.

Reading rules:

* Runs: one per trace, or one per ``group_id`` when the trace sets one (the SDK's link
  between the traces of one conversation). Spans are ordered by ``started_at`` (they are
  exported when they end, children first).
* Tool calls: ``function`` spans. Tool = ``name``; args = ``input`` (JSON text parsed);
  result = ``output``; ``error`` set → ``ok=False`` with its ``message`` and ``data.error``.
  The spans carry no call id, so ``call_id`` stays empty.
* Handoffs: a ``handoff`` span becomes the tool call the model made for it,
  ``transfer_to_<to_agent>`` (as the SDK names its handoff tools), with ``agent`` = the
  agent handing off; its result is unknown (``None``) but it happened (``ok=True``).
* ``agent`` on every call is the nearest enclosing ``agent`` span's name, so the inner
  calls of an agent used as a tool (``Agent.as_tool``) keep their own agent, in time order
  after the outer call started.
* Messages: ``generation`` spans' ``input`` (new user messages) and ``output`` (assistant
  text), when the model filled them.
* Identity: model = the generation spans' ``model`` when one; harness = the first agent's
  name. A failed agent span sets :attr:`Run.error`. Usage in generation spans is summed into
  :attr:`Run.cost`.

>>> spans = [{"object": "trace.span", "id": "s1", "trace_id": "tr", "parent_id": None,
...           "started_at": "2026-01-01T00:00:00+00:00", "span_data": {"type": "agent", "name": "boss"}},
...          {"object": "trace.span", "id": "s2", "trace_id": "tr", "parent_id": "s1",
...           "started_at": "2026-01-01T00:00:01+00:00", "span_data": {"type": "function", "name": "add",
...           "input": '{"a": 1}', "output": "1"}, "error": None},
...          {"object": "trace.span", "id": "s3", "trace_id": "tr", "parent_id": "s1",
...           "started_at": "2026-01-01T00:00:02+00:00",
...           "span_data": {"type": "handoff", "from_agent": "boss", "to_agent": "Closer"}}]
>>> [run] = read(iter([(None, {"traces": [], "spans": spans})]), file="t.json", identity={})
>>> [(c.tool, c.args, c.agent) for c in run.tool_calls]
[('add', {'a': 1}, 'boss'), ('transfer_to_closer', {}, 'boss')]
"""

from __future__ import annotations

from typing import Any, Iterable, Iterator

from ..errors import InputError
from ..record import AgentMessage, Run, Source, ToolCall, UserMessage
from ._common import as_list, building, epoch
from ._runparts import RunBase, parse_arguments, text_of
from ._reader import Reader


def _objects(doc: Any) -> list[Any] | None:
    if isinstance(doc, dict) and isinstance(doc.get("spans"), list):
        return [*as_list(doc.get("traces")), *doc["spans"]]
    if isinstance(doc, list):
        return doc
    if isinstance(doc, dict) and doc.get("object") in ("trace", "trace.span"):
        return [doc]
    return None


def sniff(doc: Any) -> bool:
    """Exported Agents SDK traces and spans (``object`` is ``trace`` or ``trace.span``)."""
    objects = _objects(doc)
    return bool(objects) and isinstance(objects[0], dict) and objects[0].get("object") in ("trace", "trace.span") \
        and (objects[0].get("object") == "trace" or "span_data" in objects[0])


def read(docs: Iterable[tuple[str | None, Any]], *, file: str, identity: dict[str, Any]) -> Iterator[Run]:
    """Yield one run per trace (or group)."""
    base = RunBase.from_options(identity, file=file)
    groups: dict[str, str] = {}
    spans: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for record, doc in docs:
        objects = _objects(doc)
        if objects is None:
            raise InputError(file, record, None, "holds no Agents SDK traces or spans",
                             hint="expected {traces, spans} or exported objects with 'object'")
        for i, obj in enumerate(objects):
            where = f"{record}: object {i}" if record else f"object {i}"
            if not isinstance(obj, dict):
                raise InputError(file, where, None, f"expected an object, got {type(obj).__name__}")
            trace_id = obj.get("id") if obj.get("object") == "trace" else obj.get("trace_id")
            if not isinstance(trace_id, str) or not trace_id:
                raise InputError(file, where, "trace_id" if obj.get("object") != "trace" else "id",
                                 "is missing", hint="every exported span names its trace")
            if obj.get("object") == "trace":
                if obj.get("group_id"):
                    groups[trace_id] = f"group {obj['group_id']}"
            elif obj.get("object") == "trace.span":
                if not isinstance(obj.get("span_data"), dict):
                    raise InputError(file, where, "span_data", "is missing or not an object")
                spans.setdefault(trace_id, []).append((where, obj))
    runs: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for trace_id, members in spans.items():
        runs.setdefault(groups.get(trace_id, f"trace {trace_id}"), []).extend(members)
    ordered = sorted(runs.items(), key=lambda kv: min(_start(o) for _, o in kv[1]))
    for position, (key, members) in enumerate(ordered):
        members.sort(key=lambda wo: (_start(wo[1]), str(wo[1].get("id"))))
        with building(file, key):   # a value the run model refuses names its field
            run = _run(key, members, base, position, file)
        yield run


def _start(obj: dict[str, Any]) -> float:
    t = epoch(obj.get("started_at"))
    return t if t is not None else float("inf")


def _agent(obj: dict[str, Any], by_id: dict[str, dict[str, Any]]) -> str | None:
    seen: set[str] = set()
    parent = by_id.get(obj.get("parent_id")) if isinstance(obj.get("parent_id"), str) else None
    while parent is not None and parent.get("id") not in seen:
        seen.add(parent.get("id"))
        data = parent["span_data"]
        if data.get("type") == "agent" and data.get("name"):
            return str(data["name"])
        parent = by_id.get(parent.get("parent_id")) if isinstance(parent.get("parent_id"), str) else None
    return None


def _error_text(error: Any) -> str | None:
    if not error:
        return None
    if isinstance(error, dict):
        data = error.get("data") if isinstance(error.get("data"), dict) else {}
        detail = data.get("error")
        message = str(error.get("message") or "error")
        return f"{message}: {detail}" if detail else message
    return str(error)


def _run(key: str, members: list[tuple[str, dict[str, Any]]], base: RunBase, position: int, file: str) -> Run:
    by_id = {o.get("id"): o for _, o in members if isinstance(o.get("id"), str)}
    events: list[Any] = []
    models: set[str] = set()
    agents: list[str] = []
    cost: dict[str, float] = {}
    users_seen = 0
    error = None
    for _where, obj in members:
        data = obj["span_data"]
        kind = data.get("type")
        t0, t1 = epoch(obj.get("started_at")), epoch(obj.get("ended_at"))
        if kind == "function":
            failed = bool(obj.get("error"))
            events.append(ToolCall(tool=str(data.get("name") or "<unnamed>"), args=parse_arguments(data.get("input")),
                                   ok=not failed, result=data.get("output"), error=_error_text(obj.get("error")),
                                   t_start=t0, t_end=t1, agent=_agent(obj, by_id)))
        elif kind == "handoff":
            target = data.get("to_agent")
            events.append(ToolCall(tool=f"transfer_to_{_tool_name(target)}", args={}, ok=not obj.get("error"),
                                   error=_error_text(obj.get("error")), t_start=t0, t_end=t1,
                                   agent=str(data["from_agent"]) if data.get("from_agent") else _agent(obj, by_id)))
        elif kind == "agent":
            if data.get("name"):
                agents.append(str(data["name"]))
            if obj.get("error") and error is None:
                error = _error_text(obj["error"])
        elif kind == "generation":
            if isinstance(data.get("model"), str) and data["model"]:
                models.add(data["model"])
            users = [m for m in as_list(data.get("input")) if isinstance(m, dict) and m.get("role") == "user"]
            for m in users[users_seen:]:
                if text_of(m.get("content")):
                    events.append(UserMessage(text=text_of(m.get("content")), t=t0))
            users_seen = max(users_seen, len(users))
            for m in as_list(data.get("output")):
                if isinstance(m, dict) and m.get("role") == "assistant" and text_of(m.get("content")):
                    events.append(AgentMessage(text=text_of(m.get("content")), agent=_agent(obj, by_id), t=t1))
            for k, v in (data.get("usage") or {}).items() if isinstance(data.get("usage"), dict) else ():
                if isinstance(v, (int, float)) and not isinstance(v, bool):
                    cost[k] = cost.get(k, 0.0) + v
    found = {"model": next(iter(models)) if len(models) == 1 else ({"models": sorted(models)} if models else None),
             "harness": agents[0] if agents else None}
    starts = [epoch(o.get("started_at")) for _, o in members]
    ends = [epoch(o.get("ended_at")) for _, o in members]
    starts = [t for t in starts if t is not None]
    ends = [t for t in ends if t is not None]
    return Run(scenario=base.scenario_or(None, key), trial=(base.trial or 0) + position, unit=base.unit,
               identity=base.identity_with(found), events=events, cost=cost, error=error,
               latency=max(ends) - min(starts) if starts and ends else None,
               source=Source(adapter="openai-agents", file=file, position=key))


def _tool_name(agent: Any) -> str:
    """The SDK's default handoff tool name for an agent: lowercase, spaces as underscores."""
    return str(agent or "agent").strip().lower().replace(" ", "_").replace("-", "_")


READER = Reader(
    "openai-agents", "OpenAI Agents SDK trace and span exports",
    sniff=sniff, read=read, takes="documents",
)
