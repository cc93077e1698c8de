"""``export --json`` for every format: a JSON summary of what was written, its counts read back from
the file itself; and "every verb takes --json", checked over the CLI's own command list."""

from __future__ import annotations

import json

import click
import pytest
from click.testing import CliRunner

from fluke.cli import VERBS, group

from .conftest import SPEC
from .test_junit import RULE


def _json(path, *args):
    result = CliRunner().invoke(group, ["--ledger", str(path), "--json", "export", *args])
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout), result


def test_otel_json_counts_the_records_in_the_file(planted, tmp_path):
    path, spec = planted
    out = tmp_path / "e.otlp.json"
    doc, _ = _json(path, "--format", "otel", "--spec", str(spec), "-o", str(out))
    records = [r for rl in json.loads(out.read_text())["resourceLogs"] for sl in rl["scopeLogs"]
               for r in sl["logRecords"]]
    assert doc["kind"] == "export" and doc["format"] == "otel" and doc["path"] == str(out)
    assert doc["bytes"] == out.stat().st_size
    assert doc["records"]["gen_ai.evaluation.result"] == len(records)
    assert doc["records"]["graded runs"] == 120          # the planted ledger: 2 versions x 6 scenarios x 10
    assert doc["records"]["verdicts"] == len(records) - 120


def test_eee_json_counts_one_document_per_version(planted, tmp_path):
    path, _ = planted
    out = tmp_path / "r.eee.jsonl"
    doc, result = _json(path, "--format", "eee", "-o", str(out))
    lines = out.read_text().splitlines()
    assert doc["format"] == "eee" and doc["records"] == {"documents": len(lines)} and len(lines) == 2
    assert doc["bytes"] == out.stat().st_size and result.stderr == ""   # the summary is the JSON, not a line


def test_junit_json_counts_the_test_cases_in_the_xml(planted, tmp_path):
    import xml.etree.ElementTree as ET

    path, _ = planted
    (tmp_path / "spec.yaml").write_text(SPEC, encoding="utf-8")
    rule = tmp_path / "rule.yaml"
    rule.write_text(RULE, encoding="utf-8")
    out = tmp_path / "gate.xml"
    doc, _ = _json(path, "--format", "junit", "--rule", str(rule), "-o", str(out))
    cases = ET.parse(out).getroot().iter("testcase")
    assert doc["records"] == {"test cases": len(list(cases))} and doc["records"]["test cases"] == 3
    gate = json.loads(CliRunner().invoke(group, ["--ledger", str(path), "--json", "gate", str(rule)]).stdout)
    assert doc["gate"] == gate["status"]


def test_mlflow_json_names_the_run_it_logged_to(planted, tmp_path, monkeypatch):
    mlflow = pytest.importorskip("mlflow")
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    path, _ = planted
    (tmp_path / "spec.yaml").write_text(SPEC, encoding="utf-8")
    rule = tmp_path / "rule.yaml"
    rule.write_text(RULE, encoding="utf-8")
    store = f"file://{tmp_path / 'mlruns'}"
    doc, _ = _json(path, "--format", "mlflow", "--rule", str(rule), "--mlflow-uri", store, "--experiment", "j")
    client = mlflow.MlflowClient(tracking_uri=store)
    [run] = client.search_runs([client.get_experiment_by_name("j").experiment_id])
    assert doc["run_id"] == run.info.run_id and doc["path"] is None
    [trace] = client.search_traces(locations=[run.info.experiment_id], run_id=run.info.run_id)
    assert doc["records"]["assessments"] == len(client.get_trace(trace.info.trace_id).info.assessments)


@pytest.mark.parametrize("fmt", ["otel", "eee", "jsonl"])
def test_json_with_the_export_on_standard_output_is_refused_in_one_line(planted, fmt):
    path, _ = planted
    result = CliRunner().invoke(group, ["--ledger", str(path), "--json", "export", "--format", fmt])
    assert result.exit_code == 2 and "give -o FILE" in result.stderr and result.stdout == ""


def _commands():
    """Every verb and every sub-verb of a group, by its name on the command line."""
    for verb in sorted(VERBS):
        command = group.get_command(click.Context(group), verb)
        if isinstance(command, click.Group):
            for name in sorted(command.list_commands(click.Context(command))):
                yield f"{verb} {name}", command.get_command(click.Context(command), name)
        else:
            yield verb, command


def test_every_verb_takes_json():
    missing = [name for name, command in _commands()
               if not any("--json" in p.opts for p in command.params if isinstance(p, click.Option))]
    names = [name for name, _ in _commands()]
    assert "export" in names and "judge audit" in names and len(names) > len(VERBS)
    assert missing == []
