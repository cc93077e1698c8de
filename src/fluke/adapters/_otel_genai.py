"""OpenTelemetry GenAI spans (OTLP/JSON), read without ``opentelemetry``.

A file is an OTLP/JSON export: one ``{"resourceSpans": ...}`` request, JSON Lines of them
(the Collector's file exporter), or the SDK's ``span.to_json()`` objects (see
:mod:`fluke.adapters._spans`).

Reading rules:

* Runs: one per trace, or one per conversation when a span names one
  (``gen_ai.conversation.id``, ``session.id``): traces of one conversation are one run.
* Tool calls: spans whose ``gen_ai.operation.name`` is ``execute_tool`` (or, without that
  attribute, whose name starts with ``execute_tool``). Tool = ``gen_ai.tool.name``; call id =
  ``gen_ai.tool.call.id``; args = ``gen_ai.tool.call.arguments`` (JSON text parsed; absent →
  ``None``, since arguments are opt-in content, unless the model's announced call gives
  them); result = ``gen_ai.tool.call.result`` (JSON text parsed). Pairing, order and errors
  follow :mod:`fluke.adapters._spanrun`.
* Model calls: ``chat``/``text_completion``/``generate_content`` spans (and spans carrying the
  older ``gen_ai.prompt`` attributes). Messages from ``gen_ai.input.messages`` /
  ``gen_ai.output.messages`` (parts form), else the older forms: ``gen_ai.prompt`` /
  ``gen_ai.completion`` (JSON text), the indexed ``gen_ai.prompt.{i}.*`` /
  ``gen_ai.completion.{i}.*`` attributes, the per-message span events
  (``gen_ai.user.message``, ``gen_ai.assistant.message``, ``gen_ai.tool.message``,
  ``gen_ai.choice``) and the ``gen_ai.client.inference.operation.details`` event. An
  ``invoke_agent`` span's messages are read only when the run has no model span.
* Identity: model = ``gen_ai.request.model`` (else ``gen_ai.response.model``) of the model
  spans, when there is one; several give ``{"models": [...]}``. harness = the outermost
  ``invoke_agent`` span's ``gen_ai.agent.name`` (with ``gen_ai.agent.version`` when set),
  else ``{"service": <service.name>}``.
* Outcome: spans do not say whether the task was solved: ``passed`` stays unknown. A failed
  outermost agent span sets :attr:`Run.error`. Tokens (``gen_ai.usage.input_tokens`` /
  ``output_tokens``, or the older ``prompt_tokens`` / ``completion_tokens``) are summed
  into :attr:`Run.cost`; latency is the run's first start to its last end.

>>> def span(sid, name, start, attrs, parent=None, status=None):
...     return {"traceId": "t1", "spanId": sid, "parentSpanId": parent, "name": name,
...             "startTimeUnixNano": str(start * 10**9), "endTimeUnixNano": str((start + 1) * 10**9),
...             "status": status or {},
...             "attributes": [{"key": k, "value": {"stringValue": v}} for k, v in attrs.items()]}
>>> doc = {"resourceSpans": [{"scopeSpans": [{"spans": [
...     span("a", "invoke_agent bot", 1, {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "bot"}),
...     span("b", "execute_tool add", 2, {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "add",
...          "gen_ai.tool.call.id": "c1", "gen_ai.tool.call.arguments": '{"a": 2}'}, parent="a",
...          status={"code": 2, "message": "overflow"})]}]}]}
>>> [run] = read(iter([(None, doc)]), file="trace.json", identity={})
>>> [(c.tool, c.call_id, c.args, c.ok, c.error, c.agent) for c in run.tool_calls], run.identity.harness
([('add', 'c1', {'a': 2}, False, 'overflow', 'bot')], 'bot')
"""

from __future__ import annotations

from typing import Any, Iterable, Iterator

import orjson

from ..record import Run, Source
from ._common import as_list, building
from ._runparts import RunBase, parse_arguments, text_of
from ._spanrun import SpanReading, span_events
from ._spans import Span, attribute_keys, collect, first_span, group_runs, indexed, run_position, service_name
from ._reader import Reader

_MODEL_OPS = {"chat", "text_completion", "generate_content"}
_CONVERSATION = ("gen_ai.conversation.id", "session.id")


def sniff(doc: Any) -> bool:
    """An OTLP export whose first span has ``gen_ai.*`` attributes (and no OpenInference kind)."""
    raw = first_span(doc)
    if raw is None:
        return False
    keys = attribute_keys(raw)
    return any(k.startswith("gen_ai.") for k in keys) and "openinference.span.kind" not in keys


def _op(span: Span) -> str | None:
    op = span.attrs.get("gen_ai.operation.name")
    if isinstance(op, str):
        return op
    if span.name.startswith("execute_tool"):
        return "execute_tool"
    if span.name.startswith("invoke_agent"):
        return "invoke_agent"
    if "gen_ai.prompt" in span.attrs or any(k.startswith("gen_ai.prompt.") for k in span.attrs):
        return "chat"
    return None


def _json(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError:
            return value
    return value


def normalise(message: Any) -> list[dict[str, Any]]:
    """One message (parts form, or OpenAI chat form) as the shared message shape.

    >>> normalise({"role": "assistant", "parts": [{"type": "text", "content": "hi"},
    ...            {"type": "tool_call", "id": "c1", "name": "add", "arguments": {"a": 1}}]})
    [{'role': 'assistant', 'text': 'hi', 'tool_calls': [('c1', 'add', {'a': 1})]}]
    >>> normalise({"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", "result": 5}]})
    [{'role': 'tool', 'text': 5, 'tool_call_id': 'c1'}]
    """
    if isinstance(message, str):
        return [{"role": "user", "text": message}]
    if not isinstance(message, dict):
        return []
    role = str(message.get("role") or "user")
    parts = message.get("parts")
    if isinstance(parts, list):
        texts, calls, out = [], [], []
        for p in parts:
            if not isinstance(p, dict):
                continue
            kind = p.get("type")
            if kind == "text":
                texts.append(str(p.get("content") or ""))
            elif kind == "tool_call":
                calls.append((p.get("id"), str(p.get("name") or "<unnamed>"), parse_arguments(p.get("arguments"))))
            elif kind == "tool_call_response":
                out.append({"role": "tool", "text": p.get("response", p.get("result")), "tool_call_id": p.get("id")})
        if texts or calls or not out:
            out.insert(0, {"role": role, "text": "".join(texts), "tool_calls": calls})
        return out
    calls = []
    for tc in as_list(message.get("tool_calls")):
        if isinstance(tc, dict):
            fn = tc.get("function") if isinstance(tc.get("function"), dict) else tc
            calls.append((tc.get("id"), str(fn.get("name") or "<unnamed>"), parse_arguments(fn.get("arguments"))))
    content = message.get("content")
    out = {"role": role, "text": text_of(content) if not isinstance(content, (dict, int, float)) else content,
           "tool_calls": calls}
    if message.get("tool_call_id") or message.get("id") and role == "tool":
        out["tool_call_id"] = message.get("tool_call_id") or message.get("id")
    return [out]


def _messages_from(value: Any) -> list[dict[str, Any]]:
    value = _json(value)
    if isinstance(value, dict) and isinstance(value.get("messages"), list):
        value = value["messages"]
    if isinstance(value, str):
        return [{"role": "user", "text": value}]
    if not isinstance(value, list):
        value = [value]
    return [n for m in value for n in normalise(m)]


def _messages(span: Span) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    a = span.attrs
    inputs = _first(a, "gen_ai.input.messages", "gen_ai.prompt")
    outputs = _first(a, "gen_ai.output.messages", "gen_ai.completion")
    for name, _t, attrs in span.events:   # the event forms, current and older
        if name == "gen_ai.client.inference.operation.details":
            inputs = inputs or _first(attrs, "gen_ai.input.messages")
            outputs = outputs or _first(attrs, "gen_ai.output.messages")
    if not inputs and not outputs:
        for name, _t, attrs in span.events:
            body = _json(attrs.get("body", attrs.get("message")))
            if name in ("gen_ai.user.message", "gen_ai.system.message", "gen_ai.assistant.message",
                        "gen_ai.tool.message"):
                role = name.split(".")[1]
                msg = dict(body) if isinstance(body, dict) else {"content": attrs.get("content", body)}
                msg.setdefault("role", role)
                if "tool_calls" in attrs and "tool_calls" not in msg:
                    msg["tool_calls"] = _json(attrs["tool_calls"])
                if role == "tool" and attrs.get("id") and "tool_call_id" not in msg:
                    msg["tool_call_id"] = attrs["id"]
                inputs.extend(normalise(msg))
            elif name == "gen_ai.choice":
                msg = body if isinstance(body, dict) else {"content": attrs.get("content", body)}
                outputs.extend(normalise({"role": "assistant", **msg}))
    return inputs, outputs


def _first(attrs: dict[str, Any], *keys: str) -> list[dict[str, Any]]:
    for key in keys:
        if attrs.get(key) not in (None, ""):
            return _messages_from(attrs[key])
        listed = indexed(attrs, key)
        if listed:
            return [n for m in listed for n in normalise(m)]
    return []


def _tool(span: Span) -> dict[str, Any] | None:
    if _op(span) != "execute_tool":
        return None
    a = span.attrs
    raw_args = a.get("gen_ai.tool.call.arguments")
    result = a.get("gen_ai.tool.call.result")
    call_id = a.get("gen_ai.tool.call.id")
    return {"tool": str(a.get("gen_ai.tool.name") or span.name.removeprefix("execute_tool").strip() or "<unnamed>"),
            "call_id": str(call_id) if call_id not in (None, "") else None,
            "args": None if raw_args is None else parse_arguments(raw_args),
            "result": _json(result)}


def _agent(span: Span) -> str | None:
    if _op(span) != "invoke_agent":
        return None
    name = span.attrs.get("gen_ai.agent.name")
    return str(name) if name else None


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _identity(spans: list[Span], models_from: list[Span]) -> dict[str, Any]:
    models = sorted({str(m) for s in models_from
                     for m in [s.attrs.get("gen_ai.request.model") or s.attrs.get("gen_ai.response.model")] if m})
    agents = [s for s in spans if _op(s) == "invoke_agent"]
    ids = {s.span_id for s in agents}
    outer = next((s for s in agents if s.parent_id not in ids), None)
    harness: Any = None
    if outer is not None and outer.attrs.get("gen_ai.agent.name"):
        name, version = str(outer.attrs["gen_ai.agent.name"]), outer.attrs.get("gen_ai.agent.version")
        harness = {"agent": name, "version": str(version)} if version else name
    if harness is None:
        harness = service_name(spans)
    return {"model": models[0] if len(models) == 1 else ({"models": models} if models else None),
            "harness": harness}


def read(docs: Iterable[tuple[str | None, Any]], *, file: str, identity: dict[str, Any]) -> Iterator[Run]:
    """Yield one run per trace (or conversation) in the export."""
    base = RunBase.from_options(identity, file=file)
    for position, (key, spans) in enumerate(group_runs(collect(docs, file=file), _CONVERSATION)):
        with building(file, key):   # a value the run model refuses names its field
            run = _run(key, spans, base, position, file)
        yield run


def _run(key: str, spans: list[Span], base: RunBase, position: int, file: str) -> Run:
    model_spans = [s for s in spans if _op(s) in _MODEL_OPS]
    agent_reads = not model_spans

    def messages(span: Span, agent_reads: bool = agent_reads):
        op = _op(span)
        if op in _MODEL_OPS or (agent_reads and op == "invoke_agent"):
            return _messages(span)
        return None

    events = span_events(spans, SpanReading(tool=_tool, messages=messages, agent=_agent))
    cost: dict[str, float] = {}
    for s in model_spans or [s for s in spans if _op(s) == "invoke_agent"]:
        for name, keys in (("input_tokens", ("gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens")),
                           ("output_tokens", ("gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens"))):
            value = next((_number(s.attrs.get(k)) for k in keys if _number(s.attrs.get(k)) is not None), None)
            if value is not None:
                cost[name] = cost.get(name, 0.0) + value
    ids = {s.span_id for s in spans}
    roots = [s for s in spans if s.parent_id not in ids]
    failed = next((s for s in roots if s.failed), None)
    starts = [s.start for s in spans if s.start is not None]
    ends = [s.end for s in spans if s.end is not None]
    return Run(scenario=base.scenario_or(None, key), trial=(base.trial or 0) + position, unit=base.unit,
               identity=base.identity_with(_identity(spans, model_spans or spans)), events=events, cost=cost,
               latency=max(ends) - min(starts) if starts and ends else None,
               error=failed.error_text() if failed is not None else None,
               source=Source(adapter="otel-genai", file=file, position=run_position(key, spans)))


READER = Reader(
    "otel-genai", "OpenTelemetry GenAI spans (OTLP JSON)",
    sniff=sniff, read=read, takes="documents",
)
