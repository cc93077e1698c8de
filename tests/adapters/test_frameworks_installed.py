"""The frameworks whose real output the reader tests read are there under CI."""

from __future__ import annotations

import importlib.util
import os

import pytest


def test_the_frameworks_the_reader_tests_run_are_installed():
    """The real-output tests (an inspect-ai mock-model run, opentelemetry-sdk spans written by
    its OTLP JSON file exporter, an Agents SDK run on a fake model, a LangGraph graph) skip
    where their framework is missing; under CI, where the test extras are installed, a
    missing one fails here instead of skipping unseen."""
    modules = ["inspect_ai", "opentelemetry.sdk", "opentelemetry.exporter.otlp.json.file",
               "opentelemetry.exporter.otlp.proto.common", "openinference.semconv", "agents", "langgraph"]
    missing = [m for m in modules if importlib.util.find_spec(m.split(".")[0]) is None
               or importlib.util.find_spec(m) is None]
    if missing and not os.environ.get("CI"):
        pytest.skip(f"not installed: {', '.join(missing)}")
    assert missing == []
