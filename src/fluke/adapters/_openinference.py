"""OpenInference spans (Arize Phoenix and its instrumentations), read without them.

The envelope is OpenTelemetry's (OTLP/JSON, JSON Lines of requests, the SDK's
``to_json()`` shape, or dict attributes as Phoenix exports them, nested dicts included;
see :mod:`fluke.adapters._spans`). What marks the convention is the span kind in
``openinference.span.kind``.

Reading rules:

* Runs: one per trace, or one per ``session.id`` when a span names one.
* Tool calls: ``TOOL`` spans. Tool = ``tool.name`` (else the span name); call id =
  ``tool.id`` (else the id the model announced for that tool, in order); args =
  ``input.value`` (JSON text parsed; absent → the announced arguments, else ``None``);
  result = ``output.value`` (parsed when ``output.mime_type`` is JSON). Failure = status
  ERROR, with the status message or the ``exception`` event as the error.
* Model calls: ``LLM`` spans, messages from ``llm.input_messages.{i}.message.*`` and
  ``llm.output_messages.{i}.message.*`` (``content``, or the text parts of ``contents``;
  ``tool_calls.{j}.tool_call.id / function.name / function.arguments``; ``tool_call_id``).
  An ``AGENT`` span's ``input.value`` / ``output.value`` are read as the user message and
  the answer only when the run has no ``LLM`` span.
* ``agent`` on each call: the nearest enclosing ``AGENT`` span's ``agent.name`` (else its
  span name).
* Identity: model = ``llm.model_name`` when one; several give ``{"models": [...]}``;
  harness = the outermost ``AGENT`` span's ``agent.name``. Outcome unknown, as in every
  trace format; a failed root span sets :attr:`Run.error`; ``llm.token_count.prompt`` /
  ``completion`` are summed into :attr:`Run.cost`.

>>> attrs = {"openinference.span.kind": "TOOL", "tool.name": "lookup", "tool.id": "c7",
...          "input.value": '{"key": "k"}', "output.value": "v"}
>>> doc = {"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "t", "spanId": "s", "name": "lookup",
...     "startTimeUnixNano": "1000000000", "attributes": [{"key": k, "value": {"stringValue": v}}
...                                                       for k, v in attrs.items()]}]}]}]}
>>> [run] = read(iter([(None, doc)]), file="oi.json", identity={})
>>> [(c.tool, c.call_id, c.args, c.result, c.ok) for c in run.tool_calls]
[('lookup', 'c7', {'key': 'k'}, 'v', True)]
"""

from __future__ import annotations

from typing import Any, Iterable, Iterator

import orjson

from ..record import Run, Source
from ._common import as_list, building
from ._runparts import RunBase, parse_arguments
from ._spanrun import SpanReading, span_events
from ._spans import Span, attribute_keys, collect, first_span, group_runs, indexed, run_position, service_name
from ._reader import Reader

KIND = "openinference.span.kind"


def sniff(doc: Any) -> bool:
    """An OTLP export whose first span carries ``openinference.span.kind``."""
    raw = first_span(doc)
    return raw is not None and KIND in attribute_keys(raw)


def _kind(span: Span) -> str:
    return str(span.attrs.get(KIND) or "").upper()


def _message(m: Any) -> dict[str, Any]:
    m = m.get("message", m) if isinstance(m, dict) else {}
    if not isinstance(m, dict):
        return {"role": "user", "text": ""}
    text = m.get("content")
    if text is None and isinstance(m.get("contents"), list):
        text = "".join(str((c.get("message_content") or {}).get("text") or "")
                       for c in m["contents"] if isinstance(c, dict) and isinstance(c.get("message_content"), dict))
    calls = []
    for tc in as_list(m.get("tool_calls")):
        tc = tc.get("tool_call", tc) if isinstance(tc, dict) else {}
        fn = tc.get("function") if isinstance(tc.get("function"), dict) else {}
        calls.append((tc.get("id"), str(fn.get("name") or "<unnamed>"), parse_arguments(fn.get("arguments"))))
    out = {"role": str(m.get("role") or "user"), "text": text if text is not None else "", "tool_calls": calls}
    if m.get("tool_call_id"):
        out["tool_call_id"] = m["tool_call_id"]
    return out


def _llm_messages(span: Span) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    return ([_message(m) for m in indexed(span.attrs, "llm.input_messages")],
            [_message(m) for m in indexed(span.attrs, "llm.output_messages")])


def _value(span: Span, which: str) -> Any:
    value = span.attrs.get(f"{which}.value")
    if isinstance(value, str) and "json" in str(span.attrs.get(f"{which}.mime_type") or "").lower():
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError:
            return value
    return value


def _tool(span: Span) -> dict[str, Any] | None:
    if _kind(span) != "TOOL":
        return None
    raw = span.attrs.get("input.value")
    call_id = span.attrs.get("tool.id")
    return {"tool": str(span.attrs.get("tool.name") or span.name or "<unnamed>"),
            "call_id": str(call_id) if call_id not in (None, "") else None,
            "args": None if raw is None else parse_arguments(raw), "result": _value(span, "output")}


def _agent(span: Span) -> str | None:
    if _kind(span) != "AGENT":
        return None
    return str(span.attrs.get("agent.name") or span.name or "") or None


def read(docs: Iterable[tuple[str | None, Any]], *, file: str, identity: dict[str, Any]) -> Iterator[Run]:
    """Yield one run per trace (or session) in the export."""
    base = RunBase.from_options(identity, file=file)
    for position, (key, spans) in enumerate(group_runs(collect(docs, file=file), ("session.id",))):
        with building(file, key):   # a value the run model refuses names its field
            run = _run(key, spans, base, position, file)
        yield run


def _run(key: str, spans: list[Span], base: RunBase, position: int, file: str) -> Run:
    llm = [s for s in spans if _kind(s) == "LLM"]

    def messages(span: Span, agent_reads: bool = not llm):
        if _kind(span) == "LLM":
            return _llm_messages(span)
        if agent_reads and _kind(span) == "AGENT":
            user, answer = span.attrs.get("input.value"), span.attrs.get("output.value")
            return ([{"role": "user", "text": user}] if user else [],
                    [{"role": "assistant", "text": answer}] if answer else [])
        return None

    events = span_events(spans, SpanReading(tool=_tool, messages=messages, agent=_agent))
    cost: dict[str, float] = {}
    for s in llm:
        for name, k in (("input_tokens", "llm.token_count.prompt"), ("output_tokens", "llm.token_count.completion")):
            value = s.attrs.get(k)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                cost[name] = cost.get(name, 0.0) + value
    models = sorted({str(s.attrs["llm.model_name"]) for s in llm if s.attrs.get("llm.model_name")})
    agents = [s for s in spans if _kind(s) == "AGENT"]
    agent_ids = {s.span_id for s in agents}
    outer = next((s for s in agents if s.parent_id not in agent_ids), None)
    found = {"model": models[0] if len(models) == 1 else ({"models": models} if models else None),
             "harness": (_agent(outer) if outer is not None else None) or service_name(spans)}
    ids = {s.span_id for s in spans}
    failed = next((s for s in spans if s.parent_id not in ids and s.failed), None)
    starts = [s.start for s in spans if s.start is not None]
    ends = [s.end for s in spans if s.end is not None]
    return Run(scenario=base.scenario_or(None, key), trial=(base.trial or 0) + position, unit=base.unit,
               identity=base.identity_with(found), events=events, cost=cost,
               latency=max(ends) - min(starts) if starts and ends else None,
               error=failed.error_text() if failed is not None else None,
               source=Source(adapter="openinference", file=file, position=run_position(key, spans)))


READER = Reader(
    "openinference", "OpenInference spans (OTLP JSON)",
    sniff=sniff, read=read, takes="documents",
)
