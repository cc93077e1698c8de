"""The OpenTelemetry GenAI and OpenInference readers on real SDK output: the samples in
../shared/formats/samples/otel (opentelemetry-sdk 1.45.2), and spans recorded in the test by
a small program instrumented with opentelemetry-sdk, encoded by the OTLP protobuf encoder
(opentelemetry-exporter-otlp-proto-common) and written with protobuf's own JSON printer.

Expected values are read from the sample files with plain json in the test."""

from __future__ import annotations

import json

import pytest

from fluke.adapters import detect_format, read_file


def _spans(path):
    doc = json.loads(path.read_text())
    return [s for rs in doc["resourceSpans"] for ss in rs["scopeSpans"] for s in ss["spans"]]


def _attr(span, key):
    for a in span["attributes"]:
        if a["key"] == key:
            return next(iter(a["value"].values()))
    return None


def test_genai_sample_tool_spans_pair_and_fail(samples):
    path = samples / "otel" / "genai_semconv.otlp.json"
    assert detect_format(path) == "otel-genai"
    [run] = read_file(path)
    raw = [s for s in _spans(path) if _attr(s, "gen_ai.operation.name") == "execute_tool"]
    raw.sort(key=lambda s: int(s["startTimeUnixNano"]))  # the file is in end order
    assert (
        [c.call_id for c in run.tool_calls] == [_attr(s, "gen_ai.tool.call.id") for s in raw] == ["call_w1", "call_f1"]
    )
    weather, lookup = run.tool_calls
    assert (weather.ok, weather.result, weather.args) == (True, "Sunny, 21C in Paris", {"city": "Paris"})
    failing = next(s for s in raw if s["status"].get("code") == 2)
    assert (lookup.ok, lookup.error) == (False, failing["status"]["message"])
    assert weather.t_start == int(raw[0]["startTimeUnixNano"]) / 1e9
    assert {c.agent for c in run.tool_calls} == {"weather_agent"}
    assert [e.kind for e in run.events] == ["user", "tool", "tool", "agent"]
    assert (run.identity.model, run.identity.harness) == ("gpt-4o", "weather_agent")
    root = next(s for s in _spans(path) if not s.get("parentSpanId"))
    assert run.source.position == f"conversation conv_42, trace {root['traceId']} span {root['spanId']}"
    chats = [s for s in _spans(path) if _attr(s, "gen_ai.operation.name") == "chat"]
    assert run.cost["input_tokens"] == sum(int(_attr(s, "gen_ai.usage.input_tokens") or 0) for s in chats)


def test_sdk_to_json_shape_reads_like_otlp(samples):
    [otlp] = read_file(samples / "otel" / "genai_semconv.otlp.json")
    path = samples / "otel" / "genai_semconv.sdk_to_json.jsonl"
    assert detect_format(path) == "otel-genai"
    [sdk] = read_file(path)
    assert sdk.events == otlp.events and sdk.identity == otlp.identity


def test_openinference_sample(samples):
    path = samples / "otel" / "openinference.otlp.json"
    assert detect_format(path) == "openinference"
    [run] = read_file(path)
    [tool] = [s for s in _spans(path) if _attr(s, "openinference.span.kind") == "TOOL"]
    [call] = run.tool_calls
    assert (call.tool, call.call_id, call.args, call.result, call.ok) == (
        "get_weather",
        _attr(tool, "tool.id"),
        json.loads(_attr(tool, "input.value")),
        _attr(tool, "output.value"),
        True,
    )
    assert call.agent == "weather_agent"
    assert [(e.kind, getattr(e, "text", None)) for e in run.events] == [
        ("user", "Weather in Paris?"), ("tool", None), ("agent", "It is sunny, 21C.")]
    assert (run.identity.model, run.identity.harness, run.cost) == ("gpt-4o", "weather_agent",
                                                                    {"input_tokens": 50, "output_tokens": 20})


def _record(program):
    """Run ``program(tracer)`` under a real SDK provider; return the finished spans."""
    pytest.importorskip("opentelemetry.sdk")
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "fluke-test"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    program(provider.get_tracer("fluke-test"))
    provider.shutdown()
    return exporter.get_finished_spans()


def _write_otlp(spans, path):
    """OTLP/JSON as protobuf's JSON printer writes the SDK's own protobuf encoding (ids base64)."""
    pytest.importorskip("opentelemetry.exporter.otlp.proto.common")
    from google.protobuf.json_format import MessageToJson
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    path.write_text(MessageToJson(encode_spans(spans)))


def _genai_program(tracer):
    from opentelemetry.trace import Status, StatusCode

    for conversation, city in (("c-1", "Paris"), ("c-2", "Rome")):
        with tracer.start_as_current_span("invoke_agent trip") as agent:
            agent.set_attribute("gen_ai.operation.name", "invoke_agent")
            agent.set_attribute("gen_ai.agent.name", "trip")
            agent.set_attribute("gen_ai.conversation.id", conversation)
            with tracer.start_as_current_span("chat m") as chat:
                chat.set_attribute("gen_ai.operation.name", "chat")
                chat.set_attribute("gen_ai.request.model", "m-1")
                # the older attribute names: prompt/completion as indexed attributes
                chat.set_attribute("gen_ai.prompt.0.role", "user")
                chat.set_attribute("gen_ai.prompt.0.content", f"Weather in {city}?")
                chat.set_attribute("gen_ai.completion.0.role", "assistant")
                chat.set_attribute("gen_ai.completion.0.tool_calls.0.id", f"w-{city}")
                chat.set_attribute("gen_ai.completion.0.tool_calls.0.name", "weather")
                chat.set_attribute("gen_ai.completion.0.tool_calls.0.arguments", json.dumps({"city": city}))
                chat.set_attribute("gen_ai.usage.prompt_tokens", 7)
            with tracer.start_as_current_span("execute_tool weather") as t:
                t.set_attribute("gen_ai.operation.name", "execute_tool")
                t.set_attribute("gen_ai.tool.name", "weather")      # no call id, no arguments: opt-in
                if city == "Rome":
                    t.set_status(Status(StatusCode.ERROR, "backend down"))
                    t.record_exception(RuntimeError("backend down"))
                else:
                    t.set_attribute("gen_ai.tool.call.result", json.dumps("sunny"))
            with tracer.start_as_current_span("chat m") as chat:
                chat.set_attribute("gen_ai.operation.name", "chat")
                chat.set_attribute("gen_ai.request.model", "m-1")
                # the current form: parts as a JSON string
                chat.set_attribute("gen_ai.output.messages", json.dumps(
                    [{"role": "assistant", "parts": [{"type": "text", "content": f"{city}: done"}]}]))


def test_live_sdk_spans_in_otlp_json(tmp_path):
    path = tmp_path / "genai.json"
    _write_otlp(_record(_genai_program), path)
    assert detect_format(path) == "otel-genai"
    runs = list(read_file(path))
    assert [r.source.position.split(", trace ")[0] for r in runs] == ["conversation c-1", "conversation c-2"]
    paris, rome = runs
    assert [(c.tool, c.call_id, c.args, c.ok, c.result) for c in paris.tool_calls] == [
        ("weather", "w-Paris", {"city": "Paris"}, True, "sunny")]   # id and args from the announced call
    assert [(c.call_id, c.ok, c.error) for c in rome.tool_calls] == [("w-Rome", False, "backend down")]
    assert [e.kind for e in paris.events] == ["user", "tool", "agent"]
    assert paris.events[0].text == "Weather in Paris?" and paris.events[-1].text == "Paris: done"
    assert (paris.identity.model, paris.identity.harness, paris.cost) == ("m-1", "trip", {"input_tokens": 7})


def test_live_sdk_spans_to_json_lines(tmp_path):
    spans = _record(_genai_program)
    lines = tmp_path / "console.jsonl"
    lines.write_text("\n".join(json.dumps(json.loads(s.to_json())) for s in spans) + "\n")
    otlp = tmp_path / "genai.json"
    _write_otlp(spans, otlp)
    assert [r.events for r in read_file(lines)] == [r.events for r in read_file(otlp)]


def _openinference_program(tracer):
    from openinference.semconv.trace import SpanAttributes as SA
    from opentelemetry.trace import Status, StatusCode

    with tracer.start_as_current_span("agent") as agent:
        agent.set_attribute(SA.OPENINFERENCE_SPAN_KIND, "AGENT")
        agent.set_attribute("agent.name", "helper")
        agent.set_attribute(SA.SESSION_ID, "s-9")
        with tracer.start_as_current_span("llm") as llm:
            llm.set_attribute(SA.OPENINFERENCE_SPAN_KIND, "LLM")
            llm.set_attribute(SA.LLM_MODEL_NAME, "m-2")
            llm.set_attribute("llm.input_messages.0.message.role", "user")
            llm.set_attribute("llm.input_messages.0.message.content", "look up k1 and k2")
            for j, key in enumerate(("k1", "k2")):
                prefix = f"llm.output_messages.0.message.tool_calls.{j}.tool_call"
                llm.set_attribute(f"{prefix}.id", f"id-{key}")
                llm.set_attribute(f"{prefix}.function.name", "lookup")
                llm.set_attribute(f"{prefix}.function.arguments", json.dumps({"key": key}))
        for key in ("k1", "k2"):
            with tracer.start_as_current_span("lookup") as t:
                t.set_attribute(SA.OPENINFERENCE_SPAN_KIND, "TOOL")
                t.set_attribute(SA.TOOL_NAME, "lookup")
                t.set_attribute(SA.INPUT_VALUE, json.dumps({"key": key}))
                if key == "k2":
                    t.set_status(Status(StatusCode.ERROR, "no such key"))
                else:
                    t.set_attribute(SA.OUTPUT_VALUE, "v1")


def test_live_openinference_spans(tmp_path):
    pytest.importorskip("openinference.semconv")
    path = tmp_path / "oi.json"
    _write_otlp(_record(_openinference_program), path)
    assert detect_format(path) == "openinference"
    [run] = read_file(path)
    assert [(c.call_id, c.args, c.ok, c.result, c.error, c.agent) for c in run.tool_calls] == [
        ("id-k1", {"key": "k1"}, True, "v1", None, "helper"),
        ("id-k2", {"key": "k2"}, False, None, "no such key", "helper"),
    ]
    assert run.source.position.startswith("conversation s-9, trace ") and run.identity.model == "m-2"


def test_live_otlp_json_file_exporter(tmp_path):
    """The SDK's own OTLP/JSON file exporter (one request per exported batch, a line each)."""
    pytest.importorskip("opentelemetry.exporter.otlp.json.file")
    from opentelemetry.exporter.otlp.json.file import FileSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    path = tmp_path / "spans.jsonl"
    provider = TracerProvider(resource=Resource.create({"service.name": "fluke-test"}))
    provider.add_span_processor(SimpleSpanProcessor(FileSpanExporter(path)))
    _genai_program(provider.get_tracer("fluke-test"))
    provider.shutdown()
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    assert len(lines) == 8 and all("resourceSpans" in line for line in lines)   # one span per export here
    assert detect_format(path) == "otel-genai"
    runs = list(read_file(path))
    assert [[(c.call_id, c.ok) for c in r.tool_calls] for r in runs] == [[("w-Paris", True)], [("w-Rome", False)]]
    assert [e.kind for e in runs[0].events] == ["user", "tool", "agent"]
