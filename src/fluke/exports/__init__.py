"""fluke's findings in the formats other tools read: OpenTelemetry, Every Eval Ever, JUnit XML, MLflow.

One module per format, each a mapping from :class:`Findings` (graded runs, verdicts, version
pass rates and claims, gathered once by :func:`collect`) to the consumer's own shape. Every
string has been redacted and made inert before any format sees it. The mapping tables are in
``docs/exports.md``.

>>> from fluke.exports import EEE_SCHEMA_VERSION, OTEL_EVENT
>>> EEE_SCHEMA_VERSION, OTEL_EVENT
('0.2.1', 'gen_ai.evaluation.result')
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS: dict[str, str] = {
    "Findings": "_findings", "GradedRun": "_findings", "Verdict": "_findings", "VersionRate": "_findings",
    "collect": "_findings", "trace_parent": "_findings", "claim_dicts": "_findings", "clean": "_findings",
    "VERDICT_LABELS": "_findings",
    "OTEL_EVENT": "_otel", "otlp_logs": "_otel", "write_otlp": "_otel", "send_otlp": "_otel",
    "EEE_SCHEMA_VERSION": "_eee", "eee_documents": "_eee", "eee_schema": "_eee", "write_eee": "_eee",
    "junit_xml": "_junit", "gate_junit": "_junit",
    "log_to_mlflow": "_mlflow",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'fluke.exports' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
