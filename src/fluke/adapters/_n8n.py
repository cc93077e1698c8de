"""n8n execution payloads (AI Agent workflows), read without n8n.

Accepted shapes: an execution as the REST API returns it (``GET /api/v1/executions/{id}
?includeData=true``) or as the DB row holds it, with ``data`` plain or as a flatted string;
the in-memory ``IRun`` that ``n8n execute --rawOutput`` prints; a bare run-data document
``{"resultData": {"runData": ...}}``; the DB's raw flatted ``execution_data.data`` array;
a list of executions, or the API's page ``{"data": [...], "nextCursor": ...}``.

Reading rules:

* A tool call is a ``runData[node][runIndex]`` entry whose ``inputOverride`` has an
  ``ai_tool`` key. Tool = the node name (the model sees it with spaces replaced by ``_``).
  Args = ``inputOverride.ai_tool[0][0].json``; result = ``data.ai_tool[0][0].json``
  (its ``response`` when that is its only key).
* Order: by ``executionIndex`` when *every* tool entry has one, else by ``startTime`` when
  every one has it, else in document order: one key for all entries, never mixed per
  entry (the two live in different number spaces). Ties (``startTime`` has millisecond
  resolution) go to the node that appears first in ``runData``, then the lower runIndex.
* ``executionStatus``: ``success`` -> ok=True; ``error`` -> ok=False with
  ``error.message``; ``canceled``/``crashed`` -> ok=False; ``running``/``waiting``/``new``/
  ``unknown`` -> ok=None (no result came back).
* Call ids come from the agent's ``metadata.subNodeExecutionData``: ``actions[]`` name the
  node and runIndex exactly; ``previousRequests[]`` name only the tool, so each is paired
  with that node's first remaining run whose arguments equal its ``toolInput`` (else the
  first remaining run). An ``id`` argument equal to the call id (n8n injects it when it
  replays history) is removed from the arguments.
* Times: ``t_start = startTime / 1000`` and ``t_end = (startTime + executionTime) / 1000``,
  seconds since the epoch. Latency: the execution's ``stoppedAt - startedAt`` (the agent
  node's own timing covers only its last slice).
* The user message is the agent's defined prompt, else the ``chatInput`` it received, else
  the ``Human:`` text of the first model prompt; the final answer is the agent's
  ``output``. A failed execution sets :attr:`Run.error` to its error message.
* Several input items: one run per item (``pairedItem.item``), scenario ``<scenario>#<item>``.
* Identity: harness = ``{"n8n_workflow": <workflow id>}`` (plus ``versionId`` when
  present), model = the chat-model node's model when there is exactly one.

>>> doc = {"resultData": {"runData": {"Calc": [{"executionIndex": 1, "startTime": 1000,
...     "executionTime": 5, "executionStatus": "success",
...     "inputOverride": {"ai_tool": [[{"json": {"input": "2+3"}}]]},
...     "data": {"ai_tool": [[{"json": {"response": "5"}}]]}}]}}}
>>> [run] = read(doc, file="exec-9.json", identity={})
>>> [(c.tool, c.args, c.ok, c.result, c.t_start) for c in run.tool_calls]
[('Calc', {'input': '2+3'}, True, '5', 1.0)]
"""

from __future__ import annotations

import re
from typing import Any, Iterator

from ..errors import InputError
from ..record import AgentMessage, Run, Source, ToolCall, UserMessage
from ._common import as_str, building, epoch, short
from ._flatted import FlattedError, looks_flatted, unflatten
from ._runparts import RunBase
from ._reader import Reader

_FAILED = {"error", "canceled", "crashed"}
_SUCCEEDED = {"success"}


def _decode(data: Any, file: str | None, record: str | None) -> Any:
    if isinstance(data, str):  # a DB row whose data column is still flatted text
        import orjson

        try:
            data = orjson.loads(data)
        except orjson.JSONDecodeError:
            raise InputError(file, record, "data", "is a string but not JSON") from None
    if looks_flatted(data):
        try:
            return unflatten(data)
        except FlattedError as exc:
            raise InputError(file, record, "data", f"is not valid flatted data ({exc.message})") from None
    return data


def _executions(doc: Any) -> list[dict[str, Any]] | None:
    """The executions in ``doc``, each as ``{"meta": row, "data": run-execution-data}``."""
    if looks_flatted(doc) and isinstance(doc[0], dict) and "resultData" in doc[0]:
        return [{"meta": {}, "data": doc}]
    if isinstance(doc, dict):
        if isinstance(doc.get("resultData"), dict):
            return [{"meta": {}, "data": doc}]
        data = doc.get("data")
        if isinstance(data, dict) and isinstance(data.get("resultData"), dict):
            return [{"meta": doc, "data": data}]
        if ("workflowId" in doc or "storedAt" in doc) and ("finished" in doc or "status" in doc):
            # An execution row whose data is flatted text, flatted JSON, or absent.
            return [{"meta": doc, "data": data}]
        if isinstance(data, list):  # the REST API's page of executions
            return _executions(data)
        return None
    if isinstance(doc, list) and doc and all(isinstance(d, dict) for d in doc):
        found = [_executions(d) for d in doc]
        if all(f and len(f) == 1 for f in found):
            return [f[0] for f in found]  # type: ignore[index]
    return None


def sniff(doc: Any) -> bool:
    """True when ``doc`` is an n8n execution (or a list or page of them)."""
    return _executions(doc) is not None


def read(doc: Any, *, file: str | None, identity: dict[str, Any]) -> Iterator[Run]:
    """Yield one run per execution (and per input item) in ``doc``."""
    base = RunBase.from_options(identity, file=file)
    executions = _executions(doc)
    if executions is None:
        raise InputError(file, None, None, "holds no n8n execution",
                         hint="fetch it with GET /api/v1/executions/{id}?includeData=true")
    for position, ex in enumerate(executions):
        meta = ex["meta"]
        ident = meta.get("id", position)
        ident = ident if isinstance(ident, (str, int)) and not isinstance(ident, bool) else position
        record = f"execution {ident}" if len(executions) > 1 or meta.get("id") else None
        data = _decode(ex["data"], file, record)
        result_data = data.get("resultData") if isinstance(data, dict) else None
        run_data = result_data.get("runData") if isinstance(result_data, dict) else None
        if not isinstance(run_data, dict):
            stored = meta.get("storedAt")
            hint = (f"its data is stored in {stored!r}, not in the payload; fetch it through the REST API"
                    if stored in ("fs", "s3", "az") else "export it with includeData=true")
            raise InputError(file, record, "data.resultData.runData", "is missing", hint=hint)
        with building(file, record):
            runs = list(_runs(meta, data, run_data, base, file=file, record=record, position=position))
        yield from runs


def _first_json(section: Any, kind: str) -> Any:
    try:
        return section[kind][0][0]["json"]
    except (TypeError, KeyError, IndexError):
        return None


def _item_of(entry: dict[str, Any]) -> int:
    try:
        item = entry["inputOverride"]["ai_tool"][0][0]["pairedItem"]["item"]
    except (TypeError, KeyError, IndexError):
        return 0
    return item if isinstance(item, int) else 0


def _tool_name(name: Any) -> str:
    return re.sub(r"[^0-9A-Za-z-]+", "_", name if isinstance(name, str) else "").strip("_").lower()


def _get(obj: Any, key: str) -> Any:
    """``obj[key]`` when ``obj`` is an object, else None: n8n's optional nested fields."""
    return obj.get(key) if isinstance(obj, dict) else None


def _entries(runs: Any) -> list[dict[str, Any]]:
    """The run entries of one node (a list of objects; anything else holds none)."""
    return [e for e in runs if isinstance(e, dict)] if isinstance(runs, list) else []


def _ordered(run_data: dict[str, Any]) -> list[tuple[str, int, dict[str, Any]]]:
    entries = [(node, ri, e) for node, runs in run_data.items() if isinstance(runs, list)
               for ri, e in enumerate(runs)
               if isinstance(e, dict) and isinstance(e.get("inputOverride"), dict)
               and "ai_tool" in e["inputOverride"]]
    position = {node: i for i, node in enumerate(run_data)}
    if entries and all(_number(e.get("executionIndex"), int) for _, _, e in entries):
        field = "executionIndex"
    elif entries and all(_number(e.get("startTime"), (int, float)) for _, _, e in entries):
        field = "startTime"
    else:
        field = None
    # One key for every entry; ties by node position in runData, then runIndex.
    return sorted(entries, key=lambda t: (t[2][field] if field else 0, position[t[0]], t[1]))


def _number(value: Any, kinds: type | tuple[type, ...]) -> bool:
    return isinstance(value, kinds) and not isinstance(value, bool) and value == value  # not NaN


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _call_ids(run_data: dict[str, Any], tools: list[tuple[str, int, dict[str, Any]]]) -> dict[tuple[str, int], str]:
    ids: dict[tuple[str, int], str] = {}
    requests: list[dict[str, Any]] = []
    names: dict[str, str] = {}
    for runs in run_data.values():
        for e in _entries(runs):
            sub = _get(_get(e, "metadata"), "subNodeExecutionData")
            for a in _list(_get(sub, "actions")):
                if not isinstance(a, dict):
                    continue
                action = _get(a, "action")
                node, run_index, call_id = as_str(a.get("nodeName")), a.get("runIndex"), _get(action, "id")
                if node and _number(run_index, int) and isinstance(call_id, (str, int)) and call_id != "":
                    ids[(node, run_index)] = str(call_id)
                tool_name = as_str(_get(_get(action, "metadata"), "toolName"))
                if tool_name and node:
                    names[_tool_name(tool_name)] = node
            requests.extend(r for r in _list(_get(_get(sub, "metadata"), "previousRequests"))
                            if isinstance(r, dict))
    remaining: dict[str, list[tuple[int, Any]]] = {}
    for node, ri, e in sorted(tools, key=lambda t: (t[0], t[1])):
        if (node, ri) not in ids:
            args = _first_json(e.get("inputOverride"), "ai_tool")
            remaining.setdefault(node, []).append((ri, args))
    by_tool = {_tool_name(node): node for node in remaining}
    for r in requests:
        action = r.get("action")
        call_id, tool = _get(action, "toolCallId"), _get(action, "tool")
        if not isinstance(call_id, (str, int)) or isinstance(call_id, bool) or call_id == "" \
                or not isinstance(tool, str):
            continue
        node = names.get(_tool_name(tool)) or by_tool.get(_tool_name(tool))
        runs = remaining.get(node or "", [])
        if not runs:
            continue
        wanted = action.get("toolInput")
        pick = next((i for i, (_, a) in enumerate(runs) if _without_id(a, None) == wanted), 0)
        ri, _ = runs.pop(pick)
        ids[(node, ri)] = str(call_id)  # type: ignore[index]
    return ids


def _without_id(args: Any, call_id: str | None) -> Any:
    if isinstance(args, dict) and "id" in args and (call_id is None or args["id"] == call_id):
        return {k: v for k, v in args.items() if k != "id"}
    return args


def _tool_call(node: str, ri: int, e: dict[str, Any], call_id: str | None) -> ToolCall:
    args = _first_json(e.get("inputOverride"), "ai_tool")
    if call_id is not None:
        args = _without_id(args, call_id)
    out = _first_json(e.get("data"), "ai_tool")
    result = out["response"] if isinstance(out, dict) and set(out) == {"response"} else out
    status = as_str(e.get("executionStatus"))
    error = None
    if status in _SUCCEEDED:
        ok: bool | None = True
    elif status in _FAILED or (status is None and e.get("error")):
        ok = False
        err = e.get("error") if isinstance(e.get("error"), dict) else {}
        error = as_str(err.get("message")) or (as_str(out.get("error")) if isinstance(out, dict) else None) \
            or f"tool run {status or 'failed'}"
    elif status is None and out is not None:
        ok = True
    else:
        ok = None
    start, took = e.get("startTime"), e.get("executionTime")
    t_start = start / 1000 if _number(start, (int, float)) else None
    t_end = (start + took) / 1000 if t_start is not None and _number(took, (int, float)) else None
    agent = as_str(_get(_source(e), "previousNode"))
    return ToolCall(tool=node, args=args if args is not None else {}, call_id=call_id, ok=ok,
                    result=result, error=error, t_start=t_start, t_end=t_end, agent=agent)


def _source(e: dict[str, Any]) -> Any:
    """The first entry of a run entry's ``source`` list (the node that called it), or None."""
    source = e.get("source")
    return source[0] if isinstance(source, list) and source else None


def _nodes(meta: dict[str, Any]) -> dict[str, dict[str, Any]]:
    workflow = _get(meta, "workflowData")
    return {n["name"]: n for n in _list(_get(workflow, "nodes"))
            if isinstance(n, dict) and isinstance(n.get("name"), str)}


def _user_text(agent: str | None, run_data: dict[str, Any], nodes: dict[str, Any], item: int) -> str | None:
    params = _get(nodes.get(agent or ""), "parameters")
    text = _get(params, "text")
    if _get(params, "promptType") == "define" and isinstance(text, str) and not text.startswith("="):
        return text
    for runs in run_data.values():  # what the agent was given: a chat trigger's chatInput
        for e in _entries(runs):
            try:
                value = e["data"]["main"][0][item]["json"].get("chatInput")
            except (TypeError, KeyError, IndexError, AttributeError):
                continue
            if isinstance(value, str):
                return value
    for runs in run_data.values():  # the first model prompt, flattened by LangChain
        for e in _entries(runs):
            prompt = _first_json(e.get("inputOverride"), "ai_languageModel")
            messages = prompt.get("messages") if isinstance(prompt, dict) else None
            if isinstance(messages, list) and messages and isinstance(messages[0], str):
                found = re.search(r"(?:^|\n)Human: (.*?)(?=\n(?:AI|Tool|System|Human): |\Z)", messages[0], re.S)
                if found:
                    return found.group(1)
    return None


def _final(agent: str | None, run_data: dict[str, Any], item: int) -> str | None:
    runs = run_data.get(agent) if agent else None
    if not isinstance(runs, list) or not runs:
        return None
    try:
        out = runs[-1]["data"]["main"][0][item]["json"]["output"]
    except (TypeError, KeyError, IndexError):   # a missing step, or a string where a list was
        return None
    return out if isinstance(out, str) else None


def _identity(meta: dict[str, Any], nodes: dict[str, dict[str, Any]]) -> dict[str, Any]:
    workflow = _get(meta, "workflowData")
    wf_id = meta.get("workflowId") or _get(workflow, "id")
    harness = None
    if isinstance(wf_id, (str, int)) and not isinstance(wf_id, bool) and wf_id != "":
        harness = {"n8n_workflow": str(wf_id)}
        version = _get(workflow, "versionId")
        if isinstance(version, (str, int)) and not isinstance(version, bool) and version != "":
            harness["version"] = str(version)
    models = set()
    for node in nodes.values():
        kind = as_str(node.get("type")) or ""
        if "lmChat" in kind or "lmOpenAi" in kind:
            model = _get(node.get("parameters"), "model")
            model = model.get("value") if isinstance(model, dict) else model
            if isinstance(model, str) and not model.startswith("="):
                models.add(model)
    return {"harness": harness, "model": next(iter(models)) if len(models) == 1 else None}


def _runs(meta: dict[str, Any], data: dict[str, Any], run_data: dict[str, Any], base: RunBase,
          *, file: str | None, record: str | None, position: int) -> Iterator[Run]:
    tools = _ordered(run_data)
    ids = _call_ids(run_data, tools)
    nodes = _nodes(meta)
    agents = [as_str(_get(_source(e), "previousNode")) for _, _, e in tools]
    agent = next((a for a in agents if a), None) or next(
        (name for name, n in nodes.items() if (as_str(n.get("type")) or "").endswith(".agent")), None)
    if agent is None:
        agent = next((name for name, runs in run_data.items() if any(
            _get(_get(e, "metadata"), "subNodeExecutionData") for e in _entries(runs))), None)
    error = _get(data.get("resultData"), "error")
    message = error.get("message") if isinstance(error, dict) else (error if error else None)
    message = message if message is None or isinstance(message, str) else short(message)
    latency = None
    started, stopped = epoch(_get(meta, "startedAt")), epoch(_get(meta, "stoppedAt"))
    if started is not None and stopped is not None:
        latency = stopped - started
    items = sorted({_item_of(t[2]) for t in tools}) or [0]
    scenario = base.scenario_or(None, record)
    for item in items:
        events: list[Any] = []
        user = _user_text(agent, run_data, nodes, item)
        if user:
            events.append(UserMessage(text=user))
        events.extend(_tool_call(node, ri, e, ids.get((node, ri)))
                      for node, ri, e in tools if _item_of(e) == item)
        final = _final(agent, run_data, item)
        if final:
            events.append(AgentMessage(text=final, agent=agent))
        yield Run(scenario=scenario if len(items) == 1 else f"{scenario}#{item}",
                  trial=(base.trial or 0) + position, unit=base.unit,
                  identity=base.identity_with(_identity(meta, nodes)), events=events,
                  latency=latency, error=message,
                  source=Source(adapter="n8n", file=file, position=_position(meta, position)))


def _position(meta: dict[str, Any], position: int) -> str | int:
    ident = meta.get("id")
    return str(ident) if isinstance(ident, (str, int)) and not isinstance(ident, bool) else position


READER = Reader(
    "n8n", "n8n execution payloads",
    sniff=sniff, read=read,
)
