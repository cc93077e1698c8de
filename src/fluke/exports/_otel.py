"""OpenTelemetry: one ``gen_ai.evaluation.result`` log record per graded run and per verdict, as OTLP JSON.

The event and its attributes follow the GenAI semantic conventions (Development status):
``gen_ai.evaluation.name``, ``gen_ai.evaluation.score.value``, ``gen_ai.evaluation.score.label``,
``gen_ai.evaluation.explanation`` and, with no span to parent to, ``gen_ai.response.id`` (here the
run's content hash). A run read from one trace (the OpenTelemetry GenAI and OpenInference
readers) is parented to that trace and its root span: a trace viewer shows the grade on the
run's own trace. The file is an OTLP/JSON ``ExportLogsServiceRequest`` (ids in hex, 64-bit
integers as strings), which an OTLP/HTTP endpoint accepts as it is at ``/v1/logs``.

>>> from fluke.exports import Findings, GradedRun
>>> run = GradedRun("ab" * 32, "refund/1", 0, "cd" * 32, "fail", 0.0, "the path broke forbidden", ("forbidden",))
>>> doc = otlp_logs(Findings("demo.db", runs=[run]), time_unix_nano=1)
>>> record = doc["resourceLogs"][0]["scopeLogs"][0]["logRecords"][0]
>>> record["eventName"], {a["key"]: a["value"] for a in record["attributes"]}["gen_ai.evaluation.score.label"]
('gen_ai.evaluation.result', {'stringValue': 'fail'})
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Iterator

import orjson

from ..errors import UsageError
from ._findings import Findings, GradedRun, Verdict

OTEL_EVENT = "gen_ai.evaluation.result"
#: ``gen_ai.evaluation.name`` of a graded run, of a run no spec graded (its outcome alone), of a verdict.
RUN_EVALUATION = "fluke.path_grade"
OUTCOME_EVALUATION = "fluke.outcome"
VERDICT_EVALUATION = "fluke.comparison"
_SEVERITY = {"pass": (9, "INFO"), "fail": (13, "WARN"), "unknown": (9, "INFO"), "different": (13, "WARN"),
             "no difference": (9, "INFO"), "inconclusive": (9, "INFO")}


def _value(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}     # OTLP/JSON writes 64-bit integers as strings
    if isinstance(value, float):
        return {"doubleValue": value}
    return {"stringValue": str(value)}


def _attributes(pairs: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"key": k, "value": _value(v)} for k, v in pairs.items() if v is not None]


def _record(attrs: dict[str, Any], label: str, at: int, trace: tuple[str | None, str | None] = (None, None)):
    number, text = _SEVERITY[label]
    record: dict[str, Any] = {"timeUnixNano": str(at), "observedTimeUnixNano": str(at), "severityNumber": number,
                              "severityText": text, "eventName": OTEL_EVENT, "attributes": _attributes(attrs)}
    if trace[0] and trace[1]:
        record.update(traceId=trace[0], spanId=trace[1], flags=1)
    return record


def run_record(run: GradedRun, at: int) -> dict[str, Any]:
    """The log record of one graded run (parented to its trace and root span when it has them)."""
    attrs = {"gen_ai.evaluation.name": RUN_EVALUATION if run.graded else OUTCOME_EVALUATION,
             "gen_ai.evaluation.score.value": run.score,
             "gen_ai.evaluation.score.label": run.label, "gen_ai.evaluation.explanation": run.explanation,
             "gen_ai.response.id": None if run.span_id else run.run_hash,
             "fluke.run.hash": run.run_hash, "fluke.run.scenario": run.scenario, "fluke.run.trial": run.trial,
             "fluke.version": run.version, "fluke.grade.checks": ", ".join(run.checks) or None}
    return _record(attrs, run.label, at, (run.trace_id, run.span_id))


def verdict_record(v: Verdict, at: int) -> dict[str, Any]:
    """The log record of one verdict: the difference in points is the score, with interval and limit."""
    lo, hi = v.interval
    attrs = {"gen_ai.evaluation.name": VERDICT_EVALUATION, "gen_ai.evaluation.score.value": v.difference,
             "gen_ai.evaluation.score.label": v.label,
             "gen_ai.evaluation.explanation": f"{v.explanation}. Rests on: {v.rests_on}",
             "fluke.comparison.a": v.a, "fluke.comparison.b": v.b, "fluke.comparison.a_label": v.a_label,
             "fluke.comparison.b_label": v.b_label, "fluke.comparison.interval_low": lo,
             "fluke.comparison.interval_high": hi, "fluke.comparison.detection_limit": v.limit,
             "fluke.comparison.pvalue": v.pvalue}
    return _record({k: val for k, val in attrs.items() if not (isinstance(val, float) and val != val)
                    and val not in (float("inf"), float("-inf"))}, v.label, at)


def _envelope(found: Findings, records: list[dict[str, Any]]) -> dict[str, Any]:
    from importlib.metadata import PackageNotFoundError, version

    try:
        fluke_version = version("fluke")
    except PackageNotFoundError:  # pragma: no cover - run from a source tree
        fluke_version = "unknown"
    resource = _attributes({"service.name": "fluke", "fluke.ledger": found.ledger, "fluke.rests_on": found.rests_on,
                            "fluke.spec": found.spec, "fluke.unknown": found.unknown})
    return {"resourceLogs": [{"resource": {"attributes": resource}, "scopeLogs": [
        {"scope": {"name": "fluke", "version": fluke_version}, "logRecords": records}]}]}


def _records(found: Findings, at: int | None) -> Iterator[dict[str, Any]]:
    at = time.time_ns() if at is None else int(at)
    for run in found.runs:
        yield run_record(run, at)
    for verdict in found.verdicts:
        yield verdict_record(verdict, at)


def otlp_logs(found: Findings, *, time_unix_nano: int | None = None) -> dict[str, Any]:
    """An OTLP/JSON ``ExportLogsServiceRequest`` holding every graded run's and verdict's record."""
    return _envelope(found, list(_records(found, time_unix_nano)))


def emit_otlp(found: Findings, path: str | Path | None = None, endpoint: str | None = None, *,
              time_unix_nano: int | None = None, batch: int = 2000, timeout: float = 10.0,
              headers: dict[str, str] | None = None) -> int:
    """Write the records to ``path`` as one OTLP/JSON document and/or POST them to ``endpoint``
    in requests of ``batch`` records, in one pass over the graded runs (which may stream);
    return how many records. The file is written whole or not at all."""
    from ._write import open_atomic

    if endpoint is not None:
        url, sent_headers = _target(endpoint), otlp_headers() if headers is None else headers
    head, tail = orjson.dumps(_envelope(found, [])).split(b'"logRecords":[]')
    count, pending = 0, []
    with open_atomic(path) as out:
        if out is not None:
            out.write(head + b'"logRecords":[')
        for record in _records(found, time_unix_nano):
            if out is not None:
                out.write((b"," if count else b"") + orjson.dumps(record))
            count += 1
            if endpoint is not None:
                pending.append(record)
                if len(pending) >= batch:
                    _post(url, _envelope(found, pending), sent_headers, timeout)
                    pending = []
        if out is not None:
            out.write(b"]" + tail + b"\n")
        if endpoint is not None and (pending or count == 0):
            _post(url, _envelope(found, pending), sent_headers, timeout)
    return count


def write_otlp(found: Findings, path: str | Path, **options: Any) -> int:
    """Write the OTLP/JSON document to ``path`` (whole or not at all); return how many records."""
    return emit_otlp(found, path, **options)


def otlp_headers(environ: dict[str, str] | None = None) -> dict[str, str]:
    """The headers OpenTelemetry's exporters read from the environment (``key=value,...``, values
    URL-encoded): ``OTEL_EXPORTER_OTLP_LOGS_HEADERS``, else ``OTEL_EXPORTER_OTLP_HEADERS``.

    >>> otlp_headers({"OTEL_EXPORTER_OTLP_HEADERS": "authorization=Bearer%20abc, x-team=evals"})
    {'authorization': 'Bearer abc', 'x-team': 'evals'}
    """
    import os
    from urllib.parse import unquote

    env = os.environ if environ is None else environ
    text = env.get("OTEL_EXPORTER_OTLP_LOGS_HEADERS") or env.get("OTEL_EXPORTER_OTLP_HEADERS") or ""
    pairs = (part.split("=", 1) for part in text.split(",") if "=" in part)
    return {unquote(k.strip()): unquote(v.strip()) for k, v in pairs if k.strip()}


def send_otlp(found: Findings, endpoint: str, **options: Any) -> int:
    """POST the records to an OTLP/HTTP endpoint (``http://host:4318``; ``/v1/logs`` is added); return the count.

    Sent as JSON (``Content-Type: application/json``), which the OTLP/HTTP protocol accepts,
    with ``headers`` (default: :func:`otlp_headers`, the standard environment variables). An
    endpoint that refuses says so in one line, with no header value quoted.
    """
    return emit_otlp(found, None, endpoint, **options)


def _target(endpoint: str) -> str:
    from ._findings import clean

    if not endpoint.startswith(("http://", "https://")):
        raise UsageError(f"--endpoint {clean(endpoint)!r} must be an http:// or https:// URL (OTLP/HTTP)")
    url = endpoint.rstrip("/")
    return url if url.endswith("/v1/logs") else url + "/v1/logs"


def _post(url: str, doc: dict[str, Any], headers: dict[str, str], timeout: float) -> None:
    import urllib.error
    import urllib.request

    from ._findings import clean

    request = urllib.request.Request(url, data=orjson.dumps(doc), method="POST",
                                     headers={**headers, "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            response.read()
    except urllib.error.HTTPError as exc:
        raise UsageError(f"OTLP endpoint {clean(url)} refused the records: HTTP {exc.code} {clean(exc.reason)}") \
            from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise UsageError(f"OTLP endpoint {clean(url)} cannot be reached: {clean(reason)}") from None
