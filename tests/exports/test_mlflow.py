"""MLflow: a gate's claims logged as feedback on a run in a local file store, read back with MLflow's client."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from fluke.cli import group

from .test_junit import RULE

mlflow = pytest.importorskip("mlflow")


def test_a_gates_claims_become_code_feedback_on_an_mlflow_run(planted, tmp_path, monkeypatch):
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")    # MLflow 3 keeps the file store behind a switch
    path, _ = planted
    rule = tmp_path / "rule.yaml"
    rule.write_text(RULE, encoding="utf-8")
    store = f"file://{tmp_path / 'mlruns'}"
    result = CliRunner().invoke(group, ["--ledger", str(path), "export", "--format", "mlflow", "--rule", str(rule),
                                        "--mlflow-uri", store, "--experiment", "fluke-test"])
    assert result.exit_code == 0, result.stderr
    decided = {c["check"]: c for c in json.loads(CliRunner().invoke(
        group, ["--ledger", str(path), "--json", "gate", str(rule)]).stdout)["checks"]}
    client = mlflow.MlflowClient(tracking_uri=store)
    experiment = client.get_experiment_by_name("fluke-test")
    [run] = client.search_runs([experiment.experiment_id])
    assert run.info.run_id in result.stderr
    assert run.data.tags["fluke.status"] == "fails"
    assert run.data.metrics == {f"fluke.holds.{k}": float(c["status"] == "holds") for k, c in decided.items()}
    [trace] = client.search_traces(locations=[experiment.experiment_id], run_id=run.info.run_id)
    assessments = {a.name: a for a in client.get_trace(trace.info.trace_id).info.assessments}
    assert set(assessments) == set(decided)
    for check, claim in decided.items():
        a = assessments[check]
        assert a.value == claim["status"] and a.source.source_type == "CODE" and a.source.source_id == "fluke"
        assert a.rationale.startswith(f"{claim['status']}: {claim['asked']}")
        assert f"rests on: {claim['rests_on']}" in a.rationale
        assert a.metadata["found"] == claim["found"]


def test_without_mlflow_the_error_says_how_to_install_it(monkeypatch, planted, tmp_path):
    import sys

    monkeypatch.setitem(sys.modules, "mlflow", None)     # as if it were not installed
    path, _ = planted
    rule = tmp_path / "rule.yaml"
    rule.write_text(RULE, encoding="utf-8")
    result = CliRunner().invoke(group, ["--ledger", str(path), "export", "--format", "mlflow", "--rule", str(rule)])
    assert result.exit_code == 2 and "pip install 'fluke[mlflow]'" in result.stderr
