"""Spans out of OpenTelemetry exports, in one shape, for the span-based readers.

Accepted envelopes: an OTLP/JSON request ``{"resourceSpans": [...]}`` (what an OTLP file
exporter or the Collector's file exporter writes; JSON Lines of such requests too); a list
of such requests; the SDK's own ``span.to_json()`` objects (``ConsoleSpanExporter``), one
per line or in a list. Attribute lists of typed values and plain attribute dicts (vendor
exports) are both read; nested dicts are flattened to dotted keys, so
``{"llm": {"model_name": "m"}}`` reads like ``llm.model_name``.

Times become seconds since the epoch (``*UnixNano`` strings or numbers; ISO in the SDK
shape); ids are kept as the strings the file gives (OTLP/JSON hex; the SDK's ``0x`` prefix
is dropped).

>>> doc = {"resourceSpans": [{"resource": {"attributes": [
...     {"key": "service.name", "value": {"stringValue": "svc"}}]}, "scopeSpans": [{"spans": [
...     {"traceId": "ab", "spanId": "01", "name": "execute_tool add", "startTimeUnixNano": "2000000000",
...      "endTimeUnixNano": "3000000000", "status": {"code": 2, "message": "boom"},
...      "attributes": [{"key": "gen_ai.tool.name", "value": {"stringValue": "add"}},
...                     {"key": "n", "value": {"intValue": "3"}}]}]}]}]}
>>> [span] = spans_in(doc, file="f.json", record=None)
>>> span.name, span.attrs["gen_ai.tool.name"], span.attrs["n"], span.start, span.failed, span.resource
('execute_tool add', 'add', 3, 2.0, True, {'service.name': 'svc'})
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass, field
from typing import Any, Iterable

from ..errors import InputError
from ._common import as_list, epoch

_HEX = re.compile(r"[0-9a-f]{16}|[0-9a-f]{32}")


@dataclass
class Span:
    """One span, its attributes flattened to a dict of plain values."""

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    start: float | None
    end: float | None
    attrs: dict[str, Any]
    status_code: int = 0          # 0 unset, 1 ok, 2 error
    status_message: str | None = None
    events: list[tuple[str, float | None, dict[str, Any]]] = field(default_factory=list)
    resource: dict[str, Any] = field(default_factory=dict)
    where: str = ""

    @property
    def failed(self) -> bool:
        """Status ERROR, or an ``error.type`` attribute."""
        return self.status_code == 2 or bool(self.attrs.get("error.type"))

    def error_text(self) -> str | None:
        """The status message, else the exception event's message, else ``error.type``."""
        if self.status_message:
            return self.status_message
        for name, _t, attrs in self.events:
            if name == "exception" and attrs.get("exception.message"):
                return str(attrs["exception.message"])
        kind = self.attrs.get("error.type")
        return str(kind) if kind else ("error" if self.status_code == 2 else None)


def first_span(doc: Any) -> dict[str, Any] | None:
    """The first raw span object of ``doc`` (a request, a list of requests, or SDK spans)."""
    if isinstance(doc, list):
        return first_span(doc[0]) if doc else None
    if not isinstance(doc, dict):
        return None
    if isinstance(doc.get("resourceSpans"), list):
        for rs in doc["resourceSpans"]:
            for ss in (
                as_list(rs.get("scopeSpans") or rs.get("instrumentationLibrarySpans")) if isinstance(rs, dict) else []
            ):
                spans = ss.get("spans") if isinstance(ss, dict) else None
                if isinstance(spans, list) and spans and isinstance(spans[0], dict):
                    return spans[0]
        return None
    if isinstance(doc.get("context"), dict) and "trace_id" in doc["context"] and "name" in doc:
        return doc
    return None


def attribute_keys(raw: dict[str, Any]) -> set[str]:
    """The attribute keys of one raw span, in either attribute form."""
    attrs = raw.get("attributes")
    if isinstance(attrs, list):
        return {a.get("key") for a in attrs if isinstance(a, dict) and isinstance(a.get("key"), str)}
    if isinstance(attrs, dict):
        return set(_flatten(attrs))
    return set()


def spans_in(doc: Any, *, file: str, record: str | None) -> list[Span]:
    """Every span in one document."""
    out: list[Span] = []
    if isinstance(doc, list):
        for i, item in enumerate(doc):
            out.extend(spans_in(item, file=file, record=f"{record}: item {i}" if record else f"item {i}"))
        return out
    if not isinstance(doc, dict):
        raise InputError(file, record, None, f"expected a span export object, got {type(doc).__name__}")
    if "resourceSpans" in doc:
        resource_spans = doc["resourceSpans"]
        if not isinstance(resource_spans, list):
            raise InputError(file, record, "resourceSpans", "expected a list")
        for r, rs in enumerate(resource_spans):
            if not isinstance(rs, dict):
                raise InputError(file, record, f"resourceSpans.{r}", "expected an object")
            resource = _attributes(
                (rs.get("resource") or {}).get("attributes") if isinstance(rs.get("resource"), dict) else None,
                file,
                record,
                f"resourceSpans.{r}.resource",
            )
            for s_i, ss in enumerate(as_list(rs.get("scopeSpans") or rs.get("instrumentationLibrarySpans"))):
                spans = ss.get("spans") if isinstance(ss, dict) else None
                if not isinstance(spans, list):
                    raise InputError(file, record, f"resourceSpans.{r}.scopeSpans.{s_i}.spans", "expected a list")
                for k, raw in enumerate(spans):
                    where = f"resourceSpans.{r}.scopeSpans.{s_i}.spans.{k}"
                    out.append(_otlp_span(raw, resource, file, record, where))
        return out
    if isinstance(doc.get("context"), dict):
        out.append(_sdk_span(doc, file, record))
        return out
    raise InputError(file, record, None, "holds no spans", hint="expected an OTLP/JSON export {resourceSpans: [...]}")


def _value(v: Any) -> Any:
    """An OTLP ``AnyValue`` as a plain value."""
    if not isinstance(v, dict):
        return v
    if "stringValue" in v:
        return v["stringValue"]
    if "intValue" in v:
        try:
            return int(v["intValue"])
        except (TypeError, ValueError):
            return v["intValue"]
    if "doubleValue" in v:
        return v["doubleValue"]
    if "boolValue" in v:
        return v["boolValue"]
    if "arrayValue" in v:
        values = (v["arrayValue"] or {}).get("values") if isinstance(v["arrayValue"], dict) else None
        return [_value(x) for x in as_list(values)]
    if "kvlistValue" in v:
        values = (v["kvlistValue"] or {}).get("values") if isinstance(v["kvlistValue"], dict) else None
        return {x.get("key"): _value(x.get("value")) for x in as_list(values) if isinstance(x, dict)}
    if "bytesValue" in v:
        return v["bytesValue"]
    return None


def _flatten(d: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in d.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            out.update(_flatten(value, name + "."))
        elif isinstance(value, list) and value and all(isinstance(x, dict) for x in value):
            for i, x in enumerate(value):
                out.update(_flatten(x, f"{name}.{i}."))
        else:
            out[name] = value
    return out


def _attributes(attrs: Any, file: str, record: str | None, where: str) -> dict[str, Any]:
    if attrs is None:
        return {}
    if isinstance(attrs, dict):
        return _flatten(attrs)
    if not isinstance(attrs, list):
        raise InputError(file, record, f"{where}.attributes", f"expected a list, got {type(attrs).__name__}")
    out = {}
    for a in attrs:
        if isinstance(a, dict) and isinstance(a.get("key"), str):
            out[a["key"]] = _value(a.get("value"))
    return out


def _nanos(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        try:
            value = int(value)
        except ValueError:
            return None
    if isinstance(value, (int, float)):
        return round(value / 1e9, 6)   # microseconds, as the ISO times of the SDK shape
    return None


def _id(value: Any) -> str | None:
    """A span or trace id as hex: OTLP/JSON writes hex, a plain protobuf-to-JSON dump base64."""
    if not isinstance(value, str) or not value:
        return None
    if value.startswith("0x"):
        return value[2:]
    if _HEX.fullmatch(value) is None and len(value) in (12, 24):
        try:
            raw = base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            return value
        if len(raw) in (8, 16):
            return raw.hex()
    return value


def _otlp_span(raw: Any, resource: dict[str, Any], file: str, record: str | None, where: str) -> Span:
    if not isinstance(raw, dict):
        raise InputError(file, record, where, f"expected a span object, got {type(raw).__name__}")
    trace_id, span_id = _id(raw.get("traceId")), _id(raw.get("spanId"))
    if trace_id is None or span_id is None:
        raise InputError(file, record, f"{where}.{'traceId' if trace_id is None else 'spanId'}",
                         "is missing or empty", hint="every span needs a traceId and a spanId")
    status = raw.get("status") if isinstance(raw.get("status"), dict) else {}
    code = status.get("code", 0)
    if isinstance(code, str):   # some exporters write the enum name
        code = {"STATUS_CODE_ERROR": 2, "STATUS_CODE_OK": 1, "ERROR": 2, "OK": 1}.get(code.upper(), 0)
    events = []
    for e in as_list(raw.get("events")):
        if isinstance(e, dict):
            events.append((str(e.get("name")), _nanos(e.get("timeUnixNano")),
                           _attributes(e.get("attributes"), file, record, f"{where}.events")))
    return Span(trace_id=trace_id, span_id=span_id, parent_id=_id(raw.get("parentSpanId")),
                name=str(raw.get("name") or ""), start=_nanos(raw.get("startTimeUnixNano")),
                end=_nanos(raw.get("endTimeUnixNano")),
                attrs=_attributes(raw.get("attributes"), file, record, where),
                status_code=code if isinstance(code, int) and not isinstance(code, bool) else 0,
                status_message=status.get("message") or None if isinstance(status.get("message"), str) else None,
                events=events, resource=resource, where=where)


def _sdk_span(raw: dict[str, Any], file: str, record: str | None) -> Span:
    context = raw["context"]
    trace_id, span_id = _id(context.get("trace_id")), _id(context.get("span_id"))
    if trace_id is None or span_id is None:
        raise InputError(file, record, "context.trace_id" if trace_id is None else "context.span_id",
                         "is missing or empty")
    status = raw.get("status") if isinstance(raw.get("status"), dict) else {}
    code = {"ERROR": 2, "OK": 1}.get(str(status.get("status_code", "")).upper(), 0)
    events = []
    for e in as_list(raw.get("events")):
        if isinstance(e, dict):
            attrs = e.get("attributes") if isinstance(e.get("attributes"), dict) else {}
            events.append((str(e.get("name")), epoch(e.get("timestamp")), _flatten(attrs)))
    resource = raw.get("resource") if isinstance(raw.get("resource"), dict) else {}
    attrs = raw.get("attributes")
    return Span(trace_id=trace_id, span_id=span_id, parent_id=_id(raw.get("parent_id")),
                name=str(raw.get("name") or ""), start=epoch(raw.get("start_time")), end=epoch(raw.get("end_time")),
                attrs=_flatten(attrs) if isinstance(attrs, dict) else {}, status_code=code,
                status_message=status.get("description") if isinstance(status.get("description"), str) else None,
                events=events, resource=_flatten(resource.get("attributes") or {})
                if isinstance(resource.get("attributes"), dict) else {}, where=str(raw.get("name")))


def collect(docs: Iterable[tuple[str | None, Any]], *, file: str) -> list[Span]:
    """Every span in every document (a trace's spans may be spread over several lines)."""
    out: list[Span] = []
    for record, doc in docs:
        for span in spans_in(doc, file=file, record=record):
            if record:
                span.where = f"{record}: {span.where}"
            out.append(span)
    return out


def group_runs(spans: list[Span], conversation_keys: tuple[str, ...]) -> list[tuple[str, list[Span]]]:
    """Spans grouped into runs: one per trace, or per conversation when a span of the trace
    names one (``conversation_keys``, the first found wins); runs in order of first start,
    spans inside a run by start time (ties: end time, then span id)."""
    by_trace: dict[str, list[Span]] = {}
    for span in spans:
        by_trace.setdefault(span.trace_id, []).append(span)
    runs: dict[str, list[Span]] = {}
    for trace_id, members in by_trace.items():
        key = next((f"conversation {s.attrs[k]}" for s in members for k in conversation_keys
                    if isinstance(s.attrs.get(k), (str, int)) and s.attrs.get(k) != ""), f"trace {trace_id}")
        runs.setdefault(key, []).extend(members)
    out = []
    for key, members in runs.items():
        members.sort(key=lambda s: (_t(s.start), _t(s.end), s.span_id))
        out.append((key, members))
    out.sort(key=lambda kv: _t(kv[1][0].start))
    return out


def run_position(key: str, spans: list[Span]) -> str:
    """The source position of a run: its key and, for a run whose spans are one trace, that
    trace and its root span (``trace <id> span <root id>``), so an evaluation of the run can be
    parented to them. A conversation over several traces keeps its key alone.

    >>> spans = [Span("t1", "a", None, "root", 1.0, 2.0, {}), Span("t1", "b", "a", "x", 1.5, 1.6, {})]
    >>> run_position("trace t1", spans), run_position("conversation c-1", spans)
    ('trace t1 span a', 'conversation c-1, trace t1 span a')
    >>> run_position("conversation c-1", spans + [Span("t2", "c", None, "root", 3.0, 4.0, {})])
    'conversation c-1'
    """
    traces = {s.trace_id for s in spans}
    ids = {s.span_id for s in spans}
    root = next((s for s in spans if s.parent_id not in ids), None)
    if len(traces) != 1 or root is None:
        return key
    where = f"trace {root.trace_id} span {root.span_id}"
    return where if key == f"trace {root.trace_id}" else f"{key}, {where}"


def _t(value: float | None) -> float:
    return value if value is not None else float("inf")


def service_name(spans: list[Span]) -> dict[str, str] | None:
    """``{"service": <service.name>}`` when the run's spans name one service (the SDK's
    ``unknown_service`` default does not count): the harness when no agent span names one.

    >>> service_name([Span("t", "s", None, "x", None, None, {}, resource={"service.name": "bot"})])
    {'service': 'bot'}
    """
    names = {str(s.resource.get("service.name")) for s in spans if s.resource.get("service.name")}
    names = {n for n in names if not n.startswith("unknown_service")}
    return {"service": names.pop()} if len(names) == 1 else None


def ancestors(span: Span, by_id: dict[str, Span]) -> Iterable[Span]:
    """The span's parent, its parent's parent, ... (stopping at a cycle)."""
    seen = {span.span_id}
    parent = by_id.get(span.parent_id) if span.parent_id else None
    while parent is not None and parent.span_id not in seen:
        seen.add(parent.span_id)
        yield parent
        parent = by_id.get(parent.parent_id) if parent.parent_id else None


def indexed(attrs: dict[str, Any], prefix: str) -> list[Any]:
    """A list flattened into ``prefix.{i}.key`` attributes, rebuilt (nested lists too).

    >>> indexed({"m.0.role": "user", "m.1.calls.0.id": "c1", "m.1.role": "assistant"}, "m")
    [{'role': 'user'}, {'calls': [{'id': 'c1'}], 'role': 'assistant'}]
    """
    head = prefix + "."
    tree: dict[str, Any] = {}
    for key, value in attrs.items():
        if not key.startswith(head):
            continue
        parts = key[len(head):].split(".")
        if not parts[0].isdigit():
            continue
        node = tree
        for part in parts[:-1]:
            child = node.get(part)
            if not isinstance(child, dict):
                child = node[part] = {}
            node = child
        node[parts[-1]] = value
    listed = _listify(tree)
    return listed if isinstance(listed, list) else []


def _listify(node: Any) -> Any:
    if not isinstance(node, dict):
        return node
    if node and all(k.isdigit() for k in node):
        return [_listify(node[k]) for k in sorted(node, key=int)]
    return {k: _listify(v) for k, v in node.items()}
