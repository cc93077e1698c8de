"""One run's trajectory out of its spans: what the OpenTelemetry GenAI and OpenInference
readers share. Each reader says which spans are tool calls and model calls and how to read
them (:class:`SpanReading`); this module orders and pairs.

Rules:

* A tool span is one tool call at its start time: ``ok=False`` when the span failed
  (status ERROR, ``error.type``), with the status message or the ``exception`` event as
  the error; otherwise ``ok=True``.
* A model span adds the user messages its input holds beyond those already seen (inputs
  repeat the history) at its start, and its output text as an agent message at its end.
* A tool call the model announced (an output tool-call part) lends its id to the first
  later tool span of that name that has none, and its arguments to the tool span with its
  id that has none (arguments are opt-in content). An announced call that no tool span
  answers is kept: its result is the ``tool`` message that a later model input holds for
  its id (``ok=True``), else it has none (``ok=None``).
* ``agent`` on each call and agent message is the nearest enclosing agent span's name.

>>> from fluke.adapters._spans import Span
>>> reading = SpanReading(
...     tool=lambda s: {"tool": s.attrs["tool"], "call_id": None, "args": None, "result": "5"}
...         if "tool" in s.attrs else None,
...     messages=lambda s: ([{"role": "user", "text": "2+3?"}],
...                         [{"role": "assistant", "text": "", "tool_calls": [("c1", "add", {"a": 2})]}])
...         if "llm" in s.attrs else None,
...     agent=lambda s: None)
>>> spans = [Span("t", "1", None, "llm", 1.0, 2.0, {"llm": 1}), Span("t", "2", None, "add", 3.0, 4.0, {"tool": "add"})]
>>> [(e.kind, getattr(e, "call_id", None)) for e in span_events(spans, reading)]
[('user', None), ('tool', 'c1')]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import orjson

from ..record import AgentMessage, ToolCall, UserMessage
from ._common import as_list
from ._spans import Span, ancestors

#: A model call's messages in one shape: ``{"role", "text", "tool_calls": [(id, name, args)],
#: "tool_call_id"}``; ``(inputs, outputs)``, or None for a span that is no model call.
Messages = tuple[list[dict[str, Any]], list[dict[str, Any]]] | None


@dataclass(frozen=True)
class SpanReading:
    """How one convention spells tool calls, model calls and agents."""

    tool: Callable[[Span], dict[str, Any] | None]
    messages: Callable[[Span], Messages]
    agent: Callable[[Span], str | None]


def agent_of(span: Span, by_id: dict[str, Span], reading: SpanReading) -> str | None:
    """The name of the nearest enclosing agent span (the span itself first)."""
    name = reading.agent(span)
    if name:
        return name
    for parent in ancestors(span, by_id):
        name = reading.agent(parent)
        if name:
            return name
    return None


def span_events(spans: list[Span], reading: SpanReading) -> list[Any]:
    """The run's events, ordered by time (spans sorted by start, as :func:`group_runs` gives)."""
    by_id = {s.span_id: s for s in spans}
    timeline: list[tuple[float, int, Any]] = []
    users_seen = 0
    announced: list[dict[str, Any]] = []   # model-announced calls, in order
    answers: dict[str, Any] = {}           # tool messages in later model inputs, by call id
    tool_calls: list[dict[str, Any]] = []
    last = 0.0

    def at(t: float | None) -> float:
        nonlocal last
        if t is not None:
            last = t
        return last

    for span in spans:
        messages = reading.messages(span)
        if messages is not None:
            inputs, outputs = messages
            users = [m for m in inputs if m.get("role") == "user" and m.get("text")]
            for m in users[users_seen:]:
                timeline.append((at(span.start), len(timeline), UserMessage(text=_text(m["text"]), t=span.start)))
            users_seen = max(users_seen, len(users))
            for m in inputs:
                if m.get("role") == "tool" and isinstance(m.get("tool_call_id"), str):
                    answers.setdefault(m["tool_call_id"], m.get("text"))
            agent = agent_of(span, by_id, reading)
            end = span.end if span.end is not None else span.start
            for m in outputs:
                if m.get("text"):
                    timeline.append((at(end), len(timeline), AgentMessage(text=_text(m["text"]), agent=agent, t=end)))
                for call_id, name, args in as_list(m.get("tool_calls")):
                    call_id = call_id if isinstance(call_id, str) and call_id else None
                    announced.append({"call_id": call_id, "tool": name, "args": args, "t": end, "agent": agent,
                                      "used": False})
            continue
        call = reading.tool(span)
        if call is None:
            continue
        call = {"ok": False if span.failed else True, "error": span.error_text() if span.failed else None,
                "t_start": span.start, "t_end": span.end, "agent": agent_of(span, by_id, reading), **call}
        _pair(call, announced, span.start)
        tool_calls.append(call)
        timeline.append((at(span.start), len(timeline), call))
    for a in announced:
        if not a["used"]:
            answered = a["call_id"] is not None and a["call_id"] in answers
            call = {"tool": a["tool"], "call_id": a["call_id"], "args": a["args"], "ok": True if answered else None,
                    "result": answers.get(a["call_id"]) if answered else None, "t_start": a["t"], "agent": a["agent"]}
            timeline.append((a["t"] if a["t"] is not None else last, len(timeline), call))
    timeline.sort(key=lambda x: (x[0], x[1]))
    return [ToolCall(**_clean(e)) if isinstance(e, dict) else e for _, _, e in timeline]


def _text(value: Any) -> str:
    return value if isinstance(value, str) else orjson.dumps(value, default=str).decode()


def _clean(call: dict[str, Any]) -> dict[str, Any]:
    """Only values a ToolCall holds: an id or a name that is not a string is made one."""
    out = {k: call.get(k) for k in ("tool", "args", "call_id", "ok", "result", "error", "t_start", "t_end", "agent")}
    out["tool"] = _text(out["tool"]) if out["tool"] not in (None, "") else "<unnamed>"
    out["call_id"] = _text(out["call_id"]) if out["call_id"] not in (None, "") else None
    for key in ("error", "agent"):
        out[key] = _text(out[key]) if out[key] not in (None, "") else None
    for key in ("t_start", "t_end"):
        if not isinstance(out[key], (int, float)) or isinstance(out[key], bool):
            out[key] = None
    return out


def _pair(call: dict[str, Any], announced: list[dict[str, Any]], start: float | None) -> None:
    if call.get("call_id"):
        match = next((a for a in announced if a["call_id"] == call["call_id"]), None)
    else:
        match = next((a for a in announced if not a["used"] and a["tool"] == call["tool"]
                      and (start is None or a["t"] is None or a["t"] <= start)), None)
        if match is not None:
            call["call_id"] = match["call_id"]
    if match is not None:
        match["used"] = True
        if call.get("args") is None and match["args"] is not None:
            call["args"] = match["args"]
