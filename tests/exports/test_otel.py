"""OTLP/JSON export: read back with OpenTelemetry's own OTLP/JSON types, sent to a receiver on 127.0.0.1."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest
from click.testing import CliRunner

from fluke.cli import group
from fluke.ledger import open_ledger

from .conftest import expected_label, planted_runs
from ..conftest import FORMATS

logs_service = pytest.importorskip("opentelemetry.proto_json.collector.logs.v1.logs_service")


def _export(path, *args):
    return CliRunner().invoke(group, ["--ledger", str(path), "export", "--format", "otel", *args])


def _records(text) -> list:
    """The log records of an OTLP/JSON document, parsed by OpenTelemetry's own OTLP/JSON types."""
    return logs_service.ExportLogsServiceRequest.from_json(text).resource_logs[0].scope_logs[0].log_records


def _strict_protobuf(doc: dict) -> None:
    """Parse with the OTLP protobuf schema itself (unknown fields refused); protobuf's JSON
    mapping reads bytes as base64 where OTLP/JSON writes hex, so the ids are converted first."""
    import base64

    from google.protobuf import json_format
    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

    for rl in doc["resourceLogs"]:
        for sl in rl["scopeLogs"]:
            for r in sl["logRecords"]:
                for key in ("traceId", "spanId"):
                    if key in r:
                        r[key] = base64.b64encode(bytes.fromhex(r[key])).decode()
    parsed = json_format.ParseDict(doc, ExportLogsServiceRequest())
    records = doc["resourceLogs"][0]["scopeLogs"][0]["logRecords"]
    assert len(parsed.resource_logs[0].scope_logs[0].log_records) == len(records)


def _attrs(record) -> dict:
    out = {}
    for kv in record.attributes:
        v = kv.value
        out[kv.key] = next(x for x in (v.string_value, v.double_value, v.int_value, v.bool_value) if x is not None)
    return out


def test_each_graded_run_and_verdict_is_one_evaluation_record(planted, tmp_path):
    path, spec = planted
    out = tmp_path / "e.json"
    result = _export(path, "--spec", str(spec), "--baseline", "model=a", "-o", str(out))
    assert result.exit_code == 0, result.stderr
    text = out.read_text(encoding="utf-8")
    request = logs_service.ExportLogsServiceRequest.from_json(text)
    assert request.to_dict() == json.loads(text)          # the file is exactly what the types write
    _strict_protobuf(json.loads(text))
    records = request.resource_logs[0].scope_logs[0].log_records
    runs = {r.hash: r for r in planted_runs()}
    assert len(records) == len(runs) + 1                  # every run, and b against a
    assert {r.event_name for r in records} == {"gen_ai.evaluation.result"}
    graded = [_attrs(r) for r in records if _attrs(r)["gen_ai.evaluation.name"] == "fluke.path_grade"]
    for a in graded:
        run = runs[a["fluke.run.hash"]]
        assert a["gen_ai.evaluation.score.label"] == expected_label(run)
        if expected_label(run) == "unknown":
            assert "gen_ai.evaluation.score.value" not in a
        else:
            assert a["gen_ai.evaluation.score.value"] == pytest.approx(float(expected_label(run) == "pass"))
        if any(c.tool == "refund" for c in run.tool_calls):
            assert "forbidden" in a["gen_ai.evaluation.explanation"]
        assert a["gen_ai.response.id"] == run.hash        # no trace to parent to: the run's hash correlates
    assert sum(a["gen_ai.evaluation.score.label"] == "unknown" for a in graded) == 2   # s0 trial 9, both versions
    [verdict] = [_attrs(r) for r in records if _attrs(r)["gen_ai.evaluation.name"] == "fluke.comparison"]
    assert verdict["gen_ai.evaluation.score.label"] == "different"
    # b − a in points: every scenario has 10 runs a side; a passes 59 of 60, b 18 of 60 (one unknown, a failure)
    assert verdict["gen_ai.evaluation.score.value"] == pytest.approx((18 - 59) / 60 * 100, abs=1.0)
    low, high = verdict["fluke.comparison.interval_low"], verdict["fluke.comparison.interval_high"]
    assert low < verdict["gen_ai.evaluation.score.value"] < high
    assert f"[{low:+.1f}, {high:+.1f}]" in verdict["gen_ai.evaluation.explanation"]
    assert "could not have detected a difference below" in verdict["gen_ai.evaluation.explanation"]


def test_a_verdict_too_small_to_tell_is_inconclusive(tmp_path):
    from fluke.record import Identity, Outcome, Run

    path = tmp_path / "small.db"
    with open_ledger(str(path)) as ledger:
        ledger.ingest([Run(scenario="s", trial=t, identity=Identity(model=m), outcome=Outcome(passed=t % 2 == 0))
                       for m in ("a", "b") for t in range(4)])
    out = tmp_path / "e.json"
    assert _export(path, "-o", str(out)).exit_code == 0
    records = _records(out.read_bytes())
    [verdict] = [_attrs(r) for r in records if _attrs(r)["gen_ai.evaluation.name"] == "fluke.comparison"]
    assert verdict["gen_ai.evaluation.score.label"] == "inconclusive"
    assert "too small to tell" in verdict["gen_ai.evaluation.explanation"]


def test_a_run_read_from_traces_is_parented_to_its_trace_and_root_span(tmp_path):
    sample = FORMATS / "samples" / "otel" / "genai_semconv.otlp.json"
    if not sample.exists():
        pytest.skip(f"framework sample not found at {sample}")
    raw = json.loads(sample.read_text())
    spans = [s for rs in raw["resourceSpans"] for ss in rs["scopeSpans"] for s in ss["spans"]]
    root = next(s for s in spans if not s.get("parentSpanId"))
    path = tmp_path / "t.db"
    assert CliRunner().invoke(group, ["--ledger", str(path), "ingest", str(sample)]).exit_code == 0
    out = tmp_path / "e.json"
    assert _export(path, "-o", str(out)).exit_code == 0
    [record] = _records(out.read_bytes())
    _strict_protobuf(json.loads(out.read_bytes()))
    assert _attrs(record)["gen_ai.evaluation.name"] == "fluke.outcome"      # no spec graded it
    assert (record.trace_id.hex(), record.span_id.hex()) == (root["traceId"], root["spanId"])
    assert "gen_ai.response.id" not in _attrs(record)


class _Receiver(BaseHTTPRequestHandler):
    received: list = []
    status = 200

    def do_POST(self):  # noqa: N802 - the http.server name
        body = self.rfile.read(int(self.headers["Content-Length"]))
        type(self).received.append((self.path, self.headers["Content-Type"], body))
        type(self).auth.append(self.headers.get("Authorization"))
        self.send_response(type(self).status)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args):
        pass


@pytest.fixture
def receiver():
    handler = type("Receiver", (_Receiver,), {"received": [], "auth": [], "status": 200})
    server = HTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield handler, f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()


def test_records_are_sent_to_an_otlp_http_endpoint(planted, tmp_path, receiver, monkeypatch):
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", "Authorization=Bearer%20sk_live_4eC39HqLyjWDarjtT1zdp7dc")
    path, spec = planted
    handler, url = receiver
    out = tmp_path / "e.json"
    result = _export(path, "--spec", str(spec), "-o", str(out), "--endpoint", url)
    assert result.exit_code == 0, result.stderr
    [(where, kind, body)] = handler.received
    assert (where, kind) == ("/v1/logs", "application/json")
    assert [_attrs(r) for r in _records(body)] == [_attrs(r) for r in _records(out.read_bytes())]
    assert "wrote 121 gen_ai.evaluation.result records" in result.stderr and f"sent them to {url}" in result.stderr
    assert handler.auth == ["Bearer sk_live_4eC39HqLyjWDarjtT1zdp7dc"]     # the standard header variable is sent
    assert "4eC39HqLyjWDarjtT1zdp7dc" not in result.stderr + result.stdout   # and never printed


def test_a_refusing_or_absent_endpoint_is_one_line_and_exit_2(planted, tmp_path, receiver):
    path, _ = planted
    handler, url = receiver
    handler.status = 503
    result = _export(path, "-o", str(tmp_path / "e.json"), "--endpoint", url)
    assert result.exit_code == 2
    assert "HTTP 503" in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "e.json").exists() and not (tmp_path / "e.json.part").exists()   # nothing half-written
    result = _export(path, "-o", str(tmp_path / "f.json"), "--endpoint", "http://127.0.0.1:9")
    assert result.exit_code == 2 and "cannot be reached" in result.stderr and "Traceback" not in result.stderr


def test_records_go_in_batches_and_the_file_is_one_document(planted, tmp_path, receiver):
    from fluke.exports import collect
    from fluke.exports._otel import emit_otlp

    path, spec = planted
    handler, url = receiver
    with open_ledger(str(path)) as ledger:
        found = collect(ledger, spec=str(spec), baseline="model=a", stream=True)
        out = tmp_path / "e.json"
        assert emit_otlp(found, out, url, batch=50) == 121
    assert [len(_records(body)) for _, _, body in handler.received] == [50, 50, 21]
    sent = [_attrs(r) for _, _, body in handler.received for r in _records(body)]
    assert sent == [_attrs(r) for r in _records(out.read_bytes())]
